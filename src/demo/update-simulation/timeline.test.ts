// The simulated update, assessed step by step with the real rules: it goes through every phase oc knows
// (operators updating, a degraded operator, nodes draining/updating/rebooting) and ends "not updating".
import { describe, expect, it } from 'vitest';
import { assessUpdateStatus } from '../../updatestatus/assess.js';
import { SECOND } from '../../updatestatus/gotime.js';
import type { ClusterSnapshot, MachineConfig, Node } from '../../updatestatus/inputs.js';
import {
  Annotations,
  isMachineConfigNodeDraining,
  machineConfigNodeInStep,
} from '../../updatestatus/nodestate.js';
import { renderUpdateStatus } from '../../updatestatus/render.js';
import { NodePhase, nodePhaseName } from '../../updatestatus/workerpool.js';
import { type SimulationPlan, renderedConfig, simulatedState } from './timeline.js';

const plan: SimulationPlan = {
  from: '4.16.0',
  to: '4.16.1',
  operators: [
    'etcd',
    'kube-apiserver',
    'network',
    'dns',
    'ingress',
    'console',
    'monitoring',
    'machine-config',
  ],
  degradedOperator: 'console',
  masterNodes: ['master-0'],
  workerNodes: ['worker-0', 'worker-1', 'worker-2'],
  startedAtSeconds: 1_700_000_000,
  stepSeconds: 60,
};

const machineConfigs: MachineConfig[] = ['master', 'worker'].flatMap((pool) =>
  [plan.from, plan.to].map((v) => ({
    metadata: { name: renderedConfig(pool, v), annotations: { [Annotations.releaseImageVersion]: v } },
  })),
);

function snapshotAt(step: number): ClusterSnapshot {
  const state = simulatedState(plan, step);
  const nodes: Node[] = [...state.nodeAnnotations].map(([name, annotations]) => ({
    metadata: {
      name,
      labels: { [`node-role.kubernetes.io/${name.startsWith('master') ? 'master' : 'worker'}`]: '' },
      annotations,
    },
  }));
  return {
    clusterVersion: state.clusterVersion,
    clusterOperators: state.clusterOperators,
    machineConfigPools: state.machineConfigPools,
    machineConfigs,
    nodes,
    mcoImagePullSpec: '',
  };
}

describe('simulated update', () => {
  it('passes through every phase and finishes', () => {
    const phases = new Set<string>();
    const assessments = new Set<string>();
    let sawDegraded = false;
    let step = 0;
    for (; step < 200 && !simulatedState(plan, step).done; step++) {
      const now = BigInt(plan.startedAtSeconds + step * plan.stepSeconds + 30) * SECOND;
      const report = assessUpdateStatus(snapshotAt(step), now);
      assessments.add(report.controlPlane.assessment);
      for (const pool of [report.controlPlanePool, ...report.workerPools]) {
        for (const n of pool?.nodes ?? []) phases.add(nodePhaseName(n.phase));
      }
      sawDegraded ||= report.insights.some((i) =>
        i.impact.summary.startsWith('Cluster Operator console is degraded'),
      );
    }
    expect(step).toBeLessThan(200);
    for (const p of [
      NodePhase.Draining,
      NodePhase.Updating,
      NodePhase.Rebooting,
      NodePhase.Pending,
      NodePhase.Updated,
    ]) {
      expect(phases).toContain(nodePhaseName(p));
    }
    expect(assessments).toContain('Completed');
    expect(sawDegraded).toBe(true);
    const end = BigInt(plan.startedAtSeconds + step * plan.stepSeconds) * SECOND;
    expect(renderUpdateStatus(assessUpdateStatus(snapshotAt(step), end), 'none')).toBe(
      'The cluster is not updating.\n',
    );
  });
  it('says, at every step, the node phases and control-plane state the assessment reports', () => {
    const seen = new Map<string, string[]>();
    for (let step = 0; step < 200; step++) {
      const state = simulatedState(plan, step);
      const now = BigInt(plan.startedAtSeconds + step * plan.stepSeconds + 30) * SECOND;
      const report = assessUpdateStatus(snapshotAt(step), now);
      const assessed = new Map<string, string>();
      for (const pool of [report.controlPlanePool, ...report.workerPools]) {
        for (const n of pool?.nodes ?? []) {
          const phase = nodePhaseName(n.phase);
          assessed.set(n.name, phase === 'Updated' ? 'Completed' : phase);
        }
      }
      expect(assessed, `step ${step}`).toEqual(state.nodePhases);
      expect(report.controlPlane.assessment === 'Completed', `step ${step}`).toBe(
        state.controlPlaneCompleted,
      );
      for (const [name, phase] of state.nodePhases) {
        const list = seen.get(name) ?? [];
        if (list.at(-1) !== phase) list.push(phase);
        seen.set(name, list);
      }
      if (state.done) break;
    }
    // Every node goes through every phase once, in order.
    for (const name of [...plan.masterNodes, ...plan.workerNodes]) {
      expect(seen.get(name), name).toEqual(['Pending', 'Draining', 'Updating', 'Rebooting', 'Completed']);
    }
  });
});

describe('simulated MachineConfigNodes', () => {
  it('give, at every step, the report the annotations give, and are in step with them', () => {
    for (let step = 0; step < 200; step++) {
      const state = simulatedState(plan, step);
      const now = BigInt(plan.startedAtSeconds + step * plan.stepSeconds + 30) * SECOND;
      const snapshot = snapshotAt(step);
      const withMcns = { ...snapshot, machineConfigNodes: [...state.machineConfigNodes.values()] };
      expect(renderUpdateStatus(assessUpdateStatus(withMcns, now), 'all'), `step ${step}`).toBe(
        renderUpdateStatus(assessUpdateStatus(snapshot, now), 'all'),
      );
      for (const node of snapshot.nodes) {
        const mcn = state.machineConfigNodes.get(node.metadata?.name ?? '');
        expect(machineConfigNodeInStep(node, mcn), `step ${step} ${node.metadata?.name}`).toBe(mcn);
      }
      if (state.done) break;
    }
  });

  it('report the drain: a node is Draining exactly while its MachineConfigNode says so', () => {
    for (let step = 0; step < 200; step++) {
      const state = simulatedState(plan, step);
      for (const [name, phase] of state.nodePhases) {
        const mcn = state.machineConfigNodes.get(name);
        expect(mcn && isMachineConfigNodeDraining(mcn), `step ${step} ${name}`).toBe(phase === 'Draining');
      }
      if (state.done) break;
    }
  });
});
