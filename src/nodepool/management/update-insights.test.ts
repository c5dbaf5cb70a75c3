import { describe, expect, it } from 'vitest';
import { contributionViolation, type UpdateStatusStatus } from '../../updatestatus/informer.js';
import type { NodePool, NodePoolCondition } from '../api/types.js';
import {
  NODEPOOL_INFORMER,
  NODEPOOL_INSIGHTS_REFERENCE,
  PROFILE_SLOW_MS,
  SPARE_POOLS,
  nodePoolContribution,
} from './update-insights.js';

const NOW = Date.UTC(2026, 2, 1, 12, 0, 0);
const T = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString().replace('.000Z', 'Z');
const PP = 'performance.operator.openshift.io/';

function cond(type: string, status: NodePoolCondition['status'], reason = '', message = '', minutesAgo = 5) {
  return { type, status, reason, message, lastTransitionTime: T(minutesAgo) };
}
function nodePool(
  name: string,
  conditions: NodePoolCondition[],
  version = '4.16.1',
  namespace = 'clusters',
): NodePool {
  return {
    metadata: { name, namespace },
    spec: { clusterName: 'hc1' },
    status: { conditions, version } as NodePool['status'],
  };
}
const applied = cond('PerformanceProfileAppliedSuccessfully', 'True', 'AsExpected');
const notUpdating = cond('UpdatingVersion', 'False', 'AsExpected');

/** What the pure function says about one NodePool: [level, impact type, summary] per insight of its pool. */
function said(np: NodePool) {
  const c = nodePoolContribution([np], undefined, NOW);
  return (c.workerPools ?? []).flatMap((p) =>
    p.insights.map((i) => [
      i.insight.health?.impact.level,
      i.insight.health?.impact.type,
      i.insight.health?.impact.summary,
    ]),
  );
}

