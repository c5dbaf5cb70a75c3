// Projects an assessment (UpdateStatusReport) onto the UpdateStatus API: insights per informer with stable uids,
// the aggregated Updating conditions of the control plane and each worker pool. Pure: `now` stamps acquiredAt and
// condition transitions; pass the previous status to keep both stable for insights and conditions that did not
// change (what the controller does so that an unchanged cluster yields an identical status).
// Values the API cannot hold are adapted: long texts truncated to the API limits, node names hashed into uids,
// health insights without a URL reference (alerts lacking a runbook) left out.
import { createHash } from 'node:crypto';
import type { UpdateStatusReport } from '../assess.js';
import type { ControlPlaneStatus } from '../controlplane.js';
import { formatFloat0 } from '../gofmt.js';
import { type Instant, formatRFC3339, formatRFC3339Nano, isZeroTime, parseTime } from '../gotime.js';
import { type UpdateInsight, impactLevelName } from '../insight.js';
import { NodePhase, type NodeStatus, type PoolStatus, nodePhaseName } from '../workerpool.js';
import type {
  Condition,
  ControlPlaneInsight,
  ResourceRef,
  UpdateStatus,
  UpdateStatusStatus,
  WorkerPoolInsight,
} from './schema.js';
import {
  CONTROL_PLANE_INFORMER,
  GROUP,
  KIND,
  NODE_INFORMER,
  SINGLETON_NAME,
  VERSION,
  VERSION_PATTERN,
} from './names.js';
import { MAX_CONDITION_MESSAGE_LENGTH, transitionTime, truncateText } from '../../runtime/light.js';
import { aggregateUpdateStatus } from './aggregate.js';
import { type InformerContribution, mergeContributions, storedContribution } from './informers.js';

export { CONTROL_PLANE_INFORMER, NODE_INFORMER } from './names.js';

const SEMVER = new RegExp(`^(?:${VERSION_PATTERN})$`);
/** Pool and operator names in insights (the API is stricter than Kubernetes names here). */
const INSIGHT_NAME = /^[a-z0-9-]{1,64}$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const UID_MAX = 63;

/** Cut to the API's limits; within a code unit count, so within the code point count the API server checks. */
const truncate = truncateText;

/**
 * `<prefix>-<key>` when that is a valid uid (lower-case DNS label, at most 63 chars), else a readable prefix of it
 * plus a hash of the key, so uids stay stable and unique for any key.
 */
export function stableUid(prefix: string, key: string): string {
  const plain = `${prefix}-${key}`;
  if (plain.length <= UID_MAX && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(plain)) return plain;
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 10);
  const readable = plain
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, UID_MAX - hash.length - 1)
    .replace(/-+$/, '');
  return `${readable}-${hash}`;
}

const time = (t: Instant) => formatRFC3339(t);

function condition(
  type: string,
  status: boolean | 'Unknown',
  reason: string,
  message: string,
  at: Instant,
): Condition {
  return {
    type,
    status: status === 'Unknown' ? 'Unknown' : status ? 'True' : 'False',
    reason,
    message: truncate(message, MAX_CONDITION_MESSAGE_LENGTH),
    lastTransitionTime: time(at),
  };
}

