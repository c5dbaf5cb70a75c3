// Control-plane assessment (oc's rules): which ClusterOperators count (platform operators only, recognised by
// their release include/exclude annotations), which are updated, updating or waiting, the completion percentage,
// the time estimate, and the insights about failing ClusterVersion and unhealthy operators.
// Pure: `now` is passed in; nothing is read from the clock.
import {
  type Duration,
  type Instant,
  GO_ZERO_TIME,
  HOUR,
  MINUTE,
  addDurations,
  SECOND,
  durationFromFloat,
  durationSeconds,
  isZeroTime,
  mulDuration,
  parseTime,
  roundDuration,
  sub,
  truncateDuration,
} from './gotime.js';
import type { ClusterOperator, ClusterVersion, Condition, UpdateHistory } from './inputs.js';
import { CONFIG_GROUP, ImpactLevel, type ScopeResource, type UpdateInsight } from './insight.js';

export type ControlPlaneAssessment = 'Progressing' | 'Progressing - Slow' | 'Completed' | 'Stalled';

export interface UpdatingOperator {
  readonly name: string;
  readonly reason: string;
  readonly message: string;
  readonly since: Instant;
}

/** One platform operator as the assessment saw it (for the API's ClusterOperator insights). */
export interface OperatorStatus {
  readonly name: string;
  /** Reports the target version (and, for the MCO, runs the new image). */
  readonly updated: boolean;
  readonly progressing: Condition | undefined;
  readonly available: Condition | undefined;
  readonly degraded: Condition | undefined;
}

export interface OperatorCounts {
  readonly total: number;
  /** Not Available=True. */
  readonly unavailable: number;
  /** Available but Degraded=True. */
  readonly degraded: number;
  /** Reporting the target version, whatever their conditions. */
  readonly updated: number;
  /** Not updated and Progressing=False. */
  readonly waiting: number;
  /** Not updated and Progressing=True, in ClusterOperator order. */
  readonly updating: readonly UpdatingOperator[];
  /** Every platform operator, in ClusterOperator order. */
  readonly statuses: readonly OperatorStatus[];
}

export interface VersionSummary {
  readonly target: string;
  readonly previous: string;
  readonly isTargetInstall: boolean;
  readonly isPreviousPartial: boolean;
  readonly isMultiArchMigration: boolean;
}

export interface ControlPlaneStatus {
  readonly assessment: ControlPlaneAssessment;
  /** Percentage of platform operators updated (0..100, unrounded). */
  readonly completion: number;
  /** Completion time of the current update, or `now` while it runs. */
  readonly completionAt: Instant;
  /** How long the update has run (rounded to minutes above 10m, else seconds). */
  readonly duration: Duration;
  /** Elapsed plus estimated remaining time, truncated to minutes. */
  readonly estimatedDuration: Duration;
  /** Estimated time remaining; negative when overdue; 0 when no estimate applies. */
  readonly estimatedTimeToComplete: Duration;
  readonly operators: OperatorCounts;
  readonly versions: VersionSummary;
}

const UNAVAILABLE_WARNING = 5n * MINUTE;
const UNAVAILABLE_ERROR = 20n * MINUTE;
const DEGRADED_WARNING = 5n * MINUTE;
const DEGRADED_ERROR = 40n * MINUTE;

const RUNBOOK_OPERATOR_DOWN =
  'https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDown.md';
const RUNBOOK_OPERATOR_DEGRADED =
  'https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDegraded.md';
const DOC_CLUSTERVERSION_HISTORY =
  'https://docs.openshift.com/container-platform/latest/updating/troubleshooting_updates/gathering-data-cluster-update.html#gathering-clusterversion-history-cli_troubleshooting_updates';

/** Parses a Kubernetes timestamp; absent or malformed values count as Go's zero time. */
export function timeOf(value: string | null | undefined): Instant {
  return parseTime(value) ?? GO_ZERO_TIME;
}

/** The first condition of `type`, as oc's lookup returns it. */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Platform operators carry a release include/exclude annotation; others (OLM-installed) do not count. */
export function isPlatformOperator(operator: ClusterOperator): boolean {
  return Object.keys(operator.metadata?.annotations ?? {}).some(
    (key) =>
      key.startsWith('exclude.release.openshift.io/') || key.startsWith('include.release.openshift.io/'),
  );
}

