// Adds rate-limited re-adds to the delaying queue: addRateLimited() asks the RateLimiter how long the key waits.
// The caller must forget(key) once the key succeeded (or is given up), or its backoff keeps growing.
import { DelayingWorkQueue, type DelayingQueue } from './delaying-queue.js';
import type { QueueOptions } from './queue.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.js';

export interface RateLimitingQueue<K> extends DelayingQueue<K> {
  /** Adds `key` after the delay its rate limiter decides (and records one more failure). */
  addRateLimited(key: K): void;
  /** Clears the key's failure history (does not remove it from the queue). */
  forget(key: K): void;
  /** Failures recorded for `key` since the last forget(). */
  numRequeues(key: K): number;
}

export interface RateLimitingQueueOptions<K> extends QueueOptions<K> {
  /** Default: defaultControllerRateLimiter (5 ms..1000 s per key, max'd with a 10 qps / 100 burst bucket). */
  rateLimiter?: RateLimiter<K>;
}

export class RateLimitingWorkQueue<K> extends DelayingWorkQueue<K> implements RateLimitingQueue<K> {
  private readonly limiter: RateLimiter<K>;

  constructor(options: RateLimitingQueueOptions<K> = {}) {
    super(options);
    this.limiter = options.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
  }

  addRateLimited(key: K): void {
    this.addAfter(key, this.limiter.when(key));
  }

  forget(key: K): void {
    this.limiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.limiter.numRequeues(key);
  }
}
