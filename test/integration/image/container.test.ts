// The operator image run for real: hack/image/build.sh builds it for this machine's platform only (a quarter of the
// four-platform build; image.test.ts covers the four-platform index), pushes it to a local registry, and podman
// pulls and runs it
// against a private control plane on which deploy/ is applied as a cluster admin applies it. Every container gets
// what a pod gets: a TokenRequest token of its component's own service account and the cluster CA at
// /var/run/secrets/kubernetes.io/serviceaccount, KUBERNETES_SERVICE_HOST/PORT and POD_NAMESPACE, and the
// Deployments' restrictions (user 65532, read-only root, no capabilities). From the image:
//  - pod placement, its controller and webhook in two containers as deploy/ splits them, gates and places pods,
//    its own Deployment's pods included, by the architectures of the pushed index (the API server calls the
//    webhook in its container on loopback, as the dev cluster registers it by URL);
//  - update status writes the UpdateStatus `cluster` from the ClusterVersion it reads;
//  - NodePool status carries a Tuned profile's state to its NodePool's conditions;
//  - leader election hands over: the update status leader's container is stopped and the standby container takes
//    the lease and writes.
// kwok runs deploy/'s Deployments as fake pods (no process); the containers here are the processes.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { binaryPaths, projectRoot } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { freePort } from '../../../src/devcluster/processes.js';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { HostedClusterPair } from '../../../src/demo/hosted-cluster-pair.js';
import type { NodePool } from '../../../src/nodepool/api/types.js';
import { ARCH_LABEL, SCHEDULING_GATE } from '../../../src/podplacement/constants.js';
import { KubeClient, ResourceClient, type KubeObject } from '../../../src/runtime/index.js';
import { ClusterOperators, ClusterVersions } from '../../../src/updatestatus/api/dev-crds.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import {
  DEPLOY,
  DEPLOY_NAMESPACES,
  applyDeploy,
  hostedStatusWriterToken,
  prepareOpenShiftLikeCluster,
} from '../../support/deploy.js';
import { tenantUnderPlacement } from '../../support/placement.js';
import { type Container, Podman, type PodCredentials, podCredentials } from '../../support/container.js';
import { fixturePath } from '../../support/fixtures.js';
import { forbiddenLines, tokenKubeConfig } from '../../support/identities.js';

