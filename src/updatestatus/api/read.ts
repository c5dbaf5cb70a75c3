// Reads a stored UpdateStatus back into an UpdateStatusReport, so `tessera upgrade status` can print what the
// controller wrote, with the same renderer as for a client-side assessment. Pure; `now` is the display time.
// What the API does not carry is approximated, and the text can then differ from oc's: an updating operator's
// REASON shows the API reason (Progressing), only the nodes the controller listed appear (the others are counted
// in the "Omitted" line), and estimates are those of the last write.
import type { UpdateStatusReport } from '../assess.js';
import type { ControlPlaneAssessment, UpdatingOperator } from '../controlplane.js';
import {
  type Duration,
  type Instant,
  GO_ZERO_TIME,
  MINUTE,
  SECOND,
  parseTime,
  addDurations,
  roundDuration,
  sub,
  truncateDuration,
} from '../gotime.js';
import { assessHealth } from '../health.js';
import { ImpactLevel, type ImpactType, type ScopeResource, type UpdateInsight } from '../insight.js';
import {
  NodeAssessment,
  NodePhase,
  type NodeStatus,
  type PoolStatus,
  countNodes,
  sortNodesForDisplay,
} from '../workerpool.js';
import type { Condition, ControlPlaneInsight, UpdateStatusStatus, WorkerPoolInsight } from './schema.js';
import { readmeSectionUrl } from '../../runtime/light.js';
import { type InformerState, byInformerPrecedence, informerStates, liveInsights } from './informers.js';

type AnyInsight = ControlPlaneInsight | WorkerPoolInsight;
type MachineConfigPoolInsight = NonNullable<WorkerPoolInsight['machineConfigPool']>;
type NodeInsight = NonNullable<WorkerPoolInsight['node']>;
type HealthInsight = NonNullable<WorkerPoolInsight['health']>;

const time = (value: string | undefined): Instant => parseTime(value) ?? parseTime('') ?? 0n;
const cond = (conditions: readonly Condition[] | undefined, type: string) =>
  conditions?.find((c) => c.type === type);

const KIND_OF_RESOURCE: Record<string, string> = {
  clusterversions: 'ClusterVersion',
  clusteroperators: 'ClusterOperator',
  machineconfigpools: 'MachineConfigPool',
  nodes: 'Node',
  namespaces: 'Namespace',
  // HyperShift NodePools, in the health insights of the `nodepools` informer.
  nodepools: 'NodePool',
};

const LEVELS: Record<string, ImpactLevel> = {
  Info: ImpactLevel.Info,
  Warning: ImpactLevel.Warning,
  Error: ImpactLevel.Error,
  Critical: ImpactLevel.Critical,
};

const PHASES: Record<string, NodePhase> = {
  Draining: NodePhase.Draining,
  Updating: NodePhase.Updating,
  Rebooting: NodePhase.Rebooting,
  Paused: NodePhase.Paused,
  Pending: NodePhase.Pending,
  Completed: NodePhase.Updated,
};

function nodeStatus(n: NodeInsight): NodeStatus {
  const phase = PHASES[cond(n.conditions, 'Updating')?.reason ?? ''] ?? NodePhase.Pending;
  const isUpdated = phase === NodePhase.Updated;
  const isUpdating =
    phase === NodePhase.Draining || phase === NodePhase.Updating || phase === NodePhase.Rebooting;
  const isUnavailable = cond(n.conditions, 'Available')?.status === 'False';
  const isDegraded = cond(n.conditions, 'Degraded')?.status === 'True';
  let assessment: NodeAssessment;
  let estimate: string;
  if (isDegraded || (isUnavailable && !isUpdating)) {
    assessment = isDegraded ? NodeAssessment.Degraded : NodeAssessment.Unavailable;
    estimate = isUpdated ? '-' : '?';
  } else if (isUpdating) {
    assessment = NodeAssessment.Progressing;
    estimate = n.estimatedToComplete ? `+${n.estimatedToComplete}` : '?';
  } else if (phase === NodePhase.Paused) {
    [assessment, estimate] = [NodeAssessment.Excluded, '-'];
  } else if (isUpdated) {
    [assessment, estimate] = [NodeAssessment.Completed, '-'];
  } else {
    [assessment, estimate] = [NodeAssessment.Outdated, '?'];
  }
  return {
    name: n.name,
    assessment,
    phase,
    version: n.version ?? '',
    estimate,
    message: n.message ?? '',
    isUnavailable,
    isDegraded,
    isUpdating,
    isUpdated,
  };
}

