// What a cluster admin creates to turn pod placement on: the ClusterPodPlacementConfig, and a team's namespace it
// selects.
import type { KubeClient } from '../../src/runtime/index.js';
import { eventually, uniqueName } from './cluster.js';

/** The ClusterPodPlacementConfig spec fields the tests set (the CRD defaults the rest). */
export interface ClusterPodPlacementConfigSpec {
  namespaceSelector?: { matchLabels: Record<string, string> };
  fallbackArchitecture?: string;
  logVerbosity?: string;
}

/** Creates the ClusterPodPlacementConfig `cluster` (the only name the webhook admits). */
export async function createClusterPodPlacementConfig(
  client: KubeClient,
  spec?: ClusterPodPlacementConfigSpec,
): Promise<void> {
  await client.request({
    method: 'POST',
    path: '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs',
    body: {
      apiVersion: 'multiarch.openshift.io/v1beta1',
      kind: 'ClusterPodPlacementConfig',
      metadata: { name: 'cluster' },
      ...(spec ? { spec } : {}),
    },
  });
}

/**
 * A new namespace labelled `<label>: selected`, returned once its default service account exists (pods need it),
 * and the ClusterPodPlacementConfig `cluster` selecting namespaces with that label.
 */
export async function tenantUnderPlacement(client: KubeClient, label: string): Promise<string> {
  const tenant = uniqueName('tenant');
  await client.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { metadata: { name: tenant, labels: { [label]: 'selected' } } },
  });
  await eventually(
    () => client.request({ method: 'GET', path: `/api/v1/namespaces/${tenant}/serviceaccounts/default` }),
    { what: 'the default service account of the tenant namespace' },
  );
  await createClusterPodPlacementConfig(client, {
    namespaceSelector: { matchLabels: { [label]: 'selected' } },
  });
  return tenant;
}
