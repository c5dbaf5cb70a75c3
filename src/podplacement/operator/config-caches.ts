// The caches both halves read: the ClusterPodPlacementConfig and every PodPlacementConfig (by namespace).
import {
  NAMESPACE_INDEX,
  namespaceIndexFunc,
  type KubeObject,
  type SharedInformer,
  type SharedInformerFactory,
} from '../../runtime/index.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from '../api/schema.js';
import { CLUSTER_CONFIG_NAME } from '../constants.js';
import { ClusterPodPlacementConfigs, PodPlacementConfigs } from '../resources.js';

export class ConfigCaches {
  readonly clusterConfigs: SharedInformer<ClusterPodPlacementConfig & KubeObject>;
  readonly podPlacementConfigs: SharedInformer<PodPlacementConfig & KubeObject>;

  constructor(informers: SharedInformerFactory) {
    this.clusterConfigs = informers.informerFor<ClusterPodPlacementConfig & KubeObject>({
      type: ClusterPodPlacementConfigs,
    });
    this.podPlacementConfigs = informers.informerFor<PodPlacementConfig & KubeObject>({
      type: PodPlacementConfigs,
      indexers: { [NAMESPACE_INDEX]: namespaceIndexFunc },
    });
  }

  /** The cached `cluster` object, or undefined. */
  clusterConfig(): ClusterPodPlacementConfig | undefined {
    return this.clusterConfigs.getIndexer().get(CLUSTER_CONFIG_NAME);
  }

  /** The cached PodPlacementConfigs of `namespace`. */
  podPlacementConfigsIn(namespace: string): PodPlacementConfig[] {
    return this.podPlacementConfigs.getIndexer().byIndex(NAMESPACE_INDEX, namespace);
  }

  /** Cached PodPlacementConfigs cluster-wide. */
  podPlacementConfigCount(): number {
    return this.podPlacementConfigs.getIndexer().size();
  }

  hasSynced(): boolean {
    return this.clusterConfigs.hasSynced() && this.podPlacementConfigs.hasSynced();
  }
}