function poolStatus(mcp: MachineConfigPoolInsight, nodes: NodeStatus[]): PoolStatus {
  const count = (type: string) => mcp.summaries?.find((s) => s.type === type)?.count ?? 0;
  const overview = {
    total: count('Total'),
    available: count('Available'),
    progressing: count('Progressing'),
    outdated: count('Outdated'),
    draining: count('Draining'),
    excluded: count('Excluded'),
    degraded: count('Degraded'),
  };
  sortNodesForDisplay(nodes);
  const listed = countNodes(nodes);
  const unlistedTotal = Math.max(0, overview.total - nodes.length);
  return {
    name: mcp.name,
    assessment: mcp.assessment,
    completion: ((overview.total - overview.outdated) / overview.total) * 100,
    overview,
    nodes,
    ...(unlistedTotal > 0
      ? {
          unlisted: {
            total: unlistedTotal,
            completed: Math.max(0, overview.total - overview.outdated - listed.completed),
            available: Math.max(0, overview.available - listed.available),
            progressing: Math.max(0, overview.progressing - listed.progressing),
            outdated: Math.max(0, overview.outdated - (listed.total - listed.completed)),
            draining: Math.max(0, overview.draining - listed.draining),
            excluded: Math.max(0, overview.excluded - listed.excluded),
          },
        }
      : {}),
  };
}

function healthInsight(h: HealthInsight, acquiredAt: string): UpdateInsight {
  const resources: ScopeResource[] = (h.scope.resources ?? []).map((r) => ({
    group: r.group ?? '',
    kind: KIND_OF_RESOURCE[r.resource] ?? r.resource,
    name: r.name,
    ...(r.namespace ? { namespace: r.namespace } : {}),
  }));
  return {
    // The projection stamps unknown starts with the acquisition time.
    startedAt: h.startedAt === acquiredAt ? GO_ZERO_TIME : time(h.startedAt),
    scope: { type: h.scope.type, resources },
    impact: {
      level: LEVELS[h.impact.level] ?? ImpactLevel.Info,
      type: h.impact.type as ImpactType,
      summary: h.impact.summary,
      description: h.impact.description ?? '',
    },
    remediation: { reference: h.remediation.reference },
  };
}

/** oc's rounding of an elapsed duration: whole minutes above 10m, else whole seconds. */
function ocRound(d: Duration): Duration {
  return d > 10n * MINUTE ? roundDuration(d, MINUTE) : roundDuration(d, SECOND);
}

