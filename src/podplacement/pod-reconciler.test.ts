import { describe, expect, it } from 'vitest';
import { ApiStatusError, FakeClock, silentLogger, type EventRecorder } from '../runtime/index.js';
import {
  Keyring,
  RegistryError,
  type ImageInspection,
  type ImageInspector,
  type InspectOptions,
} from '../registry/index.js';
import { clusterConfig, pod } from './builders.js';
import { EVENT_REASONS, LABELS, MAX_RETRY_COUNT } from './constants.js';
import type { PodMergePatch } from './placement-plan.js';
import { PodReconciler } from './pod-reconciler.js';
import type { Pod } from './pod-types.js';
import { PullSecretResolver } from './pull-secrets.js';

class FakeInspector implements ImageInspector {
  calls: { image: string; bypass: boolean; keyring: string }[] = [];
  constructor(private readonly archs: Record<string, string[] | Error>) {}
  async inspect(image: string, options?: InspectOptions): Promise<ImageInspection> {
    this.calls.push({
      image,
      bypass: options?.bypassCache ?? false,
      keyring: options?.keyring?.fingerprint ?? 'none',
    });
    const a = this.archs[image];
    if (a === undefined || a instanceof Error)
      throw a ?? new RegistryError('TESSERA_REGISTRY_NOT_FOUND', `${image} not found`);
    return {
      reference: image,
      digest: 'sha256:0',
      mediaType: 'x',
      kind: 'index',
      architectures: a,
      platforms: [],
      operatorBundle: false,
      source: image,
    };
  }
}

