// Short names (`team/app:1`, no registry) on a cluster whose image.config.openshift.io/cluster names
// containerRuntimeSearchRegistries: the operator looks for them where CRI-O on the nodes would, the search registries
// in order, the first that has the image winning, one manifest request per candidate and none again for a cached
// answer; it follows a change of the list while it runs; `podplacement explain` says which candidate was chosen and
// why. On a private cluster (the image config and the ClusterPodPlacementConfig are cluster singletons) with a
// scheduler, a controller manager (it makes the kwok nodes schedulable) and a node of each architecture, two local
// registries, and the operator in this process.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { ARCHITECTURES } from '../../../src/devcluster/nodes.js';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage } from '../../../src/devcluster/registry-images.js';
import { ANNOTATIONS, ARCH_LABEL, SCHEDULING_GATE } from '../../../src/podplacement/constants.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
} from '../../../src/podplacement/operator.js';
import { KubeClient, silentLogger } from '../../../src/runtime/index.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import { REGISTRY_POLICY_DEV_CRDS, installDevCrds, runTessera, type TestPod } from './support.js';

const opNs = 'pp-short-names-operator';
const appNs = 'pp-short-names-apps';
const imageConfigPath = '/apis/config.openshift.io/v1/images/cluster';

let cluster: DevCluster | undefined;
let client: KubeClient;
let first: LocalRegistry | undefined;
let second: LocalRegistry | undefined;
let operator: PodPlacementOperatorHandle | undefined;
const stop = new AbortController();
const root = mkdtempSync(path.join(os.tmpdir(), 'pp-short-names-'));
const nodeArch = new Map<string, string>();

const SHARED_IN_FIRST = ['amd64', 'arm64'];
const SHARED_IN_SECOND = ['ppc64le', 's390x'];
const ONLY_IN_SECOND = ['arm64', 's390x'];

async function req<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown): Promise<T> {
  return client.request<T>({ method, path: p, body });
}

const imageConfig = (searchRegistries: string[]) => ({
  apiVersion: 'config.openshift.io/v1',
  kind: 'Image',
  metadata: { name: 'cluster' },
  spec: { registrySources: { containerRuntimeSearchRegistries: searchRegistries } },
});

/** Creates a gated pod of `image` (retrying while the webhook is not live yet); returns its name. */
async function createGatedPod(prefix: string, image: string): Promise<string> {
  return eventually(
    async () => {
      const name = uniqueName(prefix);
      const pod = await req<TestPod>('POST', `/api/v1/namespaces/${appNs}/pods`, {
        metadata: { name },
        spec: { containers: [{ name: 'c', image }] },
      });
      if (!(pod.spec.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE))
        throw new Error('not gated yet');
      return name;
    },
    { timeoutMs: 60_000, what: 'a gated pod' },
  );
}

const getPod = (name: string): Promise<TestPod> =>
  req<TestPod>('GET', `/api/v1/namespaces/${appNs}/pods/${name}`);

async function scheduled(name: string): Promise<TestPod> {
  return eventually(
    async () => {
      const pod = await getPod(name);
      if ((pod.spec.schedulingGates ?? []).length > 0) throw new Error(`${name} still gated`);
      if (!pod.spec.nodeName) throw new Error(`${name} not scheduled`);
      return pod;
    },
    { timeoutMs: 60_000, what: `pod ${name} scheduled` },
  );
}

function requiredArchs(pod: TestPod): string[] {
  return (
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  ).flatMap((t) =>
    (t.matchExpressions ?? []).filter((e) => e.key === ARCH_LABEL).flatMap((e) => e.values ?? []),
  );
}

const manifestGets = (registry: LocalRegistry | undefined, repository: string) =>
  (registry?.accessLog() ?? []).filter(
    (e) => e.method === 'GET' && e.path.startsWith(`/v2/${repository}/manifests/`),
  );