/** How long an operator may be unavailable or degraded before it is a Warning, then an Error. */
interface OperatorProblem {
  readonly adjective: 'unavailable' | 'degraded';
  readonly warningAfter: Duration;
  readonly errorAfter: Duration;
  readonly runbook: string;
}

function operatorInsights(
  name: string,
  available: Condition | undefined,
  degraded: Condition | undefined,
  now: Instant,
): UpdateInsight[] {
  const resources: ScopeResource[] = [{ group: CONFIG_GROUP, kind: 'ClusterOperator', name }];
  const insight = (condition: Condition, problem: OperatorProblem): UpdateInsight[] => {
    const since = timeOf(condition.lastTransitionTime);
    if (!(now > since + problem.warningAfter)) return [];
    return [
      {
        startedAt: since,
        scope: { type: 'ControlPlane', resources },
        impact: {
          level: now > since + problem.errorAfter ? ImpactLevel.Error : ImpactLevel.Warning,
          type: 'API Availability',
          summary: `Cluster Operator ${name} is ${problem.adjective} (${condition.reason ?? ''})`,
          description: condition.message || '<no message>',
        },
        remediation: { reference: problem.runbook },
      },
    ];
  };
  return [
    ...(available?.status === 'False'
      ? insight(available, {
          adjective: 'unavailable',
          warningAfter: UNAVAILABLE_WARNING,
          errorAfter: UNAVAILABLE_ERROR,
          runbook: RUNBOOK_OPERATOR_DOWN,
        })
      : []),
    ...(degraded?.status === 'True'
      ? insight(degraded, {
          adjective: 'degraded',
          warningAfter: DEGRADED_WARNING,
          errorAfter: DEGRADED_ERROR,
          runbook: RUNBOOK_OPERATOR_DEGRADED,
        })
      : []),
  ];
}

function clusterVersionInsights(cvName: string, conditions: readonly Condition[] | undefined, now: Instant) {
  const resources: ScopeResource[] = [{ group: CONFIG_GROUP, kind: 'ClusterVersion', name: cvName }];
  const failing = findCondition(conditions, 'Failing');
  if (failing === undefined) {
    return [
      {
        startedAt: now,
        scope: { type: 'ControlPlane', resources },
        impact: {
          level: ImpactLevel.Warning,
          type: 'Update Stalled',
          summary: `Cluster Version ${cvName} has no Failing condition`,
          description:
            "Current status of Cluster Version reconciliation is unclear.  See 'oc -n openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1' to debug.",
        },
        remediation: { reference: RUNBOOK_OPERATOR_DEGRADED },
      } satisfies UpdateInsight,
    ];
  }
  if (failing.status === 'False') return [];
  const verb = failing.status === 'Unknown' ? 'may be' : 'is';
  return [
    {
      startedAt: timeOf(failing.lastTransitionTime),
      scope: { type: 'ControlPlane', resources },
      impact: {
        level: ImpactLevel.Warning,
        type: 'Update Stalled',
        summary: `Cluster Version ${cvName} ${verb} failing to proceed with the update (${failing.reason ?? ''})`,
        description: failing.message ?? '',
      },
      remediation: { reference: RUNBOOK_OPERATOR_DEGRADED },
    } satisfies UpdateInsight,
  ];
}

/** Same version, different image between the two latest history entries: a migration to multi-arch. */
export function isMultiArchMigration(history: readonly UpdateHistory[] | undefined): boolean {
  const [current, previous] = history ?? [];
  return (
    current !== undefined &&
    previous !== undefined &&
    (current.version ?? '') === (previous.version ?? '') &&
    (current.image ?? '') !== (previous.image ?? '')
  );
}

