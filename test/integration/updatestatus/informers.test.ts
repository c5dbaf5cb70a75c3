// The UpdateStatus informer contract on a real API server, with three informers writing at once: Tessera's update
// status controller (its control-plane and node informers, and the aggregator), pod placement's informer (as the
// operator runs it, fed by its failure window as the pod reconciler feeds it), and an external component written
// by this test with its own field manager. Each one's server-side applies leave the others' entries intact; the
// aggregate and `tessera upgrade status` reflect all three; an informer that stops is marked stale, then removed;
// and a misbehaving informer (too many insights, too many bytes) is contained without losing the others'.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { KubeClient } from '../../../src/runtime/client.js';
import { Manager } from '../../../src/runtime/manager.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { ApiStatusError } from '../../../src/runtime/errors.js';
import { installOpenShiftDevCrds } from '../../../src/updatestatus/api/dev-crds.js';
import { UpdateStatuses, installUpdateStatusCrd } from '../../../src/updatestatus/api/install.js';
import type { ControlPlaneInsight, UpdateStatus } from '../../../src/updatestatus/api/schema.js';
import { INFORMERS_REPORTING } from '../../../src/updatestatus/api/aggregate.js';
import { runUpgradeStatus } from '../../../src/updatestatus/command.js';
import { addUpdateStatusController } from '../../../src/updatestatus/runnable.js';
import {
  WRITE_TURN_LEASE,
  WRITE_TURN_NAMESPACE,
  WriteTurn,
  applyCreatingObject,
} from '../../../src/updatestatus/informer.js';
import type { Lease } from '../../../src/runtime/leader-election.js';
import { Leases, Namespaces } from '../../../src/runtime/resources.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { gatedPodInformer } from '../../../src/podplacement/operator/pod-controller.js';
import { addPodPlacementUpdateInsights } from '../../../src/podplacement/update-insights.js';
import { captureCommandIO } from '../../support/command-io.js';
import { eventually, startApiServerOnlyTestCluster } from '../../support/cluster.js';
import { fixturePath } from '../../support/fixtures.js';
import { createSnapshotObjects, liveStatusOptions } from '../../support/updatestatus.js';

type Stored = UpdateStatus & KubeObject;
const EXTERNAL = 'updatestatus-informer-external';
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

// oc shows only complete insights: a summary, a description and a reference.
function health(summary: string, description = 'Details of the finding.'): ControlPlaneInsight {
  return {
    type: 'Health',
    health: {
      startedAt: iso(Date.now() - 60_000),
      scope: { type: 'ControlPlane', resources: [] },
      impact: {
        level: 'Warning',
        type: 'Update Speed',
        summary,
        description,
      },
      remediation: { reference: 'https://example.com/runbooks/external' },
    },
  };
}

/** What an external informer applies: its registration and control-plane insights. */
function externalBody(heartbeatMs: number, insights: ControlPlaneInsight[]): Stored {
  return {
    apiVersion: 'update.openshift.io/v1alpha1',
    kind: 'UpdateStatus',
    metadata: { name: 'cluster' },
    spec: {},
    status: {
      informers: [{ name: 'external', heartbeatTime: iso(heartbeatMs) }],
      controlPlane: {
        informers: [
          {
            name: 'external',
            insights: insights.map((insight, i) => ({
              uid: `ext-${i}`,
              acquiredAt: iso(heartbeatMs),
              insight,
            })),
          },
        ],
      },
    },
  };
}

