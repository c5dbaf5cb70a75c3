// Tessera installed as a cluster admin installs it, running as real pods on a real kubelet node (`tessera dev up
// --real-nodes`): the image `npm run image` builds (this machine's platform only) is pushed to the cluster's local
// registry, the admin pins it with kustomize's `images` in an overlay of deploy/ and applies it with `kubectl apply
// -k`. Then, as a user of the cluster would notice:
//  - every Deployment becomes Available through its own readiness probes, its pods on the real node with the
//    service-account token the kubelet mounted (their leader election and informers use it);
//  - the API server calls the pod placement webhook through its Service (kube-proxy on the node): a tenant pod is
//    gated at admission, then placed by the controller and runs to completion on the real node;
//  - a pod whose image lacks the node's architecture is placed off it (only its own architecture allowed) and so
//    never runs on it;
//  - deleting the leading controller pod hands the lease to the standby, which keeps placing pods.
// The node's kubelet pulls with the registry's credentials as a node pulls with OpenShift's global pull secret. The
// controller inspects images from inside its pod, where the registry's loopback address is its own: as on a
// disconnected OpenShift cluster, an ImageDigestMirrorSet points the registry at an address pods reach (a relay on
// the node link's host end) and image.config.openshift.io lists that mirror as insecure (the registry's certificate
// names 127.0.0.1 only).
// A second cluster with a real node takes OLM v0's catalog path to the end: the bundle-unpack Job's pod runs on the
// real node (OLM's util and opm images built here from the binaries hack/build-binaries.sh builds), the InstallPlan
// completes, and the CSV reaches Succeeded with its Deployments' pods running on the node.
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { Resolver } from 'node:dns/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { catalogHead } from '../../../hack/bundle/catalog.js';
import {
  ensureBinaries,
  OLM_TEST_BINARIES,
  projectRoot,
  REAL_NODE_BINARIES,
  TEST_BINARIES,
} from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { filesImage } from '../../../src/devcluster/oci-archive.js';
import { hostArchitecture, realNodeSupportProblem } from '../../../src/devcluster/real-nodes.js';
import { ARCH_LABEL, SCHEDULING_GATE } from '../../../src/podplacement/constants.js';
import { isAlreadyExists, isNotFound } from '../../../src/runtime/errors.js';
import { KubeClient } from '../../../src/runtime/index.js';
import { eventually, startTestCluster, uniqueName, waitForCrdsEstablished } from '../../support/cluster.js';
import {
  DEPLOY,
  DEPLOY_NAMESPACES,
  prepareOpenShiftLikeCluster,
  prometheusOperatorCrd,
} from '../../support/deploy.js';
import { tenantUnderPlacement } from '../../support/placement.js';
import { type Olm, OLM_NAMESPACE, OPERATORS_NAMESPACE, startOlm } from '../../support/olm.js';
import { writeOciLayout } from '../../support/oci-layout.js';
import { holdRealNodeMachine } from '../../support/real-node-lock.js';

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;
const PLATFORM = hostArchitecture();
/** An architecture this machine is not: the real node lacks it. */
const OTHER_ARCH = PLATFORM === 'arm64' ? 'amd64' : 'arm64';
const PP_NS = DEPLOY_NAMESPACES.podPlacement;
/** Where deploy/ runs Tessera's Deployments. */
const NAMESPACES = Object.values(DEPLOY_NAMESPACES);
const TENANT_LABEL = 'tessera.dev/real-pods-test';
/** Cold: the image's downloads and the real node's binaries; warm: about a minute. */
const SETUP_TIMEOUT_MS = 30 * 60_000;

interface Pod {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec: {
    nodeName?: string;
    schedulingGates?: { name: string }[];
    volumes?: { name: string; projected?: { sources?: { serviceAccountToken?: unknown }[] } }[];
    containers: { name: string; volumeMounts?: { name: string; mountPath: string }[] }[];
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms: { matchExpressions?: { key: string; values?: string[] }[] }[];
        };
      };
    };
  };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number }[];
    initContainerStatuses?: { name: string; state?: { terminated?: { exitCode: number } } }[];
  };
}

interface Deployment {
  metadata: { name: string; namespace: string };
  spec: { replicas?: number };
  status?: {
    availableReplicas?: number;
    readyReplicas?: number;
    conditions?: { type: string; status: string }[];
  };
}

const archValues = (pod: Pod): string[] =>
  (
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  ).flatMap((t) =>
    (t.matchExpressions ?? []).filter((e) => e.key === ARCH_LABEL).flatMap((e) => e.values ?? []),
  );

type Registry = NonNullable<DevCluster['registry']>;

function registryOf(cluster: DevCluster): Registry {
  if (!cluster.registry) throw new Error('the cluster started without its local registry');
  return cluster.registry;
}

/** A TCP relay on `host` (an address pods reach) to the registry on loopback; TLS passes through. */
async function startRelay(host: string, target: string): Promise<{ server: net.Server; address: string }> {
  const targetPort = Number(target.slice(target.lastIndexOf(':') + 1));
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, address: `${host}:${(server.address() as net.AddressInfo).port}` };
}

/**
 * Inside a pod, the registry's `127.0.0.1` is the pod's own loopback, so the cluster is set up as a disconnected
 * OpenShift cluster is: a relay on the node link's host address (`hostIp`), an ImageDigestMirrorSet to it, listed as
 * insecure in `image.config.openshift.io`, and the global pull secret for both. Returns the relay, to close.
 */
