// Pod placement against hostile and failing registries, on a private cluster (the ClusterPodPlacementConfig is a
// cluster singleton) with the real kube-apiserver calling the operator's webhook, real local registries (one with
// htpasswd), and a loopback "registry" that accepts connections and never answers:
//  - a tenant whose registry never answers delays only its own pods: another namespace's pods are placed while
//    the hostile ones are still gated, and the hostile ones are released at the per-pod deadline with an event
//    and annotation naming the registry;
//  - 8 such tenants, each with pods on 2 silent registries of its own, do not hold another tenant's pods behind
//    their backlog: they are inspected at the first registry slots that free (issue #20);
//  - a pod whose image does not exist is released after exactly one inspection (one manifest request);
//  - a pod can never make the operator use another namespace's pull secret, however it names it.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage } from '../../../src/devcluster/registry-images.js';
import {
  ANNOTATIONS,
  ARCH_LABEL,
  EVENT_REASONS,
  LABELS,
  MAX_RETRY_COUNT,
} from '../../../src/podplacement/constants.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
} from '../../../src/podplacement/operator/start.js';
import { GIVE_UP_MESSAGES, type PlacementPlan } from '../../../src/podplacement/placement-plan.js';
import { KubeClient } from '../../../src/runtime/index.js';
import { startSilentRegistry, type SilentRegistry } from '../../support/silent-registry.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import { pullSecret, type TestPod } from '../podplacement/support.js';
import { inProcessOperatorOptions } from '../podplacement/in-process-operator.js';

const OP_NS = 'pp-hostile-operator';
const DEADLINE_MS = 20_000;
const PER_NAMESPACE = 4;
const cppcPath = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';

let cluster: DevCluster | undefined;
let client: KubeClient;
let pub: LocalRegistry | undefined;
let priv: LocalRegistry | undefined;
let silent: SilentRegistry | undefined;
let silent2: SilentRegistry | undefined;
let operator: PodPlacementOperatorHandle | undefined;
const stop = new AbortController();
const root = mkdtempSync(path.join(os.tmpdir(), 'pp-hostile-'));
/** Every plan the operator applied, by pod key, in order. */
const plans = new Map<string, PlacementPlan[]>();

/** A loopback TCP server that accepts every connection and never sends a byte. */

async function req<T>(method: 'GET' | 'POST' | 'DELETE', p: string, body?: unknown): Promise<T> {
  return client.request<T>({ method, path: p, body });
}

async function createNamespace(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await req('POST', '/api/v1/namespaces', { metadata: { name } });
  await eventually(() => req('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`), {
    what: `default SA in ${name}`,
  });
  return name;
}

async function createPod(
  namespace: string,
  name: string,
  image: string,
  spec: Record<string, unknown> = {},
): Promise<void> {
  await req('POST', `/api/v1/namespaces/${namespace}/pods`, {
    metadata: { name },
    spec: { containers: [{ name: 'c', image }], ...spec },
  });
}

const getPod = (namespace: string, name: string): Promise<TestPod> =>
  req<TestPod>('GET', `/api/v1/namespaces/${namespace}/pods/${name}`);

const isGated = (pod: TestPod): boolean => (pod.spec.schedulingGates ?? []).length > 0;

async function ungated(namespace: string, name: string, timeoutMs = 60_000): Promise<TestPod> {
  return eventually(
    async () => {
      const pod = await getPod(namespace, name);
      if (isGated(pod)) throw new Error(`${namespace}/${name} still gated`);
      return pod;
    },
    { timeoutMs, what: `pod ${namespace}/${name} ungated` },
  );
}

async function podEvents(namespace: string, name: string): Promise<{ reason: string; message: string }[]> {
  const list = await req<{ items: { reason: string; message: string }[] }>(
    'GET',
    `/api/v1/namespaces/${namespace}/events?fieldSelector=involvedObject.name%3D${name}`,
  );
  return list.items;
}

