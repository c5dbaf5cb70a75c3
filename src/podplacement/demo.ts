// The `npm start` demo: a local registry with single- and multi-architecture images, the operator running in this
// process (the API server calls its webhook by URL), a ClusterPodPlacementConfig, and a demo namespace with a
// few Deployments; then a printed summary of where each pod landed and why. Idempotent on a reused cluster.
// The caller owns the cluster; stop the demo by aborting `signal` (the operator stops, the registry with it).
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { startLocalRegistry } from '../devcluster/registry.js';
import { multiPlatformImage, singleImage } from '../devcluster/registry-images.js';
import { installOpenShiftDevCrds } from '../updatestatus/devcrds.js';
import {
  ApiStatusError,
  ConfigMaps,
  KubeClient,
  ResourceClient,
  isAlreadyExists,
  type KubeObject,
  type Logger,
} from '../runtime/index.js';
import { ARCH_LABEL, EXCLUDE_NAMESPACE_LABEL, LABELS, MUTATING_WEBHOOK } from './constants.js';
import { startPodPlacementOperator, type PodPlacementOperatorHandle } from './operator.js';
import { ADDITIONAL_TRUSTED_CA_NAMESPACE, IMAGE_CONFIG_NAME, ImageConfigs } from './registry-policy.js';

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

export interface PlacementRow {
  pod: string;
  images: string;
  supported: string;
  node: string;
  nodeArch: string;
  why: string;
}

/** A fixed-width table of where pods landed. Pure. */
export function renderPlacementSummary(rows: readonly PlacementRow[]): string {
  const head: PlacementRow = {
    pod: 'POD',
    images: 'IMAGES',
    supported: 'IMAGE ARCHS',
    node: 'NODE',
    nodeArch: 'NODE ARCH',
    why: 'WHY',
  };
  const all = [head, ...rows];
  const keys: (keyof PlacementRow)[] = ['pod', 'images', 'supported', 'node', 'nodeArch', 'why'];
  const widths = keys.map((k) => Math.max(...all.map((r) => r[k].length)));
  return (
    all
      .map((r) =>
        keys
          .map((k, i) => r[k].padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

interface DemoPod {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: {
    nodeName?: string;
    schedulingGates?: unknown[];
    containers: { image: string }[];
    initContainers?: { image: string }[];
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms: { matchExpressions?: { key: string; values?: string[] }[] }[];
        };
      };
    };
  };
}

/** Name of the demo's additionalTrustedCA ConfigMap in openshift-config. */
export const DEMO_REGISTRY_CA_CONFIGMAP = 'tessera-demo-registry-ca';

/**
 * Trusts the demo registry the way an OpenShift cluster trusts a private registry: image.config.openshift.io/cluster
 * spec.additionalTrustedCA names a ConfigMap in openshift-config whose key is the registry host (`host..port`). The
 * operator reads it at start and `podplacement explain` on each run, so both trust the same registries. A plain
 * Kubernetes API server gets a stand-in CRD for the image config.
 */
export async function trustRegistryClusterWide(
  client: KubeClient,
  host: string,
  caPem: string,
): Promise<void> {
  await installOpenShiftDevCrds(client, { types: [ImageConfigs] });
  const fieldManager = 'tessera-demo';
  try {
    await client.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { metadata: { name: ADDITIONAL_TRUSTED_CA_NAMESPACE } },
    });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  await new ResourceClient<KubeObject>(client, ConfigMaps).apply(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: DEMO_REGISTRY_CA_CONFIGMAP, namespace: ADDITIONAL_TRUSTED_CA_NAMESPACE },
      data: { [host.replace(':', '..')]: caPem },
    } as KubeObject,
    { fieldManager, force: true },
  );
  await new ResourceClient<KubeObject>(client, ImageConfigs).apply(
    {
      apiVersion: 'config.openshift.io/v1',
      kind: 'Image',
      metadata: { name: IMAGE_CONFIG_NAME },
      spec: { additionalTrustedCA: { name: DEMO_REGISTRY_CA_CONFIGMAP } },
    } as KubeObject,
    { fieldManager, force: true },
  );
}