function clusterVersionInsight(
  report: UpdateStatusReport,
  cvName: string,
  now: Instant,
): ControlPlaneInsight | undefined {
  const cp: ControlPlaneStatus = report.controlPlane;
  const v = cp.versions;
  if (!SEMVER.test(v.target)) return undefined;
  const completed = cp.assessment === 'Completed';
  const previous = v.isTargetInstall
    ? { version: '<none>', metadata: [{ key: 'Installation' as const }] }
    : {
        version: SEMVER.test(v.previous) ? v.previous : '<none>',
        ...(v.isPreviousPartial ? { metadata: [{ key: 'Partial' as const }] } : {}),
      };
  if (!v.isTargetInstall && previous.version === '<none>') return undefined;
  // A past estimate is kept: it tells readers the update is late (oc's "Progressing - Slow" and "Stalled").
  const estimated = cp.estimatedTimeToComplete !== 0n ? now + cp.estimatedTimeToComplete : undefined;
  return {
    type: 'ClusterVersion',
    clusterVersion: {
      resource: { group: 'config.openshift.io', resource: 'clusterversions', name: cvName },
      assessment: completed ? 'Completed' : cp.assessment === 'Stalled' ? 'Degraded' : 'Progressing',
      versions: {
        previous,
        target: {
          version: v.target,
          ...(v.isMultiArchMigration ? { metadata: [{ key: 'Architecture' as const, value: 'Multi' }] } : {}),
        },
      },
      completion: Math.min(100, Math.max(0, Number(formatFloat0(cp.completion)) || 0)),
      startedAt: time(report.startedAt),
      // While every operator is updated but the ClusterVersion has not recorded its completion, completionAt is
      // `now`: it only says when we looked, would change on every assessment (and make the informer write each
      // second), and a reader takes its own now for it, as oc does. Only a recorded completion is stored.
      ...(completed && cp.completionAt !== now ? { completedAt: time(cp.completionAt) } : {}),
      ...(estimated !== undefined && !completed ? { estimatedCompletedAt: time(estimated) } : {}),
      // Updating follows the ClusterVersion's Progressing condition, as oc reads it; the aggregator copies it to
      // controlPlane.conditions.
      conditions: [
        report.controlPlaneProgressing
          ? condition(
              'Updating',
              true,
              'ClusterVersionProgressing',
              `Updating to ${v.target}`,
              report.startedAt,
            )
          : condition(
              'Updating',
              false,
              'ClusterVersionNotProgressing',
              completed ? `Update to ${v.target} completed` : '',
              completed ? cp.completionAt : now,
            ),
      ],
    },
  };
}

function clusterOperatorInsights(
  report: UpdateStatusReport,
  now: Instant,
): { name: string; insight: ControlPlaneInsight }[] {
  const at = (c: { lastTransitionTime?: string | null } | undefined) => {
    const t = c?.lastTransitionTime;
    return typeof t === 'string' && t !== '' ? t : time(now);
  };
  return report.controlPlane.operators.statuses
    .filter((o) => INSIGHT_NAME.test(o.name))
    .map((o) => {
      const progressing = o.progressing?.status === 'True' && !o.updated;
      const updating: Condition = {
        type: 'Updating',
        status: progressing ? 'True' : 'False',
        reason: o.updated ? 'Updated' : progressing ? 'Progressing' : 'Pending',
        message: truncate(progressing ? (o.progressing?.message ?? '') : '', MAX_CONDITION_MESSAGE_LENGTH),
        lastTransitionTime: at(o.progressing),
      };
      let healthy: Condition;
      if (o.available?.status !== 'True') {
        healthy = {
          type: 'Healthy',
          status: 'False',
          reason: 'Unavailable',
          message: truncate(o.available?.message ?? '', MAX_CONDITION_MESSAGE_LENGTH),
          lastTransitionTime: at(o.available),
        };
      } else if (o.degraded?.status === 'True') {
        healthy = {
          type: 'Healthy',
          status: 'False',
          reason: 'Degraded',
          message: truncate(o.degraded.message ?? '', MAX_CONDITION_MESSAGE_LENGTH),
          lastTransitionTime: at(o.degraded),
        };
      } else {
        healthy = {
          type: 'Healthy',
          status: 'True',
          reason: 'AsExpected',
          message: '',
          lastTransitionTime: at(o.available),
        };
      }
      return {
        name: o.name,
        insight: {
          type: 'ClusterOperator' as const,
          clusterOperator: {
            name: o.name,
            resource: { group: 'config.openshift.io', resource: 'clusteroperators', name: o.name },
            conditions: [updating, healthy],
          },
        },
      };
    });
}

const poolRef = (name: string): ResourceRef => ({
  group: 'machineconfiguration.openshift.io',
  resource: 'machineconfigpools',
  name,
});