function requiredArchs(pod: TestPod): string[] {
  return (
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  ).flatMap((t) =>
    (t.matchExpressions ?? []).filter((e) => e.key === ARCH_LABEL).flatMap((e) => e.values ?? []),
  );
}

const manifestGets = (registry: LocalRegistry, repository: string) =>
  registry.accessLog().filter((e) => e.method === 'GET' && e.path.startsWith(`/v2/${repository}/manifests/`));

beforeAll(async () => {
  cluster = await startTestCluster({
    name: uniqueName('pp-hostile'),
    nodes: 'none',
    scheduler: false,
    kwok: false,
  });
  client = new KubeClient(await cluster.kubeConfig());
  pub = await startLocalRegistry({ stateDir: path.join(root, 'pub'), auth: 'none' });
  priv = await startLocalRegistry({ stateDir: path.join(root, 'priv'), auth: 'htpasswd' });
  silent = await startSilentRegistry();
  silent2 = await startSilentRegistry();
  const platforms = [{ architecture: 'arm64' }, { architecture: 'ppc64le' }];
  await pub.pushImage('ordinary', '1', multiPlatformImage({ platforms }));
  await priv.pushImage('team-b/private', '1', multiPlatformImage({ platforms }));
  await req('POST', '/api/v1/namespaces', { metadata: { name: OP_NS } });
  operator = await startPodPlacementOperator({
    // Its global pull secret is never created: only the pods' own secrets can open the private registry.
    ...inProcessOperatorOptions({
      kubeConfig: await cluster.kubeConfig(),
      namespace: OP_NS,
      signal: stop.signal,
      certDir: path.join(root, 'certs'),
    }),
    registry: { caCertificates: [pub.caCertPem, priv.caCertPem] },
    workers: 8,
    inspectionDeadlineMs: DEADLINE_MS,
    maxInspectionsPerNamespace: PER_NAMESPACE,
    onPlanned: (key, plan) => plans.set(key, [...(plans.get(key) ?? []), plan]),
  });
  await eventually(
    () =>
      req('POST', cppcPath, {
        apiVersion: 'multiarch.openshift.io/v1beta1',
        kind: 'ClusterPodPlacementConfig',
        metadata: { name: 'cluster' },
        spec: { fallbackArchitecture: 'amd64' },
      }),
    { timeoutMs: 60_000, what: 'ClusterPodPlacementConfig created (CRDs served, conversion webhook set)' },
  );
  await eventually(
    () =>
      req(
        'GET',
        '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
      ),
    { timeoutMs: 60_000, what: 'the gating webhook configuration' },
  );
}, 240_000);

afterAll(async () => {
  stop.abort();
  await operator?.stopped.catch(() => undefined);
  await client?.close();
  await cluster?.stop({ wipe: true });
  await Promise.all([pub?.stop(), priv?.stop(), silent?.close(), silent2?.close()]);
  rmSync(root, { recursive: true, force: true });
}, 120_000);