describe('nodePoolContribution: what a NodePool says', () => {
  it.each<[string, NodePoolCondition[], unknown[]]>([
    ['at rest, profile applied: nothing (no pool)', [notUpdating, applied], []],
    ['no conditions at all: nothing', [], []],
    [
      'updating its release: Info, with the target from HyperShift and status.version as the start',
      [
        cond('UpdatingVersion', 'True', 'AsExpected', 'Updating version in progress. Target version: 4.16.3'),
        applied,
      ],
      [['Info', 'None', 'NodePool clusters/np-a is updating to 4.16.3 (from 4.16.1)']],
    ],
    [
      'updating, target not a version (hostile message): said without it',
      [cond('UpdatingVersion', 'True', 'AsExpected', 'Target version: $(rm -rf /)'), applied],
      [['Info', 'None', 'NodePool clusters/np-a is updating to a new release (from 4.16.1)']],
    ],
    [
      'release rollout failed: Error, Update Stalled',
      [cond('UpdatingVersion', 'False', 'InplaceUpgradeFailed', 'Node n1 in nodepool degraded: disk full')],
      [
        [
          'Error',
          'Update Stalled',
          'NodePool clusters/np-a cannot update from 4.16.1 (InplaceUpgradeFailed)',
        ],
      ],
    ],
    [
      'configuration rollout: Info',
      [notUpdating, cond('UpdatingConfig', 'True', 'AsExpected', 'Updating config in progress')],
      [['Info', 'None', 'NodePool clusters/np-a is rolling out a configuration change']],
    ],
    [
      'configuration rollout failed: Error',
      [cond('UpdatingConfig', 'False', 'ValidationFailed', 'bad MachineConfig')],
      [
        [
          'Error',
          'Update Stalled',
          'NodePool clusters/np-a cannot roll out its configuration (ValidationFailed)',
        ],
      ],
    ],
    [
      'profile degraded: Error, naming the NTO reason',
      [
        notUpdating,
        cond('PerformanceProfileAppliedSuccessfully', 'False', 'TunedProfileDegraded', 'tuned failed'),
        cond(`${PP}Available`, 'False', 'TunedProfileDegraded'),
        cond(`${PP}Degraded`, 'True', 'TunedProfileDegraded', 'tuned failed'),
      ],
      [
        [
          'Error',
          'Application Availability',
          'The PerformanceProfile of NodePool clusters/np-a is degraded (TunedProfileDegraded)',
        ],
      ],
    ],
    [
      'profile being applied: Info',
      [
        cond(
          'PerformanceProfileAppliedSuccessfully',
          'False',
          'DeploymentStarting',
          'Deployment is starting',
        ),
        cond(`${PP}Progressing`, 'True', 'DeploymentStarting'),
      ],
      [
        [
          'Info',
          'None',
          'The PerformanceProfile of NodePool clusters/np-a is still being applied (DeploymentStarting)',
        ],
      ],
    ],
    [
      'profile being applied for longer than PROFILE_SLOW_MS: Warning',
      [
        cond(
          'PerformanceProfileAppliedSuccessfully',
          'False',
          'DeploymentStarting',
          '',
          PROFILE_SLOW_MS / 60_000 + 1,
        ),
        cond(`${PP}Progressing`, 'True', 'DeploymentStarting'),
      ],
      [
        [
          'Warning',
          'Update Speed',
          'The PerformanceProfile of NodePool clusters/np-a is still being applied (DeploymentStarting)',
        ],
      ],
    ],
    [
      'profile state unknown (stale status): Warning',
      [
        cond(
          'PerformanceProfileAppliedSuccessfully',
          'Unknown',
          'PerformanceProfileStatusStale',
          'last refreshed 1200s ago',
        ),
      ],
      [
        [
          'Warning',
          'Unknown',
          'The state of the PerformanceProfile of NodePool clusters/np-a is unknown (PerformanceProfileStatusStale)',
        ],
      ],
    ],
    [
      'updating and profile being applied: both, one pool',
      [
        cond('UpdatingVersion', 'True', 'AsExpected', 'Updating version in progress. Target version: 4.17.0'),
        cond('PerformanceProfileAppliedSuccessfully', 'False', 'DeploymentStarting'),
      ],
      [
        ['Info', 'None', 'NodePool clusters/np-a is updating to 4.17.0 (from 4.16.1)'],
        [
          'Info',
          'None',
          'The PerformanceProfile of NodePool clusters/np-a is still being applied (DeploymentStarting)',
        ],
      ],
    ],
  ])('%s', (_name, conditions, expected) => {
    expect(said(nodePool('np-a', conditions))).toEqual(expected);
  });

  it('writes a pool named after the NodePool, with oc-complete Health insights (summary, description, reference)', () => {
    const c = nodePoolContribution(
      [nodePool('np-a', [cond('UpdatingVersion', 'True', 'AsExpected', 'Target version: 4.16.3')])],
      undefined,
      NOW,
    );
    expect(c.name).toBe(NODEPOOL_INFORMER);
    expect(c.controlPlane).toBeUndefined();
    const pool = c.workerPools?.[0];
    expect(pool?.name).toBe('np-a');
    expect(pool?.resource).toEqual({
      group: 'hypershift.openshift.io',
      resource: 'nodepools',
      name: 'np-a',
      namespace: 'clusters',
    });
    const health = pool?.insights[0]?.insight.health;
    expect(health?.scope).toEqual({ type: 'WorkerPool', resources: [pool?.resource] });
    expect(health?.impact.description).toContain('oc get nodepool -n clusters np-a');
    expect(health?.remediation.reference).toBe(NODEPOOL_INSIGHTS_REFERENCE);
    // Started when HyperShift says it did (to the millisecond, so readers do not take it for unknown).
    expect(health?.startedAt).toBe(new Date(NOW - 5 * 60_000).toISOString());
    expect(contributionViolation(c)).toBeUndefined();
  });

  it('keeps uids stable while the finding holds, and a new one for a new target', () => {
    const uids = (message: string) =>
      nodePoolContribution(
        [nodePool('np-a', [cond('UpdatingVersion', 'True', 'AsExpected', message)])],
        undefined,
        NOW,
      ).workerPools?.[0]?.insights.map((i) => i.uid);
    expect(uids('Target version: 4.16.3')).toEqual(uids('Target version: 4.16.3'));
    expect(uids('Target version: 4.16.3')).not.toEqual(uids('Target version: 4.16.4'));
    expect(uids('Target version: 4.16.3')?.[0]).toMatch(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
  });
});

describe('nodePoolContribution: the 32-pool budget and names', () => {
  const failing = (name: string, namespace = 'clusters') =>
    nodePool(
      name,
      [cond('UpdatingVersion', 'False', 'InplaceUpgradeFailed', 'degraded')],
      '4.16.1',
      namespace,
    );
  const updating = (name: string, namespace = 'clusters') =>
    nodePool(
      name,
      [cond('UpdatingVersion', 'True', 'AsExpected', 'Target version: 4.16.3')],
      '4.16.1',
      namespace,
    );
  const mcpPool = (name: string): NonNullable<UpdateStatusStatus['workerPools']>[number] => ({
    name,
    resource: { group: 'machineconfiguration.openshift.io', resource: 'machineconfigpools', name },
    informers: [{ name: 'nodes', insights: [] }],
  });

  it('takes what other informers leave, the most severe first, and says how many are not shown', () => {
    const stored: UpdateStatusStatus = { workerPools: [mcpPool('worker'), mcpPool('infra')] };
    const room = 32 - 2 - SPARE_POOLS;
    const pools = [
      ...Array.from({ length: 50 }, (_, i) => updating(`up-${String(i).padStart(2, '0')}`)),
      failing('zz-failing'),
    ];
    const c = nodePoolContribution(pools, stored, NOW);
    expect(c.workerPools).toHaveLength(room);
    expect(c.workerPools?.map((p) => p.name)).toContain('zz-failing');
    const leftOut = c.controlPlane?.[0]?.insight.health;
    expect(leftOut?.impact).toMatchObject({
      level: 'Info',
      summary: `${51 - room} more NodePools have update or PerformanceProfile findings not shown`,
    });
    expect(leftOut?.scope.resources).toHaveLength(16);
    expect(leftOut?.impact.description).toContain(`and ${51 - room - 16} more`);
    expect(contributionViolation(c)).toBeUndefined();
  });

  it('counts errors among those not shown, and raises the insight to their level', () => {
    const stored: UpdateStatusStatus = {
      workerPools: Array.from({ length: 28 }, (_, i) => mcpPool(`mcp-${i}`)),
    };
    const c = nodePoolContribution([failing('a'), failing('b')], stored, NOW);
    expect(c.workerPools).toEqual([]);
    expect(c.controlPlane?.[0]?.insight.health?.impact).toMatchObject({
      level: 'Error',
      summary: '2 more NodePools have update or PerformanceProfile findings not shown (2 with errors)',
    });
  });

  it("never takes a pool name another informer's pool has, nor one name twice across namespaces", () => {
    const stored: UpdateStatusStatus = { workerPools: [mcpPool('worker')] };
    const c = nodePoolContribution(
      [failing('worker'), updating('np', 'team-a'), updating('np', 'team-b')],
      stored,
      NOW,
    );
    expect(c.workerPools?.map((p) => `${p.resource.namespace}/${p.name}`)).toEqual(['team-a/np']);
    expect(c.controlPlane?.[0]?.insight.health?.impact.description).toContain(
      'not shown: clusters/worker, team-b/np.',
    );
  });

  it("leaves a MachineConfigPool's name to it, even before the node informer wrote its pool", () => {
    const c = nodePoolContribution([failing('worker'), updating('np')], undefined, NOW, ['master', 'worker']);
    expect(c.workerPools?.map((p) => p.name)).toEqual(['np']);
    expect(c.controlPlane?.[0]?.insight.health?.impact.description).toContain('not shown: clusters/worker.');
  });

  it('leaves room for the pools of MachineConfigPools the node informer has not written yet (not master)', () => {
    const mcps = ['master', ...Array.from({ length: 9 }, (_, i) => `mcp-${i}`)];
    const pools = Array.from({ length: 30 }, (_, i) => updating(`np-${String(i).padStart(2, '0')}`));
    const c = nodePoolContribution(pools, { workerPools: [mcpPool('mcp-0')] }, NOW, mcps);
    expect(c.workerPools).toHaveLength(32 - 9 - SPARE_POOLS);
    expect(c.controlPlane?.[0]?.insight.health?.impact.description).toContain(
      '(9 of them MachineConfigPools',
    );
  });

  it('does not share a pool another informer holds, even one about the same NodePool', () => {
    const np = updating('np');
    const external = {
      name: 'np',
      resource: {
        group: 'hypershift.openshift.io',
        resource: 'nodepools',
        name: 'np',
        namespace: 'clusters',
      },
      informers: [{ name: 'external', insights: [] }],
    };
    const c = nodePoolContribution([np], { workerPools: [external] }, NOW);
    expect(c.workerPools).toEqual([]);
    expect(c.controlPlane?.[0]?.insight.health?.impact.summary).toBe(
      '1 more NodePool has update or PerformanceProfile findings not shown',
    );
    // Nor one it wrote itself and another informer then joined (the pool's resource is no longer its own to tell).
    const joined = {
      ...external,
      informers: [
        { name: NODEPOOL_INFORMER, insights: [] },
        { name: 'nodes', insights: [] },
      ],
    };
    expect(nodePoolContribution([np], { workerPools: [joined] }, NOW).workerPools).toEqual([]);
  });

  it('does not count its own pools of the last write as others', () => {
    const own: UpdateStatusStatus = {
      workerPools: Array.from({ length: 32 }, (_, i) => ({
        name: `p-${i}`,
        resource: {
          group: 'hypershift.openshift.io',
          resource: 'nodepools',
          name: `p-${i}`,
          namespace: 'clusters',
        },
        informers: [{ name: NODEPOOL_INFORMER, insights: [] }],
      })),
    };
    expect(nodePoolContribution([updating('p-0')], own, NOW).workerPools).toHaveLength(1);
  });

  it('stays within the contract with hostile names and messages (longest names, 32 KiB messages, 5,000 NodePools)', () => {
    const long = 'x'.repeat(32_768);
    const name = (i: number) => `${'n'.repeat(240)}-${String(i).padStart(5, '0')}`;
    const pools = Array.from({ length: 5_000 }, (_, i) =>
      nodePool(
        name(i),
        [
          cond('UpdatingVersion', 'False', 'R'.repeat(1024), long),
          cond('UpdatingConfig', 'False', 'R'.repeat(1024), long),
          cond('PerformanceProfileAppliedSuccessfully', 'False', 'R'.repeat(1024), long),
          ...Array.from({ length: 8 }, (_, k) => cond(`${PP}C${k}`, 'True', 'R'.repeat(1024), long)),
          cond(`${PP}Degraded`, 'True', 'R', long),
        ],
        long,
        'n'.repeat(63),
      ),
    );
    const c = nodePoolContribution(pools, undefined, NOW);
    expect(c.workerPools).toHaveLength(32 - SPARE_POOLS);
    expect(contributionViolation(c)).toBeUndefined();
    for (const p of c.workerPools ?? [])
      for (const i of p.insights) {
        expect(i.insight.health?.impact.summary.length).toBeLessThanOrEqual(256);
        expect(i.insight.health?.impact.description?.length).toBeLessThanOrEqual(1024);
      }
    // A pool's insights stay small whatever the NodePool holds.
    expect(Buffer.byteLength(JSON.stringify(c))).toBeLessThan(256 * 1024);
  });
});
