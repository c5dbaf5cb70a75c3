// The whole assessment of one cluster snapshot at one instant: control plane, pools and nodes, alerts, and the
// ranked health insights, plus whether the cluster is updating at all. Pure; the only entry point the CLI, the
// controller and the tests use. Throws typed errors where oc refuses to report (no operators, no Progressing).
import { type Duration, type Instant, GO_ZERO_TIME, SECOND, roundDuration, sub } from './gotime.js';
import { alertInsights } from './alerts.js';
import {
  type ControlPlaneStatus,
  assessControlPlane,
  findCondition,
  isMultiArchMigration,
  timeOf,
} from './controlplane.js';
import { NoClusterOperatorsError, NoProgressingConditionError } from './errors.js';
import { type UpdateHealth, assessHealth } from './health.js';
import type { ClusterSnapshot, MachineConfigNode } from './inputs.js';
import type { UpdateInsight } from './insight.js';
import {
  type PoolStatus,
  assessNodes,
  assessPool,
  machineConfigVersions,
  nodesByPool,
} from './workerpool.js';

export interface UpdateStatusReport {
  /** False when the control plane is not progressing and every worker pool is done ("not updating"). */
  readonly updating: boolean;
  readonly evaluatedAt: Instant;
  /** The ClusterVersion's Progressing condition is True (the control plane is updating). */
  readonly controlPlaneProgressing: boolean;
  /** When the current update started (history head, else the Progressing transition). */
  readonly startedAt: Instant;
  /** now - startedAt, rounded to seconds. */
  readonly updatingFor: Duration;
  readonly controlPlane: ControlPlaneStatus;
  /** The `master` pool, when there is one. */
  readonly controlPlanePool: PoolStatus | undefined;
  /** Every other pool, in MachineConfigPool order. */
  readonly workerPools: readonly PoolStatus[];
  /** Every insight gathered, in gathering order (before ranking). */
  readonly insights: readonly UpdateInsight[];
  readonly health: UpdateHealth;
}

/** Options for {@link assessUpdateStatus}. */
export interface AssessOptions {
  /**
   * The instant against which oc judges how long a node has been unavailable (short NotReady, disk or network
   * blips are not reported). Default: `now`. oc reads the wall clock here even when it renders a snapshot at the
   * snapshot's own "now", so to reproduce its output for a snapshot pass the current time.
   */
  readonly unavailableAgeReference?: Instant;
}

export function assessUpdateStatus(
  snapshot: ClusterSnapshot,
  now: Instant,
  options: AssessOptions = {},
): UpdateStatusReport {
  const cv = snapshot.clusterVersion;
  if (snapshot.clusterOperators.length === 0) throw new NoClusterOperatorsError();
  const progressing = findCondition(cv.status?.conditions, 'Progressing');
  if (progressing === undefined) throw new NoProgressingConditionError();

  const versions = machineConfigVersions(snapshot.machineConfigs);
  const byPool = nodesByPool(snapshot.machineConfigPools, snapshot.nodes);
  const machineConfigNodes = machineConfigNodesByName(snapshot.machineConfigNodes);
  // Once the control plane finished migrating, the remaining node reboots are an ordinary rollout.
  const multiArchInProgress = isMultiArchMigration(cv.status?.history) && progressing.status === 'True';

  const insights: UpdateInsight[] = [];
  const workerPools: PoolStatus[] = [];
  let controlPlanePool: PoolStatus | undefined;
  for (const pool of snapshot.machineConfigPools) {
    const name = pool.metadata?.name ?? '';
    const nodes = assessNodes(
      cv,
      pool,
      byPool.get(name) ?? [],
      versions,
      multiArchInProgress,
      options.unavailableAgeReference ?? now,
      machineConfigNodes,
    );
    insights.push(...nodes.insights);
    const rolled = assessPool(pool, nodes.nodes);
    insights.push(...rolled.insights);
    if (name === 'master') controlPlanePool = rolled.status;
    else workerPools.push(rolled.status);
  }

  const workerPoolOutdated = workerPools.some((p) => p.overview.total > 0 && p.completion !== 100);
  const updating = progressing.status === 'True' || workerPoolOutdated;

  const history = cv.status?.history ?? [];
  const startedAt = history[0] ? timeOf(history[0].startedTime) : timeOf(progressing.lastTransitionTime);
  const updatingFor = roundDuration(sub(now, startedAt), SECOND);

  if (snapshot.alerts !== undefined) insights.push(...alertInsights(snapshot.alerts, startedAt));

  const controlPlane = assessControlPlane(cv, snapshot.clusterOperators, snapshot.mcoImagePullSpec, now);
  insights.push(...controlPlane.insights);

  return {
    updating,
    controlPlaneProgressing: progressing.status === 'True',
    evaluatedAt: now,
    startedAt,
    updatingFor,
    controlPlane: controlPlane.status,
    controlPlanePool,
    workerPools,
    insights,
    health: assessHealth(insights, updatingFor, now),
  };
}

/** MachineConfigNodes by name, which is their node's name (the API enforces it). */
function machineConfigNodesByName(
  list: readonly MachineConfigNode[] | undefined,
): ReadonlyMap<string, MachineConfigNode> {
  const byName = new Map<string, MachineConfigNode>();
  for (const mcn of list ?? []) {
    const name = mcn.metadata?.name ?? '';
    if (name !== '' && !byName.has(name)) byName.set(name, mcn);
  }
  return byName;
}

/**
 * The "now" oc's snapshot harness uses: the latest lastTransitionTime among the ClusterVersion's and the
 * ClusterOperators' conditions, plus 368975ns (so rounding is exercised).
 */
export function snapshotNow(snapshot: Pick<ClusterSnapshot, 'clusterVersion' | 'clusterOperators'>): Instant {
  const offset = 368_975n;
  let now: Instant = GO_ZERO_TIME;
  const consider = (value: string | null | undefined) => {
    const t = timeOf(value);
    if (t > now) now = t + offset;
  };
  for (const c of snapshot.clusterVersion.status?.conditions ?? []) consider(c.lastTransitionTime);
  for (const co of snapshot.clusterOperators)
    for (const c of co.status?.conditions ?? []) consider(c.lastTransitionTime);
  return now;
}