async function mirrorRegistryForPods(
  client: KubeClient,
  registry: Registry,
  hostIp: string,
  kubectl: (args: string[]) => Promise<string>,
): Promise<net.Server> {
  const mirror = await startRelay(hostIp, registry.host);
  await kubectl([
    'apply',
    '--server-side',
    '-f',
    path.join(DEPLOY, 'crds/dev/config.openshift.io_imagedigestmirrorsets.yaml'),
    '-f',
    path.join(DEPLOY, 'crds/dev/config.openshift.io_images.yaml'),
  ]);
  await waitForCrdsEstablished(kubectl, [
    'crd/imagedigestmirrorsets.config.openshift.io',
    'crd/images.config.openshift.io',
  ]);
  const auths = (
    JSON.parse(readFileSync(registry.dockerConfigJsonFile, 'utf8')) as { auths: Record<string, unknown> }
  ).auths;
  const credentials = auths[registry.host];
  await client
    .request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'openshift-config' } } })
    .catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  await client.request({
    method: 'POST',
    path: '/api/v1/namespaces/openshift-config/secrets',
    body: {
      metadata: { name: 'pull-secret' },
      type: 'kubernetes.io/dockerconfigjson',
      stringData: {
        '.dockerconfigjson': JSON.stringify({
          auths: { [registry.host]: credentials, [mirror.address]: credentials },
        }),
      },
    },
  });
  await client.request({
    method: 'POST',
    path: '/apis/config.openshift.io/v1/imagedigestmirrorsets',
    body: {
      apiVersion: 'config.openshift.io/v1',
      kind: 'ImageDigestMirrorSet',
      metadata: { name: 'local-registry' },
      spec: { imageDigestMirrors: [{ source: registry.host, mirrors: [mirror.address] }] },
    },
  });
  await client.request({
    method: 'POST',
    path: '/apis/config.openshift.io/v1/images',
    body: {
      apiVersion: 'config.openshift.io/v1',
      kind: 'Image',
      metadata: { name: 'cluster' },
      spec: { registrySources: { insecureRegistries: [mirror.address] } },
    },
  });
  return mirror.server;
}

/** Waits for `check`, explaining a timeout with what the caller knows of the cluster. */
type ExplainedWait = <T>(
  check: () => Promise<T>,
  options: { timeoutMs?: number; what: string },
) => Promise<T>;

/**
 * A tenant namespace covered by a ClusterPodPlacementConfig; resolves once the controller has registered the gating
 * webhook, pointing at the webhook's Service (not a URL): the API server reaches it at the Service's endpoints.
 */
async function enablePlacement(client: KubeClient, wait: ExplainedWait): Promise<string> {
  const tenant = await tenantUnderPlacement(client, TENANT_LABEL);
  const config = await wait(
    () =>
      client.request<{ webhooks: { clientConfig: { service?: { name: string }; url?: string } }[] }>({
        method: 'GET',
        path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
      }),
    { timeoutMs: 120_000, what: 'the webhook registered by the controller pod' },
  );
  expect(config.webhooks[0]?.clientConfig.service).toBeDefined();
  expect(config.webhooks[0]?.clientConfig.url).toBeUndefined();
  return tenant;
}

/**
 * Creates pods until one is gated at admission (the API server may not call a just-registered webhook yet and
 * admits ungated: the webhook fails open), then waits for the controller to ungate it; returns it placed.
 */
async function placedPod(
  client: KubeClient,
  wait: ExplainedWait,
  pod: { namespace: string; prefix: string; image: string; args: string[] },
): Promise<Pod> {
  const created = await wait(
    async () => {
      const got = await client.request<Pod>({
        method: 'POST',
        path: `/api/v1/namespaces/${pod.namespace}/pods`,
        body: {
          metadata: { generateName: `${pod.prefix}-` },
          spec: { restartPolicy: 'Never', containers: [{ name: 'app', image: pod.image, args: pod.args }] },
        },
      });
      if (!(got.spec.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE)) {
        await client.request({
          method: 'DELETE',
          path: `/api/v1/namespaces/${pod.namespace}/pods/${got.metadata.name}`,
        });
        throw new Error(`pod ${got.metadata.name} admitted without the scheduling gate`);
      }
      return got;
    },
    { timeoutMs: 60_000, what: 'a pod gated at admission by the webhook' },
  );
  return wait(
    async () => {
      const got = await client.request<Pod>({
        method: 'GET',
        path: `/api/v1/namespaces/${pod.namespace}/pods/${created.metadata.name}`,
      });
      if ((got.spec.schedulingGates ?? []).length > 0) throw new Error('still gated');
      return got;
    },
    { timeoutMs: 120_000, what: `pod ${created.metadata.name} ungated by the controller` },
  );
}

