// Fairness across namespaces (issue #20), without a server: the real Controller (fair work queue, 8 workers) and
// PodReconciler with the operator's default caps, a fake clock and a fake registry. 8 hostile namespaces, each with
// pods on 2 registry names of its own that never answer, must not keep another tenant's pods from a worker: a pod
// the cache answers is placed at once, and one that needs its (fast) registry is inspected at the first slot that
// frees, before the hostile pods still waiting. Asserts on order and counts; time only moves when the test says.
import { describe, expect, it } from 'vitest';
import { clusterConfig, pod } from '../../../src/podplacement/builders.js';
import { defaultInspectionSlotCaps } from '../../../src/podplacement/inspection-slots.js';
import type { PodMergePatch } from '../../../src/podplacement/placement-plan.js';
import { PodReconciler } from '../../../src/podplacement/pod-reconciler.js';
import type { Pod } from '../../../src/podplacement/pod-types.js';
import { PullSecretResolver } from '../../../src/podplacement/pull-secrets.js';
import {
  RegistryError,
  type ImageInspection,
  type ImageInspector,
  type InspectOptions,
} from '../../../src/registry/index.js';
import { Controller, silentLogger, splitObjectKey } from '../../../src/runtime/index.js';
import { FakeClock, flushAsync } from '../../../src/runtime/testing/index.js';

const WORKERS = 8;
const DEADLINE_MS = 15_000;
const HOSTILE_NAMESPACES = 8;
const HOSTILE_PODS_PER_NAMESPACE = 8;
const FAST_IMAGE = 'fast.test/app:1';
const CACHED_IMAGE = 'fast.test/cached:1';

/**
 * Registries `*.silent.test` never answer (only the caller's signal ends the wait); others answer at once.
 * CACHED_IMAGE is answered by the cache.
 */
class FakeRegistry implements ImageInspector {
  /** Images asked of their registry (not answered by the cache), in order. */
  readonly inspected: string[] = [];
  /** Images the cache answers: CACHED_IMAGE, and each image once its registry answered (as CachingInspector). */
  private readonly cached = new Set([CACHED_IMAGE]);
  isCached(image: string): boolean {
    return this.cached.has(image);
  }
  inspect(image: string, options?: InspectOptions): Promise<ImageInspection> {
    if (!this.cached.has(image)) this.inspected.push(image);
    if (!image.split('/')[0]?.endsWith('.silent.test')) {
      this.cached.add(image);
      return Promise.resolve({
        reference: image,
        digest: 'sha256:0',
        mediaType: 'x',
        kind: 'index',
        architectures: ['arm64'],
        platforms: [],
        operatorBundle: false,
        source: image,
      });
    }
    return new Promise((_resolve, reject) => {
      const cancel = (): void =>
        reject(new RegistryError('TESSERA_REGISTRY_ABORTED', 'inspection cancelled'));
      if (options?.signal?.aborted) cancel();
      options?.signal?.addEventListener('abort', cancel, { once: true });
    });
  }
}