function versionsFromHistory(
  history: readonly UpdateHistory[],
  cvScope: ScopeResource,
  controlPlaneCompleted: boolean,
): { versions: VersionSummary; insights: UpdateInsight[] } {
  const [current, previous] = history;
  const target = current ? (current.version ?? '') : 'unknown';
  if (history.length === 1) {
    return {
      versions: {
        target,
        previous: 'unknown',
        isTargetInstall: true,
        isPreviousPartial: false,
        isMultiArchMigration: false,
      },
      insights: [],
    };
  }
  const versions: VersionSummary = {
    target,
    previous: previous ? (previous.version ?? '') : 'unknown',
    isTargetInstall: false,
    isPreviousPartial: previous?.state === 'Partial',
    isMultiArchMigration: isMultiArchMigration(history),
  };
  const insights: UpdateInsight[] = [];
  if (!controlPlaneCompleted && versions.isPreviousPartial && current) {
    const lastComplete = history.slice(2).find((item) => item.state === 'Completed')?.version ?? 'unknown';
    insights.push({
      startedAt: timeOf(current.startedTime),
      scope: { type: 'ControlPlane', resources: [cvScope] },
      impact: {
        level: ImpactLevel.Warning,
        type: 'None',
        summary: `Previous update to ${versions.previous} never completed, last complete update was ${lastComplete}`,
        description: `Current update to ${versions.target} was initiated while the previous update to version ${versions.previous} was still in progress`,
      },
      remediation: { reference: DOC_CLUSTERVERSION_HISTORY },
    });
  }
  return { versions, insights };
}

/** Duration of the last completed update between the current one and the installation; 1h when none. */
export function baselineDuration(history: readonly UpdateHistory[]): Duration {
  if (history.length < 3) return HOUR;
  for (const item of history.slice(1, -1)) {
    // oc dereferences completionTime and panics when a Completed entry lacks it; we read it as the zero time.
    if (item.state === 'Completed') return sub(timeOf(item.completionTime), timeOf(item.startedTime));
  }
  return HOUR;
}

/**
 * Share of the update's time that has passed when `coCompletion` of the operators are updated: typical updates
 * reach 97% of operators in 67% of the time. Three fitted polynomials; powers are multiplied out the way Go's
 * math.Pow does it for small integer exponents, so results match to the last bit.
 */
export function timewiseComplete(coCompletion: number): number {
  const x = coCompletion;
  const x2 = x * x;
  const x3 = x * x2;
  const x4 = x2 * x2;
  if (x < 0.25) return -0.03078788 + 2.62886 * x - 3.823954 * x2;
  if (x < 0.9) return 0.1851215 + 1.64994 * x - 4.676898 * x2 + 5.451824 * x3 - 2.125286 * x4;
  return 25053.32 - 107394.3 * x + 172527.2 * x2 - 123107 * x3 + 32921.81 * x4;
}

/** Remaining time: projected from progress so far (after 5m of it) or the baseline, with a x1.2 margin. */
export function estimateCompletion(
  baseline: Duration,
  toLastObservedProgress: Duration,
  updatingFor: Duration,
  coCompletion: number,
): Duration {
  if (coCompletion >= 1) return 0n;
  const completion = timewiseComplete(coCompletion);
  const estimateTotalSeconds =
    coCompletion > 0 && completion > 0 && toLastObservedProgress > 5n * MINUTE
      ? durationSeconds(toLastObservedProgress) / completion
      : durationSeconds(baseline);
  const remainingSeconds = estimateTotalSeconds - durationSeconds(updatingFor);
  const overestimate = remainingSeconds < 0 ? 1 / 1.2 : 1.2;
  // int64 arithmetic: a huge estimate (zero-time "now") wraps around as in Go.
  const estimate = mulDuration(durationFromFloat(remainingSeconds * overestimate), SECOND);
  return estimate > 10n * MINUTE ? roundDuration(estimate, MINUTE) : roundDuration(estimate, SECOND);
}

function operatorVersion(operator: ClusterOperator, name: string): string[] {
  return (operator.status?.versions ?? []).filter((v) => v.name === name).map((v) => v.version ?? '');
}

