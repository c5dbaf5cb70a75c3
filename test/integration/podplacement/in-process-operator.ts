// A private cluster with the pod placement operator running in the test's own process, for tests of what is a
// cluster singleton (the image config, the ClusterPodPlacementConfig) or needs the operator's options set in code
// (a proxy, registry CAs). Starts the control plane, creates the image config if asked (with the registry policy dev
// CRDs, which the operator's start-up discovery then finds served), starts the operator with the self-managed webhook
// certificate and creates the ClusterPodPlacementConfig; `stop()` undoes all of it. Pod helpers below create gated
// pods and wait for what the operator does to them.
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { DevCluster, DevClusterOptions } from '../../../src/devcluster/cluster.js';
import { ARCHITECTURES } from '../../../src/devcluster/nodes.js';
import { ARCH_LABEL, SCHEDULING_GATE } from '../../../src/podplacement/constants.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
  type PodPlacementOperatorOptions,
} from '../../../src/podplacement/operator/start.js';
import { KubeClient, silentLogger } from '../../../src/runtime/index.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import { REGISTRY_POLICY_DEV_CRDS, installDevCrds, type TestPod } from './support.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface InProcessOperatorCluster {
  readonly cluster: DevCluster;
  readonly client: KubeClient;
  readonly operator: PodPlacementOperatorHandle;
  request<T>(method: Method, path: string, body?: unknown): Promise<T>;
  /** Stops the operator, then the cluster (wiped). */
  stop(): Promise<void>;
}

export interface InProcessOperatorClusterOptions {
  /** Prefix of the cluster's name. */
  readonly name: string;
  /** A folder of the test's; the webhook certificate is written below it. */
  readonly root: string;
  readonly operatorNamespace: string;
  /** Namespaces to create (and wait for their default service account) before the operator starts. */
  readonly namespaces?: readonly string[];
  /** The control plane's options. Default: a scheduler, a controller manager and a kwok node per architecture. */
  readonly cluster?: Partial<Omit<DevClusterOptions, 'name' | 'stateRoot'>>;
  /**
   * The spec of image.config.openshift.io/cluster, created (with the registry policy dev CRDs, so the operator's
   * discovery finds the kinds served) before the operator starts. Default: no image config, no policy CRDs.
   */
  readonly imageConfigSpec?: Record<string, unknown>;
  /** Options of the operator beyond the test defaults (registry CAs, a proxy, workers...). */
  readonly operator?: Partial<PodPlacementOperatorOptions>;
  /** The ClusterPodPlacementConfig's spec. Default: {}. */
  readonly clusterConfigSpec?: Record<string, unknown>;
}

/**
 * The options a test runs the operator in its own process with: its webhook on a free loopback port that the API
 * server calls by URL, the self-managed certificate in `certDir`, the CRDs installed, the global pull secret in its
 * own namespace, no probes, no leader election, no signal handlers and no logs.
 */
export function inProcessOperatorOptions(o: {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly signal: AbortSignal;
  readonly certDir: string;
}): PodPlacementOperatorOptions {
  return {
    kubeConfig: o.kubeConfig,
    namespace: o.namespace,
    signal: o.signal,
    webhookHost: '127.0.0.1',
    webhookPort: 0,
    endpoint: { kind: 'url', baseUrl: 'https://127.0.0.1:0' },
    tls: { mode: 'self-managed', certDir: o.certDir },
    probes: false,
    leaderElection: false,
    installCrds: true,
    globalPullSecret: { namespace: o.namespace, name: 'pull-secret' },
    handleSignals: false,
    logger: silentLogger,
  };
}

