// Assessment rules a user would notice, on small hand-built clusters: which operators count, operator health
// thresholds, the estimate, node phases and pool roll-ups, and when the cluster is "not updating".
import { describe, expect, it } from 'vitest';
import { assessUpdateStatus } from './assess.js';
import { estimateCompletion } from './controlplane.js';
import { HOUR, MINUTE, SECOND, formatRFC3339, parseTime } from './gotime.js';
import type { ClusterOperator, ClusterSnapshot, ClusterVersion, MachineConfigPool, Node } from './inputs.js';
import { ImpactLevel, impactLevelName } from './insight.js';
import { renderUpdateStatus } from './render.js';
import { NodeAssessment, NodePhase } from './workerpool.js';

const T0 = parseTime('2024-01-01T10:00:00Z') ?? 0n;
const at = (offset: bigint) => formatRFC3339(T0 + offset);
const PLATFORM = { 'include.release.openshift.io/self-managed-high-availability': 'true' };

function cv(
  opts: { progressing?: boolean; failing?: boolean; history?: ClusterVersion['status'] } = {},
): ClusterVersion {
  return {
    metadata: { name: 'version' },
    status: {
      desired: { version: '4.16.1' },
      history: [
        { state: 'Partial', startedTime: at(0n), version: '4.16.1', image: 'new' },
        {
          state: 'Completed',
          startedTime: at(-10n * HOUR),
          completionTime: at(-9n * HOUR),
          version: '4.16.0',
          image: 'old',
        },
      ],
      conditions: [
        {
          type: 'Progressing',
          status: opts.progressing === false ? 'False' : 'True',
          lastTransitionTime: at(0n),
        },
        {
          type: 'Failing',
          status: opts.failing ? 'True' : 'False',
          reason: 'X',
          message: 'm',
          lastTransitionTime: at(0n),
        },
      ],
      ...opts.history,
    },
  };
}

function co(
  name: string,
  opts: {
    version?: string;
    progressing?: 'True' | 'False';
    available?: string;
    availableSince?: bigint;
    degraded?: boolean;
    platform?: boolean;
  } = {},
): ClusterOperator {
  return {
    metadata: { name, annotations: opts.platform === false ? {} : PLATFORM },
    status: {
      versions: [{ name: 'operator', version: opts.version ?? '4.16.1' }],
      conditions: [
        {
          type: 'Available',
          status: opts.available ?? 'True',
          reason: 'R',
          message: '',
          lastTransitionTime: at(opts.availableSince ?? 0n),
        },
        { type: 'Degraded', status: opts.degraded ? 'True' : 'False', lastTransitionTime: at(0n) },
        { type: 'Progressing', status: opts.progressing ?? 'False', lastTransitionTime: at(MINUTE) },
      ],
    },
  };
}

const workerPool: MachineConfigPool = {
  metadata: { name: 'worker' },
  spec: {
    configuration: { name: 'rendered-worker-new' },
    nodeSelector: { matchLabels: { 'node-role.kubernetes.io/worker': '' } },
  },
};

function node(
  name: string,
  current: string,
  desired: string,
  state: string,
  extra: Partial<Record<string, string>> = {},
  ready = true,
): Node {
  return {
    metadata: {
      name,
      labels: { 'node-role.kubernetes.io/worker': '' },
      annotations: {
        'machineconfiguration.openshift.io/currentConfig': current,
        'machineconfiguration.openshift.io/desiredConfig': desired,
        'machineconfiguration.openshift.io/state': state,
        ...(extra as Record<string, string>),
      },
    },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          message: 'kubelet down',
          lastTransitionTime: at(0n),
        },
      ],
    },
  };
}

function snapshot(parts: Partial<ClusterSnapshot>): ClusterSnapshot {
  return {
    clusterVersion: cv(),
    clusterOperators: [co('a'), co('b', { version: '4.16.0', progressing: 'True' })],
    machineConfigPools: [workerPool],
    machineConfigs: [
      {
        metadata: {
          name: 'rendered-worker-old',
          annotations: { 'machineconfiguration.openshift.io/release-image-version': '4.16.0' },
        },
      },
      {
        metadata: {
          name: 'rendered-worker-new',
          annotations: { 'machineconfiguration.openshift.io/release-image-version': '4.16.1' },
        },
      },
    ],
    nodes: [],
    mcoImagePullSpec: '',
    ...parts,
  };
}

