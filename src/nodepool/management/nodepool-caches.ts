// The NodePool side's informers and the indexes that map an event on one object to the NodePools it concerns.
// Users' tuning ConfigMaps are cached only in namespaces that hold a NodePool with spec.tuningConfig (one informer
// per such namespace, started when the first one appears), trimmed to the `tuning` key without managedFields, so
// the cache does not grow with the management cluster's ConfigMaps. Status ConfigMaps keep only their `status` key
// (and not even that when it is over budget: trimStatusConfigMap).
import {
  type Clock,
  ConfigMaps,
  type KubeClient,
  type Logger,
  objectKey,
  type SharedInformer,
  SharedInformerFactory,
  stripManagedFields,
} from '../../runtime/index.js';
import type { ConfigMap, HostedControlPlane, NodePool } from '../api/types.js';
import { ANNOTATIONS, DATA_KEYS, LABELS } from '../constants.js';
import { hostedControlPlaneNamespace } from '../names.js';
import { HostedControlPlanes, NodePools } from '../resources.js';
import { trimStatusConfigMap } from '../status-configmap.js';

const NODEPOOL_KEY_INDEX = 'nodePoolKey';
const HCP_NODEPOOL_INDEX = 'hcpNodePool';
const TUNING_REF_INDEX = 'tuningConfigMap';
const HCP_NAMESPACE_INDEX = 'hcpNamespace';

export interface NodePoolCachesOptions {
  client: KubeClient;
  /** Shared informers to build the caches on, started by their owner. Default: a factory of their own on `client`. */
  informers?: SharedInformerFactory;
  /** Only NodePools in this namespace. Default: all namespaces. */
  namespace?: string;
  clock: Clock;
  logger: Logger;
  /** Called once for each tuning ConfigMap informer when it is created (to watch it). */
  onTuningInformer: (informer: SharedInformer<ConfigMap>) => void;
}

/** Cached form of a possible tuning ConfigMap: metadata without managedFields, and only the `tuning` key. */
function trimTuningConfigMap(cm: ConfigMap): ConfigMap {
  const stripped = stripManagedFields(cm);
  const tuning = stripped.data?.[DATA_KEYS.tuning];
  const { data: _data, binaryData: _binary, ...rest } = stripped as ConfigMap & { binaryData?: unknown };
  return tuning === undefined ? rest : { ...rest, data: { [DATA_KEYS.tuning]: tuning } };
}

/** Status and mirrored ConfigMaps are indexed by "<HCP namespace>/<nodePool label>". */
function hcpNodePool(cm: ConfigMap): string[] {
  const np = cm.metadata.labels?.[LABELS.nodePool];
  return np ? [`${cm.metadata.namespace ?? ''}/${np}`] : [];
}

export class NodePoolCaches {
  readonly factory: SharedInformerFactory;
  /** `factory` is the caches' own, so whoever runs them starts it too (else its owner does). */
  readonly ownsFactory: boolean;
  readonly nodePools: SharedInformer<NodePool>;
  readonly hcps: SharedInformer<HostedControlPlane>;
  readonly statusConfigMaps: SharedInformer<ConfigMap>;
  readonly mirrors: SharedInformer<ConfigMap>;
  private readonly tuningInformers = new Map<string, SharedInformer<ConfigMap>>();

  constructor(private readonly options: NodePoolCachesOptions) {
    const { client, clock, logger } = options;
    this.ownsFactory = options.informers === undefined;
    this.factory = options.informers ?? new SharedInformerFactory({ client, clock, logger });
    this.nodePools = this.factory.informerFor<NodePool>({
      type: NodePools,
      namespace: options.namespace,
      indexers: {
        [TUNING_REF_INDEX]: (np) =>
          (np.spec.tuningConfig ?? []).map((ref) => `${np.metadata.namespace ?? ''}/${ref.name}`),
        [HCP_NAMESPACE_INDEX]: (np) => [
          hostedControlPlaneNamespace(np.metadata.namespace ?? '', np.spec.clusterName),
        ],
      },
    });
    this.hcps = this.factory.informerFor<HostedControlPlane>({ type: HostedControlPlanes });
    this.statusConfigMaps = this.factory.informerFor<ConfigMap>({
      type: ConfigMaps,
      labelSelector: `${LABELS.statusConfigMap}=true`,
      transform: trimStatusConfigMap,
      indexers: { [HCP_NODEPOOL_INDEX]: hcpNodePool },
    });
    this.mirrors = this.factory.informerFor<ConfigMap>({
      type: ConfigMaps,
      labelSelector: `${LABELS.ppConfigMap}=true`,
      indexers: {
        [HCP_NODEPOOL_INDEX]: hcpNodePool,
        [NODEPOOL_KEY_INDEX]: (cm) => {
          const ref = cm.metadata.annotations?.[ANNOTATIONS.nodePool];
          return ref ? [ref] : [];
        },
      },
    });
    const watchTuningOf = (np: NodePool): void => {
      if ((np.spec.tuningConfig ?? []).length > 0) this.tuningConfigMapsIn(np.metadata.namespace ?? '');
    };
    this.nodePools.addEventHandler({ onAdd: watchTuningOf, onUpdate: (_old, cur) => watchTuningOf(cur) });
  }