/** The report behind a stored status; undefined when it holds no ClusterVersion insight to build on. */
export function reportFromUpdateStatus(
  stored: UpdateStatusStatus,
  now: Instant,
  options: { readonly livenessAt?: Instant } = {},
): UpdateStatusReport | undefined {
  // Only live informers' insights count (the informer contract); the others become one health insight each.
  // Liveness is judged at `livenessAt` (the CLI passes the wall clock: `--now` moves the display, not the present).
  const livenessAt = options.livenessAt ?? now;
  const states = informerStates(stored, Number(livenessAt / 1_000_000n));
  const status = inReadingOrder(liveInsights(stored, states));
  const cpInsights: AnyInsight[] = (status.controlPlane?.informers ?? []).flatMap((i) =>
    (i.insights ?? []).map((x) => x.insight),
  );
  const cv = cpInsights.flatMap((i) =>
    'clusterVersion' in i && i.clusterVersion ? [i.clusterVersion] : [],
  )[0];
  if (cv === undefined) return undefined;

  const operators = cpInsights.flatMap((i) =>
    'clusterOperator' in i && i.clusterOperator ? [i.clusterOperator] : [],
  );
  const updatingOps: UpdatingOperator[] = [];
  let updated = 0;
  let waiting = 0;
  let unavailable = 0;
  let degraded = 0;
  for (const o of operators) {
    const u = cond(o.conditions, 'Updating');
    const h = cond(o.conditions, 'Healthy');
    if (u?.reason === 'Updated') updated++;
    else if (u?.status === 'True') {
      updatingOps.push({
        name: o.name,
        reason: u.reason,
        message: u.message,
        since: time(u.lastTransitionTime),
      });
    } else waiting++;
    if (h?.reason === 'Unavailable') unavailable++;
    else if (h?.reason === 'Degraded') degraded++;
  }

  const startedAt = time(cv.startedAt);
  const completed = cv.assessment === 'Completed';
  // A completed control plane without completedAt: the ClusterVersion has not recorded the time yet (project.ts).
  const completionAt = completed && cv.completedAt !== undefined ? time(cv.completedAt) : now;
  const updatingFor = sub(completionAt, startedAt);
  const estimatedAt = cv.estimatedCompletedAt ? time(cv.estimatedCompletedAt) : undefined;
  const remaining = estimatedAt !== undefined && !completed ? ocRound(sub(estimatedAt, now)) : 0n;
  let assessment: ControlPlaneAssessment = 'Progressing';
  if (completed) assessment = 'Completed';
  else if (remaining < -10n * MINUTE || cv.assessment === 'Degraded') assessment = 'Stalled';
  else if (remaining < 0n) assessment = 'Progressing - Slow';
  const meta = (m: readonly { key: string }[] | undefined, key: string) =>
    (m ?? []).some((x) => x.key === key);

  const pools: PoolStatus[] = [];
  // Where two informers report the same pool or node, the first in reading order counts (Tessera's own first):
  // another informer adds to the report, it does not print a pool or a node twice.
  const collect = (insights: AnyInsight[]) => {
    const nodesByPool = new Map<string, NodeStatus[]>();
    const seenNodes = new Set<string>();
    for (const i of insights) {
      if ('node' in i && i.node) {
        const key = `${i.node.poolResource.name}/${i.node.name}`;
        if (seenNodes.has(key)) continue;
        seenNodes.add(key);
        const list = nodesByPool.get(i.node.poolResource.name) ?? [];
        list.push(nodeStatus(i.node));
        nodesByPool.set(i.node.poolResource.name, list);
      }
    }
    for (const i of insights) {
      if ('machineConfigPool' in i && i.machineConfigPool) {
        const name = i.machineConfigPool.name;
        if (pools.some((p) => p.name === name)) continue;
        pools.push(poolStatus(i.machineConfigPool, nodesByPool.get(name) ?? []));
      }
    }
  };
  collect(cpInsights);
  for (const wp of status.workerPools ?? [])
    collect((wp.informers ?? []).flatMap((i) => (i.insights ?? []).map((x) => x.insight)));
  const controlPlanePool = pools.find((p) => p.name === 'master');
  const workerPools = pools.filter((p) => p.name !== 'master');

  const entries = [
    ...(status.controlPlane?.informers ?? []).flatMap((i) => i.insights ?? []),
    ...(status.workerPools ?? []).flatMap((wp) => (wp.informers ?? []).flatMap((i) => i.insights ?? [])),
  ];
  const health: UpdateInsight[] = [
    ...entries.flatMap((e) => (e.insight.health ? [healthInsight(e.insight.health, e.acquiredAt)] : [])),
    ...informerHealthInsights(states, livenessAt),
  ];

  const progressing = cond(status.controlPlane?.conditions, 'Updating')?.status === 'True';
  const roundedFor = roundDuration(sub(now, startedAt), SECOND);
  return {
    updating: progressing || workerPools.some((p) => p.overview.total > 0 && p.completion !== 100),
    controlPlaneProgressing: progressing,
    evaluatedAt: now,
    startedAt,
    updatingFor: roundedFor,
    controlPlane: {
      assessment,
      completion: (updated / operators.length) * 100,
      completionAt,
      duration: ocRound(updatingFor),
      estimatedDuration:
        estimatedAt !== undefined && !completed
          ? truncateDuration(addDurations(updatingFor, remaining), MINUTE)
          : 0n,
      estimatedTimeToComplete: remaining,
      operators: {
        total: operators.length,
        unavailable,
        degraded,
        updated,
        waiting,
        updating: updatingOps,
        statuses: [],
      },
      versions: {
        target: cv.versions.target.version,
        previous: cv.versions.previous.version,
        isTargetInstall: meta(cv.versions.previous.metadata, 'Installation'),
        isPreviousPartial: meta(cv.versions.previous.metadata, 'Partial'),
        isMultiArchMigration: meta(cv.versions.target.metadata, 'Architecture'),
      },
    },
    controlPlanePool,
    workerPools,
    insights: health,
    health: assessHealth(health, roundedFor, now),
  };
}