describe('control plane', () => {
  it('counts only platform operators', () => {
    const r = assessUpdateStatus(
      snapshot({
        clusterOperators: [
          co('a'),
          co('olm', { version: '1.0', platform: false }),
          co('b', { version: '4.16.0', progressing: 'True' }),
        ],
      }),
      T0 + 10n * MINUTE,
    );
    expect(r.controlPlane.operators.total).toBe(2);
    expect(r.controlPlane.operators.updated).toBe(1);
    expect(r.controlPlane.operators.updating.map((u) => u.name)).toEqual(['b']);
    expect(r.controlPlane.completion).toBe(50);
  });

  it('raises unavailable operators to Warning after 5m and Error after 20m', () => {
    const level = (since: bigint) =>
      assessUpdateStatus(
        snapshot({ clusterOperators: [co('a'), co('b', { available: 'False', availableSince: since })] }),
        T0 + 30n * MINUTE,
      )
        .insights.filter((i) => i.impact.summary.startsWith('Cluster Operator b is unavailable'))
        .map((i) => impactLevelName(i.impact.level));
    expect(level(29n * MINUTE)).toEqual([]);
    expect(level(20n * MINUTE)).toEqual(['Warning']);
    expect(level(5n * MINUTE)).toEqual(['Error']);
  });

  it('calls an update far past its estimate Stalled and shows the estimate it missed', () => {
    const r = assessUpdateStatus(snapshot({}), T0 + 3n * HOUR);
    expect(r.controlPlane.assessment).toBe('Stalled');
    expect(renderUpdateStatus(r, 'none')).toContain(
      'Duration:        3h (Est. Time Remaining: N/A; estimate duration was ',
    );
  });

  it('projects from observed progress once it lasted 5 minutes, with a 1.2 margin', () => {
    // Half the operators after 10 minutes: the fitted curve says ~39% of the time has passed, so ~25.7m in all,
    // ~15.7m left, x1.2 = ~18.8m, rounded to whole minutes above 10m.
    expect(estimateCompletion(HOUR, 10n * MINUTE, 10n * MINUTE, 0.5)).toBe(19n * MINUTE);
    // Without 5 minutes of progress the baseline (here 1h) is used.
    expect(estimateCompletion(HOUR, 4n * MINUTE, 10n * MINUTE, 0.5)).toBe(60n * MINUTE);
  });

  it('reports a failing ClusterVersion as an Update Stalled warning', () => {
    const r = assessUpdateStatus(snapshot({ clusterVersion: cv({ failing: true }) }), T0 + 10n * MINUTE);
    const cvInsight = r.health.insights.find((i) => i.scope.resources[0]?.kind === 'ClusterVersion');
    expect(cvInsight?.impact.summary).toBe(
      'Cluster Version version is failing to proceed with the update (X)',
    );
    expect(cvInsight?.impact.level).toBe(ImpactLevel.Warning);
  });
});

