// The fault suite for the two status controllers, each run as its Deployment runs it (`tessera upgrade
// status-controller` with 384 MiB of heap, `tessera nodepool run` with 160 MiB, both leader-elected, restarted by a
// supervisor as the kubelet restarts a container): the management cluster's etcd and API server go away for 30 s.
// Afterwards each component must follow the cluster again by itself (a change made after the outage shows up in
// the UpdateStatus and on the NodePool), whether it rode the outage out or lost its Lease and was restarted.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { HostedClusterPair } from '../../../src/demo/hosted-cluster-pair.js';
import { installNodePoolCrds } from '../../../src/nodepool/api/install.js';
import type { NodePool } from '../../../src/nodepool/api/types.js';
import { KubeClient, type KubeObject, Nodes, ResourceClient } from '../../../src/runtime/index.js';
import { installOpenShiftDevCrds } from '../../../src/updatestatus/api/dev-crds.js';
import { installUpdateStatusCrd, UpdateStatuses } from '../../../src/updatestatus/api/install.js';
import type { UpdateStatus } from '../../../src/updatestatus/api/schema.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { fixturePath } from '../../support/fixtures.js';
import { startTessera, supervise, type ProcessRun, type Supervised } from '../../support/supervisor.js';
import { createSnapshotObjects } from '../../support/updatestatus.js';

const SNAPSHOT = path.join(fixturePath('oc-upgrade-status'), '4.15.0-ec2-early-cv.yaml');
const SUMMARY = 'PerformanceProfileAppliedSuccessfully';
const LEASE_NAMESPACE = 'tessera-faults';

let management: DevCluster;
let hosted: DevCluster;
let mgmt: KubeClient;
let hostedClient: KubeClient;
let pair: HostedClusterPair;
let updateStatus: Supervised<ProcessRun>;
let nodePool: Supervised<ProcessRun>;

/** Names of the nodes the UpdateStatus has a node insight for, in any pool and informer. */
function nodeInsightNames(us: UpdateStatus | undefined): string[] {
  const names: string[] = [];
  for (const pool of us?.status?.workerPools ?? [])
    for (const informer of pool.informers ?? [])
      for (const entry of informer.insights ?? [])
        if (entry.insight.type === 'Node' && entry.insight.node) names.push(entry.insight.node.name);
  return names.sort();
}

async function clusterUpdateStatus(): Promise<UpdateStatus> {
  return new ResourceClient<UpdateStatus>(mgmt, UpdateStatuses).get({ name: 'cluster' });
}

function summaryOf(np: NodePool): { status: string; reason?: string } | undefined {
  return np.status?.conditions?.find((c) => c.type === SUMMARY);
}

beforeAll(async () => {
  [management, hosted] = await Promise.all([
    startApiServerOnlyTestCluster(uniqueName('faults-mgmt')),
    startApiServerOnlyTestCluster(uniqueName('faults-hosted')),
  ]);
  mgmt = new KubeClient(await management.kubeConfig());
  hostedClient = new KubeClient(await hosted.kubeConfig());
  await mgmt.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { metadata: { name: LEASE_NAMESPACE } },
  });

  // Update status: the OpenShift stand-in CRDs and a cluster in the middle of an update.
  await installOpenShiftDevCrds(mgmt);
  await installUpdateStatusCrd(mgmt);
  await createSnapshotObjects(mgmt, (await loadSnapshot(SNAPSHOT)).snapshot);

  // NodePool status: a hosted cluster with one NodePool whose profile is applied.
  await installNodePoolCrds(mgmt, 'management');
  await installNodePoolCrds(hostedClient, 'hosted');
  pair = new HostedClusterPair({ management: mgmt, hosted: hostedClient, clusterName: 'hc-faults' });
  await pair.setUp();
  await pair.addNodePool('np-f', 'pp-f', ['node-f1']);
  await pair.setTunedState('node-f1', { kind: 'applied' });

  updateStatus = supervise(() =>
    startTessera(
      [
        'upgrade',
        'status-controller',
        `--kubeconfig=${management.kubeconfigPath}`,
        `--namespace=${LEASE_NAMESPACE}`,
        '--probe-port=0',
      ],
      { nodeOptions: ['--max-semi-space-size=4', '--max-old-space-size=384'] },
    ),
  );
  nodePool = supervise(() =>
    startTessera(
      [
        'nodepool',
        'run',
        `--kubeconfig=${management.kubeconfigPath}`,
        `--hosted-kubeconfig=${hosted.kubeconfigPath}`,
        `--hcp-namespace=${pair.hcpNamespace}`,
        '--leader-elect',
        `--namespace=${LEASE_NAMESPACE}`,
        '--heartbeat=5',
        '--stale-after=600',
      ],
      { nodeOptions: ['--max-semi-space-size=4', '--max-old-space-size=160'] },
    ),
  );
}, 240_000);

afterAll(async () => {
  await updateStatus?.stop();
  await nodePool?.stop();
  await mgmt?.close();
  await hostedClient?.close();
  await Promise.allSettled([management?.stop({ wipe: true }), hosted?.stop({ wipe: true })]);
}, 120_000);

describe('the status controllers under a control-plane outage', () => {
  it('etcd and the API server down for 30 s: UpdateStatus and NodePool conditions follow the cluster again by themselves', async () => {
    const snapshotNodes = (await new ResourceClient<KubeObject>(mgmt, Nodes).list()).items
      .map((n) => n.metadata?.name ?? '')
      .filter((n) => n !== '');
    // Both controllers are working before the fault.
    const before = await eventually(
      async () => {
        const us = await clusterUpdateStatus();
        if (nodeInsightNames(us).length === 0) throw new Error('no node insights yet');
        return us;
      },
      { timeoutMs: 90_000, what: `UpdateStatus cluster written (log: ${updateStatus.current().logFile})` },
    );
    const gone = nodeInsightNames(before)[0] ?? '';
    expect(snapshotNodes).toContain(gone);
    await eventually(
      async () => {
        if (summaryOf(await pair.getNodePool('np-f'))?.status !== 'True') throw new Error('not applied yet');
      },
      { timeoutMs: 90_000, what: `np-f ${SUMMARY}=True (log: ${nodePool.current().logFile})` },
    );

    await management.controlPlaneOutage(
      () => new Promise((resolve) => setTimeout(resolve, 30_000)), // the fault itself: 30 s without etcd
    );

    // Changes made after the outage reach both, with no help from the test.
    await new ResourceClient<KubeObject>(mgmt, Nodes).delete({ name: gone });
    await pair.setTunedState('node-f1', {
      kind: 'degraded',
      reason: 'TunedError',
      message: 'after the outage',
    });
    await eventually(
      async () => {
        const names = nodeInsightNames(await clusterUpdateStatus());
        if (names.includes(gone) || names.length === 0) throw new Error(`still ${names.join(', ')}`);
      },
      {
        timeoutMs: 120_000,
        intervalMs: 500,
        what: `the deleted node gone from UpdateStatus (log: ${updateStatus.current().logFile})`,
      },
    );
    await eventually(
      async () => {
        const summary = summaryOf(await pair.getNodePool('np-f'));
        if (summary?.status !== 'False') throw new Error(`still ${JSON.stringify(summary)}`);
      },
      {
        timeoutMs: 120_000,
        intervalMs: 500,
        what: `np-f degraded after the outage (log: ${nodePool.current().logFile})`,
      },
    );
  }, 400_000);
});
