// Sets up and drives a HyperShift-shaped pair of clusters for the demo, integration tests and the benchmark:
// in the management cluster the HostedCluster namespace, the HCP namespace with its HostedControlPlane, users'
// tuning ConfigMaps and NodePools; in the hosted cluster the NodePools' Nodes and their Tuned Profiles.
// It plays the parts of HyperShift's other controllers and of TuneD, which Tessera does not implement.
// Idempotent setup calls; every write is one API call. The caller owns both clusters.
import {
  ConfigMaps,
  isAlreadyExists,
  metaTime,
  type KubeClient,
  type KubeObject,
  Namespaces,
  Nodes,
  ResourceClient,
} from '../runtime/index.js';
import type {
  ConfigMap,
  HostedControlPlane,
  Node,
  NodePool,
  TunedProfile,
  TunedProfileCondition,
} from '../nodepool/api/types.js';
import { ANNOTATIONS, DATA_KEYS, LABELS, NTO_NAMESPACE } from '../nodepool/constants.js';
import { hostedControlPlaneNamespace } from '../nodepool/names.js';
import { HostedControlPlanes, NodePools, TunedProfiles } from '../nodepool/resources.js';

export type TunedState =
  | { readonly kind: 'pending' }
  | { readonly kind: 'applied' }
  | { readonly kind: 'degraded'; readonly reason: string; readonly message: string };

export interface HostedClusterPairOptions {
  management: KubeClient;
  hosted: KubeClient;
  /** HostedCluster namespace in the management cluster. Default: `clusters`. */
  namespace?: string;
  /** HostedCluster name. Required. */
  clusterName: string;
  /** Sets lastTransitionTime of Tuned conditions. Default: Date.now. */
  now?: () => number;
}

