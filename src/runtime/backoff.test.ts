import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.js';
import { InvalidArgumentError } from './errors.js';

describe('Backoff', () => {
  it('grows exponentially up to the cap and never stops', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0 });
    const delays = Array.from({ length: 8 }, () => b.next());
    expect(delays).toEqual([100, 200, 400, 800, 1000, 1000, 1000, 1000]);
    expect(b.attempts()).toBe(8);
  });

  it('adds jitter within [delay, delay * (1 + jitter)]', () => {
    const lo = new Backoff({ initialMs: 100, jitter: 1, random: () => 0 });
    const hi = new Backoff({ initialMs: 100, jitter: 1, random: () => 0.999 });
    expect(lo.next()).toBe(100);
    expect(hi.next()).toBeCloseTo(199.9);
  });

  it('starts over after reset', () => {
    const b = new Backoff({ initialMs: 10, jitter: 0 });
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(10);
  });

  it('rejects a cap below the initial delay', () => {
    expect(() => new Backoff({ initialMs: 10, maxMs: 5 })).toThrow(InvalidArgumentError);
  });
});
