// Capped exponential backoff with jitter, for retrying I/O (reflector relists, lease renewals, conflicts).
// It never gives up: after the cap every delay stays around the cap. Pure apart from the `random` source passed in.
// retryForever() is the one retry-until-success-or-abort loop built on it.
import { realClock, type Clock } from './clock.js';
import { InvalidArgumentError } from './errors.js';
import type { Logger } from './logging.js';

export interface BackoffOptions {
  /** First delay (ms). Default: 800 (client-go reflector). */
  initialMs?: number;
  /** Largest delay before jitter (ms). Default: 30,000. */
  maxMs?: number;
  /** Growth per failure. Default: 2. */
  factor?: number;
  /** Each delay is multiplied by a random value in [1, 1 + jitter]. Default: 1. */
  jitter?: number;
  /** Uniform [0,1) source. Default: Math.random. */
  random?: () => number;
}

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private current: number;
  private failures = 0;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 1;
    this.random = options.random ?? Math.random;
    if (!(this.initialMs > 0)) throw new InvalidArgumentError('initialMs', 'must be > 0');
    if (!(this.maxMs >= this.initialMs)) throw new InvalidArgumentError('maxMs', 'must be >= initialMs');
    if (!(this.factor >= 1)) throw new InvalidArgumentError('factor', 'must be >= 1');
    if (!(this.jitter >= 0)) throw new InvalidArgumentError('jitter', 'must be >= 0');
    this.current = this.initialMs;
  }

  /** The delay (ms) before the next attempt; grows the following one. */
  next(): number {
    const base = this.current;
    this.current = Math.min(this.maxMs, this.current * this.factor);
    this.failures++;
    return base * (1 + this.jitter * this.random());
  }

  /** Number of next() calls since the last reset(). */
  attempts(): number {
    return this.failures;
  }

  /** Back to the initial delay (call after a success). */
  reset(): void {
    this.current = this.initialMs;
    this.failures = 0;
  }
}

export interface RetryForeverOptions {
  /** What the operation does, for logs: "could not <what>; retrying". */
  what: string;
  /** Told about each failure (warn). */
  log: Logger;
  /** Stops retrying (and any wait) when aborted. */
  signal?: AbortSignal;
  /** Delays between attempts; reset after a success. Default: new Backoff() (800 ms doubling to 30 s, jitter 1). */
  backoff?: Backoff;
  /** What keeps failing while the operation does, logged as `impact` with each failure. */
  impact?: string;
  clock?: Clock;
}

/**
 * Runs `operation` until it succeeds, waiting `backoff` between failures and logging each one. Resolves with its
 * result, or with undefined once `signal` aborts first (the operation is not started again, and a failure seen
 * after the abort is not logged). Never rejects: use it for work that must happen eventually, not for errors a
 * caller should see.
 */
export async function retryForever<T>(
  operation: () => Promise<T>,
  options: RetryForeverOptions,
): Promise<T | undefined> {
  const { signal, log, what, impact } = options;
  const backoff = options.backoff ?? new Backoff();
  const clock = options.clock ?? realClock;
  while (!signal?.aborted) {
    try {
      const result = await operation();
      backoff.reset();
      return result;
    } catch (err) {
      if (signal?.aborted) break;
      const delayMs = backoff.next();
      log.warn(
        { err, attempt: backoff.attempts(), retryInMs: Math.round(delayMs), ...(impact ? { impact } : {}) },
        `could not ${what}; retrying`,
      );
      await clock.sleep(delayMs, signal);
    }
  }
  return undefined;
}
