// Strategies deciding how long a key waits before it is retried (client-go's default_rate_limiters).
// Limiters are not thread-safe by design (JS is single-threaded) and are pure apart from the Clock they are given.
// The default controller limiter is the max of a per-key exponential backoff (5 ms doubling up to 1000 s) and an
// overall token bucket (10 qps, burst 100), so a storm of failing keys cannot hammer the API server.
import { realClock, type Clock } from '../clock.js';
import { InvalidArgumentError } from '../errors.js';

export interface RateLimiter<K> {
  /** How long (ms) `key` must wait before its next try; records the failure. */
  when(key: K): number;
  /** Clears the failure history of `key` (call after it succeeded or was dropped). */
  forget(key: K): void;
  /** How many times `key` has failed since it was last forgotten. */
  numRequeues(key: K): number;
}

/** Per-key exponential backoff: base * 2^failures, capped at max. */
export class ItemExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();

  /** @param baseDelayMs first delay (ms), default 5. @param maxDelayMs cap (ms), default 1,000,000 (1000 s). */
  constructor(
    private readonly baseDelayMs = 5,
    private readonly maxDelayMs = 1_000_000,
  ) {
    if (!(baseDelayMs > 0)) throw new InvalidArgumentError('baseDelayMs', `must be > 0, got ${baseDelayMs}`);
    if (!(maxDelayMs >= baseDelayMs)) throw new InvalidArgumentError('maxDelayMs', 'must be >= baseDelayMs');
  }

  when(key: K): number {
    const exp = this.failures.get(key) ?? 0;
    this.failures.set(key, exp + 1);
    // 2^exp overflows to Infinity long after the cap; Math.min handles it.
    return Math.min(this.baseDelayMs * 2 ** exp, this.maxDelayMs);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * Overall token bucket: `qps` tokens per second, at most `burst` saved. Each when() reserves one token, possibly
 * in the future, and returns how long until it is available (like golang.org/x/time/rate Reserve().Delay()).
 */
export class BucketRateLimiter<K> implements RateLimiter<K> {
  private tokens: number;
  private last: number;

  /** @param qps tokens per second (default 10). @param burst bucket size (default 100). */
  constructor(
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0)) throw new InvalidArgumentError('qps', `must be > 0, got ${qps}`);
    if (!(burst >= 1)) throw new InvalidArgumentError('burst', `must be >= 1, got ${burst}`);
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_key: K): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  forget(_key: K): void {}

  numRequeues(_key: K): number {
    return 0;
  }
}

/** The longest wait among several limiters; requeue count is the highest among them. */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: readonly RateLimiter<K>[];
  constructor(...limiters: RateLimiter<K>[]) {
    if (limiters.length === 0) throw new InvalidArgumentError('limiters', 'need at least one');
    this.limiters = limiters;
  }
  when(key: K): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(key));
    return max;
  }
  forget(key: K): void {
    for (const l of this.limiters) l.forget(key);
  }
  numRequeues(key: K): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(key));
    return max;
  }
}

/** client-go's DefaultControllerRateLimiter: max(exponential 5 ms..1000 s per key, bucket 10 qps burst 100). */
export function defaultControllerRateLimiter<K>(clock: Clock = realClock): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialFailureRateLimiter<K>(5, 1_000_000),
    new BucketRateLimiter<K>(10, 100, clock),
  );
}
