import { describe, expect, it } from 'vitest';
import { ApiStatusError, silentLogger, type EventRecorder } from '../runtime/index.js';
import {
  Keyring,
  PolicyRefusalError,
  RegistryError,
  parseImageReference,
  type ImageInspection,
  type ImageInspector,
  type InspectOptions,
} from '../registry/index.js';
import { clusterConfig, pod } from './builders.js';
import { ANNOTATIONS, EVENT_REASONS, LABELS, MAX_RETRY_COUNT } from './constants.js';
import { GIVE_UP_MESSAGES, type PodMergePatch } from './placement-plan.js';
import { PodReconciler, registryHostsOf } from './pod-reconciler.js';
import type { Pod } from './pod-types.js';
import { PullSecretResolver } from './pull-secrets.js';
import { FakeClock, flushAsync } from '../runtime/testing/index.js';

/** An image whose registry accepts the connection and never answers. */
const HANG = 'hang';

class FakeInspector implements ImageInspector {
  calls: { image: string; bypass: boolean; keyring: string }[] = [];
  /** Images inspected with the operator-bundle probe asked for. */
  probed: string[] = [];
  /** Images a cache would answer (isCached), as CachingInspector does after a first inspection. */
  readonly cached = new Set<string>();
  constructor(private readonly archs: Record<string, string[] | Error | typeof HANG>) {}
  isCached(image: string): boolean {
    return this.cached.has(image);
  }
  async inspect(image: string, options?: InspectOptions): Promise<ImageInspection> {
    this.calls.push({
      image,
      bypass: options?.bypassCache ?? false,
      keyring: options?.keyring?.fingerprint ?? 'none',
    });
    if (options?.probeOperatorBundle === true) this.probed.push(image);
    const a = this.archs[image];
    if (a === HANG) {
      // Like CachingInspector: only the caller's signal ends the wait.
      return new Promise((_resolve, reject) => {
        const signal = options?.signal;
        const cancel = () =>
          reject(new RegistryError('TESSERA_REGISTRY_ABORTED', 'image inspection cancelled'));
        if (signal?.aborted) cancel();
        signal?.addEventListener('abort', cancel, { once: true });
      });
    }
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

function setup(
  archs: Record<string, string[] | Error | typeof HANG>,
  pods: Pod[],
  overrides: Partial<ConstructorParameters<typeof PodReconciler>[0]> = {},
) {
  const clock = new FakeClock();
  const store = new Map(pods.map((p) => [`${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`, p]));
  const patches: { key: string; patch: PodMergePatch }[] = [];
  const events: { reason: string; type: string; message: string; pod: string }[] = [];
  let failNextPatch: Error | undefined;
  const recorder: EventRecorder = {
    event: (o, type, reason, message) =>
      void events.push({
        reason,
        type,
        message,
        pod: 'metadata' in o ? `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}` : '',
      }),
  };
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
    ...overrides,
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
    const t = setup(
      { 'r/x:1': new RegistryError('TESSERA_REGISTRY_UNAVAILABLE', 'registry down', { retryable: true }) },
      [p],
    );
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

describe('PodReconciler under failing and hostile registries', () => {
  it('ungates at once, after exactly one inspection, when the image does not exist', async () => {
    const p = pod('web', 'ns').withImages('r/missing:1').withGate().build();
    const t = setup({}, [p], {
      clusterConfig: () => clusterConfig({ fallbackArchitecture: 'amd64' }),
    });
    expect(await t.reconciler.reconcile('ns/web', signal)).toBeUndefined();
    expect(t.inspector.calls).toHaveLength(1);
    expect(t.patches).toHaveLength(1);
    const after = t.store.get('ns/web');
    expect(after?.spec?.schedulingGates).toEqual([]);
    expect(after?.metadata?.labels?.[LABELS.imageInspectErrorCount]).toBe('1');
    expect(after?.metadata?.labels?.[LABELS.fallbackArch]).toBe('amd64');
    expect(after?.metadata?.annotations?.[ANNOTATIONS.imageInspectError]).toMatch(
      /^permanent error, not retried: r\/missing:1 not found/,
    );
    const why = t.events.find((e) => e.message.startsWith(GIVE_UP_MESSAGES.permanent));
    expect(why?.type).toBe('Warning');
    expect(t.events.map((e) => e.reason)).toContain(EVENT_REASONS.fallbackPredicateSet);
  });

  it("releases at once a pod whose image the cluster's image policy refuses, naming the rule, as no registry failure", async () => {
    const image = 'evil.example.com/app:1';
    const refusal = new PolicyRefusalError(parseImageReference(image), {
      admitted: false,
      rule: 'image.config.openshift.io/cluster allowedRegistries',
    });
    const p = pod('refused', 'ns').withImages(image, 'r/ok:1').withGate().build();
    const failures: string[] = [];
    const t = setup({ [image]: refusal, 'r/ok:1': ['amd64'] }, [p], {
      onInspectionFailure: (f) => failures.push(f.image),
    });
    expect(await t.reconciler.reconcile('ns/refused', signal)).toBeUndefined();
    const after = t.store.get('ns/refused');
    expect(after?.spec?.schedulingGates).toEqual([]);
    expect(after?.metadata?.labels?.[LABELS.imageInspectError]).toBe('');
    expect(after?.metadata?.annotations?.[ANNOTATIONS.imageInspectError]).toBe(refusal.message);
    expect(refusal.message).toMatch(
      /^registry evil\.example\.com is not in image\.config\.openshift\.io\/cluster allowedRegistries: the nodes would refuse to pull/,
    );
    const why = t.events.find((e) => e.message.startsWith(GIVE_UP_MESSAGES.refused));
    expect(why?.type).toBe('Warning');
    expect(why?.message).toContain(refusal.message);
    expect(failures).toEqual([]);
  });

  it('asks for the operator-bundle probe for the images of an OLM bundle-unpack pod only', async () => {
    const unpack = pod('unpack', 'olm')
      .withLabels({ 'operatorframework.io/bundle-unpack-ref': 'abc' })
      .withImages('r/bundle:1')
      .withGate()
      .build();
    const ordinary = pod('app', 'olm').withImages('r/app:1').withGate().build();
    const t = setup({ 'r/bundle:1': ['amd64'], 'r/app:1': ['amd64'] }, [unpack, ordinary]);
    await t.reconciler.reconcile('olm/unpack', signal);
    await t.reconciler.reconcile('olm/app', signal);
    expect(t.inspector.probed).toEqual(['r/bundle:1']);
  });

  it('treats refused credentials and invalid references as permanent, 429 and 5xx as transient', async () => {
    const p1 = pod('denied', 'ns').withImages('r/private:1').withGate().build();
    const p2 = pod('busy', 'ns').withImages('r/busy:1').withGate().build();
    const t = setup(
      {
        'r/private:1': new RegistryError('TESSERA_REGISTRY_UNAUTHORIZED', 'denied'),
        'r/busy:1': new RegistryError('TESSERA_REGISTRY_UNAVAILABLE', 'HTTP 429', { retryable: true }),
      },
      [p1, p2],
    );
    expect(await t.reconciler.reconcile('ns/denied', signal)).toBeUndefined();
    expect(t.store.get('ns/denied')?.spec?.schedulingGates).toEqual([]);
    expect((await t.reconciler.reconcile('ns/busy', signal))?.requeueAfterMs).toBe(1_000);
    expect(t.store.get('ns/busy')?.spec?.schedulingGates).not.toEqual([]);
  });

  it('stops waiting for a registry that never answers at the per-pod deadline and names it', async () => {
    const p = pod('slow', 'hostile').withImages('127.0.0.1:9/app:1').withGate().build();
    const t = setup({ '127.0.0.1:9/app:1': HANG }, [p], { inspectionDeadlineMs: 15_000 });
    let settled = false;
    const done = t.reconciler.reconcile('hostile/slow', signal).finally(() => (settled = true));
    await flushAsync();
    t.clock.step(14_999);
    await flushAsync();
    expect(settled).toBe(false);
    t.clock.step(1);
    expect(await done).toBeUndefined();
    const after = t.store.get('hostile/slow');
    expect(after?.spec?.schedulingGates).toEqual([]);
    expect(after?.metadata?.annotations?.[ANNOTATIONS.imageInspectError]).toBe(
      'registry 127.0.0.1:9 did not answer within 15 s (image 127.0.0.1:9/app:1)',
    );
    expect(t.events.some((e) => e.message.startsWith(GIVE_UP_MESSAGES.deadline))).toBe(true);
    expect(t.reconciler.inspectionsInFlight('hostile')).toBe(0);
  });

  it('places a pod whose images the cache answers even while its namespace is at its cap', async () => {
    // A burst of ordinary pods in one namespace must not queue behind the cap: only registry work takes a slot.
    const slow = [1, 2].map((i) => pod(`s${i}`, 'team').withImages(`hang${i}.test/app:1`).withGate().build());
    const cachedPod = pod('web', 'team').withImages('r/a:1').withGate().build();
    const t = setup(
      { 'hang1.test/app:1': HANG, 'hang2.test/app:1': HANG, 'r/a:1': ['amd64'] },
      [...slow, cachedPod],
      { maxInspectionsPerNamespace: 2, inspectionDeadlineMs: 10_000 },
    );
    t.inspector.cached.add('r/a:1');
    const first = t.reconciler.reconcile('team/s1', signal);
    const second = t.reconciler.reconcile('team/s2', signal);
    await flushAsync();
    expect(t.reconciler.inspectionsInFlight('team')).toBe(2);
    expect(await t.reconciler.reconcile('team/web', signal)).toBeUndefined();
    expect(t.store.get('team/web')?.spec?.schedulingGates).toEqual([]);
    t.clock.step(10_000);
    await Promise.all([first, second]);
  });

  it("requeues a tenant's pods beyond its in-flight cap without using a worker, so other tenants go first", async () => {
    const hostile = [1, 2, 3].map((i) =>
      pod(`h${i}`, 'hostile').withImages(`hang${i}.test/app:1`).withPullSecrets('regcred').withGate().build(),
    );
    const ordinary = pod('web', 'team').withImages('r/a:1').withGate().build();
    const t = setup(
      { 'hang1.test/app:1': HANG, 'hang2.test/app:1': HANG, 'hang3.test/app:1': HANG, 'r/a:1': ['amd64'] },
      [...hostile, ordinary],
      { maxInspectionsPerNamespace: 2, inspectionDeadlineMs: 10_000 },
    );
    const first = t.reconciler.reconcile('hostile/h1', signal);
    const second = t.reconciler.reconcile('hostile/h2', signal);
    await flushAsync();
    expect(t.reconciler.inspectionsInFlight('hostile')).toBe(2);
    // The third hostile pod is handed back at once, uninspected.
    expect(await t.reconciler.reconcile('hostile/h3', signal)).toEqual({ requeueAfterMs: 250 });
    expect(t.inspector.calls.map((c) => c.image)).not.toContain('hang3.test/app:1');
    // Its pull secret is read (to learn whether the cache answers its images; in the operator that read goes
    // through the brief by-name Secret cache, src/podplacement/pull-secret-cache.ts), but no registry request.
    expect(t.secretsRead).toEqual(['hostile/regcred', 'hostile/regcred', 'hostile/regcred']);
    // Another namespace is not held up: its pod is placed while the hostile ones are still pending.
    expect(await t.reconciler.reconcile('team/web', signal)).toBeUndefined();
    expect(t.store.get('team/web')?.spec?.schedulingGates).toEqual([]);
    expect(t.store.get('hostile/h1')?.spec?.schedulingGates).not.toEqual([]);
    t.clock.step(10_000);
    await Promise.all([first, second]);
    // The freed slots: one set aside for the pod that waited, none taken by a newcomer.
    expect(t.reconciler.inspectionsInFlight('hostile')).toBe(1);
    // Its turn now: inspected, and released at its own deadline.
    const third = t.reconciler.reconcile('hostile/h3', signal);
    await flushAsync();
    t.clock.step(10_000);
    expect(await third).toBeUndefined();
    for (const p of ['h1', 'h2', 'h3'])
      expect(t.store.get(`hostile/${p}`)?.spec?.schedulingGates, p).toEqual([]);
  });

  it('caps pods in flight per registry host across namespaces', async () => {
    const pods = [1, 2, 3].map((i) => pod('p', `ns${i}`).withImages('slow.test/app:1').withGate().build());
    const t = setup({ 'slow.test/app:1': HANG }, pods, { maxInspectionsPerRegistry: 2 });
    const running = [t.reconciler.reconcile('ns1/p', signal), t.reconciler.reconcile('ns2/p', signal)];
    await flushAsync();
    expect(await t.reconciler.reconcile('ns3/p', signal)).toEqual({ requeueAfterMs: 250 });
    t.clock.step(15_000);
    await Promise.all(running);
    expect(t.inspector.calls).toHaveLength(2);
  });

  it('wakes a held-back pod as soon as a slot frees, oldest first, instead of polling', async () => {
    const pods = [1, 2, 3, 4].map((i) =>
      pod(`h${i}`, 'hostile').withImages('slow.test/app:1').withGate().build(),
    );
    const woken: string[] = [];
    const t = setup({ 'slow.test/app:1': HANG }, pods, {
      maxInspectionsPerNamespace: 1,
      inspectionDeadlineMs: 1_000,
      wake: (key) => void woken.push(key),
    });
    const first = t.reconciler.reconcile('hostile/h1', signal);
    await flushAsync();
    // Held back with only a long safety-net delay: the wake call, not polling, brings them back.
    expect(await t.reconciler.reconcile('hostile/h2', signal)).toEqual({ requeueAfterMs: 2_000 });
    expect(await t.reconciler.reconcile('hostile/h3', signal)).toEqual({ requeueAfterMs: 2_000 });
    expect(woken).toEqual([]);
    t.clock.step(1_000);
    await first;
    expect(woken).toEqual(['hostile/h2']);
    const second = t.reconciler.reconcile('hostile/h2', signal);
    await flushAsync();
    t.clock.step(1_000);
    await second;
    expect(woken).toEqual(['hostile/h2', 'hostile/h3']);
  });

  it('counts the deadline over all attempts: waits split by transient failures add up', async () => {
    const p = pod('slow', 'hostile').withImages('slow.test/app:1').withGate().build();
    let failFirst: (() => void) | undefined;
    const calls: number[] = [];
    const inspector: ImageInspector = {
      inspect: (_image, options) =>
        new Promise((_resolve, reject) => {
          calls.push(calls.length + 1);
          // The first attempt ends with the registry request's own timeout (transient) after 10 s of waiting;
          // the second one never gets an answer.
          if (calls.length === 1)
            failFirst = () =>
              reject(
                new RegistryError('TESSERA_REGISTRY_TIMEOUT', 'no answer within 10 s', { retryable: true }),
              );
          options?.signal?.addEventListener('abort', () =>
            reject(new RegistryError('TESSERA_REGISTRY_ABORTED', 'image inspection cancelled')),
          );
        }),
    };
    const t = setup({}, [p], { inspector, inspectionDeadlineMs: 15_000 });
    const first = t.reconciler.reconcile('hostile/slow', signal);
    await flushAsync();
    t.clock.step(10_000);
    failFirst?.();
    expect(await first).toEqual({ requeueAfterMs: 1_000 });
    t.clock.step(1_000);
    let settled = false;
    const second = t.reconciler.reconcile('hostile/slow', signal).finally(() => (settled = true));
    await flushAsync();
    // 10 s already spent: the second attempt gets the remaining 5 s, not another 15 s.
    t.clock.step(4_999);
    await flushAsync();
    expect(settled).toBe(false);
    t.clock.step(1);
    expect(await second).toBeUndefined();
    expect(t.store.get('hostile/slow')?.spec?.schedulingGates).toEqual([]);
    expect(t.store.get('hostile/slow')?.metadata?.annotations?.[ANNOTATIONS.imageInspectError]).toBe(
      'registry slow.test did not answer within 15 s (image slow.test/app:1)',
    );
    expect(calls).toEqual([1, 2]);
  });
});

describe('registryHostsOf', () => {
  it('charges a short name to the search registries it may be tried on, not to Docker Hub', () => {
    const images = [{ image: 'team/app:1' }, { image: 'quay.test/org/tool:2' }];
    expect(registryHostsOf(images, ['reg.corp:5000', 'Mirror.Test'])).toEqual([
      'reg.corp:5000',
      'mirror.test',
      'quay.test',
    ]);
    // Without search registries a short name is Docker Hub's, as with containerd.
    expect(registryHostsOf(images)).toEqual(['docker.io', 'quay.test']);
  });

  it('names no host for a reference that does not parse', () => {
    expect(registryHostsOf([{ image: 'UPPER/Case::bad' }], ['reg.corp'])).toEqual([]);
  });
});
