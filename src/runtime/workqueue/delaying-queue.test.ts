import { describe, expect, it } from 'vitest';
import { MAX_TIMER_DELAY_MS, type Timer } from '../clock.js';
import { DelayingWorkQueue } from './delaying-queue.js';
import { FakeClock } from '../testing/index.js';

describe('DelayingWorkQueue', () => {
  it('makes a key available only once its delay has passed on the clock', () => {
    const clock = new FakeClock();
    const q = new DelayingWorkQueue<string>({ clock });
    q.addAfter('a', 100);
    expect(q.len()).toBe(0);
    clock.step(99);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.tryGet()).toBe('a');
  });

  it('orders delayed keys by due time and keeps the earliest delay of a key', () => {
    const clock = new FakeClock();
    const q = new DelayingWorkQueue<string>({ clock });
    q.addAfter('late', 300);
    q.addAfter('early', 100);
    q.addAfter('late', 50); // earlier: wins
    q.addAfter('early', 500); // later: ignored
    clock.step(60);
    expect(q.tryGet()).toBe('late');
    clock.step(40);
    expect(q.tryGet()).toBe('early');
    expect(q.waitingLen()).toBe(0);
  });

  it('adds at once for a zero or negative delay', () => {
    const q = new DelayingWorkQueue<string>({ clock: new FakeClock() });
    q.addAfter('now', 0);
    expect(q.tryGet()).toBe('now');
  });

  it('drops waiting keys and cancels its timer at shutdown', () => {
    const clock = new FakeClock();
    const q = new DelayingWorkQueue<string>({ clock });
    q.addAfter('a', 100);
    q.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    clock.step(200);
    expect(q.len()).toBe(0);
  });
});

/** A FakeClock that mimics Node's setTimeout overflow: a delay above 2^31-1 ms fires after 1 ms. */
class OverflowingClock extends FakeClock {
  readonly requested: number[] = [];
  override setTimer(fn: () => void, ms: number): Timer {
    this.requested.push(ms);
    if (this.requested.length > 1000) throw new Error('timer re-arm spin: more than 1000 timers requested');
    return super.setTimer(fn, ms > MAX_TIMER_DELAY_MS ? 1 : ms);
  }
}

describe('DelayingWorkQueue with delays beyond the timer limit', () => {
  const DAY_MS = 86_400_000;

  it('waits out a 60-day delay in capped slices instead of re-arming every millisecond', () => {
    const clock = new OverflowingClock(0);
    const q = new DelayingWorkQueue<string>({ clock });
    q.addAfter('far', 60 * DAY_MS);
    clock.step(10_000);
    expect(clock.requested).toHaveLength(1); // no 1 ms re-arm spin
    expect(q.len()).toBe(0);
    clock.step(60 * DAY_MS - 10_001);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.tryGet()).toBe('far');
    expect(Math.max(...clock.requested)).toBeLessThanOrEqual(MAX_TIMER_DELAY_MS);
    expect(clock.requested).toHaveLength(3); // ceil(60 days / 24.8 days)
    expect(clock.pendingTimers()).toBe(0);
  });

  it('still fires a short delay added while a long slice is pending', () => {
    const clock = new OverflowingClock(0);
    const q = new DelayingWorkQueue<string>({ clock });
    q.addAfter('far', 40 * DAY_MS);
    q.addAfter('near', 500);
    clock.step(500);
    expect(q.tryGet()).toBe('near');
    clock.step(40 * DAY_MS - 500);
    expect(q.tryGet()).toBe('far');
  });
});