/** Assesses the control plane from the ClusterVersion and the ClusterOperators at `now`. */
export function assessControlPlane(
  cv: ClusterVersion,
  operators: readonly ClusterOperator[],
  mcoImagePullSpec: string,
  now: Instant,
): { status: ControlPlaneStatus; insights: UpdateInsight[] } {
  const cvName = cv.metadata?.name ?? '';
  const targetVersion = cv.status?.desired?.version ?? '';
  const history = cv.status?.history ?? [];
  const cvScope: ScopeResource = { group: CONFIG_GROUP, kind: 'ClusterVersion', name: cvName };
  const insights: UpdateInsight[] = clusterVersionInsights(cvName, cv.status?.conditions, now);

  let total = 0;
  let unavailable = 0;
  let degradedCount = 0;
  let updated = 0;
  let waiting = 0;
  const updating: UpdatingOperator[] = [];
  const statuses: OperatorStatus[] = [];
  let lastObservedProgress: Instant = GO_ZERO_TIME;
  let mcoStartedUpdating: Instant = GO_ZERO_TIME;

  for (const operator of operators) {
    if (!isPlatformOperator(operator)) continue;
    const name = operator.metadata?.name ?? '';
    // The MCO reports the target version before its new image rolls out; its image tells the truth.
    const mcoImageUpgrading =
      name === 'machine-config' &&
      operatorVersion(operator, 'operator-image').some((v) => v !== mcoImagePullSpec);
    const isUpdated =
      !mcoImageUpgrading && operatorVersion(operator, 'operator').some((v) => v === targetVersion);
    if (isUpdated) updated++;
    total++;

    let available: Condition | undefined;
    let degraded: Condition | undefined;
    let progressing: Condition | undefined;
    for (const condition of operator.status?.conditions ?? []) {
      if (condition.type === 'Available') available = condition;
      else if (condition.type === 'Degraded') degraded = condition;
      else if (condition.type === 'Progressing') progressing = condition;
    }

    if (progressing !== undefined) {
      const since = timeOf(progressing.lastTransitionTime);
      if (since > lastObservedProgress) lastObservedProgress = since;
      if (!isUpdated && progressing.status === 'True') {
        updating.push({ name, reason: progressing.reason ?? '', message: progressing.message ?? '', since });
        if (name === 'machine-config') mcoStartedUpdating = since;
      }
      if (!isUpdated && progressing.status === 'False') waiting++;
    }

    statuses.push({ name, updated: isUpdated, progressing, available, degraded });
    if (available?.status !== 'True') unavailable++;
    else if (degraded?.status === 'True') degradedCount++;
    insights.push(...operatorInsights(name, available, degraded, now));
  }

  const controlPlaneCompleted = updated === total;
  let assessment: ControlPlaneAssessment = controlPlaneCompleted ? 'Completed' : 'Progressing';

  // When only the MCO is left, its own start is the last real progress: daemonset operators flip Progressing
  // while nodes reboot, which is not update progress.
  if (!isZeroTime(mcoStartedUpdating) && total - updated === 1) lastObservedProgress = mcoStartedUpdating;

  let updatingFor: Duration = 0n;
  let toLastObservedProgress: Duration = 0n;
  let completionAt: Instant = GO_ZERO_TIME;
  let duration: Duration = 0n;
  const current = history[0];
  if (current !== undefined) {
    const started = timeOf(current.startedTime);
    if (!(lastObservedProgress > started)) lastObservedProgress = now;
    toLastObservedProgress = sub(lastObservedProgress, started);
    // Without completionTime oc panics here; we take the zero time (durations then saturate as Go's would).
    completionAt = current.state === 'Completed' ? timeOf(current.completionTime) : now;
    updatingFor = sub(completionAt, started);
    duration =
      updatingFor > 10n * MINUTE ? roundDuration(updatingFor, MINUTE) : roundDuration(updatingFor, SECOND);
  }

  const { versions, insights: versionInsights } = versionsFromHistory(
    history,
    cvScope,
    controlPlaneCompleted,
  );
  insights.push(...versionInsights);

  const coCompletion = updated / total;
  let estimatedTimeToComplete: Duration = 0n;
  let estimatedDuration: Duration = 0n;
  if (coCompletion <= 1 && assessment !== 'Completed') {
    estimatedTimeToComplete = estimateCompletion(
      baselineDuration(history),
      toLastObservedProgress,
      updatingFor,
      coCompletion,
    );
    estimatedDuration = truncateDuration(addDurations(updatingFor, estimatedTimeToComplete), MINUTE);
    if (estimatedTimeToComplete < -10n * MINUTE) assessment = 'Stalled';
    else if (estimatedTimeToComplete < 0n) assessment = 'Progressing - Slow';
  }

  return {
    status: {
      assessment,
      completion: coCompletion * 100,
      completionAt,
      duration,
      estimatedDuration,
      estimatedTimeToComplete,
      operators: { total, unavailable, degraded: degradedCount, updated, waiting, updating, statuses },
      versions,
    },
    insights,
  };
}
