// `tessera upgrade status` against a real API server: a snapshot case loaded into a private cluster (stand-in
// OpenShift CRDs, real Node objects) reads back exactly as oc printed it, and -o json gives the UpdateStatus.
// Then the controller, on a fake clock, fills the UpdateStatus `cluster`: no write on resyncs while nothing
// changes, one write per change, and none sooner than minWriteIntervalMs after the previous one.
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { KubeClient } from '../../../src/runtime/client.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { Nodes } from '../../../src/runtime/resources.js';
import { snapshotNow } from '../../../src/updatestatus/assess.js';
import { MILLISECOND } from '../../../src/updatestatus/gotime.js';
import { runUpgradeStatus } from '../../../src/updatestatus/command.js';
import {
  ClusterOperators,
  ClusterVersions,
  MachineConfigPools,
  MachineConfigs,
  installOpenShiftDevCrds,
} from '../../../src/updatestatus/api/dev-crds.js';
import type { UpdateStatus } from '../../../src/updatestatus/api/schema.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { fixturePath } from '../../support/fixtures.js';
import { eventually, startApiServerOnlyTestCluster } from '../../support/cluster.js';
import { SharedInformerFactory } from '../../../src/runtime/cache/informer-factory.js';
import { createUpdateStatusController } from '../../../src/updatestatus/controller.js';
import { installUpdateStatusCrd, UpdateStatuses } from '../../../src/updatestatus/api/install.js';
import { captureCommandIO } from '../../support/command-io.js';
import { createSnapshotObjects, liveStatusOptions } from '../../support/updatestatus.js';
import { FakeClock } from '../../../src/runtime/testing/index.js';

const fixtures = fixturePath('oc-upgrade-status');
// A case without alerts or an MCO deployment; this cluster serves no alerts (every oc example runs live, with
// alerts, in examples-live.test.ts).
const CASE = '4.15.0-ec2-early';

/** `kind/name@resourceVersion` of every object the controller reads: equal lists mean no input changed. */
async function inputVersions(client: KubeClient): Promise<string[]> {
  const versions: string[] = [];
  for (const type of [ClusterVersions, ClusterOperators, MachineConfigPools, MachineConfigs, Nodes]) {
    for (const o of (await new ResourceClient<KubeObject>(client, type).list()).items)
      versions.push(`${type.kind}/${o.metadata?.name}@${o.metadata?.resourceVersion}`);
  }
  return versions.sort();
}