export async function startInProcessOperatorCluster(
  o: InProcessOperatorClusterOptions,
): Promise<InProcessOperatorCluster> {
  const cluster = await startTestCluster({
    name: uniqueName(o.name),
    nodes: ARCHITECTURES.map((architecture) => ({
      name: `worker-${architecture}`,
      architecture,
      role: 'worker' as const,
    })),
    ...o.cluster,
  });
  const kubeConfig = await cluster.kubeConfig();
  const client = new KubeClient(kubeConfig);
  const request = <T>(method: Method, p: string, body?: unknown): Promise<T> =>
    client.request<T>({ method, path: p, body });
  const stop = new AbortController();
  let operator: PodPlacementOperatorHandle | undefined;
  const stopAll = async () => {
    stop.abort();
    await operator?.stopped.catch(() => undefined);
    await client.close();
    await cluster.stop({ wipe: true });
  };
  try {
    await request('POST', '/api/v1/namespaces', { metadata: { name: o.operatorNamespace } });
    for (const name of o.namespaces ?? []) {
      await request('POST', '/api/v1/namespaces', { metadata: { name } });
      await eventually(() => request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`), {
        what: `the default service account of ${name}`,
      });
    }
    if (o.imageConfigSpec) {
      await installDevCrds(client, REGISTRY_POLICY_DEV_CRDS);
      await request('POST', '/apis/config.openshift.io/v1/images', {
        apiVersion: 'config.openshift.io/v1',
        kind: 'Image',
        metadata: { name: 'cluster' },
        spec: o.imageConfigSpec,
      });
    }
    operator = await startPodPlacementOperator({
      ...inProcessOperatorOptions({
        kubeConfig,
        namespace: o.operatorNamespace,
        signal: stop.signal,
        certDir: path.join(o.root, 'certs'),
      }),
      ...o.operator,
    });
    await eventually(
      () =>
        request('POST', '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs', {
          apiVersion: 'multiarch.openshift.io/v1beta1',
          kind: 'ClusterPodPlacementConfig',
          metadata: { name: 'cluster' },
          spec: o.clusterConfigSpec ?? {},
        }),
      { timeoutMs: 60_000, intervalMs: 500, what: 'the ClusterPodPlacementConfig created (CRDs served)' },
    );
  } catch (err) {
    await stopAll();
    throw err;
  }
  return { cluster, client, operator, request, stop: stopAll };
}

/** The values of every required `kubernetes.io/arch` term of a pod, in order. */
export function requiredArchs(pod: TestPod): string[] {
  return (
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  ).flatMap((t) =>
    (t.matchExpressions ?? []).filter((e) => e.key === ARCH_LABEL).flatMap((e) => e.values ?? []),
  );
}

/** Pods of one namespace, as a test creates them and waits for the operator. */
export function podsIn(client: KubeClient, namespace: string) {
  const get = (name: string): Promise<TestPod> =>
    client.request<TestPod>({ method: 'GET', path: `/api/v1/namespaces/${namespace}/pods/${name}` });
  const gated = (pod: TestPod) => (pod.spec.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE);
  return {
    get,
    /** Creates a pod the webhook gates (retrying while the webhook is not live yet); returns its name. */
    createGated: (prefix: string, spec: Record<string, unknown>, labels: Record<string, string> = {}) =>
      eventually(
        async () => {
          const name = uniqueName(prefix);
          const pod = await client.request<TestPod>({
            method: 'POST',
            path: `/api/v1/namespaces/${namespace}/pods`,
            body: { metadata: { name, labels }, spec },
          });
          if (!gated(pod)) throw new Error('not gated yet');
          return name;
        },
        { timeoutMs: 60_000, what: 'a gated pod' },
      ),
    /** Waits until the operator removed its gate. */
    ungated: (name: string): Promise<TestPod> =>
      eventually(
        async () => {
          const pod = await get(name);
          if (gated(pod)) throw new Error(`${namespace}/${name} still gated`);
          return pod;
        },
        { timeoutMs: 60_000, what: `pod ${namespace}/${name} ungated` },
      ),
    /** Waits until no gate is left and the scheduler bound the pod. */
    scheduled: (name: string): Promise<TestPod> =>
      eventually(
        async () => {
          const pod = await get(name);
          if ((pod.spec.schedulingGates ?? []).length > 0)
            throw new Error(`${namespace}/${name} still gated`);
          if (!pod.spec.nodeName) throw new Error(`${namespace}/${name} not scheduled`);
          return pod;
        },
        { timeoutMs: 60_000, what: `pod ${namespace}/${name} scheduled` },
      ),
  };
}
