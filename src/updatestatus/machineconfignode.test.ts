// MachineConfigNodes as an input: for each step of a node's update, as the machine-config operator reports it in
// both places (node annotations and MachineConfigNode, from the MCO's daemon and drain controller), the report
// is the same with and without the MachineConfigNode; a MachineConfigNode that is behind the annotations, or
// missing, leaves the annotations to decide; and where the two differ in the instant between the MCO's writes,
// the MachineConfigNode's drain report is the one used.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/fixtures.js';
import { machineConfigNode, machineConfigNodeOf } from '../../test/support/machineconfignodes.js';
import { assessUpdateStatus, snapshotNow } from './assess.js';
import { SnapshotError } from './errors.js';
import { HOUR, MINUTE, formatRFC3339, parseTime } from './gotime.js';
import type { ClusterSnapshot, MachineConfigNode, MachineConfigPool, Node } from './inputs.js';
import { Annotations, machineConfigNodeFieldsRead } from './nodestate.js';
import { renderUpdateStatus } from './render.js';
import { loadSnapshot, snapshotPaths } from './snapshot.js';
import { type NodeStatus, nodePhaseName } from './workerpool.js';

const T0 = parseTime('2024-01-01T10:00:00Z') ?? 0n;
const NOW = T0 + 20n * MINUTE;
const at = (offset: bigint) => formatRFC3339(T0 + offset);
const OLD = 'rendered-worker-old';
const NEW = 'rendered-worker-new';

function workerNode(
  name: string,
  annotations: Record<string, string>,
  opts: { unschedulable?: boolean } = {},
): Node {
  return {
    metadata: { name, labels: { 'node-role.kubernetes.io/worker': '' }, annotations },
    spec: { unschedulable: opts.unschedulable },
    status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at(0n) }] },
  };
}

const workerPool = (paused = false, config = NEW): MachineConfigPool => ({
  metadata: { name: 'worker' },
  spec: {
    paused,
    configuration: { name: config },
    nodeSelector: { matchLabels: { 'node-role.kubernetes.io/worker': '' } },
  },
});

/** A node of the pool that has not started, so that the cluster is updating and the node table is printed. */
const waiting = (): Node =>
  workerNode('worker-z', annotations(OLD, OLD, 'Done', `uncordon-${OLD}`, `uncordon-${OLD}`));

/** A cluster whose control plane is done and whose one worker pool updates from OLD to NEW. */
function cluster(
  nodes: readonly Node[],
  machineConfigNodes: readonly MachineConfigNode[] | undefined,
  pool = workerPool(),
): ClusterSnapshot {
  const condition = (type: string, status: string) => ({ type, status, lastTransitionTime: at(0n) });
  return {
    clusterVersion: {
      metadata: { name: 'version' },
      status: {
        desired: { version: '4.19.1' },
        history: [
          { state: 'Completed', startedTime: at(0n), completionTime: at(MINUTE), version: '4.19.1' },
          { state: 'Completed', startedTime: at(-MINUTE), completionTime: at(0n), version: '4.19.0' },
        ],
        conditions: [condition('Progressing', 'False'), condition('Failing', 'False')],
      },
    },
    clusterOperators: [
      {
        metadata: { name: 'machine-config' },
        status: {
          versions: [{ name: 'operator', version: '4.19.1' }],
          conditions: [condition('Available', 'True'), condition('Degraded', 'False')],
        },
      },
    ],
    machineConfigPools: [pool],
    machineConfigs: [
      { metadata: { name: OLD, annotations: { [Annotations.releaseImageVersion]: '4.19.0' } } },
      { metadata: { name: NEW, annotations: { [Annotations.releaseImageVersion]: '4.19.1' } } },
    ],
    nodes: [...nodes, waiting()],
    machineConfigNodes,
    mcoImagePullSpec: '',
  };
}

function report(snapshot: ClusterSnapshot): { text: string; node: NodeStatus | undefined } {
  const assessed = assessUpdateStatus(snapshot, NOW);
  return {
    text: renderUpdateStatus(assessed, 'all'),
    node: assessed.workerPools[0]?.nodes.find((n) => n.name === 'worker-a'),
  };
}

