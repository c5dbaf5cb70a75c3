// The `npm start` demo: a local registry with single- and multi-architecture images, the operator running in this
// process (the API server calls its webhook by URL), a ClusterPodPlacementConfig, and a demo namespace with a
// few Deployments; then a printed summary of where each pod landed and why. Idempotent on a reused cluster.
// The caller owns the cluster; stop the demo by aborting `signal` (the operator stops, the registry with it).
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { startLocalRegistry, type LocalRegistry } from '../devcluster/registry.js';
import { multiPlatformImage, singleImage } from '../devcluster/registry-images.js';
import {
  ApiStatusError,
  KubeClient,
  ResourceClient,
  TesseraError,
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  type Logger,
} from '../runtime/index.js';
import { ARCH_LABEL, EXCLUDE_NAMESPACE_LABEL, MUTATING_WEBHOOK } from '../podplacement/constants.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
} from '../podplacement/operator/start.js';
import {
  imagesOf,
  placementRow,
  renderPlacementSummary,
  type DemoPod,
  type PlacementFacts,
} from './podplacement-summary.js';
import { trustRegistryClusterWide } from './trust-registry.js';

export interface PodPlacementDemoOptions {
  kubeConfig: KubeConfig;
  /** Where the demo registry keeps its data. */
  stateDir: string;
  signal: AbortSignal;
  /** Progress lines. Default: none. */
  log?: (line: string) => void;
  /** Operator namespace. Default: tessera-podplacement. */
  operatorNamespace?: string;
  /** Demo workload namespace. Default: podplacement-demo. */
  demoNamespace?: string;
  /** How long to wait for the demo pods to be scheduled, in ms. Default: 90,000. */
  timeoutMs?: number;
  /** The operator's logger (e.g. JSON lines on stderr). Default: the operator's own, on stdout, warnings and up. */
  logger?: Logger;
}

/** One demo image: where it is pushed and the architectures it has. */
interface DemoImage {
  readonly ref: string;
  readonly archs: readonly string[];
}

interface DemoImages {
  readonly web: DemoImage;
  readonly legacy: DemoImage;
  readonly analytics: DemoImage;
  readonly tools: DemoImage;
}

/** Pods the four demo Deployments run: web 3, legacy 2, analytics 2, tools-with-legacy-init 1. */
const DEMO_POD_COUNT = 8;
const CLUSTER_POD_PLACEMENT_CONFIGS = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';

export async function runPodPlacementDemo(
  o: PodPlacementDemoOptions,
): Promise<{ operator: PodPlacementOperatorHandle; summary: string }> {
  const log = o.log ?? (() => undefined);
  const operatorNamespace = o.operatorNamespace ?? 'tessera-podplacement';
  const demoNamespace = o.demoNamespace ?? 'podplacement-demo';
  const client = new KubeClient(o.kubeConfig);
  const create = (apiPath: string, body: unknown): Promise<void> =>
    createIfAbsent(client, apiPath, body, o.signal);

  log('starting a local registry with demo images');
  const { registry, images } = await startDemoRegistry(o.stateDir, o.signal);
  await create('/api/v1/namespaces', {
    metadata: { name: operatorNamespace, labels: { [EXCLUDE_NAMESPACE_LABEL]: '' } },
  });
  await trustRegistryClusterWide(client, registry.host, registry.caCertPem);
  log('starting the pod placement operator');
  const operator = await startDemoOperator(o, operatorNamespace);
  // On a reused cluster the validating webhook configuration may still name the port of an earlier (killed) run;
  // creating the ClusterPodPlacementConfig before the operator rewrote it would be refused.
  await Promise.race([operator.validatingWebhookConfigured, operator.stopped]);
  if (o.signal.aborted) return { operator, summary: '' };
  await create(CLUSTER_POD_PLACEMENT_CONFIGS, demoClusterPodPlacementConfig());
  const deadline = Date.now() + (o.timeoutMs ?? 90_000);
  await waitForGatingWebhook(client, operator.webhookPort, deadline);

  await create('/api/v1/namespaces', { metadata: { name: demoNamespace } });
  log(`creating Deployments in namespace ${demoNamespace}`);
  await applyDemoDeployments(client, demoNamespace, images);
  const facts: PlacementFacts = {
    nodeArch: await nodeArchitectures(client),
    archsByRef: new Map(Object.values(images).map((i: DemoImage) => [i.ref, i.archs])),
    registryHost: registry.host,
  };
  const pods = await waitForDemoPods(client, demoNamespace, facts.archsByRef, deadline, log);
  await client.close();
  return { operator, summary: renderPlacementSummary(pods.map((p) => placementRow(p, facts))) };
}

