// Informer lifecycle driven by a FakeClock: the reflector keeps retrying an unreachable server with capped
// backoff (never a silent stop), and handlers get periodic resyncs. The "server" is a closed loopback port: no
// API server is faked, every attempt is a real connection that is refused.
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../client.js';
import { FakeClock, flushAsync } from '../clock.js';
import type { KubeObject } from '../object.js';
import { ConfigMaps } from '../resources.js';
import { DefaultSharedInformer } from './shared-informer.js';

function unreachableClient(): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new KubeClient(kc);
}

/** Lets real I/O (a refused connect) complete, then runs pending continuations. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 5));
    await flushAsync();
  }
}

describe('informer lifecycle', () => {
  it('retries a failing list forever with backoff capped at maxMs', async () => {
    const clock = new FakeClock(0);
    const informer = new DefaultSharedInformer<KubeObject>({
      client: unreachableClient(),
      type: ConfigMaps,
      clock,
      backoff: { initialMs: 100, maxMs: 400, jitter: 0 },
    });
    const stop = new AbortController();
    const running = informer.start(stop.signal);
    const attemptsAt: number[] = [];
    let seen = 0;
    for (let step = 0; step < 60 && attemptsAt.length < 8; step++) {
      await settle();
      if (informer.stats.watchErrors > seen) {
        seen = informer.stats.watchErrors;
        attemptsAt.push(clock.now());
      }
      await clock.advance(50);
    }
    // Failures at 0, then after 100, 200, 400, 400, 400... ms of backoff: growth, then a steady cap.
    const gaps = attemptsAt.slice(1).map((t, i) => t - (attemptsAt[i] ?? 0));
    expect(gaps.slice(0, 5)).toEqual([100, 200, 400, 400, 400]);
    expect(informer.hasSynced()).toBe(false);
    stop.abort();
    await running;
  });

  it('delivers periodic resyncs as onUpdate(obj, obj) per handler period', async () => {
    const clock = new FakeClock(0);
    const informer = new DefaultSharedInformer<KubeObject>({
      client: unreachableClient(),
      type: ConfigMaps,
      clock,
      backoff: { initialMs: 60_000, maxMs: 60_000, jitter: 0 },
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
    informer.replace([{ metadata: { namespace: 'n', name: 'a', resourceVersion: '1' } }], '1');
    for (let i = 0; i < 31; i++) await clock.advance(1000);
    expect(fast).toEqual(['resync a@10000', 'resync a@20000', 'resync a@30000']);
    expect(slow).toEqual(['a@30000']);
    stop.abort();
    await running;
  });
});
