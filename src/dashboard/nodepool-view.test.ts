import { describe, expect, it } from 'vitest';
import type { NodePool } from '../nodepool/api/types.js';
import { APPLIED_SUCCESSFULLY_CONDITION, mirroredConditionType } from '../nodepool/constants.js';
import { buildNodePoolView } from './nodepool-view.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');

function nodePool(name: string, conditions: NonNullable<NodePool['status']>['conditions']): NodePool {
  return {
    metadata: { namespace: 'clusters', name },
    spec: { clusterName: 'hc', replicas: 1 },
    status: { conditions },
  } as unknown as NodePool;
}

const cond = (
  type: string,
  status: 'True' | 'False' | 'Unknown',
  at: string,
  reason = 'AsExpected',
  message = '',
) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: at,
});

describe('the NodePools view', () => {
  it("shows each NodePool's profile state and the mirrored conditions with when each changed", () => {
    const view = buildNodePoolView(
      [
        nodePool('b-degraded', [
          cond(
            APPLIED_SUCCESSFULLY_CONDITION,
            'False',
            '2026-01-01T11:50:00Z',
            'TunedProfileDegraded',
            'tuned <script>x</script>',
          ),
          cond(
            mirroredConditionType('Degraded'),
            'True',
            '2026-01-01T11:55:00Z',
            'TunedProfileDegraded',
            'line 1\nline 2',
          ),
          cond('Ready', 'True', '2026-01-01T10:00:00Z'),
        ]),
        nodePool('a-applied', [cond(APPLIED_SUCCESSFULLY_CONDITION, 'True', '2026-01-01T11:00:00Z')]),
        nodePool('c-none', [cond('Ready', 'True', '2026-01-01T10:00:00Z')]),
      ],
      NOW,
    );
    const rows = view.nodePools.items;
    expect(rows.map((r) => [r.name, r.state])).toEqual([
      ['a-applied', 'applied'],
      ['b-degraded', 'degraded'],
      ['c-none', 'none'],
    ]);
    expect(rows[1]?.verdict).toBe('PerformanceProfile not applied: TunedProfileDegraded');
    expect(rows[1]?.conditions).toEqual([
      {
        type: APPLIED_SUCCESSFULLY_CONDITION,
        status: 'False',
        reason: 'TunedProfileDegraded',
        message: 'tuned <script>x</script>',
        age: '10m',
        lastTransitionTime: '2026-01-01T11:50:00Z',
      },
      {
        type: mirroredConditionType('Degraded'),
        status: 'True',
        reason: 'TunedProfileDegraded',
        message: 'line 1 | line 2',
        age: '5m',
        lastTransitionTime: '2026-01-01T11:55:00Z',
      },
    ]);
  });

  it('assesses only the requested page of NodePools', () => {
    const many = Array.from({ length: 1_200 }, (_, i) => nodePool(`np-${String(i).padStart(4, '0')}`, []));
    const view = buildNodePoolView(many, NOW, { offset: 1_100, limit: 1_000 });
    expect(view.nodePools.total).toBe(1_200);
    expect(view.nodePools.items).toHaveLength(100);
    expect(view.nodePools.items[0]?.name).toBe('np-1100');
  });
});