describe('a registry that never answers', () => {
  it("delays only its tenant's pods; they are released at the deadline with the registry named", async () => {
    const hostileNs = await createNamespace('hostile');
    const ordinaryNs = await createNamespace('ordinary');
    const hostile = Array.from({ length: 8 }, (_, i) => `h-${i}`);
    const ordinary = Array.from({ length: 12 }, (_, i) => `o-${i}`);
    const hostileImage = `${silent?.host ?? ''}/hostile/app:1`;
    for (const name of hostile) await createPod(hostileNs, name, hostileImage);
    // The hostile inspections are under way (the operator is connected to the silent registry)...
    await eventually(
      async () => {
        if ((silent?.connections() ?? 0) === 0) throw new Error('no connection yet');
      },
      { what: 'the operator connected to the silent registry' },
    );
    expect((await getPod(hostileNs, 'h-0')).metadata.labels?.[LABELS.schedulingGate]).toBe('gated');
    // ...when another tenant's pods arrive: they are placed while every hostile pod is still gated.
    await Promise.all(ordinary.map((name) => createPod(ordinaryNs, name, `${pub?.host ?? ''}/ordinary:1`)));
    for (const name of ordinary) {
      const pod = await ungated(ordinaryNs, name);
      expect(requiredArchs(pod)).toEqual(['arm64', 'ppc64le']);
    }
    const stillGated = await Promise.all(hostile.map(async (n) => isGated(await getPod(hostileNs, n))));
    expect(stillGated).toEqual(hostile.map(() => true));

    // The hostile pods are not left gated: each is released with the fallback architecture and the cause.
    for (const name of hostile) {
      const pod = await ungated(hostileNs, name, 4 * DEADLINE_MS + 60_000);
      expect(requiredArchs(pod)).toEqual(['amd64']);
      expect(pod.metadata.labels?.[LABELS.fallbackArch]).toBe('amd64');
      expect(pod.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toBe(
        `registry ${silent?.host ?? ''} did not answer within ${DEADLINE_MS / 1000} s (image ${hostileImage})`,
      );
      // The deadline ends the retries. (A pod that joined a shared registry request near its end may first see
      // that request's own timeout, a transient failure, and retry once before waiting out its deadline.)
      // Recorded after the operator's patch returns: the ungated pod can be seen first.
      const actions = await eventually(
        async () => {
          const recorded = plans.get(`${hostileNs}/${name}`)?.map((p) => p.action) ?? [];
          expect(recorded.at(-1)).toBe('ungate');
          return recorded;
        },
        { what: `the operator recorded its plan for ${name}` },
      );
      expect(actions.length).toBeLessThan(MAX_RETRY_COUNT);
      await eventually(
        async () => {
          const events = await podEvents(hostileNs, name);
          const why = events.find(
            (e) =>
              e.reason === EVENT_REASONS.inspectionError && e.message.startsWith(GIVE_UP_MESSAGES.deadline),
          );
          if (!why) throw new Error('no deadline event yet');
          expect(why.message).toContain(`registry ${silent?.host ?? ''} did not answer`);
        },
        { what: `the deadline event of ${name}` },
      );
    }
  }, 240_000);
});

describe('8 tenants whose 2 registries each never answer', () => {
  it("do not queue another tenant's pods behind their backlog", async () => {
    // 8 workers: at most 6 inspections wait on registries (2 workers stay free), 4 per namespace. The 32 hostile
    // pods fill the 6 slots for a deadline each; the ordinary tenant's pods need their registry (a new image), and
    // get one of the first slots that free, while today's first come, first served queue keeps them behind
    // the hostile pods' deadlines, round after round.
    const hostileNamespaces = await Promise.all(
      Array.from({ length: 8 }, () => createNamespace('hostile-many')),
    );
    const ordinaryNs = await createNamespace('ordinary-many');
    const registry = pub as LocalRegistry;
    await registry.pushImage('fair', '1', multiPlatformImage({ platforms: [{ architecture: 'arm64' }] }));
    const hosts = [silent?.host ?? '', silent2?.host ?? ''];
    const hostile = hostileNamespaces.flatMap((ns) => [0, 1, 2, 3].map((i) => ({ ns, name: `h-${i}` })));
    await Promise.all(
      hostile.map(({ ns, name }, i) => createPod(ns, name, `${hosts[i % 2] ?? ''}/hostile-${ns}/app:1`)),
    );
    await eventually(
      async () => {
        if ((silent?.connections() ?? 0) === 0 || (silent2?.connections() ?? 0) === 0)
          throw new Error('not connected to both silent registries yet');
      },
      { what: 'the operator waiting on both silent registries' },
    );
    const ordinary = ['o-0', 'o-1', 'o-2'];
    await Promise.all(ordinary.map((name) => createPod(ordinaryNs, name, `${registry.host}/fair:1`)));
    for (const name of ordinary)
      expect(requiredArchs(await ungated(ordinaryNs, name, 3 * DEADLINE_MS + 60_000))).toEqual(['arm64']);
    // The observed order: at most two rounds of 6 hostile pods (those in flight when the ordinary pods came, and
    // those whose slots freed with theirs) were released before the ordinary pods; the rest still wait.
    const gated = await Promise.all(hostile.map(async ({ ns, name }) => isGated(await getPod(ns, name))));
    expect(gated.filter(Boolean).length).toBeGreaterThanOrEqual(hostile.length - 2 * 6);
  }, 600_000);
});

describe('an image that does not exist', () => {
  it('is released after exactly one inspection, with an event and annotation saying why', async () => {
    const ns = await createNamespace('missing');
    const registry = pub as LocalRegistry;
    await createPod(ns, 'web', `${registry.host}/does-not-exist:1`);
    const pod = await ungated(ns, 'web');
    expect(manifestGets(registry, 'does-not-exist')).toHaveLength(1);
    // The operator records its plan after its patch returns, so the ungated pod can be seen first.
    await eventually(async () => expect(plans.get(`${ns}/web`)?.map((p) => p.action)).toEqual(['ungate']), {
      what: 'the operator recorded its plan for the pod',
    });
    expect(pod.metadata.labels?.[LABELS.imageInspectErrorCount]).toBe('1');
    expect(requiredArchs(pod)).toEqual(['amd64']); // the fallback architecture
    expect(pod.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toMatch(
      /^permanent error, not retried: .*not found \(HTTP 404/,
    );
    await eventually(
      async () => {
        const events = await podEvents(ns, 'web');
        if (!events.some((e) => e.message.startsWith(GIVE_UP_MESSAGES.permanent)))
          throw new Error('no permanent-failure event yet');
      },
      { what: 'the permanent-failure event' },
    );
  });
});

describe("another namespace's pull secret", () => {
  it('is never used, whatever name the pod or its service account gives', async () => {
    const nsA = await createNamespace('tenant-a');
    const nsB = await createNamespace('tenant-b');
    const registry = priv as LocalRegistry;
    const image = `${registry.host}/team-b/private:1`;
    // Only tenant B holds the credentials of the private registry, in Secret "x".
    await req('POST', `/api/v1/namespaces/${nsB}/secrets`, pullSecret('x', nsB, registry.dockerConfigJson()));
    await req('POST', `/api/v1/namespaces/${nsA}/serviceaccounts`, {
      metadata: { name: 'builder' },
      imagePullSecrets: [{ name: 'x' }],
    });
    const names = ['x', `${nsB}/x`, `../${nsB}/x`, `../../${nsB}/secrets/x`, `${nsB}%2Fx`];
    await createPod(nsA, 'by-name', image, { imagePullSecrets: names.map((name) => ({ name })) });
    await createPod(nsA, 'by-sa', image, { serviceAccountName: 'builder' });
    for (const name of ['by-name', 'by-sa']) {
      const pod = await ungated(nsA, name);
      expect(pod.metadata.annotations?.[ANNOTATIONS.imageInspectError], name).toMatch(
        /^permanent error, not retried: .*requires credentials \(HTTP 401/,
      );
      expect(requiredArchs(pod), name).toEqual(['amd64']); // fallback, not the image's architectures
    }
    // Nothing was ever pulled from the private registry with credentials...
    expect(manifestGets(registry, 'team-b/private').filter((e) => e.status === 200)).toEqual([]);

    // ...while the same secret does open it for tenant B's own pod.
    await createPod(nsB, 'own', image, { imagePullSecrets: [{ name: 'x' }] });
    const own = await ungated(nsB, 'own');
    expect(requiredArchs(own)).toEqual(['arm64', 'ppc64le']);
    expect(manifestGets(registry, 'team-b/private').some((e) => e.status === 200)).toBe(true);
  });
});
