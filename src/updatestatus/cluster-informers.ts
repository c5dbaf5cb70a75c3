// The cluster objects update status is assessed from, as informers of one factory: one definition for the
// controller and for the dashboard, so the dashboard reads exactly what the controller reads.
import {
  compactForCache,
  type KubeObject,
  Nodes,
  type SharedInformer,
  type SharedInformerFactory,
} from '../runtime/index.js';
import {
  ClusterOperators,
  ClusterVersions,
  MachineConfigNodes,
  MachineConfigPools,
  MachineConfigs,
} from './api/dev-crds.js';
import { Deployments, MCO_DEPLOYMENT_NAME, MCO_NAMESPACE } from './resources.js';
import type {
  ClusterOperator,
  ClusterVersion,
  Deployment,
  MachineConfig,
  MachineConfigNode,
  MachineConfigPool,
  Node,
} from './inputs.js';
import { machineConfigNodeFieldsRead } from './nodestate.js';

export { Deployments, MCO_NAMESPACE } from './resources.js';

export interface ClusterInputInformers {
  readonly clusterVersions: SharedInformer<ClusterVersion & KubeObject>;
  readonly clusterOperators: SharedInformer<ClusterOperator & KubeObject>;
  /** Only the MCO Deployment (namespace openshift-machine-config-operator) is read. */
  readonly deployments: SharedInformer<Deployment & KubeObject>;
  readonly nodes: SharedInformer<Node & KubeObject>;
  readonly pools: SharedInformer<MachineConfigPool & KubeObject>;
  readonly machineConfigs: SharedInformer<MachineConfig & KubeObject>;
  /** Synced and empty while the cluster does not serve MachineConfigNodes (before 4.19) or may not read them. */
  readonly machineConfigNodes: SharedInformer<MachineConfigNode & KubeObject>;
}

export interface ClusterInputInformerOptions {
  /**
   * OpenShift's resources (ClusterVersion, ClusterOperators, MachineConfigPools, MachineConfigs, the MCO
   * Deployment) as optional informers: synced and empty on a cluster that does not serve them (the dashboard says
   * what is missing). Default: false (the controller needs them). MachineConfigNodes are optional either way.
   */
  readonly openShiftOptional?: boolean;
}

/** Requests the informers of everything update status is assessed from (call before the factory starts). */
export function clusterInputInformers(
  f: SharedInformerFactory,
  options: ClusterInputInformerOptions = {},
): ClusterInputInformers {
  const optional = options.openShiftOptional ?? false;
  return {
    clusterVersions: f.informerFor({ type: ClusterVersions, optional }),
    clusterOperators: f.informerFor({ type: ClusterOperators, optional }),
    deployments: f.informerFor({
      type: Deployments,
      namespace: MCO_NAMESPACE,
      fieldSelector: `metadata.name=${MCO_DEPLOYMENT_NAME}`,
      optional,
    }),
    nodes: f.informerFor({ type: Nodes }),
    pools: f.informerFor({ type: MachineConfigPools, optional }),
    machineConfigs: f.informerFor({ type: MachineConfigs, optional }),
    // Optional: a cluster that does not serve them (before 4.19), or may not let us read them, gives an empty,
    // synced cache, so neither the controller nor /readyz waits for it; they are picked up once served.
    machineConfigNodes: f.informerFor<MachineConfigNode & KubeObject>({
      type: MachineConfigNodes,
      optional: true,
      transform: (mcn) => compactForCache(machineConfigNodeFieldsRead(mcn)),
    }),
  };
}
