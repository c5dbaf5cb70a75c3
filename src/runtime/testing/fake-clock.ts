// A manually driven Clock for tests (as k8s.io/utils/clock/testing): time moves only through step(), advance()
// and set(). Lives apart from the runtime's production entry point, which never exports it.
import { sleepWith, type Clock, type Timer } from '../clock.js';

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