/**
 * POSTs `body` unless it exists. The API server answers 503 for a short while after a CRD's conversion webhook
 * changes (the operator points it at itself on start); like any client, this retries that for a bounded time.
 */
async function createIfAbsent(
  client: KubeClient,
  apiPath: string,
  body: unknown,
  signal: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await client.request({ method: 'POST', path: apiPath, body });
      return;
    } catch (err) {
      if (isAlreadyExists(err)) return;
      const unavailable = err instanceof ApiStatusError && err.statusCode === 503;
      if (!unavailable || Date.now() > deadline || signal.aborted) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** A local registry (stopped when `signal` aborts) holding the four demo images. */
async function startDemoRegistry(
  stateDir: string,
  signal: AbortSignal,
): Promise<{ registry: LocalRegistry; images: DemoImages }> {
  const registry = await startLocalRegistry({
    stateDir: path.join(stateDir, 'podplacement-registry'),
    auth: 'none',
  });
  signal.addEventListener('abort', () => void registry.stop(), { once: true });
  const arch = (a: string): { architecture: string } => ({ architecture: a });
  const images: DemoImages = {
    web: { ref: `${registry.host}/demo/web:1`, archs: ['amd64', 'arm64'] },
    legacy: { ref: `${registry.host}/demo/legacy:1`, archs: ['amd64'] },
    analytics: { ref: `${registry.host}/demo/analytics:1`, archs: ['ppc64le', 's390x'] },
    tools: { ref: `${registry.host}/demo/tools:1`, archs: ['amd64', 'arm64', 'ppc64le', 's390x'] },
  };
  await registry.pushImage('demo/web', '1', multiPlatformImage({ platforms: images.web.archs.map(arch) }));
  await registry.pushImage('demo/legacy', '1', singleImage({ platform: arch('amd64') }));
  await registry.pushImage(
    'demo/analytics',
    '1',
    multiPlatformImage({ platforms: images.analytics.archs.map(arch), format: 'docker' }),
  );
  await registry.pushImage(
    'demo/tools',
    '1',
    multiPlatformImage({ platforms: images.tools.archs.map(arch), attestations: 2 }),
  );
  return { registry, images };
}

/** The operator in this process; the API server on this machine calls its webhooks on 127.0.0.1. */
function startDemoOperator(
  o: PodPlacementDemoOptions,
  namespace: string,
): Promise<PodPlacementOperatorHandle> {
  return startPodPlacementOperator({
    kubeConfig: o.kubeConfig,
    namespace,
    signal: o.signal,
    webhookHost: '127.0.0.1',
    webhookPort: 0,
    endpoint: { kind: 'url', baseUrl: 'https://127.0.0.1:0' },
    probes: { host: '127.0.0.1', port: 0 },
    leaderElection: false,
    installCrds: true,
    manageValidatingWebhook: true,
    globalPullSecret: { namespace, name: 'pull-secret' },
    handleSignals: false,
    logLevel: 'warn',
    logger: o.logger,
  });
}

/** Placement for every namespace but the excluded ones, and a preference for arm64 nodes. */
function demoClusterPodPlacementConfig(): unknown {
  return {
    apiVersion: 'multiarch.openshift.io/v1beta1',
    kind: 'ClusterPodPlacementConfig',
    metadata: { name: 'cluster' },
    spec: {
      namespaceSelector: { matchExpressions: [{ key: EXCLUDE_NAMESPACE_LABEL, operator: 'DoesNotExist' }] },
      plugins: { nodeAffinityScoring: { enabled: true, platforms: [{ architecture: 'arm64', weight: 50 }] } },
    },
  };
}

/**
 * Waits for the gating webhook configuration to name this run's port: pods created before it would not be gated
 * (on a reused cluster, the one left by an earlier run names a port nobody answers, and its policy is Ignore).
 */
async function waitForGatingWebhook(
  client: KubeClient,
  webhookPort: number,
  deadline: number,
): Promise<void> {
  const ourUrl = `https://127.0.0.1:${webhookPort}/`;
  // Absent, unreadable, or still naming an earlier run: look again until the deadline.
  let last = 'it was not there';
  for (;;) {
    try {
      const mwc = await client.request<{ webhooks?: { clientConfig?: { url?: string } }[] }>({
        method: 'GET',
        path: `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING_WEBHOOK.configurationName}`,
      });
      if ((mwc.webhooks ?? []).every((w) => w.clientConfig?.url?.startsWith(ourUrl))) return;
      last = 'it still named an earlier run';
    } catch (err) {
      last = isNotFound(err) ? 'it was not there' : `reading it failed: ${String(err)}`;
    }
    if (Date.now() > deadline)
      throw new TesseraError(
        'TESSERA_DEMO_WEBHOOK_NOT_CONFIGURED',
        `the pod placement webhook configuration was not written for this run (${last}); see the operator log`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

function demoDeployment(
  name: string,
  replicas: number,
  containers: string[],
  init: string[] = [],
): KubeObject {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: containers.map((image, i) => ({ name: `c${i}`, image })),
          ...(init.length > 0
            ? { initContainers: init.map((image, i) => ({ name: `init${i}`, image })) }
            : {}),
        },
      },
    },
  } as KubeObject;
}

