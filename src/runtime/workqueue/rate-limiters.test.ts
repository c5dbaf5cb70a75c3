import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from './rate-limiters.js';
import { RateLimitingWorkQueue } from './rate-limiting-queue.js';
import { FakeClock } from '../testing/index.js';

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles per failure from 5 ms and caps at 1000 s, per key', () => {
    const l = new ItemExponentialFailureRateLimiter<string>();
    const delays = Array.from({ length: 6 }, () => l.when('a'));
    expect(delays).toEqual([5, 10, 20, 40, 80, 160]);
    expect(l.when('b')).toBe(5);
    for (let i = 0; i < 100; i++) l.when('a');
    expect(l.when('a')).toBe(1_000_000);
    expect(l.numRequeues('a')).toBe(107);
  });

  it('starts over after forget', () => {
    const l = new ItemExponentialFailureRateLimiter<string>();
    l.when('a');
    l.when('a');
    l.forget('a');
    expect(l.numRequeues('a')).toBe(0);
    expect(l.when('a')).toBe(5);
  });

  it('rejects a non-positive base delay', () => {
    expect(() => new ItemExponentialFailureRateLimiter(0)).toThrow(InvalidArgumentError);
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then spaces requests at 1/qps', () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter<string>(10, 3, clock);
    expect([l.when('a'), l.when('b'), l.when('c')]).toEqual([0, 0, 0]);
    expect(l.when('d')).toBeCloseTo(100);
    expect(l.when('e')).toBeCloseTo(200);
    clock.step(1000);
    expect(l.when('f')).toBe(0);
  });
});

describe('default controller rate limiter', () => {
  it('is the max of per-key backoff and the overall bucket', () => {
    const clock = new FakeClock();
    const l = defaultControllerRateLimiter<string>(clock);
    expect(l.when('a')).toBe(5);
    expect(l.when('a')).toBe(10);
    // Exhaust the 100-token burst with other keys: the bucket now dominates small per-key delays.
    for (let i = 0; i < 98; i++) l.when(`k${i}`);
    expect(l.when('fresh')).toBeCloseTo(100);
    expect(l.numRequeues('a')).toBe(2);
  });

  it('MaxOf requires a limiter', () => {
    expect(() => new MaxOfRateLimiter()).toThrow(InvalidArgumentError);
  });
});

describe('RateLimitingWorkQueue', () => {
  it('re-adds a failing key after growing delays and resets on forget', () => {
    const clock = new FakeClock();
    const q = new RateLimitingWorkQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000),
    });
    const availableAfter = (): number => {
      q.addRateLimited('a');
      let waited = 0;
      while (q.len() === 0) {
        clock.step(1);
        waited++;
      }
      const k = q.tryGet();
      if (k) q.done(k);
      return waited;
    };
    expect([availableAfter(), availableAfter(), availableAfter(), availableAfter()]).toEqual([5, 10, 20, 40]);
    expect(q.numRequeues('a')).toBe(4);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
    expect(availableAfter()).toBe(5);
  });
});
