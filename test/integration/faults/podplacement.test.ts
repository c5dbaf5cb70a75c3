// The fault suite for pod placement: its two halves run as deployed (a webhook process and a leader-elected
// controller process, each with the Deployment's heap limits, the controller restarted by a supervisor as the
// kubelet restarts a container) on a private control plane, and the test breaks what a real cluster breaks: the
// controller is killed in the middle of a burst, the registry link is cut, etcd and the API server go away for
// 30 s, and an image is served that used to run the controller out of memory on every start. After each fault the
// invariants are checked on what the API server holds: no pod stays gated past the stated bound, no pod was
// placed twice (one architecture term, at most one placement event), and each component recovered by itself.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { blobOf, multiPlatformImage, singleImage } from '../../../src/devcluster/registry-images.js';
import {
  ARCH_LABEL,
  EVENT_REASONS,
  LABELS,
  LABEL_VALUES,
  MUTATING_WEBHOOK,
  SCHEDULING_GATE,
} from '../../../src/podplacement/constants.js';
import { KubeClient } from '../../../src/runtime/index.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import { supervise, type Supervised } from '../../support/supervisor.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import {
  freePort,
  startOperatorProcess,
  type OperatorProcess,
  type OperatorProcessOptions,
  type TestPod,
} from '../podplacement/support.js';

/** The Deployments' heap flags (deploy/podplacement/base/deployments.yaml). */
const DEPLOYMENT_HEAP = ['--max-semi-space-size=4', '--max-old-space-size=160'];
/** A pod's whole wait on registries (--inspection-deadline-ms): the bound every gated pod is released within. */
const INSPECTION_DEADLINE_MS = 5_000;
const TENANT_LABEL = 'tessera.dev/faults';
const cppcPath = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';

let cluster: DevCluster;
let client: KubeClient;
let registry: LocalRegistry;
/** Between the controller and the registry, so the link can be cut. */
let link: TcpProxy;
let registryHost = '';
let webhook: OperatorProcess | undefined;
let controller: Supervised<OperatorProcess>;
const opNs = 'pp-faults-operator';
const tenant = uniqueName('tenant');
const workDir = mkdtempSync(path.join(os.tmpdir(), 'pp-faults-'));

async function createPod(name: string, image: string): Promise<TestPod> {
  return client.request<TestPod>({
    method: 'POST',
    path: `/api/v1/namespaces/${tenant}/pods`,
    body: { metadata: { name }, spec: { containers: [{ name: 'app', image }] } },
  });
}

/** Creates pods until the API server gates one (it may call a webhook it just learned of, or just lost, later). */
async function createGatedPod(prefix: string, image: string): Promise<TestPod> {
  let n = 0;
  return eventually(
    async () => {
      const pod = await createPod(`${prefix}-${n++}`, image);
      if (!(pod.spec.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE))
        throw new Error(`${pod.metadata.name} admitted without the gate`);
      return pod;
    },
    { timeoutMs: 60_000, what: `a pod gated at admission (webhook log: ${webhook?.logFile ?? ''})` },
  );
}

async function getPod(name: string): Promise<TestPod> {
  return client.request<TestPod>({ method: 'GET', path: `/api/v1/namespaces/${tenant}/pods/${name}` });
}

/** Waits until the pod carries no scheduling gate; returns it. */
async function ungated(name: string, timeoutMs: number): Promise<TestPod> {
  return eventually(
    async () => {
      const pod = await getPod(name);
      if ((pod.spec.schedulingGates ?? []).length > 0) throw new Error(`${name} still gated`);
      return pod;
    },
    {
      timeoutMs,
      intervalMs: 250,
      what: `pod ${name} ungated (controller log: ${controller.current().logFile})`,
    },
  );
}

/** The architecture requirement the controller wrote, one list per node selector term. */
function archTerms(pod: TestPod): string[][] {
  return (
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  ).map((t) => (t.matchExpressions ?? []).filter((e) => e.key === ARCH_LABEL).flatMap((e) => e.values ?? []));
}

