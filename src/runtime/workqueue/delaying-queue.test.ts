import { describe, expect, it } from 'vitest';
import { FakeClock } from '../clock.js';
import { DelayingWorkQueue } from './delaying-queue.js';

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
