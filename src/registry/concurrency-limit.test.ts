import { describe, expect, it } from 'vitest';
import { KeyedConcurrencyLimit } from './concurrency-limit.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('KeyedConcurrencyLimit', () => {
  it('runs at most `limit` tasks per key, in arrival order, and keys do not share slots', async () => {
    const limit = new KeyedConcurrencyLimit(2);
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const tasks = gates.map((g, i) =>
      limit.run('a', async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    const other = limit.run('b', async () => 'b');
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    expect(limit.running('a')).toBe(2);
    expect(await other).toBe('b');
    gates[0]?.resolve();
    await tasks[0];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    gates[1]?.resolve();
    gates[2]?.resolve();
    expect(await Promise.all(tasks)).toEqual([0, 1, 2]);
    expect(limit.running('a')).toBe(0);
  });

  it('frees the slot when a task fails', async () => {
    const limit = new KeyedConcurrencyLimit(1);
    await expect(limit.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await limit.run('a', async () => 1)).toBe(1);
  });
});

describe('KeyedConcurrencyLimit cancellation', () => {
  it('removes an aborted waiter from the queue and rejects it with the abort reason', async () => {
    const limit = new KeyedConcurrencyLimit(1);
    const gate = deferred();
    const holder = limit.run('a', () => gate.promise);
    const controller = new AbortController();
    let cancelledRan = false;
    const cancelled = limit.run(
      'a',
      async () => {
        cancelledRan = true;
      },
      controller.signal,
    );
    const next = limit.run('a', async () => 'next');
    expect(limit.waiting('a')).toBe(2);
    const reason = new Error('inspection cancelled');
    controller.abort(reason);
    await expect(cancelled).rejects.toBe(reason);
    expect(limit.waiting('a')).toBe(1);
    gate.resolve();
    await holder;
    expect(await next).toBe('next');
    expect(cancelledRan).toBe(false);
    expect(limit.running('a')).toBe(0);
  });

  it('rejects at once when the signal is already aborted, without taking a slot', async () => {
    const limit = new KeyedConcurrencyLimit(1);
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(limit.run('a', async () => 1, controller.signal)).rejects.toThrow('gone');
    expect(limit.running('a')).toBe(0);
  });

  it('forgets a key whose only waiter was aborted after the holder finished', async () => {
    const limit = new KeyedConcurrencyLimit(1);
    const gate = deferred();
    const holder = limit.run('a', () => gate.promise);
    const controller = new AbortController();
    const waiter = limit.run('a', async () => 1, controller.signal);
    controller.abort();
    await expect(waiter).rejects.toBeInstanceOf(DOMException);
    gate.resolve();
    await holder;
    expect(limit.running('a')).toBe(0);
    expect(limit.waiting('a')).toBe(0);
  });

  it('tryAcquire takes a free slot without waiting, refuses a saturated key, and hands freed slots to waiters', async () => {
    const limit = new KeyedConcurrencyLimit(2);
    const first = limit.tryAcquire('a');
    const second = limit.tryAcquire('a');
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(limit.tryAcquire('a')).toBeUndefined();
    expect(limit.tryAcquire('b')).toBeDefined(); // keys are independent
    const waiter = limit.run('a', async () => 'ran');
    first?.();
    first?.(); // idempotent: the second call must not free another slot
    expect(await waiter).toBe('ran');
    expect(limit.running('a')).toBe(1);
    second?.();
    expect(limit.running('a')).toBe(0);
    expect(limit.tryAcquire('a')).toBeDefined();
  });

  it('tryAcquire does not jump the queue of waiters', async () => {
    const limit = new KeyedConcurrencyLimit(1);
    const gate = deferred();
    const holder = limit.run('a', () => gate.promise);
    const waiter = limit.run('a', async () => 1);
    expect(limit.tryAcquire('a')).toBeUndefined();
    gate.resolve();
    await holder;
    await waiter;
    expect(limit.running('a')).toBe(0);
  });
});