async function eventsOf(name: string): Promise<{ reason: string; count?: number; message: string }[]> {
  const list = await client.request<{ items: { reason: string; count?: number; message: string }[] }>({
    method: 'GET',
    path: `/api/v1/namespaces/${tenant}/events`,
    query: { fieldSelector: `involvedObject.name=${name}` },
  });
  return list.items;
}

/** Placed once: a single architecture term (not one per placement) and no placement event counted twice. */
async function expectPlacedOnce(name: string, archs: readonly string[]): Promise<void> {
  const pod = await getPod(name);
  expect(archTerms(pod), `${name}'s node affinity`).toEqual([[...archs].sort()]);
  const placements = (await eventsOf(name)).filter((e) => e.reason === EVENT_REASONS.predicateSet);
  expect(
    placements.reduce((n, e) => n + (e.count ?? 1), 0),
    `${name}'s placement events`,
  ).toBeLessThanOrEqual(1);
}

beforeAll(async () => {
  // kube-controller-manager for the namespaces' service accounts; no scheduler or nodes: an ungated pod stays
  // Pending, which is all these invariants need.
  cluster = await startTestCluster({
    name: uniqueName('pp-faults'),
    nodes: 'none',
    scheduler: false,
    kwok: false,
  });
  client = new KubeClient(await cluster.kubeConfig());
  registry = await startLocalRegistry({ stateDir: path.join(workDir, 'registry'), auth: 'none' });
  link = await startTcpProxy('127.0.0.1', Number(registry.host.split(':')[1]));
  registryHost = `127.0.0.1:${link.port}`;
  const p = (architecture: string) => ({ architecture });
  await registry.pushImage('burst', '1', multiPlatformImage({ platforms: [p('arm64'), p('s390x')] }));
  await registry.pushImage('cut', '1', singleImage({ platform: p('ppc64le') }));
  await registry.pushImage('outage', '1', singleImage({ platform: p('arm64'), salt: 'outage' }));
  await registry.pushImage('after-outage', '1', singleImage({ platform: p('amd64'), salt: 'after' }));

  for (const [name, labels] of [
    [opNs, {}],
    [tenant, { [TENANT_LABEL]: 'selected' }],
  ] as const) {
    await client.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { metadata: { name, labels } },
    });
    await eventually(
      () => client.request({ method: 'GET', path: `/api/v1/namespaces/${name}/serviceaccounts/default` }),
      { what: `the default service account of ${name}` },
    );
  }

  // No kubelet here: stand in for the webhook pod's ready endpoint, which the split controller waits for before it
  // registers the gating webhook (the webhook process itself stays up through every fault below).
  await client.request({
    method: 'POST',
    path: `/apis/discovery.k8s.io/v1/namespaces/${opNs}/endpointslices`,
    body: {
      metadata: {
        name: 'pod-placement-web-hook-faults',
        labels: { 'kubernetes.io/service-name': MUTATING_WEBHOOK.serviceName },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: 'webhook', port: 9443, protocol: 'TCP' }],
    },
  });

  const webhookPort = await freePort();
  const common = (): OperatorProcessOptions => ({
    kubeconfigPath: cluster.kubeconfigPath,
    namespace: opNs,
    globalPullSecretNamespace: opNs,
    registryCaFiles: [registry.caFile],
    webhookPort,
    nodeOptions: DEPLOYMENT_HEAP,
    extraArgs: ['--inspection-deadline-ms', String(INSPECTION_DEADLINE_MS)],
  });
  controller = supervise(() =>
    startOperatorProcess({ ...common(), components: 'controller', leaderElect: true }),
  );
  webhook = startOperatorProcess({ ...common(), components: 'webhook' });
  await eventually(() => client.request({ method: 'GET', path: cppcPath }), {
    timeoutMs: 90_000,
    what: `the CRDs installed (controller log: ${controller.current().logFile})`,
  });
  await eventually(
    () =>
      client.request({
        method: 'POST',
        path: cppcPath,
        body: {
          apiVersion: 'multiarch.openshift.io/v1beta1',
          kind: 'ClusterPodPlacementConfig',
          metadata: { name: 'cluster' },
          spec: { namespaceSelector: { matchLabels: { [TENANT_LABEL]: 'selected' } } },
        },
      }),
    { timeoutMs: 60_000, what: 'the ClusterPodPlacementConfig created (its validating webhook ready)' },
  );
}, 240_000);

