import { describe, expect, it } from 'vitest';
import { type SimulationPlan, renderedConfig, simulatedState } from '../demo/update-simulation/timeline.js';
import { Annotations } from '../updatestatus/nodestate.js';
import type { ClusterSnapshot, Node } from '../updatestatus/inputs.js';
import { assessUpdateStatus } from '../updatestatus/assess.js';
import { healthItems } from '../updatestatus/render.js';
import {
  MAX_HISTORY_SAMPLES,
  appendSample,
  assessForView,
  buildUpdateView,
  completionSample,
  type UpdateInputs,
} from './update-view.js';
import type { CompletionSample } from './view-types.js';

const plan: SimulationPlan = {
  from: '4.16.0',
  to: '4.16.1',
  operators: ['etcd', 'kube-apiserver', 'console', 'dns', 'network', 'ingress', 'machine-config'],
  degradedOperator: 'console',
  masterNodes: ['m-0'],
  workerNodes: Array.from({ length: 150 }, (_, i) => `w-${String(i).padStart(3, '0')}`),
  startedAtSeconds: 1_700_000_000,
  stepSeconds: 60,
};

/** The cluster the simulator has made at `step`: its objects as the informers would hold them. */
function inputsAt(step: number): { inputs: ClusterSnapshot; now: bigint } {
  const state = simulatedState(plan, step);
  const nodes: Node[] = [...state.nodeAnnotations].map(([name, annotations]) => ({
    metadata: {
      name,
      labels: { [`node-role.kubernetes.io/${state.nodePools.get(name) ?? ''}`]: '' },
      annotations,
    },
    status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2023-01-01T00:00:00Z' }] },
  }));
  const machineConfigs = ['master', 'worker'].flatMap((pool) =>
    [plan.from, plan.to].map((v) => ({
      metadata: { name: renderedConfig(pool, v), annotations: { [Annotations.releaseImageVersion]: v } },
    })),
  );
  return {
    inputs: {
      clusterVersion: state.clusterVersion,
      clusterOperators: state.clusterOperators,
      machineConfigPools: state.machineConfigPools,
      machineConfigs,
      nodes,
      machineConfigNodes: [...state.machineConfigNodes.values()],
      mcoImagePullSpec: '',
    },
    now: BigInt(plan.startedAtSeconds + step * plan.stepSeconds) * 1_000_000_000n,
  };
}

function viewAt(step: number, history: CompletionSample[] = []) {
  const { inputs, now } = inputsAt(step);
  const report = assessForView(inputs, now);
  if ('available' in report) throw new Error(report.missing);
  return { view: buildUpdateView(report, history), report, now };
}

