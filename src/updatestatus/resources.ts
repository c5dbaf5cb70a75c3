// REST descriptions of the OpenShift resources update status reads. No I/O and no runtime values: the dashboard's
// console plugin watches the same resources from a browser (through the console's SDK) by these descriptions.
import type { ResourceType } from '../runtime/light.js';
import type { Deployment } from './inputs.js';

const cluster = (group: string, plural: string, kind: string): ResourceType => ({
  group,
  version: 'v1',
  plural,
  kind,
  namespaced: false,
});

export const ClusterVersions = cluster('config.openshift.io', 'clusterversions', 'ClusterVersion');
export const ClusterOperators = cluster('config.openshift.io', 'clusteroperators', 'ClusterOperator');
export const MachineConfigPools = cluster(
  'machineconfiguration.openshift.io',
  'machineconfigpools',
  'MachineConfigPool',
);
export const MachineConfigs = cluster('machineconfiguration.openshift.io', 'machineconfigs', 'MachineConfig');
/** Served by OpenShift 4.19 and later (machineconfiguration.openshift.io/v1), one per node. */
export const MachineConfigNodes = cluster(
  'machineconfiguration.openshift.io',
  'machineconfignodes',
  'MachineConfigNode',
);

/** Where the machine-config-operator Deployment (whose image tells the MCO's version) lives. */
export const MCO_NAMESPACE = 'openshift-machine-config-operator';
/** The one Deployment of MCO_NAMESPACE read: its image tells the MCO's version. */
export const MCO_DEPLOYMENT_NAME = 'machine-config-operator';

export const Deployments: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
  namespaced: true,
};

/** Image of the `machine-config-operator` container; "" when absent. */
export function mcoImageOf(deployment: Deployment | undefined): string {
  const containers = deployment?.spec?.template?.spec?.containers ?? [];
  return containers.find((c) => c.name === 'machine-config-operator')?.image ?? '';
}