afterAll(async () => {
  await controller?.stop();
  await webhook?.stop('SIGKILL');
  await link?.close();
  await registry?.stop();
  await client?.close();
  await cluster?.stop({ wipe: true });
  rmSync(workDir, { recursive: true, force: true });
}, 120_000);

/** mto_ppo_pods_gated on a process's /metrics; undefined when it does not report the gauge. */
async function podsGatedGauge(proc: OperatorProcess): Promise<number | undefined> {
  const url = proc.probeUrl();
  if (url === undefined) throw new Error(`no probe port logged yet (${proc.logFile})`);
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('mto_ppo_pods_gated '));
  return line === undefined ? undefined : Number(line.slice('mto_ppo_pods_gated '.length));
}

describe('pod placement under faults', () => {
  it('a controller killed in the middle of a burst is replaced, and every pod is placed exactly once', async () => {
    const first = await createGatedPod('warm', `${registryHost}/burst:1`);
    await ungated(first.metadata.name, 120_000);
    const restartsBefore = controller.restarts();

    const names = Array.from({ length: 100 }, (_, i) => `burst-${i}`);
    const creating = Promise.all(names.map((name) => createPod(name, `${registryHost}/burst:1`)));
    // Kill the leader as soon as the burst's first pod is placed, while the rest is still gated or being created.
    await eventually(
      async () => {
        const pods = await client.request<{ items: TestPod[] }>({
          method: 'GET',
          path: `/api/v1/namespaces/${tenant}/pods`,
          query: { labelSelector: `${LABELS.schedulingGate}=${LABEL_VALUES.removed}` },
        });
        if (!pods.items.some((p) => p.metadata.name.startsWith('burst-'))) throw new Error('none placed yet');
      },
      { timeoutMs: 60_000, intervalMs: 50, what: 'the first pod of the burst placed' },
    );
    await controller.kill();
    await creating;
    const stillGated = await client.request<{ items: TestPod[] }>({
      method: 'GET',
      path: `/api/v1/namespaces/${tenant}/pods`,
      query: { labelSelector: `${LABELS.schedulingGate}=${LABEL_VALUES.gated}` },
    });
    // The fault hit mid-burst: the dead controller left pods for its successor.
    expect(stillGated.items.length).toBeGreaterThan(0);

    // The next controller takes the Lease over (after the dead one's expires) and places the rest.
    for (const name of names) {
      const pod = await ungated(name, 120_000);
      expect(pod.metadata.labels?.[LABELS.schedulingGate]).toBe(LABEL_VALUES.removed);
      await expectPlacedOnce(name, ['arm64', 's390x']);
    }
    expect(controller.restarts()).toBe(restartsBefore + 1);
  }, 300_000);

  it('with the registry cut, a pod is released within the inspection deadline, naming the registry; placement resumes when the link is back', async () => {
    link.cut();
    try {
      const cut = await createGatedPod('cut', `${registryHost}/cut:1`);
      // While it waits, the controller (which holds the gated-pod cache) counts it; the webhook process, which
      // gated it but never sees it released, has no such gauge at all (the two halves are separate processes).
      await eventually(async () => expect(await podsGatedGauge(controller.current())).toBe(1), {
        timeoutMs: 30_000,
        what: "mto_ppo_pods_gated 1 on the controller's /metrics",
      });
      if (webhook === undefined) throw new Error('the webhook process was not started');
      expect(await podsGatedGauge(webhook)).toBeUndefined();
      const released = await ungated(cut.metadata.name, INSPECTION_DEADLINE_MS + 60_000);
      await eventually(async () => expect(await podsGatedGauge(controller.current())).toBe(0), {
        timeoutMs: 30_000,
        what: 'mto_ppo_pods_gated back to 0 once the pod is released',
      });
      expect(archTerms(released)).toEqual([]);
      expect(released.metadata.annotations?.[LABELS.imageInspectError] ?? '').toContain(registryHost);
      const warnings = (await eventsOf(cut.metadata.name)).filter(
        (e) => e.reason === EVENT_REASONS.inspectionError,
      );
      expect(warnings.map((e) => e.message).join('\n')).toContain(registryHost);
    } finally {
      link.restore();
    }
    const back = await createGatedPod('back', `${registryHost}/cut:1`);
    await ungated(back.metadata.name, 60_000);
    await expectPlacedOnce(back.metadata.name, ['ppc64le']);
  }, 300_000);

  it('etcd and the API server down for 30 s: pods gated before are released, and both halves recover by themselves', async () => {
    // Gated while the registry is unreachable, so the controller is still working on it when the outage begins.
    link.cut();
    const before = await createGatedPod('before-outage', `${registryHost}/outage:1`);
    await cluster.controlPlaneOutage(async () => {
      link.restore();
      await new Promise((resolve) => setTimeout(resolve, 30_000)); // the fault itself: 30 s without a control plane
    });
    // Released or placed (depending on whether its deadline passed during the outage), but never left gated.
    await ungated(before.metadata.name, INSPECTION_DEADLINE_MS + 120_000);
    // The webhook gates again and the controller places again, without a restart.
    const after = await createGatedPod('after-outage', `${registryHost}/after-outage:1`);
    await ungated(after.metadata.name, 120_000);
    await expectPlacedOnce(after.metadata.name, ['amd64']);
    expect(webhook?.child.exitCode).toBeNull();
  }, 300_000);

  it('an image whose config is millions of nested arrays neither kills the controller nor leaves its pod gated', async () => {
    // An 8 MiB config blob (the inspector's size limit) of nested arrays, behind a manifest whose digest and size
    // are right: parsing it whole costs far more heap than the Deployment's 160 MiB.
    const depth = 4_190_000;
    const config = blobOf(
      'application/vnd.oci.image.config.v1+json',
      Buffer.from('['.repeat(depth) + ']'.repeat(depth)),
    );
    const layer = blobOf('application/vnd.oci.image.layer.v1.tar+gzip', Buffer.from('poison layer'));
    const descriptor = (b: typeof config) => ({ mediaType: b.mediaType, digest: b.digest, size: b.size });
    await registry.pushBlob('poison', config);
    await registry.pushBlob('poison', layer);
    await registry.pushManifest(
      'poison',
      '1',
      blobOf(
        'application/vnd.oci.image.manifest.v1+json',
        Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            config: descriptor(config),
            layers: [descriptor(layer)],
          }),
        ),
      ),
    );
    const restartsBefore = controller.restarts();
    const poisoned = await createGatedPod('poison', `${registryHost}/poison:1`);
    const released = await ungated(poisoned.metadata.name, 180_000);
    expect(archTerms(released)).toEqual([]);
    expect(released.metadata.annotations?.[LABELS.imageInspectError] ?? '').not.toBe('');
    // The controller survived the image, or (if it ever does not) the next one released the pod instead of dying
    // on it again: never a crash loop.
    expect(controller.restarts() - restartsBefore).toBeLessThanOrEqual(1);
    // And it still places other pods.
    const next = await createGatedPod('after-poison', `${registryHost}/burst:1`);
    await ungated(next.metadata.name, 120_000);
    await expectPlacedOnce(next.metadata.name, ['arm64', 's390x']);
  }, 300_000);
});