describe('the Update view', () => {
  it('shows the control plane and each pool as progress rows that advance with the update', () => {
    const early = viewAt(2).view;
    const later = viewAt(12).view;
    expect(early.updating).toBe(true);
    expect(early.versions).toBe('4.16.1 (from 4.16.0)');
    expect(early.controlPlane.total).toBe(plan.operators.length);
    expect(later.controlPlane.completion).toBeGreaterThan(early.controlPlane.completion);
    expect(early.pools.map((p) => p.name)).toEqual(['master', 'worker']);
    const worker = (v: typeof early) => v.pools.find((p) => p.name === 'worker');
    expect(worker(early)).toMatchObject({ total: 150, updated: 0, completion: 0 });
    const end = viewAt(400).view;
    expect(end.updating).toBe(false);
    expect(worker(end)).toMatchObject({ total: 150, updated: 150, completion: 100 });
  });

  it("gives the control plane oc's estimate while it updates, and none once it is done", () => {
    expect(viewAt(2).view.controlPlane.estimate).not.toBe('');
    expect(viewAt(400).view.controlPlane.estimate).toBe('');
  });

  it('groups node cells by pool with a count per phase, a page of cells at a time', () => {
    const { view } = viewAt(40);
    const worker = view.nodeGroups.find((g) => g.pool === 'worker');
    expect(worker?.nodes.total).toBe(150);
    expect(worker?.nodes.items).toHaveLength(100);
    expect(worker?.phaseCounts.reduce((n, c) => n + c.count, 0)).toBe(150);
    const { inputs, now } = inputsAt(40);
    const report = assessUpdateStatus(inputs, now);
    const second = buildUpdateView(report, [], { nodes: new Map([['worker', { offset: 100, limit: 100 }]]) });
    expect(second.nodeGroups.find((g) => g.pool === 'worker')?.nodes.items).toHaveLength(50);
    // The phases the simulator says it simulates are the ones shown.
    const phases = new Map(
      [...(worker?.nodes.items ?? []), ...(second.nodeGroups[1]?.nodes.items ?? [])].map((c) => [
        c.name,
        c.phase,
      ]),
    );
    const simulated = simulatedState(plan, 40).nodePhases;
    for (const [name, phase] of phases) {
      const expected = simulated.get(name);
      expect(phase).toBe(expected === 'Completed' ? 'Updated' : expected);
    }
  });

  it("lists the health insights in oc's words (the ranked items `--details=health` prints)", () => {
    const { inputs, now } = inputsAt(5);
    const anHourAgo = new Date(Number(now / 1_000_000n) - 3_600_000).toISOString();
    // The console operator has been Degraded for an hour: oc reports it as an Error insight.
    const degraded: ClusterSnapshot = {
      ...inputs,
      clusterOperators: inputs.clusterOperators.map((co) =>
        co.metadata?.name !== 'console'
          ? co
          : {
              ...co,
              status: {
                ...co.status,
                conditions: [
                  ...(co.status?.conditions ?? []).filter((c) => c.type !== 'Degraded'),
                  {
                    type: 'Degraded',
                    status: 'True',
                    reason: 'RouteHealth',
                    message: 'route <b>down</b>',
                    lastTransitionTime: anHourAgo,
                  },
                ],
              },
            },
      ),
    };
    const report = assessUpdateStatus(degraded, now);
    const view = buildUpdateView(report, []);
    const items = healthItems(report.health);
    expect(view.insights.total).toBe(items.length);
    expect(view.insights.items.map((i) => [i.level, i.impact, i.message, i.since])).toEqual(
      items.map((i) => [i.level, i.impact, i.message, i.since]),
    );
    const consoleInsight = view.insights.items.find((i) => i.message.includes('console'));
    expect(consoleInsight).toMatchObject({ level: 'Error', since: '1h' });
    expect(consoleInsight?.description).toContain('route <b>down</b>');
    expect(consoleInsight?.reference).toMatch(/^https:/);
    expect(consoleInsight?.resources).toEqual(['clusteroperators.config.openshift.io: console']);
  });

  it('says what is missing instead of failing when the cluster has no ClusterVersion or no operators', () => {
    const { inputs, now } = inputsAt(1);
    const noCv: UpdateInputs = { ...inputs, clusterVersion: undefined };
    expect(assessForView(noCv, now)).toMatchObject({
      available: false,
      missing: expect.stringContaining('ClusterVersion'),
    });
    const noOperators = assessForView({ ...inputs, clusterOperators: [] }, now);
    expect(noOperators).toMatchObject({ available: false });
  });
});

describe('the completion-over-time history', () => {
  it('adds a point when completion changes, not when it stays, and starts again for a new update', () => {
    let history: CompletionSample[] = [];
    for (const step of [0, 0, 3, 3, 6]) {
      const { report, now } = viewAt(step);
      history = appendSample(history, completionSample(report, now));
    }
    expect(history.map((s) => s.atSeconds)).toEqual([0, 180, 360]);
    const restart = appendSample(history, { atSeconds: 10, controlPlane: 0, pools: [] });
    expect(restart).toHaveLength(1);
  });

  it('stays within its budget over a long update, keeping the first and the newest points', () => {
    let history: CompletionSample[] = [];
    for (let i = 0; i < 5_000; i++)
      history = appendSample(history, { atSeconds: i, controlPlane: i / 50, pools: [] });
    expect(history.length).toBeLessThanOrEqual(MAX_HISTORY_SAMPLES);
    expect(history[0]?.atSeconds).toBe(0);
    expect(history.at(-1)?.atSeconds).toBe(4_999);
  });
});