/**
 * Applied, not just created: on a reused cluster the demo registry has a new port, and the Deployments must
 * follow it (their pods roll to the new image references).
 */
async function applyDemoDeployments(
  client: KubeClient,
  namespace: string,
  images: DemoImages,
): Promise<void> {
  const deployments = new ResourceClient<KubeObject>(client, {
    group: 'apps',
    version: 'v1',
    plural: 'deployments',
    kind: 'Deployment',
    namespaced: true,
  });
  for (const d of [
    demoDeployment('web', 3, [images.web.ref]),
    demoDeployment('legacy', 2, [images.legacy.ref]),
    demoDeployment('analytics', 2, [images.analytics.ref]),
    demoDeployment('tools-with-legacy-init', 1, [images.tools.ref], [images.legacy.ref]),
  ]) {
    await deployments.apply(
      { ...d, metadata: { ...d.metadata, namespace } },
      { fieldManager: 'tessera-podplacement-demo', force: true },
    );
  }
}

async function nodeArchitectures(client: KubeClient): Promise<Map<string, string>> {
  const nodes = await client.request<{
    items: { metadata: { name: string; labels?: Record<string, string> } }[];
  }>({ method: 'GET', path: '/api/v1/nodes' });
  return new Map(nodes.items.map((n) => [n.metadata.name, n.metadata.labels?.[ARCH_LABEL] ?? '?']));
}

/** The demo pods once all are scheduled, or as they are at `deadline`. */
async function waitForDemoPods(
  client: KubeClient,
  namespace: string,
  archsByRef: ReadonlyMap<string, readonly string[]>,
  deadline: number,
  log: (line: string) => void,
): Promise<DemoPod[]> {
  // On a reused cluster, pods of an earlier run (older registry port) may still be terminating: leave them out.
  const isCurrent = (p: DemoPod): boolean =>
    !p.metadata.deletionTimestamp && imagesOf(p).every((r) => archsByRef.has(r));
  for (;;) {
    const pods = (
      await client.request<{ items: DemoPod[] }>({
        method: 'GET',
        path: `/api/v1/namespaces/${namespace}/pods`,
      })
    ).items.filter(isCurrent);
    if (pods.length >= DEMO_POD_COUNT && pods.every((p) => p.spec.nodeName)) return pods;
    if (Date.now() > deadline) {
      log('some demo pods are not scheduled yet; the summary shows them as pending');
      return pods;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