describe('nodes and pools', () => {
  const drain = {
    'machineconfiguration.openshift.io/desiredDrain': 'drain-rendered-worker-new',
    'machineconfiguration.openshift.io/lastAppliedDrain': 'uncordon-rendered-worker-old',
  };
  const nodes = [
    node('node-done-1', 'rendered-worker-new', 'rendered-worker-new', 'Done'),
    node('node-draining', 'rendered-worker-old', 'rendered-worker-new', 'Working', drain),
    node('node-rebooting', 'rendered-worker-old', 'rendered-worker-new', 'Rebooting'),
    node('node-pending', 'rendered-worker-old', 'rendered-worker-old', 'Done'),
    node('node-degraded', 'rendered-worker-old', 'rendered-worker-new', 'Degraded', {
      'machineconfiguration.openshift.io/reason': 'failed to drain node: node-degraded',
    }),
  ];

  it('derives phases and assessments from the machine-config annotations', () => {
    const r = assessUpdateStatus(snapshot({ nodes }), T0 + 10n * MINUTE);
    const pool = r.workerPools[0];
    const byName = new Map(pool?.nodes.map((n) => [n.name, n]));
    expect(byName.get('node-done-1')).toMatchObject({
      phase: NodePhase.Updated,
      assessment: NodeAssessment.Completed,
      estimate: '-',
    });
    expect(byName.get('node-draining')).toMatchObject({
      phase: NodePhase.Draining,
      assessment: NodeAssessment.Progressing,
      estimate: '+10m',
    });
    expect(byName.get('node-rebooting')).toMatchObject({ phase: NodePhase.Rebooting, estimate: '+5m' });
    expect(byName.get('node-pending')).toMatchObject({
      phase: NodePhase.Pending,
      assessment: NodeAssessment.Outdated,
      estimate: '?',
    });
    expect(byName.get('node-degraded')).toMatchObject({
      assessment: NodeAssessment.Degraded,
      message: 'failed to drain node: <node>',
    });
    // Most troubled first.
    expect(pool?.nodes[0]?.name).toBe('node-degraded');
    expect(pool?.assessment).toBe('Degraded');
    expect(pool?.overview).toMatchObject({ total: 5, outdated: 4, draining: 1, degraded: 1 });
    expect(renderUpdateStatus(r, 'none')).toContain('worker        Degraded     20% (1/5)    ');
  });

  it('reports a node NotReady for 5 minutes or more, not a shorter blip', () => {
    const notReady = node('node-notready', 'rendered-worker-old', 'rendered-worker-old', 'Done', {}, false);
    const summaries = (now: bigint) =>
      assessUpdateStatus(snapshot({ nodes: [notReady] }), now).insights.map((i) => i.impact.summary);
    expect(summaries(T0 + 4n * MINUTE)).not.toContain('Node node-notready is not ready');
    expect(summaries(T0 + 5n * MINUTE)).toContain('Node node-notready is not ready');
  });

  it('can judge unavailability age by another clock than the evaluation time (oc uses the wall clock)', () => {
    const notReady = node('node-notready', 'rendered-worker-old', 'rendered-worker-old', 'Done', {}, false);
    const summaries = (reference: bigint | undefined) =>
      assessUpdateStatus(snapshot({ nodes: [notReady] }), T0 + MINUTE, {
        unavailableAgeReference: reference,
      }).insights.map((i) => i.impact.summary);
    expect(summaries(undefined)).not.toContain('Node node-notready is not ready');
    expect(summaries(T0 + HOUR)).toContain('Node node-notready is not ready');
  });

  it('lists only 10 healthy nodes without details and summarises the rest', () => {
    const many = Array.from({ length: 12 }, (_, i) =>
      node(`node-${String(i).padStart(2, '0')}`, 'rendered-worker-new', 'rendered-worker-new', 'Done'),
    );
    const out = renderUpdateStatus(
      assessUpdateStatus(snapshot({ nodes: [...many, nodes[3] as Node] }), T0 + 10n * SECOND),
      'none',
    );
    expect(out).toContain(
      'Omitted additional 3 Total, 3 Completed, 3 Available, 0 Progressing, 0 Outdated, 0 Draining, 0 Excluded, and 0 Degraded nodes.',
    );
    expect(renderUpdateStatus(assessUpdateStatus(snapshot({ nodes: many }), T0), 'nodes')).not.toContain(
      'Omitted',
    );
  });
});

describe('not updating', () => {
  it('says so when the control plane is idle and every pool is done', () => {
    const idle = snapshot({
      clusterVersion: cv({ progressing: false }),
      clusterOperators: [co('a')],
      nodes: [node('node-done', 'rendered-worker-new', 'rendered-worker-new', 'Done')],
    });
    expect(renderUpdateStatus(assessUpdateStatus(idle, T0), 'all')).toBe('The cluster is not updating.\n');
  });
  it('keeps reporting while a worker pool is still outdated', () => {
    const workersBehind = snapshot({
      clusterVersion: cv({ progressing: false }),
      clusterOperators: [co('a')],
      nodes: [node('node-old', 'rendered-worker-old', 'rendered-worker-new', 'Working')],
    });
    expect(renderUpdateStatus(assessUpdateStatus(workersBehind, T0), 'none')).toContain('= Worker Upgrade =');
  });
});