function mergeLabels(
  base: Readonly<Record<string, string>> | undefined,
  patch: Record<string, string | null> | undefined,
): Record<string, string> {
  const out: Record<string, string> = { ...(base ?? {}) };
  for (const [k, v] of Object.entries(patch ?? {})) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

function setup(archs: Record<string, string[] | Error>, pods: Pod[]) {
  const clock = new FakeClock();
  const store = new Map(pods.map((p) => [`${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`, p]));
  const patches: { key: string; patch: PodMergePatch }[] = [];
  const events: { reason: string; type: string }[] = [];
  let failNextPatch: Error | undefined;
  const recorder: EventRecorder = { event: (_o, type, reason) => void events.push({ reason, type }) };
  const inspector = new FakeInspector(archs);
  const secretsRead: string[] = [];
  const reconciler = new PodReconciler({
    getPod: (key) => store.get(key),
    patchPod: async (ns, name, patch) => {
      if (failNextPatch) {
        const e = failNextPatch;
        failNextPatch = undefined;
        throw e;
      }
      const key = `${ns}/${name}`;
      patches.push({ key, patch });
      const cur = store.get(key);
      if (!cur) return;
      const spec = { ...cur.spec };
      if (patch.spec?.schedulingGates) spec.schedulingGates = patch.spec.schedulingGates;
      store.set(key, {
        ...cur,
        metadata: {
          ...cur.metadata,
          labels: mergeLabels(cur.metadata?.labels, patch.metadata.labels),
          annotations: mergeLabels(cur.metadata?.annotations, patch.metadata.annotations),
        },
        spec,
      });
    },
    clusterConfig: () => clusterConfig(),
    podPlacementConfigs: () => [],
    inspector,
    pullSecrets: new PullSecretResolver({
      getSecret: async (ns, name) => {
        secretsRead.push(`${ns}/${name}`);
        return undefined;
      },
      globalSecret: () => undefined,
    }),
    events: recorder,
    operatorNamespace: 'op',
    clock,
    logger: silentLogger,
    retryBaseDelayMs: 1_000,
  });
  return {
    clock,
    store,
    patches,
    events,
    inspector,
    reconciler,
    secretsRead,
    failPatchWith: (e: Error) => (failNextPatch = e),
  };
}

const signal = new AbortController().signal;

describe('PodReconciler', () => {
  it('ungates a pod with exactly one patch, then records the events', async () => {
    const p = pod('web', 'ns')
      .withImages('r/a:1', 'r/m:1')
      .withInitImages('r/a:1')
      .withGate()
      .withResourceVersion('7')
      .build();
    const t = setup({ 'r/a:1': ['amd64'], 'r/m:1': ['amd64', 'arm64'] }, [p]);
    expect(await t.reconciler.reconcile('ns/web', signal)).toBeUndefined();
    expect(t.patches).toHaveLength(1);
    const patch = t.patches[0]?.patch;
    expect(patch?.metadata.resourceVersion).toBe('7');
    expect(patch?.spec?.schedulingGates).toEqual([]);
    expect(
      patch?.spec?.affinity?.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    ).toEqual([{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }]);
    // Each distinct image once, even when used by several containers.
    expect(t.inspector.calls.map((c) => c.image).sort()).toEqual(['r/a:1', 'r/m:1']);
    expect(t.events[0]?.reason).toBe(EVENT_REASONS.schedGateAdded);
    expect(t.events.at(-1)?.reason).toBe(EVENT_REASONS.schedGateRemovalSuccess);
    // Gone from the gated cache afterwards: nothing more to do.
    expect(await t.reconciler.reconcile('ns/web', signal)).toBeUndefined();
    expect(t.patches).toHaveLength(1);
  });

  it('reads pull secrets from the pod namespace only and bypasses the cache for pullPolicy Always', async () => {
    const p = pod('web', 'team-a').withImagePullAlways('r/m:1').withPullSecrets('regcred').withGate().build();
    const t = setup({ 'r/m:1': ['amd64', 'arm64'] }, [p]);
    await t.reconciler.reconcile('team-a/web', signal);
    expect(t.secretsRead).toEqual(['team-a/regcred']);
    expect(t.inspector.calls).toEqual([{ image: 'r/m:1', bypass: true, keyring: Keyring.empty.fingerprint }]);
  });

  it('retries failed inspections with doubling delays that its own label writes do not cut short', async () => {
    const p = pod('web', 'ns').withImages('r/x:1').withGate().build();
    const t = setup({ 'r/x:1': new RegistryError('TESSERA_REGISTRY_UNAVAILABLE', 'registry down') }, [p]);
    const delays: number[] = [];
    for (let attempt = 1; attempt < MAX_RETRY_COUNT; attempt++) {
      const r = await t.reconciler.reconcile('ns/web', signal);
      const delay = r?.requeueAfterMs ?? -1;
      delays.push(delay);
      expect(t.store.get('ns/web')?.metadata?.labels?.[LABELS.imageInspectErrorCount]).toBe(String(attempt));
      // The label write re-queues the pod at once: no new attempt before the delay.
      const calls = t.inspector.calls.length;
      const early = await t.reconciler.reconcile('ns/web', signal);
      expect(early?.requeueAfterMs).toBe(delay);
      expect(t.inspector.calls.length).toBe(calls);
      t.clock.step(delay);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(await t.reconciler.reconcile('ns/web', signal)).toBeUndefined();
    const last = t.store.get('ns/web');
    expect(last?.spec?.schedulingGates).toEqual([]);
    expect(last?.metadata?.labels?.[LABELS.schedulingGate]).toBe('removed');
    expect(t.patches).toHaveLength(MAX_RETRY_COUNT);
    expect(t.events.filter((e) => e.type === 'Warning').length).toBeGreaterThanOrEqual(MAX_RETRY_COUNT);
  });

  it('on a write conflict records no events and throws, so the queue retries with the newer pod', async () => {
    const p = pod('web', 'ns').withImages('r/a:1').withGate().build();
    const t = setup({ 'r/a:1': ['amd64'] }, [p]);
    t.failPatchWith(
      new ApiStatusError(
        'PATCH',
        '/api/v1/namespaces/ns/pods/web',
        409,
        'Conflict',
        'the object has been modified',
        {},
      ),
    );
    await expect(t.reconciler.reconcile('ns/web', signal)).rejects.toThrow(/409/);
    expect(t.events.map((e) => e.reason)).toEqual([EVENT_REASONS.schedGateAdded]);
    await t.reconciler.reconcile('ns/web', signal);
    expect(t.store.get('ns/web')?.spec?.schedulingGates).toEqual([]);
  });

  it('reports a failed gate removal other than a conflict', async () => {
    const p = pod('web', 'ns').withImages('r/a:1').withGate().build();
    const t = setup({ 'r/a:1': ['amd64'] }, [p]);
    t.failPatchWith(
      new ApiStatusError('PATCH', '/api/v1/namespaces/ns/pods/web', 422, 'Invalid', 'spec: Forbidden', {}),
    );
    await expect(t.reconciler.reconcile('ns/web', signal)).rejects.toThrow(/422/);
    expect(t.events.map((e) => e.reason)).toContain(EVENT_REASONS.schedGateRemovalFailed);
  });

  it('ignores pods without the gate or missing from the cache', async () => {
    const p = pod('web', 'ns').withImages('r/a:1').withGate('someone-else/gate').build();
    const t = setup({ 'r/a:1': ['amd64'] }, [p]);
    await t.reconciler.reconcile('ns/web', signal);
    await t.reconciler.reconcile('ns/missing', signal);
    expect(t.patches).toEqual([]);
    expect(t.inspector.calls).toEqual([]);
  });
});
