// Resource descriptions of the pod placement API for the runtime's clients and informers. Nothing here does I/O.
import type { ResourceType } from '../runtime/light.js';
import {
  API_GROUP,
  CLUSTER_CONFIG_KIND,
  CLUSTER_CONFIG_PLURAL,
  POD_CONFIG_KIND,
  POD_CONFIG_PLURAL,
} from './constants.js';

export const ClusterPodPlacementConfigs: ResourceType = {
  group: API_GROUP,
  version: 'v1beta1',
  plural: CLUSTER_CONFIG_PLURAL,
  kind: CLUSTER_CONFIG_KIND,
  namespaced: false,
};

export const PodPlacementConfigs: ResourceType = {
  group: API_GROUP,
  version: 'v1beta1',
  plural: POD_CONFIG_PLURAL,
  kind: POD_CONFIG_KIND,
  namespaced: true,
};
