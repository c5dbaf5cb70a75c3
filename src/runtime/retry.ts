// retryOnConflict: re-runs a read-modify-write function while the API server answers 409 Conflict, with
// client-go's DefaultRetry timing (5 tries, 10 ms apart, 10% jitter). The function must re-read the object each
// time. Other errors, and the last conflict, are thrown unchanged.
import { realClock, type Clock } from './clock.js';
import { isConflict } from './errors.js';

export interface RetryOptions {
  /** Total attempts. Default: 5. */
  steps?: number;
  /** Delay between attempts (ms). Default: 10. */
  delayMs?: number;
  /** Growth of the delay per attempt. Default: 1. */
  factor?: number;
  /** Random extra delay, as a fraction of the delay. Default: 0.1. */
  jitter?: number;
  clock?: Clock;
  /** Which errors to retry. Default: isConflict. */
  retriable?: (err: unknown) => boolean;
}

export async function retryOnConflict<R>(fn: () => Promise<R>, options: RetryOptions = {}): Promise<R> {
  const steps = options.steps ?? 5;
  const clock = options.clock ?? realClock;
  const retriable = options.retriable ?? isConflict;
  let delay = options.delayMs ?? 10;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= steps || !retriable(err)) throw err;
    }
    await clock.sleep(delay * (1 + (options.jitter ?? 0.1) * Math.random()));
    delay *= options.factor ?? 1;
  }
}
