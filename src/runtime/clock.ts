// Time source for the runtime. Logic never reads Date.now() or calls setTimeout directly: it asks a Clock, so tests
// drive time with FakeClock.step/advance instead of waiting. `realClock` is the process clock.
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

function sleepWith(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
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

interface PendingTimer {
  readonly due: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/**
 * A manually driven clock for tests. Time moves only through step()/advance()/set(); timers due at the same
 * time fire in the order they were scheduled.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  /** Not-yet-fired, not-cancelled timers (cancelled ones are dropped lazily). */
  private timers: PendingTimer[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const timer: PendingTimer = {
      due: this.current + Math.max(0, ms),
      seq: this.seq++,
      fn,
      cancelled: false,
    };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Number of timers still waiting to fire. */
  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by `ms`, firing due timers synchronously in due order. */
  step(ms: number): void {
    const target = this.current + ms;
    for (let next = this.nextDue(target); next; next = this.nextDue(target)) {
      this.current = next.due;
      next.fn();
    }
    this.current = target;
  }

  /**
   * Like step(), but lets promise continuations run after each timer, so async code woken by a timer can
   * schedule its next timer before time moves on.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await flushAsync();
    for (let next = this.nextDue(target); next; next = this.nextDue(target)) {
      this.current = next.due;
      next.fn();
      await flushAsync();
    }
    this.current = target;
    await flushAsync();
  }

  private nextDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    let bestIndex = -1;
    this.timers = this.timers.filter((t) => !t.cancelled);
    this.timers.forEach((t, i) => {
      if (t.due <= limit && (!best || t.due < best.due || (t.due === best.due && t.seq < best.seq))) {
        best = t;
        bestIndex = i;
      }
    });
    if (best) this.timers.splice(bestIndex, 1);
    return best;
  }
}

/** Lets queued promise continuations (several hops deep) run. */
export async function flushAsync(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}
