// The aggregation layer of the UpdateStatus API, computed from every live informer's insights (the informer
// contract: informers.ts). Pure: the aggregator (the update status controller) applies what this returns with its
// own field manager, and removes what `removals` names. The control plane's Updating condition follows the
// ClusterVersion insight, a worker pool's follows its pool insight (MachineConfigPool or NodePool), whichever
// informer wrote it; the InformersReporting condition names the informers whose insights are left out.
import { formatRFC3339 } from '../gotime.js';
import type { Condition, ResourceRef, UpdateStatus, UpdateStatusStatus } from './schema.js';
import { type InformerState, byInformerPrecedence, informerStates, liveInsights } from './informers.js';
import { GROUP, KIND, SINGLETON_NAME, VERSION } from './names.js';
import { MAX_CONDITION_MESSAGE_LENGTH, transitionTime, truncateText } from '../../runtime/light.js';

/** Condition type of `.status.conditions`: do all informers report. */
export const INFORMERS_REPORTING = 'InformersReporting';

const CLUSTER_VERSION_REF: ResourceRef = {
  group: 'config.openshift.io',
  resource: 'clusterversions',
  name: 'version',
};

/** What the aggregator writes, and which informers it removes. */
export interface Aggregate {
  /** The aggregator's apply body: status.conditions, the control plane's and pools' resources and conditions. */
  readonly apply: UpdateStatus;
  /** Informers whose entries the aggregator removes (expired, or over budget). */
  readonly removals: ReadonlySet<string>;
  readonly states: readonly InformerState[];
}

export interface AggregateOptions {
  /** The aggregator's own Healthy condition (could it gather and interpret its inputs). */
  readonly healthy?: Condition;
  /** Where unchanged conditions keep their transition times from. Default: `stored`. */
  readonly previous?: UpdateStatusStatus;
  /**
   * Informers the aggregator removed lately (it remembers them for REMOVAL_MEMORY_MS): still named by the
   * InformersReporting condition, so a removal is not silent.
   */
  readonly removed?: readonly RemovedInformer[];
}

/** An informer the aggregator removed, and why. */
export interface RemovedInformer {
  readonly name: string;
  readonly reason: 'expired' | 'over-budget';
  readonly atMs: number;
}

/** How long the InformersReporting condition keeps naming a removed informer (ms). */
export const REMOVAL_MEMORY_MS = 10 * 60_000;

type AnyInsight = {
  clusterVersion?: { resource: ResourceRef; conditions?: Condition[] };
  machineConfigPool?: { name: string; conditions?: Condition[] };
  health?: unknown;
};

const updatingOf = (conditions: readonly Condition[] | undefined) =>
  conditions?.find((c) => c.type === 'Updating');

/** `next`, keeping the lastTransitionTime of the condition of its type in `previous` (see transitionTime). */
function keepTransition(next: Condition, previous: readonly Condition[] | undefined): Condition {
  const old = previous?.find((p) => p.type === next.type);
  return { ...next, lastTransitionTime: transitionTime(old, next.status, next.lastTransitionTime) };
}

/** An absolute time, so the message does not change (and cause a write) every minute. */
function at(ms: number | undefined): string {
  return ms === undefined ? 'never' : formatRFC3339(BigInt(Math.floor(ms)) * 1_000_000n);
}

/** Sentence naming the informers whose insights are not counted; empty when all report. */
export function informersNotReportingMessage(
  states: readonly InformerState[],
  nowMs: number,
  removed: readonly RemovedInformer[] = [],
): string {
  const present = new Set(states.map((s) => s.name));
  const gone = removed
    .filter((r) => !present.has(r.name) && nowMs - r.atMs <= REMOVAL_MEMORY_MS)
    .map(
      (r) =>
        `${r.name} (removed at ${at(r.atMs)}: ${r.reason === 'expired' ? 'no heartbeat for over an hour' : 'over its budget'})`,
    );
  const parts = states.flatMap((s) => {
    switch (s.state) {
      case 'live':
        return [];
      case 'over-budget':
        return [`${s.name} (over its budget with ${s.bytes} bytes of insights; removed)`];
      case 'expired':
        return [`${s.name} (last heartbeat ${at(s.heartbeatAtMs)}; removed)`];
      case 'stale':
        return [`${s.name} (last heartbeat ${at(s.heartbeatAtMs)}; ${s.insights} insights left out)`];
    }
  });
  const all = [...parts, ...gone];
  return all.length === 0 ? '' : `Informers not reporting: ${all.join(', ')}`;
}