/** Go's byte-wise string order. */
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The order the text is built in, whatever order the API server merged informers and pools in: Tessera's
 * control-plane and node informers first (oc's gathering order), then the others by name; pools by name, as oc
 * lists them.
 */
function inReadingOrder(status: UpdateStatusStatus): UpdateStatusStatus {
  return {
    ...status,
    ...(status.controlPlane
      ? {
          controlPlane: {
            ...status.controlPlane,
            informers: [...(status.controlPlane.informers ?? [])].sort(byInformerPrecedence),
          },
        }
      : {}),
    ...(status.workerPools
      ? {
          workerPools: [...status.workerPools]
            .sort((a, b) => byteOrder(a.name, b.name))
            .map((p) => ({ ...p, informers: [...(p.informers ?? [])].sort(byInformerPrecedence) })),
        }
      : {}),
  };
}

/** Where the informer contract is explained (a health insight's remediation reference). */
export const INFORMER_CONTRACT_REFERENCE = readmeSectionUrl('update-status-informers');

/** A Warning health insight for each informer whose insights are left out: readers must not trust silence. */
export function informerHealthInsights(states: readonly InformerState[], now: Instant): UpdateInsight[] {
  const nowMs = Number(now / 1_000_000n);
  return states.flatMap((s): UpdateInsight[] => {
    if (s.state === 'live') return [];
    const since = s.heartbeatAtMs !== undefined ? BigInt(s.heartbeatAtMs) * 1_000_000n : GO_ZERO_TIME;
    const summary =
      s.state === 'over-budget'
        ? `Informer ${s.name} reports ${s.bytes} bytes of insights, over its budget; they are not shown`
        : `Informer ${s.name} has not reported for ${s.heartbeatAtMs !== undefined && s.heartbeatAtMs <= nowMs ? `${Math.round((nowMs - s.heartbeatAtMs) / 60_000)}m` : 'a while'}; its insights are not shown`;
    return [
      {
        startedAt: since,
        scope: { type: 'ControlPlane', resources: [] },
        impact: {
          level: ImpactLevel.Warning,
          type: 'Unknown',
          summary,
          description:
            s.state === 'over-budget'
              ? 'An informer wrote more than the UpdateStatus informer contract allows; the aggregator removes its insights until it writes less.'
              : 'The component that wrote these insights stopped renewing its heartbeat: it may be down, or unable to write. What it reported is no longer trusted, and what it would report now is unknown.',
        },
        remediation: { reference: INFORMER_CONTRACT_REFERENCE },
      },
    ];
  });
}

/** True when `status` says its controller could gather and interpret the data. */
export function isHealthyStatus(status: UpdateStatusStatus | undefined): boolean {
  return cond(status?.conditions, 'Healthy')?.status === 'True';
}
