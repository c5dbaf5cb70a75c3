// Time source for the runtime. Logic never reads Date.now() or calls setTimeout directly: it asks a Clock, so tests
// drive time with FakeClock.step/advance (./testing/) instead of waiting. `realClock` is the process clock.
// Guarantees: a timer fires at most once, never before its due time on this clock; cancel() is idempotent.

/** Handle of a scheduled callback. */
export interface Timer {
  /** Prevents the callback from running if it has not run yet. Idempotent. */
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds (0 or negative: on the next timer turn). */
  setTimer(fn: () => void, ms: number): Timer;
  /** Resolves after `ms` milliseconds, or early (without rejecting) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export function sleepWith(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The longest delay (ms) Node's setTimeout honours: 2^31-1 (about 24.8 days). A larger one fires after 1 ms
 * (with a TimeoutOverflowWarning), so longer timers are split into slices of at most this length.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** The timer functions cappedTimer() drives (the global setTimeout/clearTimeout in production). */
export interface TimerHost<H> {
  setTimeout(fn: () => void, ms: number): H;
  clearTimeout(handle: H): void;
}

/**
 * Runs `fn` once after `ms` milliseconds using `host`, never asking it for more than MAX_TIMER_DELAY_MS at a time:
 * a longer delay is waited out in consecutive slices. Cancelling stops whichever slice is pending.
 */
export function cappedTimer<H>(host: TimerHost<H>, fn: () => void, ms: number): Timer {
  // Infinity never fires (Infinity - slice stays Infinity); NaN and negatives mean "now", as with setTimeout.
  let remaining = ms > 0 ? ms : 0;
  let cancelled = false;
  let handle: H;
  const arm = (): void => {
    const slice = Math.min(remaining, MAX_TIMER_DELAY_MS);
    remaining -= slice;
    handle = host.setTimeout(() => {
      if (cancelled) return;
      if (remaining > 0) arm();
      else fn();
    }, slice);
  };
  arm();
  return {
    cancel: () => {
      cancelled = true;
      host.clearTimeout(handle);
    },
  };
}

const globalTimerHost: TimerHost<ReturnType<typeof setTimeout>> = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle),
};

/**
 * The process clock. Like setTimeout, a pending timer keeps the process alive until it fires or is cancelled;
 * unlike setTimeout, delays longer than MAX_TIMER_DELAY_MS are honoured instead of firing at once.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    return cappedTimer(globalTimerHost, fn, ms);
  },
  sleep(ms, signal) {
    return sleepWith(realClock, ms, signal);
  },
};