const execFileAsync = promisify(execFile);
const PP_NS = DEPLOY_NAMESPACES.podPlacement;
const US_NS = DEPLOY_NAMESPACES.updateStatus;
const NP_NS = DEPLOY_NAMESPACES.nodePool;
const TENANT_LABEL = 'tessera.dev/container-test';
/** The oc-upgrade-status case whose ClusterVersion and ClusterOperators the update status controller reads. */
const US_CASE = '4.15.0-ec2-early';
/** The image's platform: this machine's, so podman runs it natively. */
const PLATFORM = (
  { x64: 'amd64', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>
)[process.arch];
/** Warm: ~20 s (tsc, npm ci from the npm cache, one platform); cold: the downloads too. */
const BUILD_TIMEOUT_MS = 10 * 60_000;

let stateDir: string;
let cluster: DevCluster | undefined;
let client: KubeClient;
let admin: KubeConfig;
let registry: LocalRegistry | undefined;
let podman: Podman | undefined;
/** `HOST/REPOSITORY@sha256:...` of the pushed index. */
let image = '';
const started: Container[] = [];

async function kubectl(args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(
    binaryPaths().kubectl,
    ['--kubeconfig', cluster?.kubeconfigPath ?? '', ...args],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout;
}

/** Builds this platform's image with the project's script and pushes it; returns `HOST/REPOSITORY@DIGEST`. */
async function buildImage(reg: LocalRegistry): Promise<string> {
  if (!PLATFORM || process.platform !== 'linux')
    throw new Error(
      `the image runs on Linux on amd64, arm64, ppc64le or s390x, not ${process.platform}/${process.arch}`,
    );
  const startedAt = Date.now();
  const { stdout } = await execFileAsync(
    'bash',
    [
      path.join(projectRoot, 'hack/image/build.sh'),
      ...['--registry', reg.host, '--repository', 'tessera/operator', '--tag', 'container-it'],
      ...['--platforms', PLATFORM, '--ca-file', reg.caFile],
    ],
    { cwd: projectRoot, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
  ).catch((err: unknown) => {
    throw new Error(`hack/image/build.sh failed: ${(err as { stderr?: string }).stderr ?? String(err)}`);
  });
  process.stderr.write(
    `[container test] image build took ${((Date.now() - startedAt) / 1000).toFixed(0)} s\n`,
  );
  const reference = stdout.trim().split('\n').at(-1) ?? '';
  const digest = reference.slice(reference.lastIndexOf('@') + 1);
  return `${reg.host}/tessera/operator@${digest}`;
}

/** Credentials of `namespace/serviceAccount`, as the kubelet mounts them for a pod, in a folder of their own. */
function credentials(namespace: string, serviceAccount: string): Promise<PodCredentials> {
  return podCredentials(
    mkdtempSync(path.join(stateDir, `sa-${serviceAccount}-`)),
    admin,
    client,
    namespace,
    serviceAccount,
  );
}

async function runContainer(spec: Parameters<Podman['run']>[0]): Promise<Container> {
  if (!podman) throw new Error('podman not set up');
  const c = await podman.run(spec);
  started.push(c);
  return c;
}

/** Waits for the container's readiness probe (as the kubelet's httpGet /readyz) to answer 200. */
async function ready(c: Container, probePort: number): Promise<void> {
  await eventuallyLogged(
    async () => {
      const res = await fetch(`http://127.0.0.1:${probePort}/readyz`);
      if (res.status !== 200) throw new Error(`/readyz answered ${res.status}`);
    },
    { timeoutMs: 90_000, what: `container ${c.name} Ready` },
  );
}

/** Everything a failed wait needs: each container's log. */
async function containerLogs(): Promise<string> {
  const parts: string[] = [];
  for (const c of started) parts.push(`--- ${c.name}\n${await c.logs().catch((e: unknown) => String(e))}`);
  return parts.join('\n');
}

/** `eventually`, with the containers' logs (as they are when it gives up) on the error. */
function eventuallyLogged<T>(
  check: () => Promise<T>,
  options: { timeoutMs?: number; what: string },
): Promise<T> {
  return eventually(check, { ...options, explain: containerLogs });
}

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-container-'));
  chmodSync(stateDir, 0o755);
  podman = new Podman(path.join(stateDir, 'podman'));
  registry = await startLocalRegistry({ stateDir: path.join(stateDir, 'registry'), auth: 'none' });
  // The build and the control plane start side by side.
  const [built, started] = await Promise.all([
    buildImage(registry),
    startTestCluster({ name: uniqueName('container'), nodes: 'default' }),
  ]);
  image = built;
  cluster = started;
  admin = await cluster.kubeConfig();
  client = new KubeClient(admin);
  await podman.pull(image, registry.caFile);

  // What the cluster has before Tessera (as manifests.test.ts sets it up), then the admin's commands.
  await prepareOpenShiftLikeCluster(client);
  await applyDeploy(kubectl);
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  // Containers first (whatever happened), then what they talked to.
  await podman?.cleanup();
  await client?.close();
  await cluster?.stop({ wipe: true });
  await registry?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
}, 180_000);

interface Pod {
  metadata: { name: string; ownerReferences?: { kind: string }[] };
  spec: {
    nodeName?: string;
    schedulingGates?: { name: string }[];
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms: { matchExpressions?: { key: string; values?: string[] }[] }[];
        };
      };
    };
  };
}

const archValues = (pod: Pod): string[] =>
  (
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  ).flatMap((t) =>
    (t.matchExpressions ?? []).filter((e) => e.key === ARCH_LABEL).flatMap((e) => e.values ?? []),
  );

async function nodeArch(name: string): Promise<string | undefined> {
  const node = await client.request<{ metadata: { labels?: Record<string, string> } }>({
    method: 'GET',
    path: `/api/v1/nodes/${name}`,
  });
  return node.metadata.labels?.[ARCH_LABEL];
}