describe('UpdateStatus informers on a live cluster', () => {
  let cluster: DevCluster;
  let client: KubeClient;
  let statuses: ResourceClient<Stored>;
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let recordFailure: (image: string, namespace: string, error: string) => void = () => {};

  const read = () => statuses.get({ name: 'cluster' });
  let externalTurn: WriteTurn | undefined;
  // As an external component following the contract would: the contract's client creates the object if needed,
  // in a write turn taken with the UpdateStatus's other writers.
  const applyExternal = (body: Stored) =>
    (externalTurn ??= WriteTurn.forClient(client, 'external')).run(() =>
      applyCreatingObject(statuses, body, EXTERNAL),
    );
  const informersIn = (s: Stored) => (s.status?.controlPlane?.informers ?? []).map((i) => i.name).sort();
  const reporting = (s: Stored) => s.status?.conditions?.find((c) => c.type === INFORMERS_REPORTING);
  const upgradeStatus = async () => {
    const io = captureCommandIO();
    const code = await runUpgradeStatus(
      liveStatusOptions(cluster.kubeconfigPath, { details: 'health', source: 'updatestatus' }),
      io,
    );
    expect(code).toBe(0);
    return io.stdout();
  };

  beforeAll(async () => {
    cluster = await startApiServerOnlyTestCluster('updatestatus-informers');
    client = new KubeClient(await cluster.kubeConfig());
    statuses = new ResourceClient<Stored>(client, UpdateStatuses);
    await installOpenShiftDevCrds(client);
    await installUpdateStatusCrd(client);
    // The update status controller's namespace, as deploy/updatestatus creates it: the writers' turns are taken there.
    await new ResourceClient<KubeObject>(client, Namespaces).create({
      metadata: { name: WRITE_TURN_NAMESPACE },
    });
    // A cluster in the middle of an update, so `upgrade status` prints its Update Health section.
    const { snapshot } = await loadSnapshot(
      path.join(fixturePath('oc-upgrade-status'), '4.15.0-ec2-early-cv.yaml'),
    );
    await createSnapshotObjects(client, snapshot);

    // What the controller of before the informer contract left: a status written by PUT under its field manager,
    // here with a finding no informer reports any more. The new controller must clear it, not keep it forever.
    const legacy = await statuses.create({ metadata: { name: 'cluster' }, spec: {} } as Stored);
    await statuses.updateStatus(
      {
        ...legacy,
        status: {
          controlPlane: {
            informers: [
              {
                name: 'cpi',
                insights: [
                  {
                    uid: 'pre-contract',
                    acquiredAt: iso(Date.now()),
                    insight: health('Finding gone long ago'),
                  },
                ],
              },
            ],
          },
        },
      },
      { fieldManager: 'tessera-updatestatus' },
    );

    const manager = new Manager({
      kubeConfig: await cluster.kubeConfig(),
      name: 'it-informers',
      probes: false,
      leaderElection: false,
      handleSignals: false,
    });
    addUpdateStatusController(manager, { minWriteIntervalMs: 100 });
    const failures = addPodPlacementUpdateInsights(manager, gatedPodInformer(manager.informers), () => []);
    recordFailure = (image, namespace, error) => failures.record({ image, namespace, error });
    running = manager.start(stop.signal);
    // The new controller clears the pre-contract status once, then its informers write theirs (any other informer
    // writes again by its next heartbeat): wait for that before the other informers come in.
    await eventually(
      async () => {
        const s = await read();
        expect(s.status?.informers?.map((r) => r.name)).toContain('cpi');
        const cpi = s.status?.controlPlane?.informers?.find((i) => i.name === 'cpi');
        expect(cpi?.insights?.map((i) => i.uid)).not.toContain('pre-contract');
      },
      { timeoutMs: 60_000, what: 'the pre-contract status to be cleared and rewritten' },
    );
  });

  afterAll(async () => {
    stop.abort();
    await running;
    await client?.close();
    await cluster?.stop({ wipe: true });
  });

  it('merges three informers, each keeping its own entries, into one aggregate and one CLI view', async () => {
    recordFailure('quay.io/tenant/app:1', 'shop', 'unauthorized: authentication required');
    await applyExternal(externalBody(Date.now(), [health('External finding: storage is slow')]));

    const merged = await eventually(
      async () => {
        const s = await read();
        expect(informersIn(s)).toEqual(['cpi', 'external', 'nodes', 'podplacement']);
        expect(s.status?.informers?.map((r) => r.name).sort()).toEqual([
          'cpi',
          'external',
          'nodes',
          'podplacement',
        ]);
        expect(reporting(s)).toMatchObject({ status: 'True', message: '4 informers report' });
        return s;
      },
      { timeoutMs: 60_000, what: 'all three informers in the UpdateStatus' },
    );
    // The pre-contract status was cleared: its finding is gone, and no Update-operation owner is left.
    const cpi = merged.status?.controlPlane?.informers?.find((i) => i.name === 'cpi');
    expect(cpi?.insights?.map((i) => i.uid)).not.toContain('pre-contract');
    const owners = (merged.metadata as { managedFields?: { manager: string; operation: string }[] })
      .managedFields;
    expect(owners?.filter((f) => f.manager === 'tessera-updatestatus').map((f) => f.operation)).toEqual([
      'Apply',
    ]);
    // (The control plane's nodes are the node informer's.) The aggregate (the controller's field manager) sits beside the informers' entries.
    expect(merged.status?.controlPlane?.conditions?.[0]?.type).toBe('Updating');
    expect(merged.status?.workerPools?.map((p) => p.name)).toEqual(['worker']);
    const managers = (merged.metadata as { managedFields?: { manager: string }[] }).managedFields?.map(
      (f) => f.manager,
    );
    expect(managers).toEqual(
      expect.arrayContaining([
        EXTERNAL,
        'updatestatus-informer-cpi',
        'updatestatus-informer-nodes',
        'updatestatus-informer-podplacement',
        'tessera-updatestatus',
      ]),
    );

    // The CLI shows everyone's health insights.
    const text = await upgradeStatus();
    expect(text).toContain('= Update Health =');
    expect(text).toMatch(
      /Pod placement cannot inspect images from quay\.io \(1 failure since \d\d:\d\d UTC\)/,
    );
    expect(text).toContain('External finding: storage is slow');

    // A new write of pod placement (a second registry fails) leaves the others' entries intact, and the
    // external informer's re-apply leaves pod placement's.
    recordFailure('registry.example.com/app:2', 'batch', 'connection refused');
    await eventually(
      async () => {
        const s = await read();
        const pp = s.status?.controlPlane?.informers?.find((i) => i.name === 'podplacement');
        expect(pp?.insights).toHaveLength(2);
        expect(informersIn(s)).toEqual(['cpi', 'external', 'nodes', 'podplacement']);
      },
      { timeoutMs: 30_000, what: "pod placement's second insight" },
    );
    await applyExternal(
      externalBody(Date.now(), [health('External finding: storage is slow'), health('Second finding')]),
    );
    const after = await read();
    expect(
      after.status?.controlPlane?.informers?.find((i) => i.name === 'podplacement')?.insights,
    ).toHaveLength(2);
    // Every writer took its turn for its writes, and gave it back after each.
    expect(externalTurn?.stats).toMatchObject({ taken: 2, without: 0 });
    await eventually(
      async () => {
        const turn = await new ResourceClient<Lease>(client, Leases).get({
          namespace: WRITE_TURN_NAMESPACE,
          name: WRITE_TURN_LEASE,
        });
        expect(turn.spec?.holderIdentity).toBe('');
        // Taken by the controller, pod placement and the external informer, each several times.
        expect(turn.spec?.leaseTransitions ?? 0).toBeGreaterThanOrEqual(4);
      },
      { timeoutMs: 30_000, what: 'the write turn given back' },
    );
    expect(
      after.status?.controlPlane?.informers?.find((i) => i.name === 'cpi')?.insights?.length,
    ).toBeGreaterThan(1);
  });

  it('marks an informer that stopped as stale, then removes it when it expires', async () => {
    // The external component's last heartbeat was 5 minutes ago: stale (after 3), not yet expired (after 60).
    const lastHeartbeat = Date.now() - 5 * 60_000;
    await applyExternal(externalBody(lastHeartbeat, [health('External finding: storage is slow')]));
    await eventually(
      async () => {
        const s = await read();
        expect(reporting(s)).toMatchObject({ status: 'False', reason: 'InformerStopped' });
        expect(reporting(s)?.message).toContain(
          `external (last heartbeat ${iso(lastHeartbeat)}; 1 insights left out)`,
        );
      },
      { timeoutMs: 30_000, what: 'the aggregate to name the stale informer' },
    );
    const text = await upgradeStatus();
    expect(text).toContain('Informer external has not reported for 5m; its insights are not shown');
    expect(text).not.toContain('External finding: storage is slow');
    expect(text).toContain('Pod placement cannot inspect images from quay.io');

    // An hour and more without a heartbeat: the aggregator removes its entries (registration included).
    await applyExternal(
      externalBody(Date.now() - 61 * 60_000, [health('External finding: storage is slow')]),
    );
    await eventually(
      async () => {
        const s = await read();
        expect(informersIn(s)).toEqual(['cpi', 'nodes', 'podplacement']);
        expect(s.status?.informers?.map((r) => r.name).sort()).toEqual(['cpi', 'nodes', 'podplacement']);
        // Named as removed for a while, so the removal is not silent.
        expect(reporting(s)?.message).toMatch(/external \(removed at \S+: no heartbeat for over an hour\)/);
      },
      { timeoutMs: 30_000, what: 'the expired informer to be removed' },
    );
  });

  it('contains a misbehaving informer: too many insights are refused, too many bytes removed', async () => {
    // 129 control-plane insights: the CRD refuses the whole apply; nothing of anyone else changes.
    const before = await read();
    const tooMany = Array.from({ length: 129 }, (_, i) => health(`finding ${i}`));
    const refused = await applyExternal(externalBody(Date.now(), tooMany)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiStatusError);
    expect((refused as ApiStatusError).statusCode).toBe(422);
    expect((refused as ApiStatusError).message).toMatch(/must have at most 128 items/);
    expect((await read()).status?.controlPlane).toEqual(before.status?.controlPlane);

    // 128 insights with 4 KiB descriptions (~560 KB): valid for the CRD, over an informer's 512 KiB budget.
    const large = Array.from({ length: 128 }, (_, i) => health(`large finding ${i}`, 'd'.repeat(4096)));
    await applyExternal(externalBody(Date.now(), large));
    await eventually(
      async () => {
        const s = await read();
        expect(informersIn(s)).toEqual(['cpi', 'nodes', 'podplacement']);
        expect(reporting(s)).toMatchObject({ status: 'False', reason: 'InformerOverBudget' });
        expect(reporting(s)?.message).toMatch(/external \(removed at \S+: over its budget\)/);
      },
      { timeoutMs: 30_000, what: 'the over-budget informer to be removed' },
    );
    // The others' insights are all still there, and the CLI still works from the UpdateStatus.
    const s = await read();
    expect(s.status?.controlPlane?.informers?.find((i) => i.name === 'podplacement')?.insights).toHaveLength(
      2,
    );
    expect(await upgradeStatus()).toContain('Pod placement cannot inspect images from registry.example.com');
  });
});