export async function runPodPlacementDemo(
  o: PodPlacementDemoOptions,
): Promise<{ operator: PodPlacementOperatorHandle; summary: string }> {
  const log = o.log ?? (() => undefined);
  const opNs = o.operatorNamespace ?? 'tessera-podplacement';
  const demoNs = o.demoNamespace ?? 'podplacement-demo';
  const client = new KubeClient(o.kubeConfig);
  const ensure = async (p: string, body: unknown): Promise<void> => {
    // The API server answers 503 for a short while after a CRD's conversion webhook changes (the operator points
    // it at itself on start); like any client, retry that for a bounded time.
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await client.request({ method: 'POST', path: p, body });
        return;
      } catch (err) {
        if (isAlreadyExists(err)) return;
        const unavailable = err instanceof ApiStatusError && err.statusCode === 503;
        if (!unavailable || Date.now() > deadline || o.signal.aborted) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };

  log('starting a local registry with demo images');
  const registry = await startLocalRegistry({
    stateDir: path.join(o.stateDir, 'podplacement-registry'),
    auth: 'none',
  });
  o.signal.addEventListener('abort', () => void registry.stop(), { once: true });
  const arch = (a: string) => ({ architecture: a });
  const images = {
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

  await ensure('/api/v1/namespaces', { metadata: { name: opNs, labels: { [EXCLUDE_NAMESPACE_LABEL]: '' } } });
  await trustRegistryClusterWide(client, registry.host, registry.caCertPem);
  log('starting the pod placement operator');
  const operator = await startPodPlacementOperator({
    kubeConfig: o.kubeConfig,
    namespace: opNs,
    signal: o.signal,
    webhookHost: '127.0.0.1',
    webhookPort: 0,
    endpoint: { kind: 'url', baseUrl: 'https://127.0.0.1:0' },
    probes: { host: '127.0.0.1', port: 0 },
    leaderElection: false,
    installCrds: true,
    manageValidatingWebhook: true,
    globalPullSecret: { namespace: opNs, name: 'pull-secret' },
    handleSignals: false,
    logLevel: 'warn',
    logger: o.logger,
  });
  // On a reused cluster the validating webhook configuration may still name the port of an earlier (killed) run;
  // creating the ClusterPodPlacementConfig before the operator rewrote it would be refused.
  await Promise.race([operator.validatingWebhookConfigured, operator.stopped]);
  if (o.signal.aborted) return { operator, summary: '' };
  await ensure('/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs', {
    apiVersion: 'multiarch.openshift.io/v1beta1',
    kind: 'ClusterPodPlacementConfig',
    metadata: { name: 'cluster' },
    spec: {
      namespaceSelector: { matchExpressions: [{ key: EXCLUDE_NAMESPACE_LABEL, operator: 'DoesNotExist' }] },
      plugins: { nodeAffinityScoring: { enabled: true, platforms: [{ architecture: 'arm64', weight: 50 }] } },
    },
  });
  // Wait for the gating webhook configuration to name this run's port: pods created before it would not be gated
  // (on a reused cluster, the one left by an earlier run names a port nobody answers, and its policy is Ignore).
  const deadline = Date.now() + (o.timeoutMs ?? 90_000);
  const ourUrl = `https://127.0.0.1:${operator.webhookPort}/`;
  for (;;) {
    try {
      const mwc = await client.request<{ webhooks?: { clientConfig?: { url?: string } }[] }>({
        method: 'GET',
        path: `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING_WEBHOOK.configurationName}`,
      });
      if (!(mwc.webhooks ?? []).every((w) => w.clientConfig?.url?.startsWith(ourUrl)))
        throw new Error('the webhook configuration still names an earlier run');
      break;
    } catch {
      if (Date.now() > deadline)
        throw new Error('the pod placement webhook configuration did not appear; see the operator log');
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  await ensure('/api/v1/namespaces', { metadata: { name: demoNs } });
  const deployment = (name: string, replicas: number, containers: string[], init: string[] = []) => ({
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
  });
  log(`creating Deployments in namespace ${demoNs}`);
  // Applied, not just created: on a reused cluster the demo registry has a new port, and the Deployments must
  // follow it (their pods roll to the new image references).
  const deployments = new ResourceClient<KubeObject>(client, {
    group: 'apps',
    version: 'v1',
    plural: 'deployments',
    kind: 'Deployment',
    namespaced: true,
  });
  for (const d of [
    deployment('web', 3, [images.web.ref]),
    deployment('legacy', 2, [images.legacy.ref]),
    deployment('analytics', 2, [images.analytics.ref]),
    deployment('tools-with-legacy-init', 1, [images.tools.ref], [images.legacy.ref]),
  ]) {
    await deployments.apply(
      { ...d, metadata: { ...d.metadata, namespace: demoNs } },
      { fieldManager: 'tessera-podplacement-demo', force: true },
    );
  }

  const nodes = await client.request<{
    items: { metadata: { name: string; labels?: Record<string, string> } }[];
  }>({ method: 'GET', path: '/api/v1/nodes' });
  const nodeArch = new Map(nodes.items.map((n) => [n.metadata.name, n.metadata.labels?.[ARCH_LABEL] ?? '?']));
  const archsByRef = new Map(Object.values(images).map((i) => [i.ref, i.archs]));
  const imagesOf = (p: DemoPod): string[] =>
    [...(p.spec.initContainers ?? []), ...p.spec.containers].map((c) => c.image);
  // On a reused cluster, pods of an earlier run (older registry port) may still be terminating: leave them out.
  const isCurrent = (p: DemoPod): boolean =>
    !p.metadata.deletionTimestamp && imagesOf(p).every((r) => archsByRef.has(r));
  let pods: DemoPod[] = [];
  for (;;) {
    pods = (
      await client.request<{ items: DemoPod[] }>({ method: 'GET', path: `/api/v1/namespaces/${demoNs}/pods` })
    ).items.filter(isCurrent);
    if (pods.length >= 8 && pods.every((p) => p.spec.nodeName)) break;
    if (Date.now() > deadline) {
      log('some demo pods are not scheduled yet; the summary shows them as pending');
      break;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const rows: PlacementRow[] = pods.map((p) => {
    const refs = imagesOf(p);
    const supported = refs
      .map((r) => archsByRef.get(r) ?? [])
      .reduce((a, b) => a.filter((x) => b.includes(x)));
    const required = (
      p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
    )
      .flatMap((t) => t.matchExpressions ?? [])
      .filter((e) => e.key === ARCH_LABEL)
      .flatMap((e) => e.values ?? []);
    const why =
      p.metadata.labels?.[LABELS.nodeAffinity] === 'set'
        ? `operator required ${ARCH_LABEL} in [${required.join(', ')}]`
        : (p.spec.schedulingGates ?? []).length > 0
          ? 'still gated (being inspected)'
          : 'not placed by the operator';
    return {
      pod: p.metadata.name,
      images: refs.map((r) => r.replace(`${registry.host}/`, '')).join(','),
      supported: supported.join(','),
      node: p.spec.nodeName ?? '(pending)',
      nodeArch: nodeArch.get(p.spec.nodeName ?? '') ?? '-',
      why,
    };
  });
  await client.close();
  return { operator, summary: renderPlacementSummary(rows) };
}
