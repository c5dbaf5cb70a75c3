// Ranks insights for the "Update Health" section (oc's rules): incomplete insights dropped, then most severe
// first and, within a level, most recent first (Go's unstable sort by time, then a stable sort by level, whose
// exact order of ties we reproduce). With nothing to report, one "Update is proceeding well" line.
import { type Duration, type Instant, addToTime, negateDuration } from './gotime.js';
import { goSortSlice } from './gofmt.js';
import { ImpactLevel, type UpdateInsight, isIncomplete } from './insight.js';

export interface UpdateHealth {
  readonly evaluatedAt: Instant;
  readonly insights: readonly UpdateInsight[];
  /** False when only the synthetic "proceeding well" insight is present (details add nothing). */
  readonly hasDetails: boolean;
}

export function assessHealth(
  insights: readonly UpdateInsight[],
  updatingFor: Duration,
  now: Instant,
): UpdateHealth {
  const ranked = insights.filter((i) => !isIncomplete(i));
  goSortSlice(ranked, (a, b) => a.startedAt > b.startedAt);
  // Array.prototype.sort is stable, like sort.SliceStable.
  ranked.sort((a, b) => b.impact.level - a.impact.level);
  if (ranked.length === 0) {
    return {
      evaluatedAt: now,
      insights: [
        {
          // `now.Add(-updatingFor)`: negating math.MinInt64 leaves it negative, as in Go.
          startedAt: addToTime(now, negateDuration(updatingFor)),
          scope: { type: 'Cluster', resources: [] },
          impact: {
            level: ImpactLevel.Info,
            type: 'None',
            summary: 'Update is proceeding well',
            description: '',
          },
          remediation: { reference: '' },
        },
      ],
      hasDetails: false,
    };
  }
  return { evaluatedAt: now, insights: ranked, hasDetails: true };
}
