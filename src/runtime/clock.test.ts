import { describe, expect, it } from 'vitest';
import { MAX_TIMER_DELAY_MS, cappedTimer, type TimerHost } from './clock.js';
import { FakeClock } from './testing/index.js';

describe('FakeClock', () => {
  it('fires timers in due order (ties in scheduling order) and never early', () => {
    const clock = new FakeClock(1000);
    const fired: string[] = [];
    clock.setTimer(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimer(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimer(() => fired.push(`c@${clock.now()}`), 20);
    clock.step(9);
    expect(fired).toEqual([]);
    clock.step(11);
    expect(fired).toEqual(['a@1010', 'b@1020', 'c@1020']);
    expect(clock.now()).toBe(1020);
  });

  it('runs timers scheduled by timers within the same step, and honours cancel', () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    const cancelled = clock.setTimer(() => fired.push(-1), 5);
    clock.setTimer(() => clock.setTimer(() => fired.push(clock.now()), 10), 10);
    cancelled.cancel();
    clock.step(25);
    expect(fired).toEqual([20]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('resolves sleep after the time passed, or at once when aborted', async () => {
    const clock = new FakeClock(0);
    let woke = false;
    const sleeping = clock.sleep(100).then(() => (woke = true));
    await clock.advance(99);
    expect(woke).toBe(false);
    await clock.advance(1);
    await sleeping;
    expect(woke).toBe(true);
    const ac = new AbortController();
    const aborted = clock.sleep(1_000_000, ac.signal);
    ac.abort();
    await aborted;
    expect(clock.pendingTimers()).toBe(0);
  });
});

/** Records what cappedTimer asks of setTimeout; the test fires the pending callback by hand. */
class RecordingHost implements TimerHost<number> {
  readonly delays: number[] = [];
  readonly cleared: number[] = [];
  private readonly callbacks = new Map<number, () => void>();
  private next = 0;
  setTimeout(fn: () => void, ms: number): number {
    this.delays.push(ms);
    this.callbacks.set(this.next, fn);
    return this.next++;
  }
  clearTimeout(handle: number): void {
    this.cleared.push(handle);
  }
  /** Runs the most recently scheduled callback (what the host would do when its delay elapsed). */
  fireLatest(): void {
    this.callbacks.get(this.next - 1)?.();
  }
}

describe('cappedTimer (realClock timers)', () => {
  it('passes short delays through unchanged and treats negative ones as 0', () => {
    const host = new RecordingHost();
    let fired = 0;
    cappedTimer(host, () => fired++, 1500);
    cappedTimer(host, () => fired++, -5);
    expect(host.delays).toEqual([1500, 0]);
    host.fireLatest();
    expect(fired).toBe(1);
  });

  it('splits a delay beyond 2^31-1 ms into slices and fires only after the last one', () => {
    const host = new RecordingHost();
    let fired = 0;
    const total = 3 * MAX_TIMER_DELAY_MS + 42;
    cappedTimer(host, () => fired++, total);
    for (let i = 0; i < 3; i++) {
      host.fireLatest();
      expect(fired).toBe(0);
    }
    host.fireLatest();
    expect(fired).toBe(1);
    expect(host.delays).toEqual([MAX_TIMER_DELAY_MS, MAX_TIMER_DELAY_MS, MAX_TIMER_DELAY_MS, 42]);
    expect(host.delays.reduce((a, b) => a + b, 0)).toBe(total);
  });

  it('cancels whichever slice is pending, and ignores a late callback of a cancelled slice', () => {
    const host = new RecordingHost();
    let fired = 0;
    const timer = cappedTimer(host, () => fired++, 2 * MAX_TIMER_DELAY_MS);
    host.fireLatest(); // first slice elapsed; the second (handle 1) is pending
    timer.cancel();
    expect(host.cleared).toEqual([1]);
    host.fireLatest();
    expect(fired).toBe(0);
    expect(host.delays).toHaveLength(2);
  });

  it('never fires an infinite delay but keeps re-arming in capped slices', () => {
    const host = new RecordingHost();
    let fired = 0;
    cappedTimer(host, () => fired++, Infinity);
    for (let i = 0; i < 5; i++) host.fireLatest();
    expect(fired).toBe(0);
    expect(host.delays.every((d) => d === MAX_TIMER_DELAY_MS)).toBe(true);
  });
});