describe(`upgrade status on a live cluster`, () => {
  let cluster: DevCluster;
  let now: bigint;

  beforeAll(async () => {
    // Only the API server: no kube-controller-manager, whose node lifecycle controller would mark these nodes
    // (which no kubelet renews) not ready after ~40 s, changing the controller's inputs in the middle of a test.
    cluster = await startApiServerOnlyTestCluster('updatestatus-live');
    const client = new KubeClient(await cluster.kubeConfig());
    try {
      await installOpenShiftDevCrds(client);
      const { snapshot } = await loadSnapshot(path.join(fixtures, `${CASE}-cv.yaml`));
      now = snapshotNow(snapshot);
      await createSnapshotObjects(client, snapshot);
    } finally {
      await client.close();
    }
  });

  afterAll(async () => {
    await cluster?.stop({ wipe: true });
  });

  it('prints what oc printed for the same cluster state', async () => {
    const io = captureCommandIO();
    const opts = liveStatusOptions(cluster.kubeconfigPath, { details: 'none', now, source: 'cluster' });
    expect(await runUpgradeStatus(opts, io)).toBe(0);
    // This cluster serves no alerts (no thanos-querier Route): oc's notice first, then what oc printed.
    const notice =
      "Unable to fetch alerts, ignoring alerts in 'Update Health':  failed to get alerts from Thanos: " +
      'routes.route.openshift.io "thanos-querier" not found\n';
    expect(io.stdout()).toBe(notice + readFileSync(path.join(fixtures, `${CASE}.output`), 'utf8'));

    const detailed = captureCommandIO();
    await runUpgradeStatus({ ...opts, details: 'all' }, detailed);
    expect(detailed.stdout()).toBe(
      notice + readFileSync(path.join(fixtures, `${CASE}.detailed-output`), 'utf8'),
    );
  });

  it('prints the UpdateStatus object with -o json when no controller runs', async () => {
    const io = captureCommandIO();
    await runUpgradeStatus(
      {
        details: 'none',
        now,
        mockClusterVersion: undefined,
        output: 'json',
        watch: false,
        intervalMs: 1000,
        kubeconfig: cluster.kubeconfigPath,
        source: 'auto',
      },
      io,
    );
    const obj = JSON.parse(io.stdout()) as UpdateStatus;
    expect(obj.kind).toBe('UpdateStatus');
    const cv = obj.status?.controlPlane?.informers?.[0]?.insights?.find((i) => i.uid === 'cv-version');
    expect(cv?.insight.clusterVersion?.versions.target.version).toBe('4.15.0-ec.2');
    expect(obj.status?.workerPools?.map((p) => p.name)).toEqual(['worker']);
  });

  it('controller: one write per change, at most one per minWriteIntervalMs, none on resyncs alone', async () => {
    const client = new KubeClient(await cluster.kubeConfig());
    const stop = new AbortController();
    // Seven informers and the controller listen on this one signal.
    setMaxListeners(32, stop.signal);
    const running: Promise<void>[] = [];
    // The controller's time (write throttling, resyncs, assessment "now") moves only when the test says so; the
    // informers watch the real API server on real time. It starts at the snapshot's "now".
    const clock = new FakeClock(Number(now / MILLISECOND));
    const MIN_WRITE_MS = 1_000;
    const RESYNC_MS = 30_000;
    try {
      await installUpdateStatusCrd(client);
      const informers = new SharedInformerFactory({ client });
      const { controller, stats } = createUpdateStatusController({
        client,
        informers,
        minWriteIntervalMs: MIN_WRITE_MS,
        resyncMs: RESYNC_MS,
        clock,
      });
      running.push(informers.start(stop.signal), controller.start(stop.signal));
      const statuses = new ResourceClient<UpdateStatus & KubeObject>(client, UpdateStatuses);
      // The controller's own caches (the factory hands out one informer per resource).
      const cachedStatus = informers.informerFor<UpdateStatus & KubeObject>({ type: UpdateStatuses });
      const cachedNodes = informers.informerFor<KubeObject>({ type: Nodes });
      const read = () => statuses.get({ name: 'cluster' });
      /** Waits until the controller's cache holds the stored UpdateStatus (its next write will not conflict). */
      const cacheCaughtUp = async () => {
        const stored = await read();
        await eventually(
          async () => {
            const cached = cachedStatus.getIndexer().list()[0];
            if (cached?.metadata?.resourceVersion !== stored.metadata?.resourceVersion)
              throw new Error(`cache at ${cached?.metadata?.resourceVersion}`);
          },
          { timeoutMs: 30_000, what: `the UpdateStatus cache to reach ${stored.metadata?.resourceVersion}` },
        );
        return stored;
      };
      const until = (what: string, ok: () => boolean) =>
        eventually(
          async () => {
            if (!ok()) throw new Error(JSON.stringify(stats));
          },
          { timeoutMs: 30_000, intervalMs: 20, what },
        );
      const nodeInsight = (obj: UpdateStatus, name: string) =>
        obj.status?.workerPools
          ?.find((p) => p.name === 'worker')
          ?.informers?.[0]?.insights?.find((i) => i.insight.node?.name === name)?.insight.node;
      const available = (obj: UpdateStatus, name: string) =>
        nodeInsight(obj, name)?.conditions?.find((c) => c.type === 'Available')?.status;

      // The first reconcile writes at once (nothing was written before).
      const first = await eventually(
        async () => {
          const obj = await read();
          const ok = obj.status?.conditions?.find((c) => c.type === 'Healthy');
          if (ok?.status !== 'True') throw new Error(`not healthy yet: ${JSON.stringify(ok)}`);
          return obj;
        },
        { timeoutMs: 30_000, what: 'UpdateStatus cluster with Healthy=True' },
      );
      const workerPool = first.status?.workerPools?.find((p) => p.name === 'worker');
      const workerNodes = (workerPool?.informers?.[0]?.insights ?? []).flatMap((i) =>
        i.insight.node ? [i.insight.node.name] : [],
      );
      expect(workerNodes.length).toBeGreaterThan(1);
      // At start each of Tessera's informers wrote its insights once, and the aggregator the aggregate once.
      await until('the start-up writes to be counted', () => stats.writes >= 3);
      expect(stats.writesBy).toEqual({ cpi: 1, nodes: 1, aggregate: 1 });
      await cacheCaughtUp();
      expect(stats.writes).toBe(3);

      // The CLI now prints the controller's object.
      const io = captureCommandIO();
      await runUpgradeStatus(
        {
          details: 'none',
          now,
          mockClusterVersion: undefined,
          output: 'json',
          watch: false,
          intervalMs: 1000,
          kubeconfig: cluster.kubeconfigPath,
          source: 'auto',
        },
        io,
      );
      expect((JSON.parse(io.stdout()) as UpdateStatus).status?.conditions?.[0]?.type).toBe('Healthy');
      // And its text, read back from that object.
      // The CLI judges the informers' heartbeats by its clock: here the controller's (by the wall clock they would
      // be years old, and their insights stale).
      const text = { ...captureCommandIO(), clock: () => BigInt(clock.now()) * MILLISECOND };
      await runUpgradeStatus(
        liveStatusOptions(cluster.kubeconfigPath, { details: 'none', source: 'updatestatus' }),
        text,
      );
      expect(text.stdout()).toMatch(/^= Control Plane =\nAssessment: +\S/);
      expect(text.stdout()).toContain('\n= Worker Upgrade =\n');

      // Nothing changes for a resync period: the controller looks again and writes nothing.
      const inputsBefore = await inputVersions(client);
      let reconciles = stats.reconciles;
      await clock.advance(RESYNC_MS);
      await until('a reconcile in the resync period', () => stats.reconciles > reconciles);
      expect(stats.writes).toBe(3);
      expect((await read()).metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
      // At the heartbeat interval each informer renews its heartbeat, and nothing else: same insights, and the
      // aggregate, unchanged, is not written again.
      await clock.advance(RESYNC_MS);
      await until('the heartbeats to be counted', () => stats.writes >= 5);
      const renewed = await cacheCaughtUp();
      expect(stats.writesBy).toEqual({ cpi: 2, nodes: 2, aggregate: 1 });
      expect(renewed.status?.informers?.map((r) => [r.name, r.heartbeatTime])).toEqual(
        ['cpi', 'nodes'].map((name) => [name, new Date(clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z')]),
      );
      expect(renewed.status?.workerPools).toEqual(first.status?.workerPools);
      expect(renewed.status?.controlPlane).toEqual(first.status?.controlPlane);
      reconciles = stats.reconciles;
      await clock.advance(RESYNC_MS);
      await until('a reconcile after the heartbeats', () => stats.reconciles > reconciles);
      expect(stats.writes).toBe(5);
      // The premise: nothing else changed the controller's inputs meanwhile.
      expect(await inputVersions(client)).toEqual(inputsBefore);
      const quiet = { writes: stats.writes, nodes: stats.writesBy.nodes, cpi: stats.writesBy.cpi };
      expect(quiet.writes).toBe(5);

      // A worker node starts rebooting into a new config: one write follows at once (the last write is older
      // than the interval), and its echo brings no second one.
      const nodes = new ResourceClient<KubeObject>(client, Nodes);
      const rebooting = {
        metadata: {
          annotations: {
            'machineconfiguration.openshift.io/state': 'Rebooting',
            'machineconfiguration.openshift.io/desiredConfig': 'rendered-worker-new-for-test',
          },
        },
      };
      const [nodeA = '', nodeB = ''] = workerNodes;
      await nodes.mergePatch({ name: nodeA }, rebooting);
      const afterA = await eventually(
        async () => {
          const obj = await read();
          // Its daemon now works towards a config other than the current one: the node is unavailable meanwhile.
          if (available(obj, nodeA) !== 'False')
            throw new Error(`node insight not updated: ${JSON.stringify(nodeInsight(obj, nodeA))}`);
          return obj;
        },
        { timeoutMs: 30_000, what: 'node insight to follow the node' },
      );
      expect(nodeInsight(afterA, nodeA)?.message).toBe('Machine Config Daemon is processing the node');
      // The API server may answer the read before the controller has counted its write (it counts once the
      // write's answer arrives): wait for the count, then check it is exactly one.
      await until('the write to be counted', () => stats.writesBy.nodes >= quiet.nodes + 1);
      // One write of the node informer; the control-plane informer had nothing new (the aggregator writes too
      // when the pool's Updating condition changed).
      expect(stats.writesBy.nodes).toBe(quiet.nodes + 1);
      expect(stats.writesBy.cpi).toBe(quiet.cpi);
      await cacheCaughtUp();
      const settled = stats.throttled;
      const afterFirst = stats.writesBy.nodes;

      // A second node changes within the write interval: the controller sees it and waits...
      await nodes.mergePatch({ name: nodeB }, rebooting);
      await until('the controller to put off the second change', () => stats.throttled > settled);
      expect(
        cachedNodes.getIndexer().get(nodeB)?.metadata?.annotations?.[
          'machineconfiguration.openshift.io/state'
        ],
      ).toBe('Rebooting');
      expect(stats.writesBy.nodes).toBe(afterFirst);
      expect(available(await read(), nodeB)).toBe('True');
      // ...until the interval has passed; then it writes once.
      await clock.advance(MIN_WRITE_MS);
      await eventually(
        async () => {
          if (available(await read(), nodeB) !== 'False') throw new Error('second node not shown yet');
        },
        { timeoutMs: 30_000, what: 'the second node change to be written' },
      );
      await until('the second write to be counted', () => stats.writesBy.nodes >= quiet.nodes + 2);
      expect(stats.writesBy.nodes).toBe(quiet.nodes + 2);
    } finally {
      stop.abort();
      await Promise.all(running);
      await client.close();
    }
  });
});
