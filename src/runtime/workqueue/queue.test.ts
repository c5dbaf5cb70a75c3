import { describe, expect, it } from 'vitest';
import { WorkQueue } from './queue.js';
import { flushAsync } from '../testing/index.js';

/** Deterministic PRNG (mulberry32) so property runs are reproducible. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('WorkQueue', () => {
  it('hands out keys in first-added order and drops duplicates of queued keys', async () => {
    const q = new WorkQueue<string>();
    for (const k of ['a', 'b', 'a', 'c', 'b']) q.add(k);
    expect(q.len()).toBe(3);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['a', 'b', 'c']);
    expect(q.len()).toBe(0);
  });

  it('re-queues a key added while it is processed exactly once, after done()', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    expect(await q.get()).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    expect(q.tryGet()).toBeUndefined();
    q.done('a');
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('wakes a waiting get() when a key arrives', async () => {
    const q = new WorkQueue<string>();
    const got = q.get();
    q.add('x');
    expect(await got).toBe('x');
  });

  it('after shutDown ignores adds, still hands out queued keys, then resolves undefined', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.shutDown();
    q.add('b');
    expect(q.shuttingDown()).toBe(true);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBeUndefined();
  });

  it('releases waiting getters on shutdown', async () => {
    const q = new WorkQueue<string>();
    const waiting = [q.get(), q.get()];
    q.shutDown();
    expect(await Promise.all(waiting)).toEqual([undefined, undefined]);
  });

  it('shutDownWithDrain resolves only after in-flight keys are done', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    const key = await q.get();
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    await flushAsync();
    expect(drained).toBe(false);
    q.done(key ?? '');
    await drain;
    expect(drained).toBe(true);
  });

  it('never processes one key concurrently and processes every key after its last add (random workload)', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const random = rng(seed);
      const q = new WorkQueue<string>();
      const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'];
      const inFlight = new Set<string>();
      /** Per key: add sequence number of the latest add, and of the latest add seen as started. */
      const lastAdd = new Map<string, number>();
      const coveredUpTo = new Map<string, number>();
      let seq = 0;
      let violations = 0;
      let processed = 0;

      const worker = async (): Promise<void> => {
        for (;;) {
          const key = await q.get();
          if (key === undefined) return;
          if (inFlight.has(key)) violations++;
          inFlight.add(key);
          // Everything added before this start is covered by this processing.
          coveredUpTo.set(key, seq);
          for (let i = Math.floor(random() * 3); i > 0; i--) await Promise.resolve();
          if (random() < 0.3) await new Promise((r) => setImmediate(r));
          inFlight.delete(key);
          processed++;
          q.done(key);
        }
      };
      const workers = Array.from({ length: 4 }, () => worker());
      for (let i = 0; i < 2000; i++) {
        const key = keys[Math.floor(random() * keys.length)] ?? 'k0';
        seq++;
        lastAdd.set(key, seq);
        q.add(key);
        if (random() < 0.2) await new Promise((r) => setImmediate(r));
      }
      await q.shutDownWithDrain();
      q.shutDown();
      await Promise.all(workers);
      expect(violations).toBe(0);
      expect(processed).toBeGreaterThan(keys.length);
      for (const [key, added] of lastAdd) expect(coveredUpTo.get(key) ?? 0).toBeGreaterThanOrEqual(added);
    }
  });
});
