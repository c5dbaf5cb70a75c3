// The NodePools view: each NodePool's performance-profile state (the verdict `tessera nodepool status` prints) and
// the conditions Tessera mirrors onto it, with when each last changed. Pure.
import type { NodePool } from '../nodepool/api/types.js';
import {
  APPLIED_SUCCESSFULLY_CONDITION,
  NODEPOOL_CONDITION_PREFIX,
  mirroredConditionType,
} from '../nodepool/constants.js';
import { assessNodePoolStatus } from '../nodepool/management/status-view.js';
import { type PageRequest, FIRST_PAGE, pageOf } from './paging.js';
import type { NodePoolRow, NodePoolView } from './view-types.js';

export function buildNodePoolView(
  nodePools: readonly NodePool[],
  nowMs: number,
  page: PageRequest = FIRST_PAGE,
): NodePoolView {
  const sorted = [...nodePools].sort(
    (a, b) =>
      (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') ||
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
  // Only the requested page is assessed: the rest are counted.
  const window = pageOf(sorted, page);
  const rows: NodePoolRow[] = window.items.map((np) => {
    const display = assessNodePoolStatus(np, nowMs);
    // The same conditions, in the same order, as the display's rows (its filter), for their transition times.
    const conditions = (np.status?.conditions ?? []).filter(
      (c) => c.type === APPLIED_SUCCESSFULLY_CONDITION || c.type.startsWith(`${NODEPOOL_CONDITION_PREFIX}/`),
    );
    return {
      namespace: np.metadata.namespace ?? '',
      name: np.metadata.name ?? '',
      cluster: display.cluster,
      verdict: display.verdict,
      state: stateOf(np),
      conditions: display.rows.map((row, i) => ({
        ...row,
        lastTransitionTime: conditions[i]?.lastTransitionTime ?? '',
      })),
    };
  });
  return { available: true, nodePools: { ...window, items: rows } };
}

/** The row's colour: degraded when the summary is False or any mirrored Degraded condition is True. */
function stateOf(np: NodePool): NodePoolRow['state'] {
  const conditions = np.status?.conditions ?? [];
  const summary = conditions.find((c) => c.type === APPLIED_SUCCESSFULLY_CONDITION);
  if (!summary) return 'none';
  if (conditions.some((c) => c.type === mirroredConditionType('Degraded') && c.status === 'True'))
    return 'degraded';
  if (summary.status === 'True') return 'applied';
  if (summary.status === 'False') return 'degraded';
  return conditions.some((c) => c.type === mirroredConditionType('Progressing') && c.status === 'True')
    ? 'progressing'
    : 'unknown';
}
