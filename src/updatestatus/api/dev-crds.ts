// Minimal CRDs for the OpenShift objects update status reads (ClusterVersion, ClusterOperator, MachineConfigPool,
// MachineConfig, MachineConfigNode, and the namespaced Route through which alerts are found), for development
// clusters and tests only: schemaless (unknown fields kept) and without a status subresource, so fixtures can be
// created as they are. Real OpenShift clusters bring their own.
import {
  applyCrds,
  standInCrd,
  type Clock,
  type KubeClient,
  type KubeObject,
  type ResourceType,
} from '../../runtime/index.js';

export {
  ClusterOperators,
  ClusterVersions,
  MachineConfigNodes,
  MachineConfigPools,
  MachineConfigs,
} from '../resources.js';
import {
  ClusterOperators,
  ClusterVersions,
  MachineConfigNodes,
  MachineConfigPools,
  MachineConfigs,
} from '../resources.js';

/** route.openshift.io Routes: `openshift-monitoring/thanos-querier` tells where alerts are served. */
export const Routes: ResourceType = {
  group: 'route.openshift.io',
  version: 'v1',
  plural: 'routes',
  kind: 'Route',
  namespaced: true,
};

export const OPENSHIFT_INPUT_TYPES = [
  ClusterVersions,
  ClusterOperators,
  MachineConfigPools,
  MachineConfigs,
  MachineConfigNodes,
  Routes,
] as const;

const devCrd = (type: ResourceType): KubeObject =>
  standInCrd(type, {
    schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    annotations: { 'tessera.dev/purpose': 'development stand-in' },
  }) as unknown as KubeObject;

/** Applies the stand-in CRDs and waits until all are served. */
export async function installOpenShiftDevCrds(
  client: KubeClient,
  options: {
    timeoutMs?: number;
    /** Paces the wait. Default: the real clock. */
    clock?: Clock;
    /** Kinds to stand in for. Default: OPENSHIFT_INPUT_TYPES. */
    types?: readonly ResourceType[];
    /** Stops the requests and the wait (the install then rejects). */
    signal?: AbortSignal;
  } = {},
): Promise<void> {
  const { types = OPENSHIFT_INPUT_TYPES, ...wait } = options;
  await applyCrds(client, types.map(devCrd), { ...wait, fieldManager: 'tessera-dev' });
}
