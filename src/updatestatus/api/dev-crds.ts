// Minimal CRDs for the OpenShift objects update status reads (ClusterVersion, ClusterOperator, MachineConfigPool,
// MachineConfig, MachineConfigNode, and the namespaced Route through which alerts are found), for development
// clusters and tests only: schemaless (unknown fields kept) and without a status subresource, so fixtures can be
// created as they are. Real OpenShift clusters bring their own.
import {
  applyCrds,
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

function devCrd(type: ResourceType): KubeObject & Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${type.plural}.${type.group}`,
      annotations: { 'tessera.dev/purpose': 'development stand-in' },
    },
    spec: {
      group: type.group,
      names: {
        kind: type.kind,
        listKind: `${type.kind}List`,
        plural: type.plural,
        singular: type.kind.toLowerCase(),
      },
      scope: type.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: type.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

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