describe('the operator image under podman, with pod credentials', () => {
  it('pod placement gates and places pods, its own Deployment included, by the architectures of the image', async () => {
    const webhookPort = await freePort();
    const caDir = mkdtempSync(path.join(stateDir, 'registry-ca-'));
    chmodSync(caDir, 0o755);
    writeFileSync(path.join(caDir, 'ca.crt'), registry?.caCertPem ?? '', { mode: 0o644 });
    // The two Deployments of deploy/podplacement, each as its own service account: the controller (it creates the
    // webhook certificate Secret, registers the webhook and inspects images) and the webhook (it reads that
    // Secret). The API server reaches the webhook by URL on loopback, as the dev cluster registers it.
    const common = ['podplacement', 'operator', '--namespace', PP_NS, '--tls', 'self-managed'];
    const url = ['--webhook-url', `https://127.0.0.1:${webhookPort}`];
    const controllerProbe = await freePort();
    const controller = await runContainer({
      name: 'pod-placement-controller',
      image,
      args: [
        ...common,
        ...['--components=controller', ...url, `--probe-port=${controllerProbe}`],
        ...['--registry-ca', '/etc/tessera/registry/ca.crt'],
        // In-cluster credentials make it deny loopback by default; here the network is the host's, where the
        // test registry listens on loopback.
        '--registry-allow-cidr=127.0.0.0/8',
      ],
      credentials: await credentials(PP_NS, 'pod-placement-controller'),
      mounts: { [caDir]: '/etc/tessera/registry' },
    });
    const webhookProbe = await freePort();
    const webhook = await runContainer({
      name: 'pod-placement-web-hook',
      image,
      args: [
        ...common,
        ...['--components=webhook', '--cert-dir=/tmp/tls', ...url, `--probe-port=${webhookProbe}`],
        ...['--webhook-host=127.0.0.1', `--webhook-port=${webhookPort}`],
      ],
      credentials: await credentials(PP_NS, 'pod-placement-web-hook'),
    });
    await ready(controller, controllerProbe);
    await ready(webhook, webhookProbe);
    const tenant = await tenantUnderPlacement(client, TENANT_LABEL);
    await eventuallyLogged(
      async () => {
        await client.request({
          method: 'GET',
          path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
        });
      },
      { timeoutMs: 60_000, what: `the webhook registered by the container` },
    );

    // A pod naming the image: gated at creation by the container's webhook, then placed by its controller. The
    // apiserver may not call a just-registered webhook yet (and admits ungated, the webhook failing open): pods are
    // created until one is gated.
    const created = await eventually(
      async () => {
        const pod = await client.request<Pod>({
          method: 'POST',
          path: `/api/v1/namespaces/${tenant}/pods`,
          body: { metadata: { generateName: 'app-' }, spec: { containers: [{ name: 'app', image }] } },
        });
        expect(pod.spec.schedulingGates?.map((g) => g.name)).toEqual([SCHEDULING_GATE]);
        return pod;
      },
      { timeoutMs: 30_000, what: 'a pod gated at admission' },
    );
    const placed = await eventuallyLogged(
      async () => {
        const pod = await client.request<Pod>({
          method: 'GET',
          path: `/api/v1/namespaces/${tenant}/pods/${created.metadata.name}`,
        });
        if ((pod.spec.schedulingGates ?? []).length > 0 || !pod.spec.nodeName)
          throw new Error('not placed yet');
        return pod;
      },
      { timeoutMs: 60_000, what: `the pod ungated and scheduled` },
    );
    expect(archValues(placed)).toEqual([PLATFORM]);
    expect(await nodeArch(placed.spec.nodeName ?? '')).toBe(PLATFORM);

    // The operator's own Deployment from deploy/, naming the pushed index, in a namespace the operator serves
    // (its own namespace is never gated): its pods get the index's architectures.
    const { stdout } = await execFileAsync(
      binaryPaths().kubectl,
      ['kustomize', path.join(DEPLOY, 'podplacement')],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const own = parseAllDocuments(stdout)
      .map((d) => d.toJSON() as KubeObject & { spec: { template: { spec: Record<string, unknown> } } })
      .find((o) => o.kind === 'Deployment' && o.metadata?.name === 'pod-placement-controller');
    if (!own) throw new Error('deploy/podplacement has no pod-placement-controller Deployment');
    const podSpec = own.spec.template.spec as {
      serviceAccountName?: string;
      containers: { image: string }[];
      affinity?: unknown;
    };
    // The shipped Deployment requires the released image's four architectures, a term the operator keeps as it is.
    // The image built here has this machine's platform only, so without that term the operator places the pods by
    // this image, which is what this test shows.
    expect(JSON.stringify(podSpec.affinity)).toContain('kubernetes.io/arch');
    delete podSpec.affinity;
    podSpec.serviceAccountName = 'default';
    for (const c of podSpec.containers) c.image = image;
    await client.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${tenant}/deployments`,
      body: {
        ...own,
        metadata: { name: 'pod-placement-controller', namespace: tenant, labels: own.metadata?.labels },
      },
    });
    const ownPods = await eventuallyLogged(
      async () => {
        const list = await client.request<{ items: Pod[] }>({
          method: 'GET',
          path: `/api/v1/namespaces/${tenant}/pods`,
          query: { labelSelector: 'controller=pod-placement-controller' },
        });
        if (
          list.items.length !== 2 ||
          list.items.some((p) => !p.spec.nodeName || (p.spec.schedulingGates ?? []).length > 0)
        )
          throw new Error(`${list.items.length} pods, not both placed yet`);
        return list.items;
      },
      { timeoutMs: 90_000, what: `the operator's own pods placed` },
    );
    for (const pod of ownPods) {
      expect(archValues(pod), pod.metadata.name).toEqual([PLATFORM]);
      expect(await nodeArch(pod.spec.nodeName ?? ''), pod.metadata.name).toBe(PLATFORM);
    }
    for (const c of [controller, webhook])
      expect(forbiddenLines((await c.logs()).split('\n')), c.name).toEqual([]);
  });

  let leader: Container | undefined;
  let standby: Container | undefined;

  it('update status writes the UpdateStatus `cluster` from the ClusterVersion it reads', async () => {
    const { snapshot } = await loadSnapshot(
      path.join(fixturePath('oc-upgrade-status'), `${US_CASE}-cv.yaml`),
    );
    const fresh = <T extends KubeObject>(o: T): T =>
      ({
        ...o,
        metadata: {
          name: o.metadata?.name,
          labels: o.metadata?.labels,
          annotations: o.metadata?.annotations,
        },
      }) as T;
    await new ResourceClient(client, ClusterVersions).create(fresh(snapshot.clusterVersion as KubeObject));
    const operators = new ResourceClient(client, ClusterOperators);
    for (const co of snapshot.clusterOperators as KubeObject[]) await operators.create(fresh(co));

    const probePort = await freePort();
    leader = await runContainer({
      name: 'update-status-a',
      image,
      args: ['upgrade', 'status-controller', `--namespace=${US_NS}`, `--probe-port=${probePort}`],
      credentials: await credentials(US_NS, 'update-status-controller'),
    });
    await ready(leader, probePort);
    const target = (snapshot.clusterVersion as { status: { desired: { version: string } } }).status.desired
      .version;
    await eventuallyLogged(
      async () => {
        const us = await client.request<{ status?: unknown }>({
          method: 'GET',
          path: '/apis/update.openshift.io/v1alpha1/updatestatuses/cluster',
        });
        expect(JSON.stringify(us.status ?? {})).toContain(target);
      },
      { timeoutMs: 60_000, what: `the UpdateStatus naming ${target}` },
    );
    const lease = await client.request<{ spec: { holderIdentity?: string } }>({
      method: 'GET',
      path: `/apis/coordination.k8s.io/v1/namespaces/${US_NS}/leases/tessera-updatestatus`,
    });
    expect(lease.spec.holderIdentity).toMatch(/^update-status-a_/);
    expect(forbiddenLines((await leader.logs()).split('\n'))).toEqual([]);
  });

  it('leader election hands over: the leader container stops, the standby takes the lease and writes', async () => {
    if (!leader) throw new Error('the update status test did not start a leader');
    const probePort = await freePort();
    standby = await runContainer({
      name: 'update-status-b',
      image,
      args: ['upgrade', 'status-controller', `--namespace=${US_NS}`, `--probe-port=${probePort}`],
      credentials: await credentials(US_NS, 'update-status-controller'),
    });
    await ready(standby, probePort);
    const holder = async (): Promise<string> =>
      (
        await client.request<{ spec: { holderIdentity?: string } }>({
          method: 'GET',
          path: `/apis/coordination.k8s.io/v1/namespaces/${US_NS}/leases/tessera-updatestatus`,
        })
      ).spec.holderIdentity ?? '';
    // Standing by: the lease stays with the first container.
    expect(await holder()).toMatch(/^update-status-a_/);

    // As the kubelet stops a pod: SIGTERM, then SIGKILL after the grace period.
    await leader.stop(10);
    expect(await leader.running()).toBe(false);
    await eventuallyLogged(async () => expect(await holder()).toMatch(/^update-status-b_/), {
      timeoutMs: 60_000,
      what: `the standby holding the lease`,
    });
    // It works as the leader: the UpdateStatus, deleted, is written again by the second container.
    await client.request({
      method: 'DELETE',
      path: '/apis/update.openshift.io/v1alpha1/updatestatuses/cluster',
    });
    await eventuallyLogged(
      async () => {
        const us = await client.request<{ status?: { conditions?: unknown[] } }>({
          method: 'GET',
          path: '/apis/update.openshift.io/v1alpha1/updatestatuses/cluster',
        });
        expect(us.status?.conditions?.length ?? 0).toBeGreaterThan(0);
      },
      { timeoutMs: 60_000, what: `the UpdateStatus written again by the new leader` },
    );
    // Handed over, not taken after expiry: the first container released the lease as it stopped.
    expect(await leader.logs()).toContain('released the lease');
    expect(await standby.logs()).toContain('became leader');
    expect(forbiddenLines((await standby.logs()).split('\n'))).toEqual([]);
  });

  it('NodePool status mirrors a Tuned profile state into its NodePool condition', async () => {
    const token = await hostedStatusWriterToken(client);
    // The hosted cluster's kubeconfig, as the Deployment's comment says to mount it from a Secret.
    const hostedDir = mkdtempSync(path.join(stateDir, 'hosted-'));
    chmodSync(hostedDir, 0o755);
    writeFileSync(
      path.join(hostedDir, 'kubeconfig'),
      tokenKubeConfig(admin, 'nto-status-writer', token).exportConfig(),
      {
        mode: 0o644,
      },
    );
    // This one cluster plays both parts, as in manifests.test.ts.
    const pair = new HostedClusterPair({ management: client, hosted: client, clusterName: 'container-hc' });
    await pair.setUp();
    await pair.addNodePool('np-container', 'pp-container', ['container-np-node-1']);
    await pair.setTunedState('container-np-node-1', { kind: 'applied' });

    const probePort = await freePort();
    const controller = await runContainer({
      name: 'nodepool-status',
      image,
      args: [
        ...['nodepool', 'run', '--leader-elect', `--namespace=${NP_NS}`, `--probe-port=${probePort}`],
        ...['--hosted-kubeconfig=/var/run/tessera/hosted/kubeconfig', `--hcp-namespace=${pair.hcpNamespace}`],
      ],
      credentials: await credentials(NP_NS, 'nodepool-status-controller'),
      mounts: { [hostedDir]: '/var/run/tessera/hosted' },
    });
    await ready(controller, probePort);
    await eventuallyLogged(
      async () => {
        const np: NodePool = await pair.getNodePool('np-container');
        const summary = np.status?.conditions?.find(
          (c) => c.type === 'PerformanceProfileAppliedSuccessfully',
        );
        expect(summary?.status).toBe('True');
      },
      { timeoutMs: 60_000, what: `the NodePool condition from the hosted cluster` },
    );
    // A change in the hosted cluster reaches the NodePool too.
    await pair.setTunedState('container-np-node-1', {
      kind: 'degraded',
      reason: 'TunedError',
      message: 'tuned failed in the container test',
    });
    await eventuallyLogged(
      async () => {
        const np: NodePool = await pair.getNodePool('np-container');
        const summary = np.status?.conditions?.find(
          (c) => c.type === 'PerformanceProfileAppliedSuccessfully',
        );
        expect(summary?.status).toBe('False');
      },
      { timeoutMs: 60_000, what: `the NodePool condition turned False` },
    );
    expect(forbiddenLines((await controller.logs()).split('\n'))).toEqual([]);
  });
});
