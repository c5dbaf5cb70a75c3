// Puts an oc snapshot's objects into a live cluster, for the update status tests that read them back through the
// API server: the ClusterVersion, ClusterOperators, MachineConfigPools, MachineConfigs (stand-in CRDs that keep
// unknown fields, status included, so they are created as they are) and the Nodes (created, then their status
// written through the status subresource).
import { Nodes, ResourceClient, type KubeClient, type KubeObject } from '../../src/runtime/index.js';
import {
  ClusterOperators,
  ClusterVersions,
  MachineConfigPools,
  MachineConfigs,
} from '../../src/updatestatus/api/dev-crds.js';
import type { UpgradeStatusOptions } from '../../src/updatestatus/command.js';
import type { ClusterSnapshot } from '../../src/updatestatus/inputs.js';

/** `obj` as the API server accepts it on create: no server-set metadata; in `namespace` when given. */
export function freshObject<T extends KubeObject>(obj: T, namespace?: string): T {
  const m = obj.metadata ?? {};
  return {
    ...obj,
    metadata: { name: m.name, namespace, labels: m.labels, annotations: m.annotations },
  } as T;
}

/** Creates the snapshot's cluster objects through `client`, one request each. */
export async function createSnapshotObjects(client: KubeClient, snapshot: ClusterSnapshot): Promise<void> {
  const create = async (rc: ResourceClient<KubeObject>, objs: readonly unknown[]) => {
    for (const o of objs) await rc.create(freshObject(o as KubeObject));
  };
  await create(new ResourceClient(client, ClusterVersions), [snapshot.clusterVersion]);
  await create(new ResourceClient(client, ClusterOperators), snapshot.clusterOperators);
  await create(new ResourceClient(client, MachineConfigPools), snapshot.machineConfigPools);
  await create(new ResourceClient(client, MachineConfigs), snapshot.machineConfigs);
  const nodes = new ResourceClient<KubeObject & { status?: unknown; spec?: unknown }>(client, Nodes);
  for (const node of snapshot.nodes) {
    await nodes.create({ ...freshObject(node as KubeObject), spec: node.spec ?? {} });
    // Node controllers touch new nodes at once; a merge patch needs no resourceVersion.
    await nodes.mergePatch(
      { name: node.metadata?.name ?? '' },
      { status: node.status },
      { subresource: 'status' },
    );
  }
}

/**
 * `tessera upgrade status` as the tests run it on a live cluster: text output, one look (no --watch), no mocked
 * cluster version, the evaluation time the wall clock unless `now` is given.
 */
export function liveStatusOptions(
  kubeconfig: string | undefined,
  options: Pick<UpgradeStatusOptions, 'details' | 'source'> & Partial<UpgradeStatusOptions>,
): UpgradeStatusOptions {
  return {
    now: undefined,
    mockClusterVersion: undefined,
    output: 'text',
    watch: false,
    intervalMs: 1000,
    kubeconfig,
    ...options,
  };
}