function poolInsight(pool: PoolStatus, now: Instant) {
  const o = pool.overview;
  const updating = pool.assessment === 'Progressing' || pool.assessment === 'Degraded';
  const completion = pool.nodes.length === 0 ? 100 : Number(formatFloat0(pool.completion));
  return {
    type: 'MachineConfigPool' as const,
    machineConfigPool: {
      name: pool.name,
      resource: poolRef(pool.name),
      scopeType: pool.name === 'master' ? ('ControlPlane' as const) : ('WorkerPool' as const),
      assessment: pool.assessment,
      completion,
      summaries: (
        [
          ['Total', o.total],
          ['Available', o.available],
          ['Progressing', o.progressing],
          ['Outdated', o.outdated],
          ['Draining', o.draining],
          ['Excluded', o.excluded],
          ['Degraded', o.degraded],
        ] as const
      ).map(([type, count]) => ({ type, count: Math.min(count, 4096) })),
      conditions: [condition('Updating', updating, pool.assessment, '', now)],
    },
  };
}

function nodeInsight(pool: PoolStatus, node: NodeStatus, now: Instant) {
  const phase = nodePhaseName(node.phase);
  const updating =
    node.phase === NodePhase.Draining ||
    node.phase === NodePhase.Updating ||
    node.phase === NodePhase.Rebooting;
  const estimate = /^\+(\d+m)$/.exec(node.estimate)?.[1];
  return {
    type: 'Node' as const,
    node: {
      name: node.name,
      resource: { resource: 'nodes', name: node.name },
      poolResource: poolRef(pool.name),
      scopeType: pool.name === 'master' ? ('ControlPlane' as const) : ('WorkerPool' as const),
      ...(SEMVER.test(node.version) ? { version: node.version } : {}),
      ...(estimate !== undefined ? { estimatedToComplete: estimate } : {}),
      ...(node.message !== '' ? { message: truncate(node.message, 100) } : {}),
      conditions: [
        condition('Updating', updating, phase === 'Updated' ? 'Completed' : phase, '', now),
        condition(
          'Available',
          !node.isUnavailable,
          node.isUnavailable ? 'Unavailable' : 'AsExpected',
          node.isUnavailable ? node.message : '',
          now,
        ),
        condition(
          'Degraded',
          node.isDegraded,
          node.isDegraded ? 'Degraded' : 'AsExpected',
          node.isDegraded ? node.message : '',
          now,
        ),
      ],
    },
  };
}

const RESOURCE_OF_KIND: Record<string, string> = {
  ClusterVersion: 'clusterversions',
  ClusterOperator: 'clusteroperators',
  MachineConfigPool: 'machineconfigpools',
  Node: 'nodes',
};

function healthInsight(insight: UpdateInsight, now: Instant) {
  const reference = insight.remediation.reference;
  if (!/^https?:\/\/\S+$/.test(reference) || reference.length > 512) return undefined;
  const resources: ResourceRef[] = [];
  for (const r of insight.scope.resources) {
    const resource = RESOURCE_OF_KIND[r.kind];
    if (resource === undefined || !DNS1123_SUBDOMAIN.test(r.name) || r.name.length > 253) continue;
    resources.push({ ...(r.group !== '' ? { group: r.group } : {}), resource, name: r.name });
  }
  return {
    type: 'Health' as const,
    health: {
      // Unknown starts are stamped with the evaluation time to the nanosecond, which is also the insight's
      // acquiredAt: readers take startedAt == acquiredAt as "unknown" (oc shows "-"); a real start (a condition
      // time, whole seconds) practically never equals it. Known starts keep their sub-second precision.
      // A known start at exactly the evaluation instant (oc stamps some insights with "now") is written 1ns
      // earlier so it does not read as unknown; the SINCE column truncates to seconds, so it still shows "now".
      startedAt: formatRFC3339Nano(
        isZeroTime(insight.startedAt) ? now : insight.startedAt === now ? now - 1n : insight.startedAt,
      ),
      scope: {
        type: insight.scope.type === 'WorkerPool' ? ('WorkerPool' as const) : ('ControlPlane' as const),
        resources: resources.slice(0, 16),
      },
      impact: {
        level: impactLevelName(insight.impact.level),
        type: insight.impact.type,
        summary: truncate(insight.impact.summary, 256),
        ...(insight.impact.description !== ''
          ? { description: truncate(insight.impact.description, 4096) }
          : {}),
      },
      remediation: { reference },
    },
  };
}

