// MachineConfigNodes on a real API server. The cluster first serves none (an OpenShift before 4.19): the
// controller's caches sync all the same (its MachineConfigNode informer is synced and empty), it writes the
// UpdateStatus, and the CLI prints what oc printed. Then the cluster starts serving them, as an update to 4.19
// does, and they are written as the MCO would: the CLI still prints what oc printed, and once one says what only
// it can (the drain controller done draining a node, before it writes lastAppliedDrain), the controller, which
// picked the new resource up without a restart, and the CLI both show that node as Updating.
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { SharedInformerFactory } from '../../../src/runtime/cache/informer-factory.js';
import { KubeClient } from '../../../src/runtime/client.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import {
  ClusterOperators,
  ClusterVersions,
  MachineConfigNodes,
  MachineConfigPools,
  MachineConfigs,
  Routes,
  installOpenShiftDevCrds,
} from '../../../src/updatestatus/api/dev-crds.js';
import { installUpdateStatusCrd } from '../../../src/updatestatus/api/install.js';
import { snapshotNow } from '../../../src/updatestatus/assess.js';
import { type UpgradeStatusOptions, runUpgradeStatus } from '../../../src/updatestatus/command.js';
import { createUpdateStatusController } from '../../../src/updatestatus/controller.js';
import type { ClusterSnapshot } from '../../../src/updatestatus/inputs.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { eventually, startApiServerOnlyTestCluster } from '../../support/cluster.js';
import { captureCommandIO } from '../../support/command-io.js';
import { fixturePath } from '../../support/fixtures.js';
import { machineConfigNodeOf } from '../../support/machineconfignodes.js';
import { createSnapshotObjects, liveStatusOptions } from '../../support/updatestatus.js';

const fixtures = fixturePath('oc-upgrade-status');
// 59 workers mid-update, 12 of them draining (7 for over an hour); no alerts or MCO Deployment files.
const CASE = '4.16.0-ec2-control-plane-updated-pdb-prohibits-draining';
/** Draining by its annotations (drain requested, not applied), the daemon Working. */
const NODE = 'build0-gstfj-ci-tests-worker-c-2kz4m';
const NO_ROUTE_NOTICE =
  "Unable to fetch alerts, ignoring alerts in 'Update Health':  failed to get alerts from Thanos: " +
  'routes.route.openshift.io "thanos-querier" not found\n';

describe('MachineConfigNodes, not served and then served, live', () => {
  let cluster: DevCluster;
  let snapshot: ClusterSnapshot;

  beforeAll(async () => {
    // Only the API server: no node lifecycle controller to mark these kubelet-less nodes not ready.
    cluster = await startApiServerOnlyTestCluster('updatestatus-mcn');
    const client = new KubeClient(await cluster.kubeConfig());
    try {
      await installOpenShiftDevCrds(client, {
        types: [ClusterVersions, ClusterOperators, MachineConfigPools, MachineConfigs, Routes],
      });
      snapshot = (await loadSnapshot(path.join(fixtures, `${CASE}-cv.yaml`))).snapshot;
      await createSnapshotObjects(client, snapshot);
    } finally {
      await client.close();
    }
  });

  afterAll(async () => {
    await cluster?.stop({ wipe: true });
  });

  it('the controller and the CLI read them once served, and give what oc gives where both apply', async () => {
    const client = new KubeClient(await cluster.kubeConfig());
    const stop = new AbortController();
    setMaxListeners(32, stop.signal);
    const running: Promise<void>[] = [];
    const now = snapshotNow(snapshot);
    const opts: UpgradeStatusOptions = liveStatusOptions(cluster.kubeconfigPath, {
      details: 'nodes',
      now,
      source: 'cluster',
    });
    const cli = async (source: UpgradeStatusOptions['source']) => {
      const io = captureCommandIO();
      expect(await runUpgradeStatus({ ...opts, source }, io)).toBe(0);
      return io.stdout();
    };
    const nodeLine = (phase: string) => new RegExp(`^${NODE} +Progressing +${phase} `, 'm');
    const ocOutput = (details: 'none' | 'all') =>
      NO_ROUTE_NOTICE +
      readFileSync(
        path.join(fixtures, `${CASE}${details === 'all' ? '.detailed-output' : '.output'}`),
        'utf8',
      );
    try {
      await installUpdateStatusCrd(client);
      const informers = new SharedInformerFactory({ client });
      const { controller } = createUpdateStatusController({ client, informers, minWriteIntervalMs: 200 });
      running.push(informers.start(stop.signal), controller.start(stop.signal));

      // Not served: every cache syncs (what /readyz and leader election wait for), and the controller writes.
      expect(
        await informers.waitForCacheSync(AbortSignal.any([stop.signal, AbortSignal.timeout(30_000)])),
      ).toBe(true);
      await eventually(async () => expect(await cli('updatestatus')).toMatch(nodeLine('Draining')), {
        timeoutMs: 30_000,
        what: 'the UpdateStatus showing the node draining',
      });
      const asOc = async () => {
        for (const details of ['none', 'all'] as const) {
          const io = captureCommandIO();
          expect(await runUpgradeStatus({ ...opts, details, source: 'cluster' }, io)).toBe(0);
          expect(io.stdout()).toBe(ocOutput(details));
        }
      };
      await asOc();

      // Served, with what the MCO writes: the same report as oc's, from both sources.
      await installOpenShiftDevCrds(client, { types: [MachineConfigNodes] });
      const mcns = new ResourceClient<KubeObject>(client, MachineConfigNodes);
      for (const node of snapshot.nodes) await mcns.create(machineConfigNodeOf(node) as KubeObject);
      await asOc();

      // The drain controller has reported the drain done (Drained True) and not yet written lastAppliedDrain.
      const drained = machineConfigNodeOf(snapshot.nodes.find((n) => n.metadata?.name === NODE) ?? {});
      await mcns.apply(
        {
          ...drained,
          status: {
            ...drained.status,
            conditions: drained.status?.conditions?.map((c) =>
              c.type === 'Drained' ? { ...c, status: 'True' } : c,
            ),
          },
        } as KubeObject,
        { fieldManager: 'machine-config-operator', force: true },
      );
      expect(await cli('cluster')).toMatch(nodeLine('Updating'));
      await eventually(async () => expect(await cli('updatestatus')).toMatch(nodeLine('Updating')), {
        // An optional informer looks again for a resource that is not served with backoff (up to 60 s).
        timeoutMs: 120_000,
        what: 'the controller to pick the MachineConfigNodes up and show the node updating',
      });
    } finally {
      stop.abort();
      await Promise.all(running);
      await client.close();
    }
  }, 240_000);
});
