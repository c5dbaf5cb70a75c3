// REST descriptions of the resources this area reads and writes (see runtime/resources.ts for the core ones).
import type { ResourceType } from '../runtime/light.js';
import {
  HOSTED_CONTROL_PLANE_KIND,
  HOSTED_CONTROL_PLANE_PLURAL,
  HYPERSHIFT_GROUP,
  HYPERSHIFT_VERSION,
  NODEPOOL_KIND,
  NODEPOOL_PLURAL,
  TUNED_GROUP,
  TUNED_PROFILE_KIND,
  TUNED_PROFILE_PLURAL,
  TUNED_VERSION,
} from './constants.js';

export const NodePools: ResourceType = {
  group: HYPERSHIFT_GROUP,
  version: HYPERSHIFT_VERSION,
  plural: NODEPOOL_PLURAL,
  kind: NODEPOOL_KIND,
  namespaced: true,
};
export const HostedControlPlanes: ResourceType = {
  group: HYPERSHIFT_GROUP,
  version: HYPERSHIFT_VERSION,
  plural: HOSTED_CONTROL_PLANE_PLURAL,
  kind: HOSTED_CONTROL_PLANE_KIND,
  namespaced: true,
};
export const TunedProfiles: ResourceType = {
  group: TUNED_GROUP,
  version: TUNED_VERSION,
  plural: TUNED_PROFILE_PLURAL,
  kind: TUNED_PROFILE_KIND,
  namespaced: true,
};
/**
 * machineconfiguration.openshift.io/v1 MachineConfigPool: only their names are read, so NodePool pools of the
 * UpdateStatus never take an MCP pool's name (management/update-insights.ts).
 */
export const MachineConfigPools: ResourceType = {
  group: 'machineconfiguration.openshift.io',
  version: 'v1',
  plural: 'machineconfigpools',
  kind: 'MachineConfigPool',
  namespaced: false,
};
