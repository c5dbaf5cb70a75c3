// `tessera upgrade status` against a real API server: a snapshot case loaded into a private cluster (stand-in
// OpenShift CRDs, real Node objects) reads back exactly as oc printed it, and -o json gives the UpdateStatus.
// Then the controller fills the UpdateStatus `cluster`, follows a node change, and stops writing when nothing
// changes.
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
import { type CommandIO, runUpgradeStatus } from '../../../src/updatestatus/command.js';
import {
  ClusterOperators,
  ClusterVersions,
  MachineConfigPools,
  MachineConfigs,
  installOpenShiftDevCrds,
} from '../../../src/updatestatus/devcrds.js';
import type { UpdateStatus } from '../../../src/updatestatus/api/schema.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { sharedPath } from '../../support/fixtures.js';
import { eventually, startTestCluster } from '../../support/cluster.js';
import { SharedInformerFactory } from '../../../src/runtime/cache/informer-factory.js';
import { createUpdateStatusController } from '../../../src/updatestatus/controller.js';
import { installUpdateStatusCrd, UpdateStatuses } from '../../../src/updatestatus/api/install.js';

const fixtures = sharedPath('fixtures/oc-upgrade-status');
// A case without alerts or an MCO deployment: the live command reads neither from this cluster.
const CASE = '4.15.0-ec2-early';

/** Keeps what the API server accepts on create: no server-set metadata. */
function fresh<T extends KubeObject>(obj: T): T {
  const m = obj.metadata ?? {};
  return { ...obj, metadata: { name: m.name, labels: m.labels, annotations: m.annotations } } as T;
}

/** The stand-in CRDs keep unknown fields, including status, so these objects are created as they are. */