/** The aggregation of `stored` (as the API server holds it) at `nowMs`. */
export function aggregateUpdateStatus(
  stored: UpdateStatusStatus | undefined,
  nowMs: number,
  options: AggregateOptions = {},
): Aggregate {
  const status = stored ?? {};
  const previous = options.previous ?? stored;
  const states = informerStates(status, nowMs);
  const live = liveInsights(status, states);
  const now = formatRFC3339(BigInt(nowMs) * 1_000_000n);

  const cpInsights = [...(live.controlPlane?.informers ?? [])]
    .sort(byInformerPrecedence)
    .flatMap((i) => (i.insights ?? []).map((x) => x.insight as AnyInsight));
  const cv = cpInsights.find((i) => i.clusterVersion)?.clusterVersion;
  const master = cpInsights.find((i) => i.machineConfigPool?.name === 'master');
  /** A copy of the insight's Updating condition, or Unknown naming what is missing; its time kept while it holds. */
  const updatingFrom = (
    source: readonly Condition[] | undefined,
    missing: { reason: string; message: string },
    previousConditions: readonly Condition[] | undefined,
  ): Condition => {
    const found = updatingOf(source);
    return keepTransition(
      found
        ? { ...found, type: 'Updating' }
        : { type: 'Updating', status: 'Unknown', ...missing, lastTransitionTime: now },
      previousConditions,
    );
  };
  const cpUpdating = updatingFrom(
    cv?.conditions,
    { reason: 'NoClusterVersionInsight', message: 'No live informer reports the ClusterVersion' },
    previous?.controlPlane?.conditions,
  );

  const workerPools = (live.workerPools ?? [])
    .filter((p) => (p.informers ?? []).some((i) => (i.insights?.length ?? 0) > 0))
    .map((p) => {
      const insights = [...(p.informers ?? [])]
        .sort(byInformerPrecedence)
        .flatMap((i) => (i.insights ?? []).map((x) => x.insight as AnyInsight));
      const updating = updatingFrom(
        insights.find((i) => i.machineConfigPool?.name === p.name)?.machineConfigPool?.conditions,
        { reason: 'NoPoolInsight', message: 'No live informer reports this pool' },
        previous?.workerPools?.find((w) => w.name === p.name)?.conditions,
      );
      return { name: p.name, resource: p.resource, conditions: [updating] };
    });

  const removed = options.removed ?? [];
  const notReporting = informersNotReportingMessage(states, nowMs, removed);
  const overBudget =
    states.some((s) => s.state === 'over-budget') ||
    removed.some((r) => r.reason === 'over-budget' && nowMs - r.atMs <= REMOVAL_MEMORY_MS);
  const reporting: Condition = keepTransition(
    notReporting === ''
      ? {
          type: INFORMERS_REPORTING,
          status: 'True',
          reason: 'AsExpected',
          message: `${states.length} informers report`,
          lastTransitionTime: now,
        }
      : {
          type: INFORMERS_REPORTING,
          status: 'False',
          reason: overBudget ? 'InformerOverBudget' : 'InformerStopped',
          message: truncateText(notReporting, MAX_CONDITION_MESSAGE_LENGTH),
          lastTransitionTime: now,
        },
    previous?.conditions,
  );
  const healthy = options.healthy ? keepTransition(options.healthy, previous?.conditions) : undefined;

  return {
    apply: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: KIND,
      metadata: { name: SINGLETON_NAME },
      spec: {},
      status: {
        conditions: [...(healthy ? [healthy] : []), reporting],
        controlPlane: {
          resource: cv?.resource ?? CLUSTER_VERSION_REF,
          ...(master
            ? {
                poolResource: {
                  group: 'machineconfiguration.openshift.io',
                  resource: 'machineconfigpools',
                  name: 'master',
                },
              }
            : {}),
          conditions: [cpUpdating],
        },
        ...(workerPools.length > 0 ? { workerPools } : {}),
      },
    },
    removals: new Set(
      states.filter((s) => s.state === 'expired' || s.state === 'over-budget').map((s) => s.name),
    ),
    states,
  };
}

/** The aggregator's fields of a stored status, to compare with a new aggregate (unchanged: no write). */
export function storedAggregate(stored: UpdateStatusStatus | undefined): UpdateStatusStatus {
  return JSON.parse(
    JSON.stringify({
      conditions: stored?.conditions,
      controlPlane: {
        resource: stored?.controlPlane?.resource,
        poolResource: stored?.controlPlane?.poolResource,
        conditions: stored?.controlPlane?.conditions,
      },
      workerPools: (stored?.workerPools ?? [])
        .filter((p) => p.conditions !== undefined)
        .map((p) => ({ name: p.name, resource: p.resource, conditions: p.conditions })),
    }),
  ) as UpdateStatusStatus;
}