function cluster() {
  const clock = new FakeClock();
  const store = new Map<string, Pod>();
  /** Pod keys in the order their gate was removed. */
  const ungated: string[] = [];
  const registry = new FakeRegistry();
  const add = (p: Pod): string => {
    const key = `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
    store.set(key, p);
    return key;
  };
  const woken: { controller?: Controller } = {};
  const reconciler = new PodReconciler({
    getPod: (key) => store.get(key),
    patchPod: async (ns, name, patch: PodMergePatch) => {
      const key = `${ns}/${name}`;
      const cur = store.get(key);
      if (!cur || !patch.spec?.schedulingGates) return;
      store.set(key, { ...cur, spec: { ...cur.spec, schedulingGates: patch.spec.schedulingGates } });
      ungated.push(key);
    },
    clusterConfig: () => clusterConfig(),
    podPlacementConfigs: () => [],
    inspector: registry,
    pullSecrets: new PullSecretResolver({ getSecret: async () => undefined, globalSecret: () => undefined }),
    events: { event: () => undefined },
    operatorNamespace: 'op',
    clock,
    logger: silentLogger,
    inspectionDeadlineMs: DEADLINE_MS,
    ...defaultInspectionSlotCaps(WORKERS),
    wake: (key) => woken.controller?.enqueue(key),
  });
  const controller = new Controller<string>({
    name: 'podplacement-pods',
    reconciler,
    workers: WORKERS,
    clock,
    shardOf: (key) => splitObjectKey(key).namespace,
  });
  woken.controller = controller;
  return { clock, store, ungated, registry, add, controller, reconciler };
}

/** Lets the workers run until `done()` holds (no clock change); fails naming `what` if it never does. */
async function settle(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await flushAsync();
  if (!done()) throw new Error(`never happened: ${what}`);
}

describe('8 hostile namespaces with 2 silent registries each', () => {
  it("cannot keep another tenant's pods from a worker or from the next registry slot", async () => {
    const c = cluster();
    const stop = new AbortController();
    const running = c.controller.start(stop.signal);
    try {
      for (let n = 0; n < HOSTILE_NAMESPACES; n++)
        for (let i = 0; i < HOSTILE_PODS_PER_NAMESPACE; i++) {
          const image = `r${i % 2}.ns${n}.silent.test/app:1`;
          c.controller.enqueue(c.add(pod(`h${i}`, `hostile-${n}`).withImages(image).withGate().build()));
        }
      // The default total cap: 8 workers less a quarter, so 2 stay free for pods the cache answers.
      const caps = { maxInspections: 6 };
      expect(defaultInspectionSlotCaps(WORKERS).maxInspections).toBe(caps.maxInspections);
      await settle(
        () => c.registry.inspected.length >= caps.maxInspections,
        'the hostile inspections started',
      );
      // Every hostile pod is queued or waiting, and no more than the total cap wait on the silent registries.
      await flushAsync();
      expect(c.registry.inspected).toHaveLength(caps.maxInspections);

      // The good tenant arrives: a pod the cache answers and two that need their registry (fast, uncached).
      const cached = c.add(pod('cached', 'good').withImages(CACHED_IMAGE).withGate().build());
      const fresh = ['fresh-0', 'fresh-1'].map((name) =>
        c.add(pod(name, 'good').withImages(FAST_IMAGE).withGate().build()),
      );
      for (const key of [cached, ...fresh]) c.controller.enqueue(key);
      // The cached one is placed at once: workers stay free for it while the hostile pods wait.
      await settle(() => c.ungated.includes(cached), 'the cached pod placed while the hostile ones wait');
      expect(c.ungated).toEqual([cached]);
      expect(c.registry.inspected).toHaveLength(caps.maxInspections);

      // The hostile inspections reach their deadline together. Of the slots that free, the good tenant gets the
      // third (after the two hostile namespaces that waited with nothing in flight since before it; see
      // inspection-slots.test.ts), not a slot after the 58 hostile pods that wait: it is inspected in this round.
      c.clock.step(DEADLINE_MS);
      await settle(() => c.ungated.includes(fresh[0] ?? ''), 'the first fresh pod placed');
      const round = c.registry.inspected.slice(caps.maxInspections);
      expect(round.slice(0, caps.maxInspections)).toContain(FAST_IMAGE);
      expect(c.registry.inspected.filter((i) => i === FAST_IMAGE)).toHaveLength(1);
      // The other one waited for a slot too; it looks again after the safety-net delay (2 s, well before any
      // hostile deadline) and the cache now answers it.
      c.clock.step(2_000);
      await settle(() => c.ungated.includes(fresh[1] ?? ''), 'the second fresh pod placed');
      // Meanwhile only the hostile pods whose deadline passed were released; the other 58 still wait.
      expect(c.ungated.filter((k) => k.startsWith('hostile-'))).toHaveLength(caps.maxInspections);
    } finally {
      stop.abort();
      c.clock.step(DEADLINE_MS);
      await running;
    }
  });
});
