// One count of nodes by category feeds the pool roll-up and the "Omitted additional ..." summary line; the two
// differ, as in oc, only in what "done" means (phase Updated vs at the latest version). Nodes reach pools
// through the runtime's one label-selector matcher.
import { describe, expect, it } from 'vitest';
import { InvalidSelectorError } from './errors.js';
import type { LabelSelector, MachineConfigPool } from './inputs.js';
import { renderPoolNodes } from './render.js';
import {
  NodeAssessment,
  NodePhase,
  type NodeStatus,
  assessPool,
  countNodes,
  nodesByPool,
} from './workerpool.js';

function node(name: string, over: Partial<NodeStatus>): NodeStatus {
  return {
    name,
    assessment: NodeAssessment.Outdated,
    phase: NodePhase.Pending,
    version: '4.16.0',
    estimate: '?',
    message: '',
    isUnavailable: false,
    isDegraded: false,
    isUpdating: false,
    isUpdated: false,
    ...over,
  };
}

const updated = { assessment: NodeAssessment.Completed, phase: NodePhase.Updated, isUpdated: true };
// The daemon reports Done, the update is not confirmed yet: phase Updated, not at the latest version.
const doneNotConfirmed = { assessment: NodeAssessment.Completed, phase: NodePhase.Updated, isUpdating: true };
const draining = { assessment: NodeAssessment.Progressing, phase: NodePhase.Draining, isUpdating: true };
const paused = { assessment: NodeAssessment.Excluded, phase: NodePhase.Paused };

const nodes = [
  ...Array.from({ length: 10 }, (_, i) => node(`shown-${i}`, updated)),
  node('a-updated', updated),
  node('b-done', doneNotConfirmed),
  node('c-draining', draining),
  node('d-paused', paused),
  node('e-pending', {}),
  node('f-unavailable-updating', { ...draining, phase: NodePhase.Updating, isUnavailable: true }),
];

describe('countNodes', () => {
  it('counts each category once, with both notions of done', () => {
    expect(countNodes(nodes.slice(10))).toEqual({
      total: 6,
      available: 5,
      degraded: 0,
      progressing: 2,
      draining: 1,
      excluded: 1,
      pending: 1,
      completed: 1,
      updatedPhase: 2,
    });
  });

  it('feeds the pool roll-up: outdated is every phase but Updated', () => {
    const pool: MachineConfigPool = { metadata: { name: 'worker' } };
    expect(assessPool(pool, nodes).status.overview).toEqual({
      total: 16,
      available: 15,
      progressing: 2,
      outdated: 4,
      draining: 1,
      excluded: 1,
      degraded: 0,
    });
  });

  it('feeds the omitted-nodes line: outdated is every node not at the latest version', () => {
    const pool = assessPool({ metadata: { name: 'worker' } }, nodes).status;
    expect(renderPoolNodes(pool, false)).toContain(
      'Omitted additional 6 Total, 1 Completed, 5 Available, 2 Progressing, 5 Outdated, 1 Draining, 1 Excluded, and 0 Degraded nodes.',
    );
  });
});

describe('nodesByPool (the runtime label selector, with oc meaning for a null nodeSelector)', () => {
  const n = (name: string, labels: Record<string, string>) => ({ metadata: { name, labels } });
  const nodesIn = [
    n('m0', { 'node-role.kubernetes.io/master': '' }),
    n('w0', { 'node-role.kubernetes.io/worker': '' }),
    n('i0', { 'node-role.kubernetes.io/worker': '', 'node-role.kubernetes.io/infra': '' }),
  ];
  const pool = (name: string, nodeSelector: LabelSelector | null): MachineConfigPool => ({
    metadata: { name },
    spec: { nodeSelector },
  });

  it('assigns master first, then custom pools, then worker; a null selector matches no node', () => {
    const byPool = nodesByPool(
      [
        pool('master', { matchLabels: { 'node-role.kubernetes.io/master': '' } }),
        pool('infra', { matchExpressions: [{ key: 'node-role.kubernetes.io/infra', operator: 'Exists' }] }),
        pool('empty', null),
        pool('worker', { matchLabels: { 'node-role.kubernetes.io/worker': '' } }),
      ],
      nodesIn,
    );
    expect([...byPool].map(([p, list]) => [p, list.map((x) => x.metadata?.name)])).toEqual([
      ['master', ['m0']],
      ['worker', ['w0']],
      ['infra', ['i0']],
    ]);
  });

  it('gives an empty selector every node it reaches', () => {
    const byPool = nodesByPool([pool('all', {})], nodesIn);
    expect(byPool.get('all')?.length).toBe(3);
  });

  it('fails, naming the pool, on a selector the API would refuse (as LabelSelectorAsSelector does)', () => {
    for (const bad of [
      { matchExpressions: [{ key: 'k', operator: 'Near' }] },
      { matchExpressions: [{ key: 'k', operator: 'In', values: [] }] },
      { matchLabels: { k: 'not a value!' } },
    ]) {
      expect(() => nodesByPool([pool('infra', bad)], nodesIn)).toThrow(InvalidSelectorError);
      expect(() => nodesByPool([pool('infra', bad)], nodesIn)).toThrow(/from the pool: infra/);
    }
  });
});
