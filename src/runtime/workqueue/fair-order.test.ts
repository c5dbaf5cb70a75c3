import { describe, expect, it } from 'vitest';
import { Controller } from '../controller.js';
import { splitObjectKey } from '../object.js';
import { FairOrder } from './fair-order.js';
import { WorkQueue } from './queue.js';
import { RateLimitingWorkQueue } from './rate-limiting-queue.js';
import { ItemExponentialFailureRateLimiter } from './rate-limiters.js';
import { FakeClock, flushAsync } from '../testing/index.js';

const namespaceOf = (key: string): string => splitObjectKey(key).namespace;
const fairQueue = (): WorkQueue<string> => new WorkQueue<string>({ order: new FairOrder(namespaceOf) });

/** Takes every waiting key, marking each done at once; returns them in hand-out order. */
function drain(q: WorkQueue<string>): string[] {
  const out: string[] = [];
  for (let k = q.tryGet(); k !== undefined; k = q.tryGet()) {
    out.push(k);
    q.done(k);
  }
  return out;
}

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

describe('FairOrder', () => {
  it('hands out one key per shard in turn, first in first out within a shard', () => {
    const q = fairQueue();
    for (const k of ['a/1', 'a/2', 'a/3', 'a/4', 'b/1', 'c/1', 'c/2']) q.add(k);
    expect(drain(q)).toEqual(['a/1', 'b/1', 'c/1', 'a/2', 'c/2', 'a/3', 'a/4']);
  });

  it("serves another shard's key second, however many keys one shard has waiting", () => {
    const q = fairQueue();
    for (let i = 0; i < 1000; i++) q.add(`hostile/${i}`);
    q.add('good/web');
    const out = drain(q);
    expect(out.indexOf('good/web')).toBe(1);
    expect(out).toHaveLength(1001);
  });

  it('puts a shard that joins, or one emptied and refilled, at the end of the turn order', () => {
    const q = fairQueue();
    for (const k of ['a/1', 'b/1', 'b/2']) q.add(k);
    expect(q.tryGet()).toBe('a/1'); // a has nothing left: it leaves the turn order
    q.done('a/1');
    q.add('a/2'); // refilled: after b, which is still waiting
    q.add('c/1');
    expect(drain(q)).toEqual(['b/1', 'a/2', 'c/1', 'b/2']);
    // Emptied completely, then refilled: starts from scratch.
    q.add('z/1');
    q.add('a/3');
    expect(drain(q)).toEqual(['z/1', 'a/3']);
  });

  it('keeps the stingy guarantees: a queued key once, a key added while processing once, after done()', () => {
    const q = fairQueue();
    q.add('a/1');
    q.add('a/1');
    q.add('b/1');
    expect(q.len()).toBe(2);
    expect(q.tryGet()).toBe('a/1');
    q.add('a/1');
    q.add('a/1');
    q.add('a/2');
    expect(q.len()).toBe(2); // b/1 and a/2; a/1 waits for done()
    expect(q.tryGet()).toBe('b/1');
    expect(q.tryGet()).toBe('a/2');
    expect(q.tryGet()).toBeUndefined(); // a/1 is still being processed: not handed out twice
    q.done('a/1');
    expect(q.tryGet()).toBe('a/1');
    expect(q.tryGet()).toBeUndefined();
  });

  it('hands out the queued keys after shutDown(), then undefined, and ignores new adds', async () => {
    const q = fairQueue();
    q.add('a/1');
    q.add('b/1');
    const waiting = new WorkQueue<string>({ order: new FairOrder(namespaceOf) });
    const blocked = waiting.get();
    waiting.shutDown();
    expect(await blocked).toBeUndefined();
    q.shutDown();
    q.add('c/1');
    expect(await q.get()).toBe('a/1');
    expect(await q.get()).toBe('b/1');
    expect(await q.get()).toBeUndefined();
    let drained = false;
    const drainDone = q.shutDownWithDrain().then(() => (drained = true));
    await flushAsync();
    expect(drained).toBe(false); // a/1 and b/1 are still being processed
    q.done('a/1');
    q.done('b/1');
    await drainDone;
  });

  it('hands a waiting get() the next key and serves shards in turn through the delaying queue', async () => {
    const clock = new FakeClock(0);
    const q = new RateLimitingWorkQueue<string>({
      clock,
      order: new FairOrder(namespaceOf),
      rateLimiter: new ItemExponentialFailureRateLimiter(10, 1000),
    });
    const first = q.get();
    q.add('a/1');
    expect(await first).toBe('a/1');
    q.addAfter('a/2', 100);
    q.addAfter('a/3', 100);
    q.addRateLimited('b/1'); // 10 ms
    clock.step(100);
    q.add('c/1');
    expect(drain(q)).toEqual(['b/1', 'a/2', 'c/1', 'a/3']);
    q.done('a/1');
  });

  it('keeps the invariants under random adds, gets and dones over many shards', () => {
    // Plain checks in the loop (an expect() per step is slow); the first broken invariant is reported.
    const problems: string[] = [];
    const check = (ok: boolean, what: () => string): void => {
      if (!ok && problems.length === 0) problems.push(what());
    };
    for (let seed = 1; seed <= 6 && problems.length === 0; seed++) {
      const random = rng(seed);
      const order = new FairOrder(namespaceOf);
      const q = new WorkQueue<string>({ order });
      const shards = 1 + Math.floor(random() * 200);
      // Skewed: a few shards hold most keys, as hostile tenants would.
      const keyOf = (): string => `ns${Math.floor(random() ** 3 * shards)}/p${Math.floor(random() * 20)}`;
      const processing = new Set<string>();
      /** Keys added and not handed out since: each must be handed out (again) exactly once. */
      const owed = new Set<string>();
      /** For each waiting key: keys handed out since it started waiting. */
      const waitedPops = new Map<string, number>();
      const shardsSeen = new Set<string>();
      for (let step = 0; step < 2000 && problems.length === 0; step++) {
        const r = random();
        if (r < 0.55) {
          const k = keyOf();
          q.add(k);
          shardsSeen.add(namespaceOf(k));
          owed.add(k);
        } else if (r < 0.85) {
          const k = q.tryGet();
          if (k === undefined) {
            for (const o of owed)
              check(processing.has(o), () => `seed ${seed}: ${o} waits but was not handed out`);
            continue;
          }
          check(!processing.has(k), () => `seed ${seed}: ${k} handed out twice`);
          check(owed.delete(k), () => `seed ${seed}: ${k} handed out without being added`);
          waitedPops.delete(k);
          for (const [o, n] of waitedPops) waitedPops.set(o, n + 1);
          processing.add(k);
        } else if (processing.size > 0) {
          const k = [...processing][Math.floor(random() * processing.size)] as string;
          processing.delete(k);
          q.done(k);
        }
        // Waiting = owed and not being processed; each waits once.
        let waiting = 0;
        for (const k of owed) {
          if (processing.has(k)) continue;
          waiting++;
          if (!waitedPops.has(k)) waitedPops.set(k, 0);
        }
        check(q.len() === waiting, () => `seed ${seed}: len ${q.len()}, ${waiting} waiting`);
        // Round-robin bound: at most 20 keys of its own shard ahead (20 names), one key per other shard each turn.
        for (const [o, n] of waitedPops)
          check(n <= 21 * shardsSeen.size, () => `seed ${seed}: ${o} waited ${n} hand-outs`);
      }
      for (const k of processing) q.done(k);
      const rest = drain(q);
      check(rest.length === owed.size && rest.every((k) => owed.has(k)), () => `seed ${seed}: lost keys`);
      check(order.shardCount() === 0, () => `seed ${seed}: emptied shards kept`);
    }
    expect(problems).toEqual([]);
  }, 30_000);

  it("lets a controller with shardOf reconcile another tenant's key before a busy tenant's backlog", async () => {
    const clock = new FakeClock(0);
    const reconciled: string[] = [];
    const controller = new Controller<string>({
      name: 'fair',
      workers: 1,
      clock,
      shardOf: namespaceOf,
      reconciler: {
        reconcile: async (key) => {
          reconciled.push(key);
        },
      },
    });
    for (let i = 0; i < 50; i++) controller.enqueue(`hostile-${i % 2}/p${i}`);
    controller.enqueue('good/web');
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    for (let i = 0; i < 10 && reconciled.length < 51; i++) await flushAsync();
    expect(reconciled).toHaveLength(51);
    expect(reconciled.indexOf('good/web')).toBe(2);
    stop.abort();
    await running;
  });
});