/** Paths whose values differ, to say what a write changed. */
function changedPaths(a: unknown, b: unknown, at = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null)
    return [`${at}: ${JSON.stringify(a)} -> ${JSON.stringify(b)}`];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) =>
    changedPaths((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}.${k}`),
  );
}

function captureIO(): CommandIO & { stdout: () => string } {
  let out = '';
  return {
    out: (t) => {
      out += t;
    },
    err: () => undefined,
    clock: () => 0n,
    sleep: async () => undefined,
    signal: new AbortController().signal,
    stdout: () => out,
  };
}

describe.skipIf(!fixtures.path)(`upgrade status on a live cluster ${fixtures.skipReason ?? ''}`, () => {
  let cluster: DevCluster;
  let now: bigint;

  beforeAll(async () => {
    cluster = await startTestCluster({ name: 'updatestatus-live', nodes: 'none' });
    const client = new KubeClient(await cluster.kubeConfig());
    try {
      await installOpenShiftDevCrds(client);
      const { snapshot } = await loadSnapshot(path.join(fixtures.path ?? '', `${CASE}-cv.yaml`));
      now = snapshotNow(snapshot);
      const create = async <T extends KubeObject>(rc: ResourceClient<T>, objs: readonly T[]) => {
        for (const o of objs) await rc.create(fresh(o));
      };
      await create(new ResourceClient(client, ClusterVersions), [snapshot.clusterVersion as KubeObject]);
      await create(new ResourceClient(client, ClusterOperators), snapshot.clusterOperators as KubeObject[]);
      await create(
        new ResourceClient(client, MachineConfigPools),
        snapshot.machineConfigPools as KubeObject[],
      );
      await create(new ResourceClient(client, MachineConfigs), snapshot.machineConfigs as KubeObject[]);
      const nodes = new ResourceClient<KubeObject & { status?: unknown; spec?: unknown }>(client, Nodes);
      for (const node of snapshot.nodes) {
        await nodes.create({ ...fresh(node as KubeObject), spec: node.spec ?? {} });
        // Node controllers touch new nodes at once; a merge patch needs no resourceVersion.
        await nodes.mergePatch(
          { name: node.metadata?.name ?? '' },
          { status: node.status },
          { subresource: 'status' },
        );
      }
    } finally {
      await client.close();
    }
  });

  afterAll(async () => {
    await cluster?.stop({ wipe: true });
  });

  it('prints what oc printed for the same cluster state', async () => {
    const io = captureIO();
    const opts = {
      details: 'none' as const,
      now,
      mockClusterVersion: undefined,
      output: 'text' as const,
      watch: false,
      intervalMs: 1000,
      kubeconfig: cluster.kubeconfigPath,
      source: 'cluster' as const,
    };
    expect(await runUpgradeStatus(opts, io)).toBe(0);
    expect(io.stdout()).toBe(readFileSync(path.join(fixtures.path ?? '', `${CASE}.output`), 'utf8'));

    const detailed = captureIO();
    await runUpgradeStatus({ ...opts, details: 'all' }, detailed);
    expect(detailed.stdout()).toBe(
      readFileSync(path.join(fixtures.path ?? '', `${CASE}.detailed-output`), 'utf8'),
    );
  });

  it('prints the UpdateStatus object with -o json when no controller runs', async () => {
    const io = captureIO();
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

  it('controller: fills UpdateStatus, follows a node change with few writes, then stays quiet', async () => {
    const client = new KubeClient(await cluster.kubeConfig());
    const stop = new AbortController();
    // Seven informers and the controller listen on this one signal.
    setMaxListeners(32, stop.signal);
    const running: Promise<void>[] = [];
    try {
      await installUpdateStatusCrd(client);
      const informers = new SharedInformerFactory({ client });
      const { controller, stats } = createUpdateStatusController({
        client,
        informers,
        minWriteIntervalMs: 1_000,
      });
      running.push(informers.start(stop.signal), controller.start(stop.signal));
      const statuses = new ResourceClient<UpdateStatus & KubeObject>(client, UpdateStatuses);

      const first = await eventually(
        async () => {
          const obj = await statuses.get({ name: 'cluster' });
          const ok = obj.status?.conditions?.find((c) => c.type === 'Healthy');
          if (ok?.status !== 'True') throw new Error(`not healthy yet: ${JSON.stringify(ok)}`);
          return obj;
        },
        { timeoutMs: 30_000, what: 'UpdateStatus cluster with Healthy=True' },
      );
      const workerPool = first.status?.workerPools?.find((p) => p.name === 'worker');
      expect(workerPool?.informers?.[0]?.insights?.length).toBeGreaterThan(1);

      // The CLI now prints the controller's object.
      const io = captureIO();
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
      const text = captureIO();
      await runUpgradeStatus(
        {
          details: 'none',
          now: undefined,
          mockClusterVersion: undefined,
          output: 'text',
          watch: false,
          intervalMs: 1000,
          kubeconfig: cluster.kubeconfigPath,
          source: 'updatestatus',
        },
        text,
      );
      expect(text.stdout()).toMatch(/^= Control Plane =\nAssessment: +\S/);
      expect(text.stdout()).toContain('\n= Worker Upgrade =\n');

      // A worker node starts rebooting into the new config: its insight follows.
      const nodes = new ResourceClient<KubeObject>(client, Nodes);
      const nodeInsight = workerPool?.informers?.[0]?.insights?.find((i) => i.insight.type === 'Node');
      const nodeName = nodeInsight?.insight.node?.name ?? '';
      const writesBefore = stats.writes;
      await nodes.mergePatch(
        { name: nodeName },
        {
          metadata: {
            annotations: {
              'machineconfiguration.openshift.io/state': 'Rebooting',
              'machineconfiguration.openshift.io/desiredConfig': 'rendered-worker-new-for-test',
            },
          },
        },
      );
      await eventually(
        async () => {
          const obj = await statuses.get({ name: 'cluster' });
          const insight = obj.status?.workerPools
            ?.find((p) => p.name === 'worker')
            ?.informers?.[0]?.insights?.find((i) => i.insight.node?.name === nodeName);
          // Its daemon now works towards a config other than the current one: the node is unavailable meanwhile.
          const available = insight?.insight.node?.conditions?.find((c) => c.type === 'Available');
          if (available?.status !== 'False')
            throw new Error(`node insight not updated: ${JSON.stringify(available)}`);
          expect(insight?.insight.node?.message).toBe('Machine Config Daemon is processing the node');
        },
        { timeoutMs: 10_000, what: 'node insight to follow the node' },
      );
      expect(stats.writes - writesBefore).toBeLessThanOrEqual(2);

      // Nothing changes for 2.5 s: no writes.
      const settled = stats.writes;
      const before = await statuses.get({ name: 'cluster' });
      await new Promise((r) => setTimeout(r, 2_500));
      const after = await statuses.get({ name: 'cluster' });
      expect(changedPaths(before.status, after.status)).toEqual([]);
      expect(stats.writes).toBe(settled);
    } finally {
      stop.abort();
      await Promise.all(running);
      await client.close();
    }
  });
});