beforeAll(async () => {
  first = await startLocalRegistry({ stateDir: path.join(root, 'first'), auth: 'none' });
  second = await startLocalRegistry({ stateDir: path.join(root, 'second'), auth: 'none' });
  const platforms = (archs: string[]) =>
    multiPlatformImage({ platforms: archs.map((a) => ({ architecture: a })) });
  await first.pushImage('shared/app', '1', platforms(SHARED_IN_FIRST));
  await second.pushImage('shared/app', '1', platforms(SHARED_IN_SECOND));
  await second.pushImage('only-second/app', '1', platforms(ONLY_IN_SECOND));

  cluster = await startTestCluster({
    name: uniqueName('pp-short'),
    nodes: ARCHITECTURES.map((architecture) => ({
      name: `worker-${architecture}`,
      architecture,
      role: 'worker' as const,
    })),
  });
  client = new KubeClient(await cluster.kubeConfig());
  const nodes = await req<{ items: { metadata: { name: string; labels?: Record<string, string> } }[] }>(
    'GET',
    '/api/v1/nodes',
  );
  for (const n of nodes.items) nodeArch.set(n.metadata.name, n.metadata.labels?.[ARCH_LABEL] ?? '');
  for (const name of [opNs, appNs]) await req('POST', '/api/v1/namespaces', { metadata: { name } });
  await eventually(() => req('GET', `/api/v1/namespaces/${appNs}/serviceaccounts/default`), {
    what: `the default service account of ${appNs}`,
  });
  // The image config kind must be served before the operator starts (it asks discovery once).
  await installDevCrds(client, REGISTRY_POLICY_DEV_CRDS);
  await req('POST', '/apis/config.openshift.io/v1/images', imageConfig([first.host, second.host]));

  operator = await startPodPlacementOperator({
    kubeConfig: await cluster.kubeConfig(),
    namespace: opNs,
    signal: stop.signal,
    webhookHost: '127.0.0.1',
    webhookPort: 0,
    endpoint: { kind: 'url', baseUrl: 'https://127.0.0.1:0' },
    tls: { mode: 'self-managed', certDir: path.join(root, 'certs') },
    probes: false,
    leaderElection: false,
    installCrds: true,
    globalPullSecret: { namespace: opNs, name: 'pull-secret' },
    registry: { caCertificates: [first.caCertPem, second.caCertPem] },
    handleSignals: false,
    logger: silentLogger,
  });
  await eventually(
    () =>
      req('POST', '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs', {
        apiVersion: 'multiarch.openshift.io/v1beta1',
        kind: 'ClusterPodPlacementConfig',
        metadata: { name: 'cluster' },
        spec: {},
      }),
    { timeoutMs: 60_000, intervalMs: 500, what: 'the ClusterPodPlacementConfig created' },
  );
}, 240_000);

afterAll(async () => {
  stop.abort();
  await operator?.stopped.catch(() => undefined);
  await client?.close();
  await cluster?.stop({ wipe: true });
  await Promise.all([first?.stop(), second?.stop()]);
  rmSync(root, { recursive: true, force: true });
}, 120_000);

describe('short names with containerRuntimeSearchRegistries', () => {
  it('finds an image only the second search registry has, places the pod by its architectures, and explain says why', async () => {
    const image = 'only-second/app:1';
    const name = await createGatedPod('only-second', image);
    const pod = await scheduled(name);
    expect(requiredArchs(pod)).toEqual(ONLY_IN_SECOND);
    expect(ONLY_IN_SECOND).toContain(nodeArch.get(pod.spec.nodeName ?? ''));
    // One manifest request per candidate, in order: the first registry lacks it, the second has it.
    expect(manifestGets(first, 'only-second/app').map((e) => e.status)).toEqual([404]);
    expect(manifestGets(second, 'only-second/app').map((e) => e.status)).toEqual([200]);

    // Another pod of the same image is answered from the cache: no request anywhere.
    const again = await scheduled(await createGatedPod('only-second-again', image));
    expect(requiredArchs(again)).toEqual(ONLY_IN_SECOND);
    expect(manifestGets(first, 'only-second/app')).toHaveLength(1);
    expect(manifestGets(second, 'only-second/app')).toHaveLength(1);

    const run = await runTessera(
      cluster?.kubeconfigPath ?? '',
      'podplacement',
      'explain',
      `${appNs}/${name}`,
      '--registry-ca',
      first?.caFile ?? '',
      second?.caFile ?? '',
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${image}: ${ONLY_IN_SECOND.join(', ')}`);
    expect(run.stdout).toContain(
      `short name ${image}: the search registries are tried in order, as CRI-O does, and the first that has it is used: ${first?.host ?? ''}/${image} not there, ${second?.host ?? ''}/${image} chosen`,
    );
  }, 180_000);

  it('releases a pod whose short name no search registry has, saying where it looked', async () => {
    const name = await createGatedPod('missing', 'missing/app:1');
    const pod = await eventually(
      async () => {
        const p = await getPod(name);
        if ((p.spec.schedulingGates ?? []).length > 0) throw new Error('still gated');
        return p;
      },
      { what: 'the pod released' },
    );
    expect(requiredArchs(pod)).toEqual([]);
    expect(pod.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toContain(
      `a short name that no search registry has (tried in order: ${first?.host ?? ''}/missing/app:1 not there, ${second?.host ?? ''}/missing/app:1 not there)`,
    );
  });

  it('takes the first registry that has it, and follows a reordering of the list while it runs', async () => {
    const before = await scheduled(await createGatedPod('shared', 'shared/app:1'));
    expect(requiredArchs(before)).toEqual(SHARED_IN_FIRST);

    const current = await req<{ metadata: { resourceVersion: string } }>('GET', imageConfigPath);
    await req('PUT', imageConfigPath, {
      ...imageConfig([second?.host ?? '', first?.host ?? '']),
      metadata: { name: 'cluster', resourceVersion: current.metadata.resourceVersion },
    });
    // The operator learns of the change through its watch (and forgets its cached answers): until then a new pod
    // may still be placed by the old order.
    await eventually(
      async () => {
        const after = await scheduled(await createGatedPod('shared-after', 'shared/app:1'));
        expect(requiredArchs(after)).toEqual(SHARED_IN_SECOND);
      },
      { timeoutMs: 60_000, what: 'a pod placed by the new order' },
    );
  }, 180_000);
});
