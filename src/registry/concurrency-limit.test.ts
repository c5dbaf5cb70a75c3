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
