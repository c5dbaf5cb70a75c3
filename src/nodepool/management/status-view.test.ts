import { describe, expect, it } from 'vitest';
import type { NodePool } from '../api/types.js';
import { assessNodePoolStatus, renderNodePoolStatus, shortDuration } from './status-view.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

const np: NodePool = {
  metadata: { name: 'np-a', namespace: 'clusters', generation: 2 },
  spec: { clusterName: 'hc1' },
  status: {
    conditions: [
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T10:00:00Z', reason: 'AsExpected' },
      {
        type: 'performance.operator.openshift.io/Available',
        status: 'False',
        lastTransitionTime: '2026-01-01T11:55:00Z',
      },
      {
        type: 'performance.operator.openshift.io/Degraded',
        status: 'True',
        reason: 'TunedProfileDegraded',
        message: 'Tuned n1 Degraded Reason: TunedError.\nTuned n1 Degraded Message: failed.\n',
        lastTransitionTime: '2026-01-01T11:55:00Z',
      },
      {
        type: 'PerformanceProfileAppliedSuccessfully',
        status: 'False',
        reason: 'TunedProfileDegraded',
        message: 'Tuned n1 Degraded Reason: TunedError.\n',
        lastTransitionTime: '2026-01-01T11:54:30Z',
      },
    ],
  },
};

describe('tessera nodepool status view', () => {
  it('shows the verdict and only performance conditions, messages on one line', () => {
    expect(renderNodePoolStatus([assessNodePoolStatus(np, NOW)])).toBe(
      [
        'NodePool clusters/np-a (HostedCluster hc1): PerformanceProfile not applied: TunedProfileDegraded',
        '  CONDITION                                    STATUS  REASON                AGE    MESSAGE',
        '  performance.operator.openshift.io/Available  False                         5m',
        '  performance.operator.openshift.io/Degraded   True    TunedProfileDegraded  5m     Tuned n1 Degraded Reason: TunedError. | Tuned n1 Degraded Message: failed.',
        '  PerformanceProfileAppliedSuccessfully        False   TunedProfileDegraded  5m30s  Tuned n1 Degraded Reason: TunedError.',
        '',
      ].join('\n'),
    );
  });

  it('includes other conditions on request, and says when no profile is referenced', () => {
    expect(assessNodePoolStatus(np, NOW, true).rows.map((r) => r.type)[0]).toBe('Ready');
    const bare: NodePool = {
      metadata: { name: 'np-b', namespace: 'clusters' },
      spec: { clusterName: 'hc1' },
    };
    expect(renderNodePoolStatus([assessNodePoolStatus(bare, NOW)])).toBe(
      'NodePool clusters/np-b (HostedCluster hc1): no PerformanceProfile referenced\n',
    );
    expect(renderNodePoolStatus([])).toBe('No NodePools found.\n');
  });

  it('formats ages with their two largest units', () => {
    expect(shortDuration(42_000)).toBe('42s');
    expect(shortDuration(3_600_000 * 26 + 60_000)).toBe('1d2h');
    expect(shortDuration(-5)).toBe('0s');
  });
});