const annotations = (
  current: string,
  desired: string,
  state: string,
  desiredDrain: string,
  lastAppliedDrain: string,
  extra: Record<string, string> = {},
): Record<string, string> => ({
  [Annotations.currentConfig]: current,
  [Annotations.desiredConfig]: desired,
  [Annotations.state]: state,
  [Annotations.desiredDrain]: desiredDrain,
  [Annotations.lastAppliedDrain]: lastAppliedDrain,
  ...extra,
});

interface Step {
  readonly name: string;
  readonly node: Node;
  readonly mcn: MachineConfigNode;
  readonly pool?: MachineConfigPool;
  /** The PHASE and ASSESSMENT both give. */
  readonly phase: string;
  readonly assessment: string;
}

// Each step as the MCO leaves both records once its writes for that step are done (pkg/daemon, pkg/controller/
// drain, pkg/upgrademonitor of openshift/machine-config-operator): the daemon's state annotation stays Working
// from taking the update up until it is done; the drain controller reports cordon and drain on the
// MachineConfigNode and then writes lastAppliedDrain; a reboot is post-config-action=Rebooting on the node and
// RebootedNode Unknown on the MachineConfigNode.
const STEPS: readonly Step[] = [
  {
    name: 'waiting for its pool to move on (pool still at the old config)',
    node: workerNode('worker-a', annotations(OLD, OLD, 'Done', `uncordon-${OLD}`, `uncordon-${OLD}`)),
    // Writing Updated resets the other conditions to False.
    mcn: machineConfigNode('worker-a', { spec: OLD, current: OLD, desired: OLD }, { Updated: 'True' }),
    pool: workerPool(false, OLD),
    phase: 'Pending',
    assessment: 'Outdated',
  },
  {
    name: 'in a paused pool',
    node: workerNode('worker-a', annotations(OLD, OLD, 'Done', `uncordon-${OLD}`, `uncordon-${OLD}`)),
    mcn: machineConfigNode('worker-a', { spec: OLD, current: OLD, desired: OLD }, { Updated: 'True' }),
    pool: workerPool(true, OLD),
    phase: 'Paused',
    assessment: 'Excluded',
  },
  {
    // The node controller set desiredConfig (and the MachineConfigNode's spec); the daemon has not started, so
    // the MachineConfigNode still describes the previous update: the annotations decide, as in oc.
    name: 'targeted, not yet taken up by the daemon',
    node: workerNode('worker-a', annotations(OLD, NEW, 'Done', `uncordon-${OLD}`, `uncordon-${OLD}`)),
    mcn: machineConfigNode('worker-a', { spec: NEW, current: OLD, desired: OLD }, { Updated: 'True' }),
    phase: 'Draining',
    assessment: 'Progressing',
  },
  {
    name: 'cordoned, draining',
    node: workerNode('worker-a', annotations(OLD, NEW, 'Working', `drain-${NEW}`, `uncordon-${OLD}`), {
      unschedulable: true,
    }),
    mcn: machineConfigNode(
      'worker-a',
      { spec: NEW, current: OLD, desired: NEW },
      { UpdatePrepared: 'True', UpdateExecuted: 'Unknown', Cordoned: 'True', Drained: 'Unknown' },
    ),
    phase: 'Draining',
    assessment: 'Progressing',
  },
  {
    name: 'a drain failing for an hour, the daemon degraded',
    node: workerNode(
      'worker-a',
      annotations(OLD, NEW, 'Degraded', `drain-${NEW}`, `uncordon-${OLD}`, {
        [Annotations.reason]: 'failed to drain node: worker-a after 1 hour',
      }),
      { unschedulable: true },
    ),
    mcn: machineConfigNode(
      'worker-a',
      { spec: NEW, current: OLD, desired: NEW },
      {
        UpdatePrepared: 'True',
        UpdateExecuted: 'Unknown',
        Cordoned: 'True',
        Drained: 'Unknown',
        NodeDegraded: 'True',
      },
    ),
    phase: 'Draining',
    assessment: 'Degraded',
  },
  {
    name: 'drained, writing files and OS',
    node: workerNode('worker-a', annotations(OLD, NEW, 'Working', `drain-${NEW}`, `drain-${NEW}`), {
      unschedulable: true,
    }),
    mcn: machineConfigNode(
      'worker-a',
      { spec: NEW, current: OLD, desired: NEW },
      {
        UpdatePrepared: 'True',
        UpdateExecuted: 'Unknown',
        Cordoned: 'True',
        Drained: 'True',
        AppliedFilesAndOS: 'Unknown',
      },
    ),
    phase: 'Updating',
    assessment: 'Progressing',
  },
  {
    // oc's Rebooting needs state=Rebooting, which the MCO never writes: oc shows a rebooting node as Updating.
    name: 'rebooting',
    node: workerNode(
      'worker-a',
      annotations(OLD, NEW, 'Working', `drain-${NEW}`, `drain-${NEW}`, {
        'machineconfiguration.openshift.io/post-config-action': 'Rebooting',
      }),
      { unschedulable: true },
    ),
    mcn: machineConfigNode(
      'worker-a',
      { spec: NEW, current: OLD, desired: NEW },
      {
        UpdatePrepared: 'True',
        UpdateExecuted: 'True',
        Cordoned: 'True',
        Drained: 'True',
        AppliedFilesAndOS: 'True',
        UpdatePostActionComplete: 'Unknown',
        RebootedNode: 'Unknown',
      },
    ),
    phase: 'Updating',
    assessment: 'Progressing',
  },
  {
    // A daemon that does report Rebooting (the dev cluster's simulated update) keeps oc's Rebooting.
    name: 'rebooting, as a daemon reporting state=Rebooting says',
    node: workerNode('worker-a', annotations(OLD, NEW, 'Rebooting', `drain-${NEW}`, `drain-${NEW}`), {
      unschedulable: true,
    }),
    mcn: machineConfigNode(
      'worker-a',
      { spec: NEW, current: OLD, desired: NEW },
      { UpdatePrepared: 'True', UpdateExecuted: 'True', Drained: 'True', RebootedNode: 'Unknown' },
    ),
    phase: 'Rebooting',
    assessment: 'Progressing',
  },
  {
    name: 'back up on the new config, uncordon requested',
    node: workerNode('worker-a', annotations(NEW, NEW, 'Done', `uncordon-${NEW}`, `drain-${NEW}`), {
      unschedulable: true,
    }),
    mcn: machineConfigNode(
      'worker-a',
      { spec: NEW, current: NEW, desired: NEW },
      { UpdatePrepared: 'True', UpdateExecuted: 'True', RebootedNode: 'True', Resumed: 'True' },
    ),
    phase: 'Updated',
    // Still cordoned.
    assessment: 'Unavailable',
  },
  {
    name: 'updated',
    node: workerNode('worker-a', annotations(NEW, NEW, 'Done', `uncordon-${NEW}`, `uncordon-${NEW}`)),
    mcn: machineConfigNode('worker-a', { spec: NEW, current: NEW, desired: NEW }, { Updated: 'True' }),
    phase: 'Updated',
    assessment: 'Completed',
  },
  {
    // The daemon refuses the update: UpdatePrepared Unknown, and the status keeps "not-yet-set" as desired.
    name: 'unreconcilable',
    node: workerNode(
      'worker-a',
      annotations(OLD, NEW, 'Unreconcilable', `uncordon-${OLD}`, `uncordon-${OLD}`, {
        [Annotations.reason]: 'can not change FIPS',
      }),
    ),
    mcn: machineConfigNode(
      'worker-a',
      { spec: NEW, current: OLD, desired: 'not-yet-set' },
      { UpdatePrepared: 'Unknown' },
    ),
    phase: 'Updating',
    assessment: 'Degraded',
  },
];