function healthUid(insight: UpdateInsight): string {
  const key = JSON.stringify([
    insight.scope.type,
    insight.scope.resources,
    insight.impact.type,
    insight.impact.summary,
  ]);
  return `health-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

type Entry<T> = { uid: string; acquiredAt: string; insight: T };

/** Previous acquiredAt per informer and uid, so re-observed insights keep it. */
type AcquiredIndex = Map<string, string>;

function indexAcquired(previous: UpdateStatusStatus | undefined): AcquiredIndex {
  const index: AcquiredIndex = new Map();
  const add = (
    scope: string,
    informers:
      readonly { name: string; insights?: readonly { uid: string; acquiredAt: string }[] }[] | undefined,
  ) => {
    for (const inf of informers ?? [])
      for (const i of inf.insights ?? []) index.set(`${scope}/${inf.name}/${i.uid}`, i.acquiredAt);
  };
  add('cp', previous?.controlPlane?.informers);
  for (const wp of previous?.workerPools ?? []) add(`wp:${wp.name}`, wp.informers);
  return index;
}

/** Conditions keep their previous lastTransitionTime while their status is unchanged. */
function keepTransitionTimes(
  next: Condition[] | undefined,
  previous: readonly Condition[] | undefined,
): Condition[] | undefined {
  if (next === undefined) return undefined;
  return next.map((c) => ({
    ...c,
    lastTransitionTime: transitionTime(
      previous?.find((p) => p.type === c.type),
      c.status,
      c.lastTransitionTime,
    ),
  }));
}

/** Options for {@link projectUpdateStatus}. */
export interface ProjectOptions {
  /** Name of the ClusterVersion. Default: `version`. */
  readonly clusterVersionName?: string;
  /** The status currently stored; acquiredAt and unchanged condition times are carried over from it. */
  readonly previous?: UpdateStatusStatus;
  /** The controller's own conditions (`.status.conditions`). Default: none. */
  readonly conditions?: Condition[];
  /**
   * Node insights per pool, the most troubled nodes first (pool summaries still count every node). Keeps the
   * object small on large clusters: the API server validates the whole object on every write (measured on a
   * 5,000-node cluster: ~2.7 s per write with 100 per pool, ~0.35 s with 20). Default: 20.
   */
  readonly maxNodeInsightsPerPool?: number;
}

export const DEFAULT_NODE_INSIGHTS_PER_POOL = 20;

/** API limits on insights per informer. */
const MAX_CONTROL_PLANE_INSIGHTS = 128;
const MAX_WORKER_POOL_INSIGHTS = 1024;
/** An estimate that moved less than this keeps its previous value, so the object does not churn. */
const ESTIMATE_TOLERANCE_NS = 60n * 1_000_000_000n;

/**
 * The contributions of Tessera's control-plane informer (`cpi`) and node informer (`nodes`) for `report`, as of
 * `now`; with `options.previous`, acquiredAt and unchanged times are carried over from what is stored.
 */
export function projectInformers(
  report: UpdateStatusReport,
  now: Instant,
  options: ProjectOptions = {},
): InformerContribution[] {
  const acquired = indexAcquired(options.previous);
  const stamp = <T>(scope: string, informer: string, uid: string, insight: T): Entry<T> => ({
    uid,
    acquiredAt: acquired.get(`${scope}/${informer}/${uid}`) ?? formatRFC3339Nano(now),
    insight,
  });
  const cvName = options.clusterVersionName ?? 'version';

  const cpInsights: Entry<ControlPlaneInsight>[] = [];
  const cv = clusterVersionInsight(report, cvName, now);
  if (cv) cpInsights.push(stamp('cp', CONTROL_PLANE_INFORMER, `cv-${cvName}`, cv));
  for (const co of clusterOperatorInsights(report, now)) {
    cpInsights.push(stamp('cp', CONTROL_PLANE_INFORMER, stableUid('co', co.name), co.insight));
  }

  const cpNodeInsights: Entry<ControlPlaneInsight>[] = [];
  const poolOfNode = new Map<string, string>();
  const workerInsights = new Map<string, Entry<WorkerPoolInsight>[]>();
  const allPools = [...(report.controlPlanePool ? [report.controlPlanePool] : []), ...report.workerPools];
  for (const pool of allPools) {
    // A pool the API cannot name gets no insights rather than making the whole status invalid.
    if (!INSIGHT_NAME.test(pool.name)) continue;
    const isMaster = pool.name === 'master';
    const scope = isMaster ? 'cp' : `wp:${pool.name}`;
    const entries: Entry<ControlPlaneInsight & WorkerPoolInsight>[] = [];
    entries.push(stamp(scope, NODE_INFORMER, stableUid('mcp', pool.name), poolInsight(pool, now)));
    // pool.nodes is in oc's display order: most troubled first, completed last.
    const maxNodes = options.maxNodeInsightsPerPool ?? DEFAULT_NODE_INSIGHTS_PER_POOL;
    pool.nodes.forEach((node, i) => {
      poolOfNode.set(node.name, pool.name);
      if (i < maxNodes)
        entries.push(stamp(scope, NODE_INFORMER, stableUid('node', node.name), nodeInsight(pool, node, now)));
    });
    if (isMaster) cpNodeInsights.push(...entries);
    else workerInsights.set(pool.name, entries);
  }

  // Health insights go where their resources are: a worker pool's node or pool, else the control plane.
  if (report.health.hasDetails) {
    for (const insight of report.health.insights) {
      const health = healthInsight(insight, now);
      if (!health) continue;
      const pool = insight.scope.resources
        .map((r) =>
          r.kind === 'Node' ? poolOfNode.get(r.name) : r.kind === 'MachineConfigPool' ? r.name : undefined,
        )
        .find((p) => p !== undefined && p !== 'master');
      const uid = healthUid(insight);
      const list = pool !== undefined ? workerInsights.get(pool) : undefined;
      if (list) list.push(stamp(`wp:${pool}`, NODE_INFORMER, uid, health));
      else if (insight.scope.resources.some((r) => r.kind === 'Node' || r.kind === 'MachineConfigPool')) {
        cpNodeInsights.push(stamp('cp', NODE_INFORMER, uid, health));
      } else cpInsights.push(stamp('cp', CONTROL_PLANE_INFORMER, uid, health));
    }
  }

  const nodePools: { name: string; resource: ResourceRef; insights: Entry<WorkerPoolInsight>[] }[] = [];
  for (const pool of report.workerPools) {
    if (!INSIGHT_NAME.test(pool.name)) continue;
    const insights = (workerInsights.get(pool.name) ?? []).slice(0, MAX_WORKER_POOL_INSIGHTS);
    nodePools.push({ name: pool.name, resource: poolRef(pool.name), insights });
  }
  const contributions: InformerContribution[] = [
    {
      name: CONTROL_PLANE_INFORMER,
      description: 'Tessera: ClusterVersion, ClusterOperators, alerts',
      controlPlane: cpInsights.slice(0, MAX_CONTROL_PLANE_INSIGHTS),
    },
    {
      name: NODE_INFORMER,
      description: 'Tessera: MachineConfigPools, Nodes, MachineConfigs',
      ...(cpNodeInsights.length > 0
        ? { controlPlane: cpNodeInsights.slice(0, MAX_CONTROL_PLANE_INSIGHTS) }
        : {}),
      workerPools: nodePools,
    },
  ];
  // Carry times inside insights too, so an unchanged cluster projects to identical contributions.
  const merged = carryStableTimes(
    carryInsightConditionTimes(mergeContributions(contributions, formatRFC3339(now)), options.previous),
    options.previous,
  );
  return [storedContribution(merged, CONTROL_PLANE_INFORMER), storedContribution(merged, NODE_INFORMER)];
}

/**
 * The whole `.status` for `report` as of `now`: Tessera's two informers' contributions, merged as the API server
 * merges them, with the aggregation over them (what `-o json|yaml` of a client-side assessment prints).
 */
export function projectUpdateStatus(
  report: UpdateStatusReport,
  now: Instant,
  options: ProjectOptions = {},
): UpdateStatusStatus {
  const merged = mergeContributions(projectInformers(report, now, options), formatRFC3339(now));
  const healthy = options.conditions?.find((c) => c.type === 'Healthy');
  const aggregate = aggregateUpdateStatus(merged, Number(now / 1_000_000n), {
    healthy,
    previous: options.previous,
  });
  const agg = aggregate.apply.status ?? {};
  return {
    ...(agg.conditions ? { conditions: agg.conditions } : {}),
    informers: merged.informers,
    controlPlane: { ...agg.controlPlane, informers: merged.controlPlane?.informers ?? [] },
    workerPools: (merged.workerPools ?? []).map((p) => ({
      ...p,
      conditions: agg.workerPools?.find((w) => w.name === p.name)?.conditions,
    })),
  };
}

/**
 * Keeps times that only reflect "when we looked": a health insight's startedAt when the insight is the same
 * (it was stamped with the evaluation time when its real start is unknown), and an estimated completion that
 * moved by less than a minute.
 */
function carryStableTimes(
  next: UpdateStatusStatus,
  previous: UpdateStatusStatus | undefined,
): UpdateStatusStatus {
  if (previous === undefined) return next;
  const old = new Map<string, ControlPlaneInsight | WorkerPoolInsight>();
  const all = (s: UpdateStatusStatus) => [
    ...(s.controlPlane?.informers ?? []).flatMap((i) =>
      (i.insights ?? []).map((x) => [`cp/${i.name}/${x.uid}`, x.insight] as const),
    ),
    ...(s.workerPools ?? []).flatMap((wp) =>
      (wp.informers ?? []).flatMap((i) =>
        (i.insights ?? []).map((x) => [`wp:${wp.name}/${i.name}/${x.uid}`, x.insight] as const),
      ),
    ),
  ];
  for (const [key, insight] of all(previous)) old.set(key, insight);
  for (const [key, insight] of all(next)) {
    const before = old.get(key);
    if (insight.health && before?.health) insight.health.startedAt = before.health.startedAt;
    const cv = 'clusterVersion' in insight ? insight.clusterVersion : undefined;
    const cvBefore = before && 'clusterVersion' in before ? before.clusterVersion : undefined;
    const est = cv?.estimatedCompletedAt;
    const estBefore = cvBefore?.estimatedCompletedAt;
    if (cv && est !== undefined && estBefore !== undefined) {
      const delta = (parseTime(est) ?? 0n) - (parseTime(estBefore) ?? 0n);
      if (delta < ESTIMATE_TOLERANCE_NS && delta > -ESTIMATE_TOLERANCE_NS)
        cv.estimatedCompletedAt = estBefore;
    }
  }
  return next;
}

function carryInsightConditionTimes(
  next: UpdateStatusStatus,
  previous: UpdateStatusStatus | undefined,
): UpdateStatusStatus {
  if (previous === undefined) return next;
  const old = new Map<string, readonly Condition[] | undefined>();
  const member = (i: Record<string, unknown>): { conditions?: Condition[] } | undefined => {
    for (const key of ['clusterVersion', 'clusterOperator', 'machineConfigPool', 'node']) {
      const m = i[key];
      if (m && typeof m === 'object') return m as { conditions?: Condition[] };
    }
    return undefined;
  };
  const visit = (
    scope: string,
    informers:
      readonly { name: string; insights?: readonly { uid: string; insight: object }[] }[] | undefined,
    record: boolean,
  ) => {
    for (const inf of informers ?? []) {
      for (const entry of inf.insights ?? []) {
        const m = member(entry.insight as Record<string, unknown>);
        if (!m) continue;
        const key = `${scope}/${inf.name}/${entry.uid}`;
        if (record) old.set(key, m.conditions);
        else m.conditions = keepTransitionTimes(m.conditions, old.get(key));
      }
    }
  };
  visit('cp', previous.controlPlane?.informers, true);
  for (const wp of previous.workerPools ?? []) visit(`wp:${wp.name}`, wp.informers, true);
  visit('cp', next.controlPlane?.informers, false);
  for (const wp of next.workerPools ?? []) visit(`wp:${wp.name}`, wp.informers, false);
  return next;
}

/** A whole UpdateStatus object (what `-o json|yaml` prints). */
export function updateStatusObject(status: UpdateStatusStatus): UpdateStatus {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: KIND,
    metadata: { name: SINGLETON_NAME },
    spec: {},
    status,
  };
}
