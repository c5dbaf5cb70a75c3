import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';

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