describe('MachineConfigNodes and node annotations', () => {
  it.each(STEPS.map((s) => [s.name, s] as const))('%s: the same report either way', (_name, step) => {
    const fromAnnotations = report(cluster([step.node], undefined, step.pool));
    const withMcn = report(cluster([step.node], [step.mcn], step.pool));
    expect(withMcn.text).toBe(fromAnnotations.text);
    expect(withMcn.node && nodePhaseName(withMcn.node.phase)).toBe(step.phase);
    expect(withMcn.text).toMatch(new RegExp(`^worker-a +${step.assessment} +${step.phase} `, 'm'));
    // What an informer caches of it is enough.
    expect(report(cluster([step.node], [machineConfigNodeFieldsRead(step.mcn)], step.pool)).text).toBe(
      withMcn.text,
    );
  });

  it('covers every phase', () => {
    expect(new Set(STEPS.map((s) => s.phase))).toEqual(
      new Set(['Pending', 'Paused', 'Draining', 'Updating', 'Rebooting', 'Updated']),
    );
  });

  const drainedNotYetApplied = workerNode(
    'worker-a',
    annotations(OLD, NEW, 'Working', `drain-${NEW}`, `uncordon-${OLD}`),
    { unschedulable: true },
  );
  const drainedMcn = (desired: string) =>
    machineConfigNode(
      'worker-a',
      { spec: NEW, current: OLD, desired },
      { UpdatePrepared: 'True', UpdateExecuted: 'Unknown', Cordoned: 'True', Drained: 'True' },
    );

  it('between the drain controller reporting the drain done and writing lastAppliedDrain, the MachineConfigNode says Updating', () => {
    expect(report(cluster([drainedNotYetApplied], undefined)).node?.phase).toBe(
      report(cluster([drainedNotYetApplied], [])).node?.phase,
    );
    expect(nodePhaseName(report(cluster([drainedNotYetApplied], undefined)).node?.phase ?? 0)).toBe(
      'Draining',
    );
    expect(nodePhaseName(report(cluster([drainedNotYetApplied], [drainedMcn(NEW)])).node?.phase ?? 0)).toBe(
      'Updating',
    );
  });

  it('a MachineConfigNode behind the annotations is not believed: they decide', () => {
    // Its status has not taken up the new desired config yet: its conditions are about the previous update.
    const behind = report(cluster([drainedNotYetApplied], [drainedMcn(OLD)]));
    expect(nodePhaseName(behind.node?.phase ?? 0)).toBe('Draining');
    expect(behind.text).toBe(report(cluster([drainedNotYetApplied], undefined)).text);
    // Its current config is not the node's.
    const otherCurrent = machineConfigNode(
      'worker-a',
      { spec: NEW, current: 'rendered-worker-older', desired: NEW },
      { Drained: 'True' },
    );
    expect(nodePhaseName(report(cluster([drainedNotYetApplied], [otherCurrent])).node?.phase ?? 0)).toBe(
      'Draining',
    );
  });

  it('a node without a MachineConfigNode is judged by its annotations, beside nodes that have one', () => {
    const other = workerNode('worker-b', annotations(OLD, NEW, 'Working', `drain-${NEW}`, `uncordon-${OLD}`));
    const snapshot = cluster(
      [drainedNotYetApplied, other],
      [drainedMcn(NEW), { ...drainedMcn(NEW), metadata: { name: 'worker-c' } }],
    );
    const nodes = assessUpdateStatus(snapshot, NOW).workerPools[0]?.nodes ?? [];
    expect(nodes.map((n) => [n.name, nodePhaseName(n.phase)])).toEqual([
      ['worker-b', 'Draining'],
      ['worker-a', 'Updating'],
      ['worker-z', 'Pending'],
    ]);
  });

  it("keeps oc's rule that a node without both drain annotations is not draining", () => {
    const neverDrained = workerNode('worker-a', {
      [Annotations.currentConfig]: OLD,
      [Annotations.desiredConfig]: NEW,
      [Annotations.state]: 'Working',
      [Annotations.desiredDrain]: `drain-${NEW}`,
    });
    const draining = machineConfigNode(
      'worker-a',
      { spec: NEW, current: OLD, desired: NEW },
      { Cordoned: 'True', Drained: 'Unknown' },
    );
    expect(report(cluster([neverDrained], [draining])).text).toBe(
      report(cluster([neverDrained], undefined)).text,
    );
    expect(nodePhaseName(report(cluster([neverDrained], [draining])).node?.phase ?? 0)).toBe('Updating');
  });
});