/** Waits for pod `name` to finish; returns it (Succeeded or Failed). */
function finishedPod(client: KubeClient, wait: ExplainedWait, namespace: string, name: string): Promise<Pod> {
  return wait(
    async () => {
      const p = await client.request<Pod>({
        method: 'GET',
        path: `/api/v1/namespaces/${namespace}/pods/${name}`,
      });
      if (p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
        throw new Error(`phase ${p.status?.phase ?? 'none'}`);
      return p;
    },
    { timeoutMs: 120_000, what: `pod ${name} to run to completion` },
  );
}

/**
 * `npm run image` for this platform, pushed to `registry` with its credentials; returns `HOST/REPO@DIGEST`. The
 * pushed index is also written to `layout` (an OCI layout) when given, for another cluster's registry.
 */
async function buildImage(registry: Registry, layout?: string): Promise<string> {
  const startedAt = Date.now();
  const { stdout } = await run(
    'bash',
    [
      path.join(projectRoot, 'hack/image/build.sh'),
      ...['--registry', registry.host, '--repository', 'tessera/operator', '--tag', 'real-pods'],
      ...['--platforms', PLATFORM, '--ca-file', registry.caFile],
      ...['--auth-file', registry.dockerConfigJsonFile],
      ...(layout ? ['--layout', layout] : []),
    ],
    { cwd: projectRoot, encoding: 'utf8', timeout: SETUP_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
  ).catch((err: unknown) => {
    throw new Error(`hack/image/build.sh failed: ${(err as { stderr?: string }).stderr ?? String(err)}`);
  });
  process.stderr.write(`[real pods] image build took ${((Date.now() - startedAt) / 1000).toFixed(0)} s\n`);
  const reference = stdout.trim().split('\n').at(-1) ?? '';
  return `${registry.host}/tessera/operator@${reference.slice(reference.lastIndexOf('@') + 1)}`;
}

/** crane with the registry's credentials and CA. */
async function crane(registry: Registry, args: string[], work: string): Promise<string> {
  const dockerConfig = path.join(work, 'docker');
  mkdirSync(dockerConfig, { recursive: true });
  writeFileSync(path.join(dockerConfig, 'config.json'), readFileSync(registry.dockerConfigJsonFile));
  const { crane: binary } = await ensureBinaries(['crane']);
  const { stdout } = await run(binary, args, {
    env: { ...process.env, DOCKER_CONFIG: dockerConfig, SSL_CERT_FILE: registry.caFile },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** Pushes a single-manifest image as `HOST/repository:tag`; returns its digest reference. */
async function pushImage(
  registry: Registry,
  repository: string,
  built: ReturnType<typeof filesImage>,
  work: string,
): Promise<string> {
  const layout = mkdtempSync(path.join(work, 'layout-'));
  writeOciLayout(layout, built);
  await crane(registry, ['push', layout, `${registry.host}/${repository}:1`], work);
  return `${registry.host}/${repository}@${built.manifest.digest}`;
}

const BUNDLE = path.join(projectRoot, 'bundle');

/** A static cp for OLM's util image (its Job runs `/bin/cp`): Debian's busybox-static (hack/system-tools.ts). */
function busybox(): string {
  const found = ['/bin/busybox', '/usr/bin/busybox'].find((file) => existsSync(file));
  if (!found) throw new Error('busybox is missing: apt-get install -y busybox-static');
  return found;
}

/** The operator image of an earlier build (an OCI layout), for this cluster's registry. */
let imageLayout: string | undefined;
const sharedWork = mkdtempSync(path.join(os.tmpdir(), 'tessera-real-pods-shared-'));
// One real-node cluster at a time on this machine (test/support/real-node-lock.ts); each describe holds it.
let releaseMachine: (() => void) | undefined;
afterAll(() => rmSync(sharedWork, { recursive: true, force: true }));

if (isRoot) {
  describe('Tessera as real pods on a real node, installed with kubectl apply -k', () => {
    let cluster: DevCluster | undefined;
    let client: KubeClient | undefined;
    let relay: net.Server | undefined;
    let work = '';
    /** `127.0.0.1:PORT/tessera/operator@sha256:...`: the pushed index, as the Deployments name it. */
    let image = '';
    let tenant = '';

    const started = (): { cluster: DevCluster; client: KubeClient } => {
      if (!cluster || !client) throw new Error('the cluster with a real node did not start (see beforeAll)');
      return { cluster, client };
    };
    const realNodeName = (): string => started().cluster.realNodes?.nodes[0]?.name ?? '';

    let kubectlBinary = '';
    async function kubectl(args: string[]): Promise<string> {
      const { stdout } = await run(
        kubectlBinary,
        ['--kubeconfig', started().cluster.kubeconfigPath, ...args],
        { maxBuffer: 32 * 1024 * 1024 },
      );
      return stdout;
    }

    /** What a failed wait needs: every pod, the recent events, and the logs of pods not Ready. */
    async function diagnostics(): Promise<string> {
      const parts = [
        await kubectl(['get', 'pods', '-A', '-o', 'wide']).catch(String),
        await kubectl(['get', 'events', '-A', '--sort-by=.lastTimestamp']).then(
          (out) => out.split('\n').slice(-40).join('\n'),
          String,
        ),
      ];
      const pods = await started()
        .client.request<{ items: Pod[] }>({ method: 'GET', path: '/api/v1/pods' })
        .catch(() => ({ items: [] }));
      for (const pod of pods.items) {
        const namespace = NAMESPACES.find((ns) => ns === pod.metadata.namespace);
        if (!namespace || pod.status?.containerStatuses?.every((c) => c.ready)) continue;
        const logs = await kubectl([
          'logs',
          '-n',
          namespace,
          pod.metadata.name,
          '--all-containers',
          '--tail=30',
        ]).catch(String);
        parts.push(`--- ${namespace}/${pod.metadata.name}\n${logs}`);
      }
      return parts.join('\n');
    }

    function eventuallyExplained<T>(
      check: () => Promise<T>,
      options: { timeoutMs?: number; what: string },
    ): Promise<T> {
      return eventually(check, { ...options, explain: diagnostics });
    }

    beforeAll(async () => {
      releaseMachine = await holdRealNodeMachine();
      const setupStarted = Date.now();
      kubectlBinary = (await ensureBinaries([...TEST_BINARIES, ...REAL_NODE_BINARIES, 'crane', 'kubectl']))
        .kubectl;
      expect(realNodeSupportProblem()).toBeUndefined();
      work = mkdtempSync(path.join(os.tmpdir(), 'tessera-real-pods-'));
      cluster = await startTestCluster({
        name: uniqueName('real-pods'),
        nodes: 'none',
        registry: true,
        realNodes: 1,
      });
      client = new KubeClient(await cluster.kubeConfig());
      const registry = registryOf(cluster);
      const hostIp = cluster.realNodes?.nodes[0]?.addresses.hostIp;
      if (!hostIp) throw new Error('the cluster started without its real node');
      imageLayout = path.join(sharedWork, 'operator-image');
      image = await buildImage(registry, imageLayout);
      // What the cluster has before Tessera: OpenShift's namespaces and the CRDs its controllers read, the
      // registry policy kinds, the monitoring CRDs; then the registry mirrored where pods reach it.
      await prepareOpenShiftLikeCluster(client);
      relay = await mirrorRegistryForPods(client, registry, hostIp, kubectl);

      // The admin's commands, with the image pinned by digest in an overlay (README "Install").
      const overlay = path.join(work, 'overlay');
      mkdirSync(overlay);
      writeFileSync(
        path.join(overlay, 'kustomization.yaml'),
        [
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          'resources:',
          `  - ${path.relative(overlay, DEPLOY)}`,
          'images:',
          '  - name: quay.io/tessera/tessera',
          `    newName: ${image.slice(0, image.indexOf('@'))}`,
          `    digest: ${image.slice(image.indexOf('@') + 1)}`,
          '',
        ].join('\n'),
      );
      await kubectl(['apply', '--server-side', '-f', path.join(DEPLOY, 'crds')]);
      await waitForCrdsEstablished(kubectl, ['crd']);
      await kubectl(['apply', '--server-side', '-k', overlay]);
      process.stderr.write(
        `[real pods] cluster, image and install took ${((Date.now() - setupStarted) / 1000).toFixed(0)} s\n`,
      );
    }, SETUP_TIMEOUT_MS);

    afterAll(async () => {
      try {
        await client?.close();
        await new Promise<void>((resolve) => (relay ? relay.close(() => resolve()) : resolve()));
        await cluster?.stop({ wipe: true });
        if (work) rmSync(work, { recursive: true, force: true });
      } finally {
        releaseMachine?.();
      }
    }, 180_000);

    it('runs every Deployment Available through its own probes, on the real node, with the kubelet-mounted token', async () => {
      const { client } = started();
      const startedAt = Date.now();
      const deployments = await eventuallyExplained(
        async () => {
          const items: Deployment[] = [];
          for (const ns of NAMESPACES) {
            const list = await client.request<{ items: Deployment[] }>({
              method: 'GET',
              path: `/apis/apps/v1/namespaces/${ns}/deployments`,
            });
            items.push(...list.items);
          }
          for (const d of items) {
            const available = d.status?.conditions?.find((c) => c.type === 'Available')?.status;
            if (available !== 'True' || d.status?.availableReplicas !== (d.spec.replicas ?? 1))
              throw new Error(
                `${d.metadata.namespace}/${d.metadata.name}: ${d.status?.availableReplicas ?? 0} of ${d.spec.replicas ?? 1} available`,
              );
          }
          return items;
        },
        { timeoutMs: 300_000, what: "every Deployment of deploy/ Available through its pods' probes" },
      );
      process.stderr.write(
        `[real pods] Deployments Available ${((Date.now() - startedAt) / 1000).toFixed(0)} s after the test began\n`,
      );
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
        'nodepool-status-controller',
        'pod-placement-controller',
        'pod-placement-web-hook',
        'update-status-controller',
      ]);
      const pods: Pod[] = [];
      for (const ns of NAMESPACES) {
        const list = await client.request<{ items: Pod[] }>({
          method: 'GET',
          path: `/api/v1/namespaces/${ns}/pods`,
        });
        pods.push(...list.items.filter((p) => p.status?.phase === 'Running'));
      }
      // 2 controllers, 3 webhooks, update status and NodePool status.
      expect(pods.length).toBeGreaterThanOrEqual(7);
      for (const pod of pods) {
        expect(pod.spec.nodeName, pod.metadata.name).toBe(realNodeName());
        // The kubelet mounts the service account's projected token where the in-cluster configuration reads it.
        const tokenVolume = pod.spec.volumes?.find((v) =>
          v.projected?.sources?.some((s) => s.serviceAccountToken !== undefined),
        );
        expect(tokenVolume, pod.metadata.name).toBeDefined();
        expect(
          pod.spec.containers[0]?.volumeMounts?.find((m) => m.name === tokenVolume?.name)?.mountPath,
        ).toBe('/var/run/secrets/kubernetes.io/serviceaccount');
        expect(pod.status?.containerStatuses?.every((c) => c.ready)).toBe(true);
      }
    });

    it('gates a pod through the webhook Service and places it; it runs on the real node', async () => {
      const { client } = started();
      tenant = await enablePlacement(client, eventuallyExplained);
      const pod = await placedPod(client, eventuallyExplained, {
        namespace: tenant,
        prefix: 'version',
        image,
        args: ['--version'],
      });
      expect(archValues(pod)).toEqual([PLATFORM]);
      const ran = await finishedPod(client, eventuallyExplained, tenant, pod.metadata.name);
      expect(ran.status?.phase).toBe('Succeeded');
      expect(ran.spec.nodeName).toBe(realNodeName());
      expect(await kubectl(['logs', '-n', tenant, pod.metadata.name]).then((out) => out.trim())).toMatch(
        /\d/,
      );
    });

    it("keeps a pod whose image lacks the node's architecture off the real node", async () => {
      const { cluster, client } = started();
      const registry = registryOf(cluster);
      const foreign = await pushImage(
        registry,
        'tenant/foreign',
        filesImage({
          architecture: OTHER_ARCH,
          files: [{ path: 'app', bytes: Buffer.from('#!/bin/sh\n'), mode: 0o755 }],
          entrypoint: ['/app'],
        }),
        work,
      );
      const pod = await placedPod(started().client, eventuallyExplained, {
        namespace: tenant,
        prefix: 'foreign',
        image: foreign,
        args: [],
      });
      expect(archValues(pod)).toEqual([OTHER_ARCH]);
      const unschedulable = await eventuallyExplained(
        async () => {
          const p = await client.request<Pod>({
            method: 'GET',
            path: `/api/v1/namespaces/${tenant}/pods/${pod.metadata.name}`,
          });
          const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
          if (scheduled?.reason !== 'Unschedulable')
            throw new Error(`PodScheduled ${JSON.stringify(scheduled)}`);
          return { pod: p, message: scheduled.message ?? '' };
        },
        { timeoutMs: 60_000, what: 'the scheduler to find no node for the foreign pod' },
      );
      expect(unschedulable.pod.spec.nodeName).toBeUndefined();
      expect(unschedulable.message).toMatch(/affinity|selector/i);
    });

    it('hands the controller lease to the standby when the leader pod is deleted; the new leader places pods', async () => {
      const { client } = started();
      const controllerPods = async (): Promise<string[]> =>
        (
          await client.request<{ items: Pod[] }>({
            method: 'GET',
            path: `/api/v1/namespaces/${PP_NS}/pods?labelSelector=controller%3Dpod-placement-controller`,
          })
        ).items
          .filter((p) => p.status?.containerStatuses?.every((c) => c.ready))
          .map((p) => p.metadata.name);
      const leaseHolder = async (): Promise<{ lease: string; holder: string }> => {
        const pods = await controllerPods();
        const leases = await client.request<{
          items: { metadata: { name: string }; spec?: { holderIdentity?: string } }[];
        }>({ method: 'GET', path: `/apis/coordination.k8s.io/v1/namespaces/${PP_NS}/leases` });
        for (const lease of leases.items) {
          const holder = pods.find((name) => lease.spec?.holderIdentity?.startsWith(name));
          if (holder) return { lease: lease.metadata.name, holder };
        }
        throw new Error(`no lease held by a Ready controller pod (${pods.join(', ')})`);
      };
      const before = await eventuallyExplained(leaseHolder, {
        timeoutMs: 60_000,
        what: 'a controller pod holding the lease',
      });
      const standby = (await controllerPods()).find((name) => name !== before.holder);
      expect(standby, 'the standby controller pod').toBeDefined();
      await client.request({
        method: 'DELETE',
        path: `/api/v1/namespaces/${PP_NS}/pods/${before.holder}`,
      });
      const after = await eventuallyExplained(
        async () => {
          const now = await leaseHolder();
          if (now.holder === before.holder) throw new Error(`still held by ${now.holder}`);
          return now;
        },
        { timeoutMs: 120_000, what: 'the lease handed over' },
      );
      expect(after.holder).toBe(standby);
      const pod = await placedPod(started().client, eventuallyExplained, {
        namespace: tenant,
        prefix: 'after-handover',
        image,
        args: ['--version'],
      });
      expect(archValues(pod)).toEqual([PLATFORM]);
    });
  });

  describe("OLM v0's catalog path on the real node", () => {
    // OLM's `olm` and `catalog` operators run on this machine (test/support/olm.ts) with the images of the pods the
    // catalog operator creates built here from the binaries the project builds: the util image (OLM's cpb and a
    // static cp, what its bundle-unpack Job copies into the bundle's pod) and the opm image. The catalog is an
    // image CatalogSource, as OperatorHub's are: the catalog operator starts its registry pod on the real node
    // (`opm serve` of the file-based catalog, with grpc_health_probe for the probes OLM gives it) and dials its
    // Service by name, `tessera.olm.svc:50051`, through the cluster DNS and the node's kube-proxy.
    let cluster: DevCluster | undefined;
    let client: KubeClient | undefined;
    let olm: Olm | undefined;
    let work = '';
    let csvName = '';
    let csvDeployments: string[] = [];
    let relay: net.Server | undefined;
    let operatorImage = '';

    const started = (): { cluster: DevCluster; client: KubeClient; olm: Olm } => {
      if (!cluster || !client || !olm) throw new Error('the cluster with OLM did not start (see beforeAll)');
      return { cluster, client, olm };
    };
    const get = <T>(apiPath: string): Promise<T> =>
      started().client.request<T>({ method: 'GET', path: apiPath });
    const create = (apiPath: string, body: object): Promise<unknown> =>
      started().client.request({ method: 'POST', path: apiPath, body });

    async function waitFor<T>(what: string, check: () => Promise<T>, timeoutMs = 180_000): Promise<T> {
      try {
        return await eventually(check, { timeoutMs, intervalMs: 500, what });
      } catch (err) {
        const pods = await started().olm.kubectl(['get', 'pods,jobs', '-A', '-o', 'wide']).catch(String);
        const events = await started()
          .olm.kubectl(['get', 'events', '-A', '--sort-by=.lastTimestamp'])
          .then((out) => out.split('\n').slice(-30).join('\n'), String);
        throw new Error(`${(err as Error).message}\n${pods}\n${events}\n${started().olm.logs(30)}`, {
          cause: err,
        });
      }
    }

    async function opm(args: string[]): Promise<string> {
      const { stdout } = await run(started().olm.binaries.opm, args, { maxBuffer: 64 * 1024 * 1024 });
      return stdout;
    }

    beforeAll(async () => {
      releaseMachine = await holdRealNodeMachine();
      const setupStarted = Date.now();
      const bins = await ensureBinaries([
        ...TEST_BINARIES,
        ...REAL_NODE_BINARIES,
        ...OLM_TEST_BINARIES,
        'cpb',
        'grpc-health-probe',
        'crane',
      ]);
      work = mkdtempSync(path.join(os.tmpdir(), 'tessera-real-olm-'));
      cluster = await startTestCluster({
        name: uniqueName('real-olm'),
        nodes: 'none',
        registry: true,
        realNodes: 1,
      });
      client = new KubeClient(await cluster.kubeConfig());
      const registry = registryOf(cluster);
      // The operator image: the earlier build's, pushed here, or built now.
      const operator = imageLayout
        ? `${registry.host}/tessera/operator@${(
            await crane(registry, ['push', imageLayout, `${registry.host}/tessera/operator:real-pods`], work)
          )
            .trim()
            .split('@')
            .at(-1)}`
        : await buildImage(registry);
      operatorImage = operator;
      const util = await pushImage(
        registry,
        'operator-framework/olm',
        filesImage({
          architecture: PLATFORM,
          files: [
            { path: 'bin/cp', bytes: readFileSync(busybox()), mode: 0o755 },
            { path: 'bin/cpb', bytes: readFileSync(bins.cpb), mode: 0o755 },
          ],
          entrypoint: ['/bin/cpb'],
        }),
        work,
      );
      const opmImage = await pushImage(
        registry,
        'operator-framework/opm',
        filesImage({
          architecture: PLATFORM,
          files: [{ path: 'bin/opm', bytes: readFileSync(bins.opm), mode: 0o755 }],
          entrypoint: ['/bin/opm'],
        }),
        work,
      );
      // The bundle as released, naming the operator image pushed here instead of quay.io's.
      const bundleDir = path.join(work, 'bundle');
      const files: { path: string; bytes: Buffer; mode: number }[] = [];
      for (const sub of ['manifests', 'metadata']) {
        mkdirSync(path.join(bundleDir, sub), { recursive: true });
        for (const name of readdirSync(path.join(BUNDLE, sub))) {
          const text = readFileSync(path.join(BUNDLE, sub, name), 'utf8').replaceAll(
            /quay\.io\/tessera\/tessera:[\w.-]+/g,
            operator,
          );
          writeFileSync(path.join(bundleDir, sub, name), text);
          files.push({ path: `${sub}/${name}`, bytes: Buffer.from(text), mode: 0o644 });
        }
      }
      const bundleImage = await pushImage(
        registry,
        'tessera/tessera-bundle',
        filesImage({ architecture: PLATFORM, files, entrypoint: ['/bin/true'] }),
        work,
      );
      olm = await startOlm(cluster, { opm: opmImage, util });
      // Before the operator starts: the registry mirrored where its controller pod reaches it.
      const hostIp = cluster.realNodes?.nodes[0]?.addresses.hostIp;
      if (!hostIp) throw new Error('the cluster started without its real node');
      relay = await mirrorRegistryForPods(client, registry, hostIp, (args) => started().olm.kubectl(args));
      for (const kind of ['PrometheusRule', 'ServiceMonitor'] as const)
        await create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', prometheusOperatorCrd(kind));
      await waitForCrdsEstablished(
        (args) => olm?.kubectl(args) ?? Promise.resolve(''),
        ['crd/prometheusrules.monitoring.coreos.com', 'crd/servicemonitors.monitoring.coreos.com'],
      );

      // A file-based catalog of that bundle, in a catalog image as `opm generate dockerfile` lays one out: opm serving
      // /configs with the cache built beside them at image build time (`--cache-only`; opm checks the cache against
      // the configs when it starts), grpc_health_probe beside opm.
      const csv = parseAllDocuments(
        readFileSync(path.join(bundleDir, 'manifests', 'tessera.clusterserviceversion.yaml'), 'utf8'),
      )[0]?.toJSON() as {
        metadata: { name: string; annotations?: Record<string, string> };
        spec: { version: string; install: { spec: { deployments: { name: string }[] } } };
      };
      csvName = csv.metadata.name;
      csvDeployments = csv.spec.install.spec.deployments.map((d) => d.name);
      const rendered = JSON.parse(await opm(['render', bundleDir, '--output=json'])) as Record<
        string,
        unknown
      >;
      const catalogDir = path.join(work, 'catalog', 'tessera');
      mkdirSync(catalogDir, { recursive: true });
      writeFileSync(
        path.join(catalogDir, 'catalog.json'),
        [...catalogHead([csv.spec.version]), { ...rendered, image: bundleImage }]
          .map((b) => JSON.stringify(b))
          .join('\n') + '\n',
      );
      await opm(['validate', path.dirname(catalogDir)]);
      const cacheDir = path.join(work, 'catalog-cache');
      await opm([
        'serve',
        path.dirname(catalogDir),
        `--cache-dir=${cacheDir}`,
        '--cache-only',
        '--pprof-addr=127.0.0.1:0',
      ]);
      // The image runs as non-root: its /tmp and the cache open read-write for it.
      const cacheFiles = readdirSync(cacheDir, { recursive: true, withFileTypes: true }).map((entry) => {
        const relative = path.relative(cacheDir, path.join(entry.parentPath, entry.name));
        return entry.isDirectory()
          ? { path: `tmp/cache/${relative}/`, bytes: Buffer.alloc(0), mode: 0o777 }
          : {
              path: `tmp/cache/${relative}`,
              bytes: readFileSync(path.join(cacheDir, relative)),
              mode: 0o666,
            };
      });
      const catalogImage = await pushImage(
        registry,
        'tessera/tessera-catalog',
        filesImage({
          architecture: PLATFORM,
          files: [
            { path: 'bin/opm', bytes: readFileSync(bins.opm), mode: 0o755 },
            { path: 'bin/grpc_health_probe', bytes: readFileSync(bins['grpc-health-probe']), mode: 0o755 },
            {
              path: 'configs/tessera/catalog.json',
              bytes: readFileSync(path.join(catalogDir, 'catalog.json')),
            },
            { path: 'tmp/', bytes: Buffer.alloc(0), mode: 0o1777 },
            { path: 'tmp/cache/', bytes: Buffer.alloc(0), mode: 0o777 },
            // Parents before children, as tar writes them.
            ...cacheFiles.sort((a, b) => a.path.localeCompare(b.path)),
          ],
          entrypoint: ['/bin/opm', 'serve', '/configs', '--cache-dir=/tmp/cache'],
          env: ['PATH=/bin'],
          labels: { 'operators.operatorframework.io.index.configs.v1': '/configs' },
        }),
        work,
      );
      await create(`/apis/operators.coreos.com/v1alpha1/namespaces/${OLM_NAMESPACE}/catalogsources`, {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'CatalogSource',
        metadata: { name: 'tessera' },
        spec: { sourceType: 'grpc', image: catalogImage, displayName: 'Tessera', publisher: 'Tessera' },
      });
      const channel = csv.metadata.annotations?.['operators.operatorframework.io/bundle.channel.default.v1'];
      await create(`/apis/operators.coreos.com/v1alpha1/namespaces/${OPERATORS_NAMESPACE}/subscriptions`, {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: 'tessera' },
        spec: {
          name: 'tessera',
          source: 'tessera',
          sourceNamespace: OLM_NAMESPACE,
          ...(channel ? { channel } : {}),
          installPlanApproval: 'Automatic',
        },
      });
      process.stderr.write(
        `[real pods] OLM cluster, images and catalog took ${((Date.now() - setupStarted) / 1000).toFixed(0)} s\n`,
      );
    }, SETUP_TIMEOUT_MS);

    afterAll(async () => {
      try {
        await olm?.stop();
        await client?.close();
        await new Promise<void>((resolve) => (relay ? relay.close(() => resolve()) : resolve()));
        await cluster?.stop({ wipe: true });
        if (work) rmSync(work, { recursive: true, force: true });
      } finally {
        releaseMachine?.();
      }
    }, 180_000);

    it("runs the catalog's registry pod on the real node and reaches it by its Service's name", async () => {
      const node = started().cluster.realNodes?.nodes[0]?.name;
      // OLM's probes (exec grpc_health_probe -addr=:50051) pass: the pod is Ready on the real node.
      const registryPod = await waitFor('the catalog registry pod Ready', async () => {
        const pods = await get<{ items: Pod[] }>(
          `/api/v1/namespaces/${OLM_NAMESPACE}/pods?labelSelector=olm.catalogSource%3Dtessera`,
        );
        const ready = pods.items.find((p) => p.status?.containerStatuses?.every((c) => c.ready));
        expect(ready, JSON.stringify(pods.items.map((p) => p.status?.containerStatuses))).toBeDefined();
        return ready as Pod;
      });
      expect(registryPod.spec.nodeName).toBe(node);
      const probe = (registryPod.spec.containers[0] as { readinessProbe?: { exec?: { command?: string[] } } })
        .readinessProbe;
      expect(probe?.exec?.command).toEqual(['grpc_health_probe', '-addr=:50051']);
      // The catalog operator, on this machine, dialled `tessera.olm.svc:50051`: the cluster DNS named the Service's
      // ClusterIP, and the node's kube-proxy took the connection to the pod.
      const source = await waitFor('the CatalogSource connected', async () => {
        const got = await get<{
          status?: {
            connectionState?: { address?: string; lastObservedState?: string };
            registryService?: { serviceName?: string; serviceNamespace?: string };
          };
        }>(`/apis/operators.coreos.com/v1alpha1/namespaces/${OLM_NAMESPACE}/catalogsources/tessera`);
        expect(got.status?.connectionState?.lastObservedState).toBe('READY');
        return got;
      });
      expect(source.status?.connectionState?.address).toBe(`tessera.${OLM_NAMESPACE}.svc:50051`);
      const service = await get<{ spec: { clusterIP: string } }>(
        `/api/v1/namespaces/${OLM_NAMESPACE}/services/${source.status?.registryService?.serviceName}`,
      );
      const dns = new Resolver({ timeout: 2_000, tries: 2 });
      dns.setServers([`${started().cluster.realNodes?.nodes[0]?.addresses.hostIp}:53`]);
      expect(await dns.resolve4(`tessera.${OLM_NAMESPACE}.svc.cluster.local`)).toEqual([
        service.spec.clusterIP,
      ]);
    }, 600_000);

    it('runs the bundle-unpack Job on the real node, completes the InstallPlan and runs the CSV', async () => {
      const began = Date.now();
      const progress = (what: string): void => {
        process.stderr.write(
          `[real pods] ${what} ${((Date.now() - began) / 1000).toFixed(0)} s after the test began\n`,
        );
      };
      const node = started().cluster.realNodes?.nodes[0]?.name;
      const job = await waitFor('the bundle-unpack Job Complete', async () => {
        const jobs = await get<{
          items: {
            metadata: { name: string };
            status?: { conditions?: { type: string; status: string }[] };
          }[];
        }>(`/apis/batch/v1/namespaces/${OLM_NAMESPACE}/jobs`);
        const [only] = jobs.items;
        expect(only?.status?.conditions?.find((c) => c.type === 'Complete')?.status).toBe('True');
        return only as NonNullable<typeof only>;
      });
      // Its pod ran on the real node (kwok is not here to pretend) and wrote the bundle into the ConfigMap.
      const jobPods = await get<{ items: Pod[] }>(
        `/api/v1/namespaces/${OLM_NAMESPACE}/pods?labelSelector=job-name%3D${job.metadata.name}`,
      );
      expect(jobPods.items.map((p) => [p.spec.nodeName, p.status?.phase])).toContainEqual([
        node,
        'Succeeded',
      ]);
      const configMap = await get<{ data?: Record<string, string>; binaryData?: Record<string, string> }>(
        `/api/v1/namespaces/${OLM_NAMESPACE}/configmaps/${job.metadata.name}`,
      );
      expect(Object.keys({ ...configMap.data, ...configMap.binaryData }).length).toBeGreaterThan(0);

      progress('bundle unpacked on the real node');
      const plan = await waitFor('InstallPlan Complete', async () => {
        const plans = await get<{
          items: { spec: { clusterServiceVersionNames: string[] }; status?: { phase?: string } }[];
        }>(`/apis/operators.coreos.com/v1alpha1/namespaces/${OPERATORS_NAMESPACE}/installplans`);
        const [only] = plans.items;
        expect(only?.status?.phase).toBe('Complete');
        return only as NonNullable<typeof only>;
      });
      expect(plan.spec.clusterServiceVersionNames).toEqual([csvName]);
      progress('InstallPlan Complete');
      // The bundle is for OpenShift: its metrics Service asks OpenShift's service CA for a serving certificate
      // (service.beta.openshift.io/serving-cert-secret-name), which no one issues here. The Deployments mount that
      // Secret as optional, so their pods start anyway, serving metrics with a self-signed certificate.
      const secretRead = await get(
        `/api/v1/namespaces/${OPERATORS_NAMESPACE}/secrets/pod-placement-metrics-tls`,
      ).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isNotFound(secretRead), String(secretRead)).toBe(true);

      const csv = await waitFor(
        `CSV ${csvName} Succeeded`,
        async () => {
          const got = await get<{ status?: { phase?: string; reason?: string; message?: string } }>(
            `/apis/operators.coreos.com/v1alpha1/namespaces/${OPERATORS_NAMESPACE}/clusterserviceversions/${csvName}`,
          );
          expect(got.status?.phase, `${got.status?.reason}: ${got.status?.message}`).toBe('Succeeded');
          return got;
        },
        300_000,
      );
      expect(csv.status?.reason).toBe('InstallSucceeded');
      progress('CSV Succeeded');
      // Its Deployments' pods run, Ready through their probes, on the real node.
      const pods = (
        await get<{ items: Pod[] }>(`/api/v1/namespaces/${OPERATORS_NAMESPACE}/pods`)
      ).items.filter((p) => p.status?.phase === 'Running');
      expect(pods.length).toBeGreaterThanOrEqual(csvDeployments.length);
      for (const pod of pods) {
        expect(pod.spec.nodeName, pod.metadata.name).toBe(node);
        expect(
          pod.status?.containerStatuses?.every((c) => c.ready),
          pod.metadata.name,
        ).toBe(true);
      }
      // The console plugin's pods ran their init container (`tessera console-plugin register`) to success: with no
      // ConsolePlugin API here, it found nothing to register, and the server started without its serving Secret.
      const pluginPods = pods.filter(
        (p) => p.metadata.labels?.['app.kubernetes.io/name'] === 'tessera-console-plugin',
      );
      expect(pluginPods.length).toBeGreaterThan(0);
      for (const pod of pluginPods)
        expect(pod.status?.initContainerStatuses, pod.metadata.name).toEqual([
          expect.objectContaining({
            name: 'register',
            state: { terminated: expect.objectContaining({ exitCode: 0 }) },
          }),
        ]);
    }, 900_000);

    it('places a tenant pod with the operator OLM installed; it runs on the real node', async () => {
      const { client } = started();
      const explained: ExplainedWait = (check, options) => waitFor(options.what, check, options.timeoutMs);
      const tenant = await enablePlacement(client, explained);
      // The operator's own image (multi-arch, so it declares this node's architecture) runs `--version`.
      const pod = await placedPod(client, explained, {
        namespace: tenant,
        prefix: 'version',
        image: operatorImage,
        args: ['--version'],
      });
      expect(archValues(pod)).toEqual([PLATFORM]);
      const ran = await finishedPod(client, explained, tenant, pod.metadata.name);
      expect(ran.status?.phase).toBe('Succeeded');
      expect(ran.spec.nodeName).toBe(started().cluster.realNodes?.nodes[0]?.name);
    }, 600_000);
  });
} else {
  describe('Tessera as real pods without root', () => {
    it('cannot have a real node: dev up would refuse, naming root', () => {
      expect(realNodeSupportProblem()).toMatch(/need root/);
    });
  });
}
