import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../client.js';
import type { KubeObject } from '../object.js';
import { ConfigMaps } from '../resources.js';
import { SharedInformerFactory } from './informer-factory.js';
import { FakeClock, FakeListWatch, openWatch } from '../testing/index.js';

const emptyListWatch = (): KubeClient =>
  new FakeListWatch<KubeObject>({
    list: () => ({ metadata: { resourceVersion: '1' }, items: [] }),
    watch: (_q, signal) => openWatch([], signal),
  }) as unknown as KubeClient;

describe('SharedInformerFactory', () => {
  it("adds one abort listener to the caller's signal however many informers it runs, and stops them all", async () => {
    // Node warns (MaxListenersExceededWarning) past 10 listeners on one signal; an operator has more informers.
    const factory = new SharedInformerFactory({ client: emptyListWatch(), clock: new FakeClock(0) });
    const informers = Array.from({ length: 15 }, (_, i) =>
      factory.informerFor({ type: ConfigMaps, namespace: `ns-${i}` }),
    );
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    // One more informer after start is launched at once, on its own signal too.
    const late = factory.informerFor({ type: ConfigMaps, namespace: 'late' });
    expect(await factory.waitForCacheSync()).toBe(true);
    expect(late.hasSynced()).toBe(true);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    stop.abort();
    await running;
    expect(informers.every((i) => i.hasSynced())).toBe(true);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });
});