describe("oc's snapshot cases with the MachineConfigNodes the MCO would have written", () => {
  const fixtures = fixturePath('oc-upgrade-status');
  const cases = [
    '4.14.1-degraded',
    '4.16.0-ec2-control-plane-updated-pdb-prohibits-draining',
    'to-multi-arch',
  ];

  it.each(cases)(
    '%s: what oc printed, from the annotations and from the MachineConfigNodes',
    async (name) => {
      const { snapshot } = await loadSnapshot(path.join(fixtures, `${name}-cv.yaml`));
      const now = snapshotNow(snapshot);
      const withMcns = { ...snapshot, machineConfigNodes: snapshot.nodes.map(machineConfigNodeOf) };
      // oc's harness judged node unavailability long after the snapshot was taken (conformance.test.ts).
      const options = { unavailableAgeReference: now + 365n * 24n * HOUR };
      for (const [details, suffix] of [
        ['none', '.output'],
        ['all', '.detailed-output'],
      ] as const) {
        const expected = readFileSync(path.join(fixtures, `${name}${suffix}`), 'utf8');
        expect(renderUpdateStatus(assessUpdateStatus(withMcns, now, options), details)).toBe(expected);
      }
    },
  );

  it('the MachineConfigNodes are in step for the nodes the cases show updating (so they are what decides)', async () => {
    const { snapshot } = await loadSnapshot(
      path.join(fixtures, '4.16.0-ec2-control-plane-updated-pdb-prohibits-draining-cv.yaml'),
    );
    const draining = snapshot.nodes
      .map(machineConfigNodeOf)
      .filter((m) => m.status?.conditions?.some((c) => c.type === 'Drained' && c.status === 'Unknown'));
    expect(draining.length).toBeGreaterThan(0);
  });
});

