// The Update view: the update-status area's own assessment (the one `tessera upgrade status` prints) turned into the
// page's JSON: progress bars for the control plane and each pool, node cells by phase grouped by pool, and the
// health insights in oc's words. Pure: the caller passes the observed objects and "now".
import { assessUpdateStatus, type UpdateStatusReport } from '../updatestatus/assess.js';
import { UpdateStatusError } from '../updatestatus/errors.js';
import { type Instant, formatRFC3339, isZeroTime } from '../updatestatus/gotime.js';
import type { ClusterSnapshot } from '../updatestatus/inputs.js';
import { healthItems, shortDuration, vagueUnder, versionsText } from '../updatestatus/render.js';
import { nodeAssessmentName, nodePhaseName, type PoolStatus } from '../updatestatus/workerpool.js';
import { type PageRequest, FIRST_PAGE, pageOf } from './paging.js';
import {
  type CompletionSample,
  type InsightRow,
  type NodeCell,
  type NodeGroup,
  type ProgressRow,
  type Unavailable,
  type UpdateView,
  NODE_PHASES,
} from './view-types.js';

/** The objects the Update view reads; `clusterVersion` undefined when the cluster has none named `version`. */
export type UpdateInputs = Omit<ClusterSnapshot, 'clusterVersion'> & {
  readonly clusterVersion: ClusterSnapshot['clusterVersion'] | undefined;
};

export interface UpdatePaging {
  /** Per pool name; pools not named get the first page. */
  readonly nodes?: ReadonlyMap<string, PageRequest>;
  readonly insights?: PageRequest;
}

/** The assessment, or why there is none (a sentence for the page). */
export function assessForView(inputs: UpdateInputs, now: Instant): UpdateStatusReport | Unavailable {
  if (inputs.clusterVersion === undefined)
    return unavailable(
      'No ClusterVersion "version": this cluster does not serve config.openshift.io/v1 ClusterVersions (not OpenShift) or has none yet. On the local cluster, `tessera dev simulate-update` (or `npm start`) creates one.',
    );
  try {
    return assessUpdateStatus({ ...inputs, clusterVersion: inputs.clusterVersion }, now);
  } catch (err) {
    // oc refuses to report without ClusterOperators or a Progressing condition; say so instead of failing.
    if (err instanceof UpdateStatusError) return unavailable(err.message);
    throw err;
  }
}

export function buildUpdateView(
  report: UpdateStatusReport,
  history: readonly CompletionSample[],
  paging: UpdatePaging = {},
): UpdateView {
  const cp = report.controlPlane;
  const ops = cp.operators;
  const controlPlane: ProgressRow = {
    name: 'Control plane',
    assessment: cp.assessment,
    completion: round1(cp.completion),
    updated: ops.updated,
    total: ops.total,
    estimate:
      cp.estimatedTimeToComplete === 0n || ops.updated === ops.total
        ? ''
        : vagueUnder(cp.estimatedTimeToComplete, cp.estimatedDuration, cp.versions.isMultiArchMigration),
    duration: shortDuration(cp.duration),
  };
  const pools = [...(report.controlPlanePool ? [report.controlPlanePool] : []), ...report.workerPools];
  const insights: InsightRow[] = healthItems(report.health).map((item) => ({
    since: item.since,
    level: item.level as InsightRow['level'],
    impact: item.impact,
    message: item.message,
    description: item.description,
    reference: item.reference,
    resources: item.kinds.map(
      (kind, i) => `${kind}${item.resources.get(kind)?.[countBefore(item.kinds, i)] ?? ''}`,
    ),
  }));
  return {
    available: true,
    updating: report.updating,
    versions: versionsText(cp.versions),
    startedAt: isZeroTime(report.startedAt) ? '' : formatRFC3339(report.startedAt),
    controlPlane,
    pools: pools.map(poolRow),
    nodeGroups: pools.map((pool) => nodeGroup(pool, paging.nodes?.get(pool.name) ?? FIRST_PAGE)),
    insights: pageOf(insights, paging.insights ?? FIRST_PAGE),
    history,
  };
}

/** How many earlier entries of `kinds` equal kinds[i] (the index of its name among that kind's names). */
function countBefore(kinds: readonly string[], i: number): number {
  let n = 0;
  for (let j = 0; j < i; j++) if (kinds[j] === kinds[i]) n++;
  return n;
}

function poolRow(pool: PoolStatus): ProgressRow {
  const ov = pool.overview;
  return {
    name: pool.name,
    assessment: pool.nodes.length === 0 ? 'Empty' : pool.assessment,
    completion: Number.isNaN(pool.completion) ? 0 : round1(pool.completion),
    updated: ov.total - ov.outdated,
    total: ov.total,
    estimate: '',
    duration: '',
  };
}

function nodeGroup(pool: PoolStatus, page: PageRequest): NodeGroup {
  const counts = new Map<string, number>();
  const cells: NodeCell[] = pool.nodes.map((n) => {
    const phase = nodePhaseName(n.phase);
    counts.set(phase, (counts.get(phase) ?? 0) + 1);
    return {
      name: n.name,
      phase,
      assessment: nodeAssessmentName(n.assessment),
      version: n.version,
      estimate: n.estimate,
      message: n.message,
    };
  });
  return {
    pool: pool.name,
    phaseCounts: NODE_PHASES.map((phase) => ({ phase, count: counts.get(phase) ?? 0 })),
    nodes: pageOf(cells, page),
  };
}

/** The point to add to the completion-over-time plot for this assessment. */
export function completionSample(report: UpdateStatusReport, now: Instant): CompletionSample {
  const pools = [...(report.controlPlanePool ? [report.controlPlanePool] : []), ...report.workerPools];
  const elapsed = isZeroTime(report.startedAt) ? 0 : Number((now - report.startedAt) / 1_000_000_000n);
  return {
    atSeconds: Math.max(0, elapsed),
    controlPlane: round1(report.controlPlane.completion),
    pools: pools.map((p) => ({
      name: p.name,
      completion: Number.isNaN(p.completion) ? 0 : round1(p.completion),
    })),
  };
}

/** Most samples kept; older ones are thinned (every other one dropped), so an hour-long update still fits. */
export const MAX_HISTORY_SAMPLES = 512;

/**
 * `history` with `sample` added: a sample equal to the last one (same completions) is not added; a sample from
 * another update (earlier than the last one) starts the history again; past MAX_HISTORY_SAMPLES every other old
 * sample is dropped (the first and the newest are kept).
 */
export function appendSample(
  history: readonly CompletionSample[],
  sample: CompletionSample,
): CompletionSample[] {
  const last = history.at(-1);
  if (last && sample.atSeconds < last.atSeconds) return [sample];
  if (last && sameCompletion(last, sample)) return [...history];
  const next = [...history, sample];
  if (next.length <= MAX_HISTORY_SAMPLES) return next;
  return next.filter((_, i) => i === 0 || i === next.length - 1 || i % 2 === 0);
}

function sameCompletion(a: CompletionSample, b: CompletionSample): boolean {
  return (
    a.controlPlane === b.controlPlane &&
    a.pools.length === b.pools.length &&
    a.pools.every((p, i) => p.name === b.pools[i]?.name && p.completion === b.pools[i]?.completion)
  );
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

function unavailable(missing: string): Unavailable {
  return { available: false, missing };
}