  /** The possible tuning ConfigMaps of `namespace`, cached from the first call on. */
  tuningConfigMapsIn(namespace: string): SharedInformer<ConfigMap> {
    let informer = this.tuningInformers.get(namespace);
    if (!informer) {
      informer = this.factory.informerFor<ConfigMap>({
        type: ConfigMaps,
        namespace,
        transform: trimTuningConfigMap,
      });
      this.tuningInformers.set(namespace, informer);
      this.options.onTuningInformer(informer);
      this.options.logger.info({ namespace }, 'watching tuning ConfigMaps');
    }
    return informer;
  }

  /** Namespaces whose ConfigMaps are watched as possible tuning ConfigMaps, sorted. */
  tuningNamespaces(): string[] {
    return [...this.tuningInformers.keys()].sort();
  }

  /** NodePools naming a tuning ConfigMap in spec.tuningConfig. */
  nodePoolsNaming(tuning: ConfigMap): string[] {
    return this.nodePools.getIndexer().indexKeys(TUNING_REF_INDEX, objectKey(tuning));
  }

  /** The NodePool a status ConfigMap belongs to: HCP namespace -> HostedCluster namespace, plus the nodePool label. */
  nodePoolOfStatus(cm: ConfigMap): string[] {
    const npName = cm.metadata.labels?.[LABELS.nodePool];
    if (!npName) return [];
    const hcp = this.hcps.getIndexer().byIndex('namespace', cm.metadata.namespace ?? '')[0];
    const cluster = hcp?.metadata.annotations?.[ANNOTATIONS.hostedClusterOnHCP];
    if (cluster?.includes('/')) return [`${cluster.slice(0, cluster.indexOf('/'))}/${npName}`];
    // No HostedControlPlane (yet): fall back on the NodePool the status names itself.
    const annotated = cm.metadata.annotations?.[ANNOTATIONS.nodePool];
    return annotated?.includes('/') ? [annotated] : [];
  }

  /** The NodePool a mirror was made for (its annotation). */
  nodePoolOfMirror(cm: ConfigMap): string[] {
    const ref = cm.metadata.annotations?.[ANNOTATIONS.nodePool];
    return ref?.includes('/') ? [ref] : [];
  }

  /** NodePools served by a HostedControlPlane's namespace, and those its status ConfigMaps name. */
  nodePoolsOfControlPlane(hcp: HostedControlPlane): string[] {
    const ns = hcp.metadata.namespace ?? '';
    return [
      ...this.nodePools.getIndexer().indexKeys(HCP_NAMESPACE_INDEX, ns),
      ...this.statusConfigMaps
        .getIndexer()
        .byIndex('namespace', ns)
        .flatMap((cm) => this.nodePoolOfStatus(cm)),
    ];
  }

  hasControlPlaneIn(hcpNamespace: string): boolean {
    return this.hcps.getIndexer().byIndex('namespace', hcpNamespace).length > 0;
  }

  /** A NodePool's mirrors in its HCP namespace. */
  mirrorsIn(hcpNamespace: string, nodePoolName: string): ConfigMap[] {
    return this.mirrors.getIndexer().byIndex(HCP_NODEPOOL_INDEX, `${hcpNamespace}/${nodePoolName}`);
  }

  /** Mirrors made for the NodePool `namespace/name`, wherever they are (found through their annotation). */
  mirrorsFor(nodePoolKey: string): ConfigMap[] {
    return this.mirrors.getIndexer().byIndex(NODEPOOL_KEY_INDEX, nodePoolKey);
  }

  statusConfigMapsIn(hcpNamespace: string, nodePoolName: string): ConfigMap[] {
    return this.statusConfigMaps.getIndexer().byIndex(HCP_NODEPOOL_INDEX, `${hcpNamespace}/${nodePoolName}`);
  }
}