describe('snapshot files', () => {
  const fixtures = fixturePath('oc-upgrade-status');
  const CASE = '4.16.0-ec2-control-plane-updated-pdb-prohibits-draining';

  /** The case's files in a directory of their own, with `mcn` as its -mcn.yaml when given. */
  function caseDir(mcn?: string): { cvPath: string; cleanup: () => void } {
    const dir = mkdtempSync(path.join(tmpdir(), 'tessera-mcn-'));
    const from = snapshotPaths(path.join(fixtures, `${CASE}-cv.yaml`));
    const to = snapshotPaths(path.join(dir, `${CASE}-cv.yaml`));
    for (const key of [
      'clusterVersion',
      'clusterOperators',
      'machineConfigPools',
      'machineConfigs',
      'nodes',
    ] as const)
      copyFileSync(from[key], to[key]);
    if (mcn !== undefined) writeFileSync(to.machineConfigNodes, mcn);
    return { cvPath: to.clusterVersion, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  }

  it('reads an optional C-mcn.yaml List of MachineConfigNodes beside the others', async () => {
    const { snapshot } = await loadSnapshot(path.join(fixtures, `${CASE}-cv.yaml`));
    const mcns = snapshot.nodes.map(machineConfigNodeOf);
    const list = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: mcns.map((m) => ({ kind: 'MachineConfigNode', ...m })),
    });
    const { cvPath, cleanup } = caseDir(list);
    try {
      const loaded = await loadSnapshot(cvPath);
      expect(loaded.snapshot.machineConfigNodes?.map((m) => m.metadata?.name)).toEqual(
        snapshot.nodes.map((n) => n.metadata?.name),
      );
    } finally {
      cleanup();
    }
  });

  it('without C-mcn.yaml there are none, as on a cluster that does not serve them', async () => {
    const { cvPath, cleanup } = caseDir();
    try {
      expect((await loadSnapshot(cvPath)).snapshot.machineConfigNodes).toBeUndefined();
    } finally {
      cleanup();
    }
  });

  it('refuses a C-mcn.yaml of other objects, naming the file', async () => {
    const { cvPath, cleanup } = caseDir(JSON.stringify({ kind: 'NodeList', items: [] }));
    try {
      await expect(loadSnapshot(cvPath)).rejects.toThrow(SnapshotError);
      await expect(loadSnapshot(cvPath)).rejects.toThrow(
        /-mcn\.yaml.*expected a List of MachineConfigNode objects/,
      );
    } finally {
      cleanup();
    }
  });
});
