// The NodePool informer of the UpdateStatus API on a real API server, as deployed: `tessera nodepool run`
// (runNodePoolControllers: the NodePool controller and its `nodepools` informer on one Manager) beside Tessera's
// update status controller (its `cpi` and `nodes` informers and the aggregator, on another). The NodePool side
// starts before the UpdateStatus API is served, works without it, and writes its pools once it is; its pools sit
// next to the node informer's MachineConfigPool pool, survive the others' writes, follow NodePool changes, and
// `tessera upgrade status` shows them.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import {
  KubeClient,
  type KubeObject,
  Manager,
  Namespaces,
  ResourceClient,
  retryOnConflict,
  silentLogger,
} from '../../../src/runtime/index.js';
import type { NodePool, NodePoolCondition } from '../../../src/nodepool/api/types.js';
import { installNodePoolCrds } from '../../../src/nodepool/api/install.js';
import { NodePools } from '../../../src/nodepool/resources.js';
import { runNodePoolControllers } from '../../../src/nodepool/run-command.js';
import { installOpenShiftDevCrds } from '../../../src/updatestatus/api/dev-crds.js';
import { UpdateStatuses } from '../../../src/updatestatus/api/install.js';
import type { UpdateStatus } from '../../../src/updatestatus/api/schema.js';
import { runUpgradeStatus } from '../../../src/updatestatus/command.js';
import { applyCreatingObject } from '../../../src/updatestatus/informer.js';
import { addUpdateStatusController } from '../../../src/updatestatus/runnable.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { captureCommandIO } from '../../support/command-io.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { fixturePath } from '../../support/fixtures.js';
import { createSnapshotObjects, liveStatusOptions } from '../../support/updatestatus.js';

