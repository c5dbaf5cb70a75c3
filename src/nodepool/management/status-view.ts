// Display of NodePool performance-profile conditions for `tessera nodepool status`: pure assess + render.
// Guarantees: deterministic text for the same NodePools and `now`; multi-line messages are folded onto one line.
import type { NodePool, NodePoolCondition } from '../api/types.js';
import { APPLIED_SUCCESSFULLY_CONDITION, NODEPOOL_CONDITION_PREFIX } from '../constants.js';

export interface NodePoolStatusRow {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly age: string;
  readonly message: string;
}

export interface NodePoolStatusDisplay {
  readonly nodePool: string;
  readonly cluster: string;
  /** One-line verdict from the summary condition. */
  readonly verdict: string;
  readonly rows: readonly NodePoolStatusRow[];
}

/** "3d4h", "5m10s", "42s": the largest two units of a duration. */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  const parts: string[] = [];
  let rest = s;
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || parts.length > 0) parts.push(`${n}${unit}`);
    if (parts.length === 2) break;
  }
  return parts.length > 0 ? (parts[1]?.startsWith('0') ? (parts[0] ?? '0s') : parts.join('')) : '0s';
}

function isPerformance(c: NodePoolCondition): boolean {
  return c.type === APPLIED_SUCCESSFULLY_CONDITION || c.type.startsWith(`${NODEPOOL_CONDITION_PREFIX}/`);
}

function verdictOf(summary: NodePoolCondition | undefined): string {
  if (!summary) return 'no PerformanceProfile referenced';
  switch (summary.status) {
    case 'True':
      return 'PerformanceProfile applied';
    case 'False':
      return `PerformanceProfile not applied: ${summary.reason ?? ''}`;
    case 'Unknown':
    default: // a status no API version defines: show it as unknown
      return `PerformanceProfile status unknown: ${summary.reason ?? ''}`;
  }
}

/** What to show for one NodePool; `all` includes conditions of other controllers. */
export function assessNodePoolStatus(np: NodePool, now: number, all = false): NodePoolStatusDisplay {
  const conditions = (np.status?.conditions ?? []).filter((c) => all || isPerformance(c));
  const summary = np.status?.conditions?.find((c) => c.type === APPLIED_SUCCESSFULLY_CONDITION);
  return {
    nodePool: `${np.metadata.namespace ?? ''}/${np.metadata.name ?? ''}`,
    cluster: np.spec.clusterName,
    verdict: verdictOf(summary),
    rows: conditions.map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason ?? '',
      age: shortDuration(now - Date.parse(c.lastTransitionTime)),
      message: (c.message ?? '')
        .trim()
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .join(' | '),
    })),
  };
}

/** Text table of several NodePools, blank line between them. */
export function renderNodePoolStatus(displays: readonly NodePoolStatusDisplay[]): string {
  if (displays.length === 0) return 'No NodePools found.\n';
  const blocks = displays.map((d) => {
    const header = `NodePool ${d.nodePool} (HostedCluster ${d.cluster}): ${d.verdict}`;
    if (d.rows.length === 0) return `${header}\n`;
    const head: NodePoolStatusRow = {
      type: 'CONDITION',
      status: 'STATUS',
      reason: 'REASON',
      age: 'AGE',
      message: 'MESSAGE',
    };
    const rows = [head, ...d.rows];
    const width = (k: keyof NodePoolStatusRow): number => Math.max(...rows.map((r) => r[k].length));
    const w = { type: width('type'), status: width('status'), reason: width('reason'), age: width('age') };
    const lines = rows.map((r) =>
      `  ${r.type.padEnd(w.type)}  ${r.status.padEnd(w.status)}  ${r.reason.padEnd(w.reason)}  ${r.age.padEnd(w.age)}  ${r.message}`.trimEnd(),
    );
    return `${header}\n${lines.join('\n')}\n`;
  });
  return blocks.join('\n');
}
