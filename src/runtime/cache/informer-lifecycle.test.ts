// Informer lifecycle driven purely by a FakeClock and a scripted list/watch source: the reflector keeps retrying a
// failing server with capped backoff (never a silent stop), and handlers get periodic resyncs. No real I/O and no
// real sleeps, so the exact backoff schedule can be asserted.
import { describe, expect, it } from 'vitest';
import { ApiTransportError } from '../errors.js';
import type { KubeObject } from '../object.js';
import { ConfigMaps } from '../resources.js';
import { DefaultSharedInformer } from './shared-informer.js';
import { FakeClock, FakeListWatch, openWatch } from '../testing/index.js';

describe('informer lifecycle', () => {
  it('retries a failing list forever with backoff capped at maxMs', async () => {
    const clock = new FakeClock(0);
    const attemptsAt: number[] = [];
    const refusing = new FakeListWatch<KubeObject>({
      list: () => {
        attemptsAt.push(clock.now());
        throw new ApiTransportError('GET', '/api/v1/configmaps', new Error('connect ECONNREFUSED'));
      },
      watch: () => {
        throw new Error('no watch may start before a list succeeded');
      },
    });
    const informer = new DefaultSharedInformer<KubeObject>({
      client: refusing,
      type: ConfigMaps,
      clock,
      backoff: { initialMs: 100, maxMs: 400, jitter: 0 },
    });
    const stop = new AbortController();
    const running = informer.start(stop.signal);
    await clock.advance(3_000);
    // Failures at 0, then after 100, 200, 400, 400, 400... ms of backoff: growth, then a steady cap, forever.
    const gaps = attemptsAt.slice(1).map((t, i) => t - (attemptsAt[i] ?? 0));
    expect(attemptsAt[0]).toBe(0);
    expect(gaps.slice(0, 5)).toEqual([100, 200, 400, 400, 400]);
    expect(gaps.every((g) => g <= 400)).toBe(true);
    expect(attemptsAt.length).toBe(9); // 0, 100, 300, 700, 1100, 1500, 1900, 2300, 2700
    expect(informer.stats.watchErrors).toBe(attemptsAt.length);
    expect(informer.hasSynced()).toBe(false);
    stop.abort();
    await running;
  });

  it('delivers periodic resyncs as onUpdate(obj, obj) per handler period', async () => {
    const clock = new FakeClock(0);
    const informer = new DefaultSharedInformer<KubeObject>({
      client: new FakeListWatch<KubeObject>({
        list: () => ({
          metadata: { resourceVersion: '1' },
          items: [{ metadata: { namespace: 'n', name: 'a', resourceVersion: '1' } }],
        }),
        watch: (_query, signal) => openWatch([], signal),
      }),
      type: ConfigMaps,
      clock,
    });
    const fast: string[] = [];
    const slow: string[] = [];
    informer.addEventHandler(
      {
        onUpdate: (o, n) => fast.push(`${o === n ? 'resync' : 'update'} ${n.metadata?.name}@${clock.now()}`),
      },
      { resyncPeriodMs: 10_000 },
    );
    informer.addEventHandler(
      { onUpdate: (_o, n) => slow.push(`${n.metadata?.name}@${clock.now()}`) },
      { resyncPeriodMs: 30_000 },
    );
    const stop = new AbortController();
    const running = informer.start(stop.signal);
    for (let i = 0; i < 31; i++) await clock.advance(1000);
    expect(fast).toEqual(['resync a@10000', 'resync a@20000', 'resync a@30000']);
    expect(slow).toEqual(['a@30000']);
    stop.abort();
    await running;
  });
});