async function ensure<T extends KubeObject>(client: ResourceClient<T>, obj: T): Promise<void> {
  try {
    await client.create(obj);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/** A PerformanceProfile manifest as users put it under the `tuning` key. */
export function performanceProfileManifest(name: string, nodePoolName: string): string {
  return [
    'apiVersion: performance.openshift.io/v2',
    'kind: PerformanceProfile',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    '  cpu:',
    '    isolated: "2-3"',
    '    reserved: "0-1"',
    '  nodeSelector:',
    `    ${LABELS.nodePool}: ${nodePoolName}`,
    '',
  ].join('\n');
}

export class HostedClusterPair {
  readonly namespace: string;
  readonly clusterName: string;
  readonly hcpNamespace: string;
  private readonly now: () => number;
  private readonly mgmtConfigMaps: ResourceClient<ConfigMap>;
  private readonly mgmtNamespaces: ResourceClient<KubeObject>;
  private readonly nodePools: ResourceClient<NodePool>;
  private readonly hcps: ResourceClient<HostedControlPlane>;
  private readonly hostedNamespaces: ResourceClient<KubeObject>;
  private readonly nodes: ResourceClient<Node>;
  private readonly tuned: ResourceClient<TunedProfile>;

  constructor(options: HostedClusterPairOptions) {
    this.namespace = options.namespace ?? 'clusters';
    this.clusterName = options.clusterName;
    this.hcpNamespace = hostedControlPlaneNamespace(this.namespace, this.clusterName);
    this.now = options.now ?? Date.now;
    this.mgmtConfigMaps = new ResourceClient<ConfigMap>(options.management, ConfigMaps);
    this.mgmtNamespaces = new ResourceClient<KubeObject>(options.management, Namespaces);
    this.nodePools = new ResourceClient<NodePool>(options.management, NodePools);
    this.hcps = new ResourceClient<HostedControlPlane>(options.management, HostedControlPlanes);
    this.hostedNamespaces = new ResourceClient<KubeObject>(options.hosted, Namespaces);
    this.nodes = new ResourceClient<Node>(options.hosted, Nodes);
    this.tuned = new ResourceClient<TunedProfile>(options.hosted, TunedProfiles);
  }

  /** Namespaces on both sides and the HostedControlPlane naming its HostedCluster. */
  async setUp(): Promise<void> {
    await ensure(this.mgmtNamespaces, { metadata: { name: this.namespace } });
    await ensure(this.mgmtNamespaces, { metadata: { name: this.hcpNamespace } });
    await ensure(this.hcps, {
      metadata: {
        name: this.clusterName,
        namespace: this.hcpNamespace,
        annotations: { [ANNOTATIONS.hostedClusterOnHCP]: `${this.namespace}/${this.clusterName}` },
      },
      spec: {},
    });
    await ensure(this.hostedNamespaces, { metadata: { name: NTO_NAMESPACE } });
  }

  /**
   * A NodePool referencing a new tuning ConfigMap `<profile>-tuning` with PerformanceProfile `profile`, and its
   * Nodes in the hosted cluster, each with a Tuned Profile that has not applied anything yet.
   */
  async addNodePool(name: string, profile: string, nodeNames: readonly string[]): Promise<void> {
    await ensure(this.mgmtConfigMaps, {
      metadata: { name: `${profile}-tuning`, namespace: this.namespace },
      data: { [DATA_KEYS.tuning]: performanceProfileManifest(profile, name) },
    });
    await ensure(this.nodePools, {
      metadata: { name, namespace: this.namespace },
      spec: { clusterName: this.clusterName, tuningConfig: [{ name: `${profile}-tuning` }] },
    });
    for (const node of nodeNames) {
      // No kubelet backs these Nodes: a NoSchedule taint keeps every scheduler away from them.
      await ensure(this.nodes, {
        metadata: { name: node, labels: { [LABELS.nodePool]: name } },
        spec: { taints: [{ key: 'tessera.dev/simulated-node', value: 'nodepool', effect: 'NoSchedule' }] },
      });
      await ensure(this.tuned, {
        metadata: { name: node, namespace: NTO_NAMESPACE },
        spec: { config: { tunedProfile: `openshift-node-performance-${profile}` } },
      });
      await this.setTunedState(node, { kind: 'pending' });
    }
  }

  /** What TuneD would report on `node`: not applied yet, applied, or failed to apply. */
  async setTunedState(node: string, state: TunedState): Promise<void> {
    const at = metaTime(this.now());
    const conditions: TunedProfileCondition[] =
      state.kind === 'degraded'
        ? [
            {
              type: 'Applied',
              status: 'False',
              lastTransitionTime: at,
              reason: 'Failed',
              message: 'The TuneD daemon profile not yet applied, or application failed.',
            },
            {
              type: 'Degraded',
              status: 'True',
              lastTransitionTime: at,
              reason: state.reason,
              message: state.message,
            },
          ]
        : [
            {
              type: 'Applied',
              status: state.kind === 'applied' ? 'True' : 'False',
              lastTransitionTime: at,
              reason: state.kind === 'applied' ? 'AsExpected' : 'Pending',
            },
            { type: 'Degraded', status: 'False', lastTransitionTime: at, reason: 'AsExpected' },
          ];
    await this.tuned.mergePatch(
      { namespace: NTO_NAMESPACE, name: node },
      { status: { conditions } },
      { subresource: 'status' },
    );
  }

  /** Points the NodePool at tuning ConfigMaps (none: stop referencing a profile). */
  async setTuningConfig(nodePool: string, configMaps: readonly string[]): Promise<void> {
    await this.nodePools.mergePatch(
      { namespace: this.namespace, name: nodePool },
      { spec: { tuningConfig: configMaps.length > 0 ? configMaps.map((name) => ({ name })) : null } },
    );
  }

  getNodePool(name: string): Promise<NodePool> {
    return this.nodePools.get({ namespace: this.namespace, name });
  }

  /** ConfigMaps in the HCP namespace carrying `label=true`. */
  async hcpConfigMaps(label: string): Promise<ConfigMap[]> {
    return (await this.mgmtConfigMaps.list({ namespace: this.hcpNamespace, labelSelector: `${label}=true` }))
      .items;
  }
}