type Stored = UpdateStatus & KubeObject;
const NS = 'clusters';
const SUMMARY = 'PerformanceProfileAppliedSuccessfully';
const metaNow = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('NodePools as an UpdateStatus informer on a live management cluster', () => {
  let cluster: DevCluster;
  let client: KubeClient;
  let statuses: ResourceClient<Stored>;
  let nodePools: ResourceClient<NodePool & KubeObject>;
  const stop = new AbortController();
  const running: Promise<void>[] = [];

  const read = () => statuses.get({ name: 'cluster' });
  const poolNames = (s: Stored) => (s.status?.workerPools ?? []).map((p) => p.name).sort();
  const poolOf = (s: Stored, name: string) => s.status?.workerPools?.find((p) => p.name === name);
  const informerIn = (s: Stored, pool: string, informer: string) =>
    poolOf(s, pool)?.informers?.find((i) => i.name === informer);
  const upgradeStatus = async () => {
    const io = captureCommandIO();
    const code = await runUpgradeStatus(
      liveStatusOptions(cluster.kubeconfigPath, { details: 'health', source: 'updatestatus' }),
      io,
    );
    expect(code).toBe(0);
    return io.stdout();
  };
  /** Writes NodePool conditions as HyperShift would (keeping the others'), with status.version. */
  const setHyperShiftStatus = (name: string, conditions: NodePoolCondition[], version: string) =>
    retryOnConflict(async () => {
      const np = await nodePools.get({ namespace: NS, name });
      const others = (np.status?.conditions ?? []).filter((c) => !conditions.some((n) => n.type === c.type));
      await nodePools.updateStatus({
        ...np,
        status: { ...np.status, version, conditions: [...others, ...conditions] } as NodePool['status'],
      });
    });

  beforeAll(async () => {
    cluster = await startApiServerOnlyTestCluster(uniqueName('np-informer'));
    client = new KubeClient(await cluster.kubeConfig());
    statuses = new ResourceClient<Stored>(client, UpdateStatuses);
    nodePools = new ResourceClient<NodePool & KubeObject>(client, NodePools);
    await installNodePoolCrds(client, 'management');
    await installOpenShiftDevCrds(client);
    const { snapshot } = await loadSnapshot(
      path.join(fixturePath('oc-upgrade-status'), '4.15.0-ec2-early-cv.yaml'),
    );
    await createSnapshotObjects(client, snapshot);
    await new ResourceClient(client, Namespaces).create({ metadata: { name: NS } });
    for (const name of ['np-updating', 'np-tuning', 'np-idle', 'worker'])
      await nodePools.create({
        metadata: { name, namespace: NS },
        spec: {
          clusterName: 'hc1',
          // np-tuning names a tuning ConfigMap that does not exist: the NodePool controller says the profile's state
          // is unknown (its own condition), and the informer reports that.
          ...(name === 'np-tuning' ? { tuningConfig: [{ name: 'missing-tuning' }] } : {}),
        },
      } as NodePool & KubeObject);
    // `worker` is also the name of the node informer's MachineConfigPool pool: this NodePool must not take it.
    await setHyperShiftStatus(
      'worker',
      [
        {
          type: 'UpdatingVersion',
          status: 'False',
          reason: 'InplaceUpgradeFailed',
          message: 'Node n1 in nodepool degraded',
          lastTransitionTime: metaNow(),
        },
      ],
      '4.16.1',
    );
    await setHyperShiftStatus(
      'np-updating',
      [
        {
          type: 'UpdatingVersion',
          status: 'True',
          reason: 'AsExpected',
          message: 'Updating version in progress. Target version: 4.16.3',
          lastTransitionTime: metaNow(),
        },
      ],
      '4.16.1',
    );
  });

  afterAll(async () => {
    stop.abort();
    await Promise.all(running);
    await client?.close();
    await cluster?.stop({ wipe: true });
  });

  it('runs without the UpdateStatus API, then writes its pools next to the node informer once it is served', async () => {
    // The NodePool side first, on a cluster that does not serve UpdateStatus yet.
    running.push(
      runNodePoolControllers({
        kubeconfig: cluster.kubeconfigPath,
        signal: stop.signal,
        logger: silentLogger,
      }),
    );
    await eventually(
      async () => {
        const np = await nodePools.get({ namespace: NS, name: 'np-tuning' });
        expect(np.status?.conditions?.find((c) => c.type === SUMMARY)?.status).toBe('Unknown');
      },
      { timeoutMs: 60_000, what: 'the NodePool controller to work without the UpdateStatus API' },
    );

    // Then the update status controller, which installs the UpdateStatus CRD.
    const manager = new Manager({
      kubeConfig: await cluster.kubeConfig(),
      name: 'it-np-informer',
      probes: false,
      leaderElection: false,
      handleSignals: false,
    });
    addUpdateStatusController(manager, { minWriteIntervalMs: 100 });
    running.push(manager.start(stop.signal));

    // The NodePool informer looks again on its resync (15 s) and writes.
    const s = await eventually(
      async () => {
        const s = await read();
        expect(s.status?.informers?.map((r) => r.name).sort()).toEqual(['cpi', 'nodepools', 'nodes']);
        expect(poolNames(s)).toEqual(['np-tuning', 'np-updating', 'worker']);
        // (Had the NodePool informer written before the node informer, it leaves `worker` on its next write.)
        expect(poolOf(s, 'worker')?.informers?.map((i) => i.name)).toEqual(['nodes']);
        return s;
      },
      { timeoutMs: 90_000, what: "the NodePool informer's pools beside the node informer's" },
    );
    // Each pool is its own informer's: the NodePool pools name their NodePool; `worker` stays the
    // MachineConfigPool (the NodePool named `worker` is left out, and said so).
    expect(poolOf(s, 'np-updating')?.resource).toEqual({
      group: 'hypershift.openshift.io',
      resource: 'nodepools',
      name: 'np-updating',
      namespace: NS,
    });
    expect(poolOf(s, 'worker')?.resource).toEqual({
      group: 'machineconfiguration.openshift.io',
      resource: 'machineconfigpools',
      name: 'worker',
    });
    expect(informerIn(s, 'np-updating', 'nodepools')?.insights?.[0]?.insight.health?.impact).toMatchObject({
      level: 'Info',
      summary: 'NodePool clusters/np-updating is updating to 4.16.3 (from 4.16.1)',
    });
    expect(informerIn(s, 'np-tuning', 'nodepools')?.insights?.[0]?.insight.health?.impact.summary).toMatch(
      /^The state of the PerformanceProfile of NodePool clusters\/np-tuning is unknown \(\w+\)$/,
    );
    const leftOut = s.status?.controlPlane?.informers?.find((i) => i.name === 'nodepools')?.insights?.[0];
    expect(leftOut?.insight.health?.impact).toMatchObject({
      level: 'Error',
      summary: '1 more NodePool has update or PerformanceProfile findings not shown (1 with errors)',
    });
    const managers = (s.metadata as { managedFields?: { manager: string }[] }).managedFields?.map(
      (f) => f.manager,
    );
    expect(managers).toEqual(
      expect.arrayContaining([
        'updatestatus-informer-nodepools',
        'updatestatus-informer-nodes',
        'tessera-updatestatus',
      ]),
    );

    // `tessera upgrade status` shows them with the others' insights.
    const text = await upgradeStatus();
    expect(text).toContain('= Worker Upgrade =');
    expect(text).toContain('NodePool clusters/np-updating is updating to 4.16.3 (from 4.16.1)');
    expect(text).toMatch(/The state of the PerformanceProfile of NodePool clusters\/np-tuning is unknown/);
    expect(text).toContain(
      '1 more NodePool has update or PerformanceProfile findings not shown (1 with errors)',
    );
    expect(text).toContain('Resources:\n    nodepools.hypershift.openshift.io: clusters/np-updating');
  });

  it("keeps its entries through the others' writes, and follows NodePool changes without touching theirs", async () => {
    const before = await read();
    const nodesWorker = informerIn(before, 'worker', 'nodes');
    // An external informer writes a pool of its own and the aggregator writes after it: the NodePool pools stay.
    await applyCreatingObject(
      statuses,
      {
        apiVersion: 'update.openshift.io/v1alpha1',
        kind: 'UpdateStatus',
        metadata: { name: 'cluster' },
        spec: {},
        status: {
          informers: [{ name: 'external', heartbeatTime: metaNow() }],
          workerPools: [
            {
              name: 'infra',
              resource: {
                group: 'machineconfiguration.openshift.io',
                resource: 'machineconfigpools',
                name: 'infra',
              },
              informers: [{ name: 'external', insights: [] }],
            },
          ],
        },
      } as Stored,
      'updatestatus-informer-external',
    );
    const afterExternal = await read();
    expect(poolNames(afterExternal)).toEqual(['infra', 'np-tuning', 'np-updating', 'worker']);
    expect(informerIn(afterExternal, 'np-updating', 'nodepools')?.insights).toHaveLength(1);

    // The update finishes: HyperShift sets UpdatingVersion=False. Its pool goes; the others' entries do not change.
    await setHyperShiftStatus(
      'np-updating',
      [
        {
          type: 'UpdatingVersion',
          status: 'False',
          reason: 'AsExpected',
          message: '',
          lastTransitionTime: metaNow(),
        },
      ],
      '4.16.3',
    );
    const after = await eventually(
      async () => {
        const s = await read();
        expect(poolOf(s, 'np-updating')).toBeUndefined();
        expect(poolNames(s)).toEqual(['infra', 'np-tuning', 'worker']);
        return s;
      },
      { timeoutMs: 30_000, what: "the finished NodePool's pool to go" },
    );
    expect(informerIn(after, 'worker', 'nodes')?.insights?.map((i) => i.uid)).toEqual(
      nodesWorker?.insights?.map((i) => i.uid),
    );
    expect(informerIn(after, 'np-tuning', 'nodepools')?.insights).toHaveLength(1);
    expect(after.status?.informers?.map((r) => r.name).sort()).toEqual([
      'cpi',
      'external',
      'nodepools',
      'nodes',
    ]);
    expect(await upgradeStatus()).not.toContain('clusters/np-updating is updating');
  });
});
