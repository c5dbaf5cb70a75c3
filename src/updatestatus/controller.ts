// The update-status controller: keeps `.status` of the UpdateStatus `cluster` current.
// Two informer groups feed it, as in the reference controller: control plane (ClusterVersion, ClusterOperators,
// the MCO Deployment) and nodes (Nodes, MachineConfigPools, MachineConfigs). Every event queues the one key
// `cluster`; the queue coalesces bursts, and one reconcile assesses the cached state (pure), projects it, and
// writes the status subresource only when it differs, at most once per `minWriteIntervalMs`. The decisions
// (throttling, the Healthy condition's times, "unchanged") are pure functions in write-policy.ts; this shell
// observes the caches and the clock, and applies them.
// `.status.conditions` says whether the controller could gather and interpret the data, not how the update goes.
// The caller must install the UpdateStatus CRD first (api/install.ts) and run the informer factory
// (createUpdateStatusControllerFromSources takes the informers and the writer directly, e.g. to test without a server).
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import {
  type SharedInformerFactory,
  type SharedInformer,
  type KubeClient,
  realClock,
  type Clock,
  Controller,
  type Reconciler,
  InvalidArgumentError,
  silentLogger,
  type Logger,
  type KubeObject,
  type ReconcileResult,
  ResourceClient,
  ignoreNotFound,
  type WorkQueueMetricsProvider,
  errorMessage,
} from '../runtime/index.js';
import type { AlertsReading } from './alerts.js';
import { assessUpdateStatus } from './assess.js';
import { isDeepStrictEqual } from 'node:util';
import { UpdateStatuses } from './api/install.js';
import { CONTROL_PLANE_INFORMER, NODE_INFORMER, projectInformers } from './api/project.js';
import {
  REMOVAL_MEMORY_MS,
  type RemovedInformer,
  aggregateUpdateStatus,
  storedAggregate,
} from './api/aggregate.js';
import {
  HEARTBEAT_INTERVAL_MS,
  INFORMER_BUDGETS,
  type InformerContribution,
  removalPatch,
} from './api/informers.js';
import {
  AGGREGATOR_FIELD_MANAGER,
  type InformerWriteOutcome,
  InformerWriter,
  applyCreatingObject,
} from './informer.js';
import { WriteTurn } from './write-turn.js';
import { SINGLETON_NAME, type UpdateStatus } from './api/schema.js';
import { UpdateStatusError } from './errors.js';
import { MILLISECOND } from './gotime.js';
import type { ClusterSnapshot, MachineConfigNode } from './inputs.js';
import { type ClusterInputInformers, clusterInputInformers } from './cluster-informers.js';
import { mcoImageOf } from './snapshot.js';
import { type Health, healthConditions, writeDelayMs } from './write-policy.js';

/** Options for {@link createUpdateStatusController}. */
export interface UpdateStatusControllerOptions {
  readonly client: KubeClient;
  /** Informers come from here (and are shared with other controllers of the process). */
  readonly informers: SharedInformerFactory;
  /** Minimum time between two status writes (ms). Default: 1,000. */
  readonly minWriteIntervalMs?: number;
  /** Re-assessment period without events, so time-driven changes (thresholds, estimates) show (ms). Default: 30,000. */
  readonly resyncMs?: number;
  /** See ProjectOptions.maxNodeInsightsPerPool. Default: 20. */
  readonly maxNodeInsightsPerPool?: number;
  /** Field manager of the aggregator's writes (its informers use the contract's). Default: `tessera-updatestatus`. */
  readonly fieldManager?: string;
  /**
   * Where firing alerts come from while the cluster updates (e.g. createLiveAlertsReader with the controller's
   * own credentials); read at most once per reconcile, only while updating, as oc does. Undefined, or a failed
   * read: health insights leave alerts out (the failure is logged).
   */
  readonly alerts?: { read(): Promise<AlertsReading> };
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Registers the controller's `controller_runtime_reconcile_*` metrics (a Manager's registry). Default: none. */
  readonly registry?: Registry;
  /** The work queue's `workqueue_*` metrics (a Manager's queueMetrics). Default: none. */
  readonly queueMetrics?: WorkQueueMetricsProvider;
  /**
   * Takes turns with the UpdateStatus's other writers, for the writes of its informers and of the aggregator
   * (write-turn.ts). Default: createUpdateStatusController makes one on `client`; without a client, none.
   */
  readonly writeTurn?: WriteTurn;
}

/** Counters for tests and benchmarks. */
export interface UpdateStatusControllerStats {
  /** Reconciles that have finished (returned or thrown), with any write they made. */
  reconciles: number;
  /** Reconciles put off (requeued) because the last write was less than minWriteIntervalMs ago. */
  throttled: number;
  /** Assessments of the cluster made (one per reconcile that was not put off before assessing). */
  assessments: number;
  writes: number;
  /** The writes of each of Tessera's informers (`cpi`, `nodes`) and of the aggregator (`aggregate`, removals too). */
  writesBy: { cpi: number; nodes: number; aggregate: number };
  /** Total time spent assessing and projecting (ms). */
  assessMs: number;
  /** Total time spent in status writes (ms). */
  writeMs: number;
}

export interface UpdateStatusController {
  readonly controller: Controller<string>;
  readonly stats: UpdateStatusControllerStats;
}

/** The informers the controller reads and watches (createUpdateStatusController takes them from the factory). */
export interface UpdateStatusSources extends Omit<ClusterInputInformers, 'machineConfigNodes'> {
  /**
   * The nodes' MachineConfigNodes (OpenShift 4.19+), by an informer that is synced and empty while the cluster
   * does not serve them; absent: each node's phase comes from its annotations alone.
   */
  readonly machineConfigNodes?: SharedInformer<MachineConfigNode & KubeObject>;
  /** The UpdateStatus objects: the controller's previous write, and the resourceVersion its next write uses. */
  readonly statuses: SharedInformer<UpdateStatus & KubeObject>;
}

/** The writes the controller makes on UpdateStatus objects (a ResourceClient in production). */
export type UpdateStatusWriter = Pick<
  ResourceClient<UpdateStatus & KubeObject>,
  'create' | 'get' | 'apply' | 'jsonPatch'
>;

/** Options for {@link createUpdateStatusControllerFromSources}: the controller's own, without where its data comes from. */
export type UpdateStatusControllerTuning = Omit<UpdateStatusControllerOptions, 'client' | 'informers'>;

/**
 * The reconciler: cached objects -> assessment -> Tessera's two informers' contributions (each written by its own
 * InformerWriter when it changed or its heartbeat is due) -> the aggregation over every informer's insights
 * (written with the controller's field manager when it changed), and the removal of expired informers.
 */
class UpdateStatusReconciler implements Reconciler<string> {
  private lastAlertsNotice = '';
  private lastAggregateAt = -Infinity;
  /** When the latest write of any of this controller's writers (its informers, the aggregator) started. */
  private lastWriteStartedAt = -Infinity;
  private migrated = false;
  /** Informers this aggregator removed lately (at most INFORMER_BUDGETS.maxInformers kept). */
  private removed: RemovedInformer[] = [];
  /** The aggregator's fields of its last write, and as the API server returned them. */
  private lastAggregate:
    { readonly applied: UpdateStatus['status']; readonly result: UpdateStatus['status'] } | undefined;
  private readonly informerWriters: Map<string, InformerWriter>;

  constructor(
    private readonly sources: UpdateStatusSources,
    private readonly statuses: UpdateStatusWriter,
    private readonly options: UpdateStatusControllerTuning,
    private readonly clock: Clock,
    private readonly logger: Logger,
    readonly stats: UpdateStatusControllerStats,
  ) {
    const minWriteIntervalMs = options.minWriteIntervalMs ?? 1_000;
    this.informerWriters = new Map(
      [CONTROL_PLANE_INFORMER, NODE_INFORMER].map((name) => [
        name,
        // A turn per write (not one for the reconcile): a turn is never held through an assessment or an alerts
        // read, nor past its hold time by several writes in a row.
        new InformerWriter(statuses, {
          name,
          clock,
          minWriteIntervalMs,
          reservedName: true,
          turn: options.writeTurn,
        }),
      ]),
    );
  }

  private snapshot(): ClusterSnapshot | string {
    const cv = this.sources.clusterVersions
      .getIndexer()
      .list()
      .find((c) => c.metadata?.name === 'version');
    if (!cv) return 'ClusterVersion version not found; is this an OpenShift cluster?';
    const operators = this.sources.clusterOperators.getIndexer().list();
    if (operators.length === 0) return 'no ClusterOperators found';
    return {
      clusterVersion: cv,
      clusterOperators: operators,
      machineConfigPools: this.sources.pools.getIndexer().list(),
      machineConfigs: this.sources.machineConfigs.getIndexer().list(),
      nodes: this.sources.nodes.getIndexer().list(),
      machineConfigNodes: this.sources.machineConfigNodes?.getIndexer().list(),
      alerts: undefined,
      mcoImagePullSpec: mcoImageOf(
        this.sources.deployments
          .getIndexer()
          .list()
          .find((d) => d.metadata?.name === 'machine-config-operator'),
      ),
    };
  }

  async reconcile(_key: string, signal: AbortSignal): Promise<ReconcileResult> {
    try {
      return await this.assessAndWrite(signal);
    } finally {
      this.stats.reconciles++;
    }
  }

  private stored(): (UpdateStatus & KubeObject) | undefined {
    return this.sources.statuses
      .getIndexer()
      .list()
      .find((s) => s.metadata?.name === SINGLETON_NAME);
  }

  /** Tessera's own informers' contributions, and the controller's Healthy condition. */
  private async assess(
    previous: UpdateStatus['status'],
    nowMs: number,
  ): Promise<{ contributions: InformerContribution[]; health: Health }> {
    const now = BigInt(nowMs) * MILLISECOND;
    const snapshot = this.snapshot();
    if (typeof snapshot === 'string')
      return { contributions: [], health: { healthy: false, reason: 'InsufficientData', message: snapshot } };
    try {
      let report = assessUpdateStatus(snapshot, now);
      if (report.updating && this.options.alerts) {
        const reading = await this.options.alerts.read();
        if (reading.alerts !== undefined)
          report = assessUpdateStatus({ ...snapshot, alerts: reading.alerts }, now);
        // Logged when it changes, not on every reconcile of an update.
        if (reading.notice !== this.lastAlertsNotice && reading.notice !== '')
          this.logger.info({ notice: reading.notice.trim() }, 'health insights leave alerts out');
        this.lastAlertsNotice = reading.notice;
      }
      const contributions = projectInformers(report, now, {
        previous,
        maxNodeInsightsPerPool: this.options.maxNodeInsightsPerPool,
      });
      return {
        contributions,
        health: { healthy: true, reason: 'AsExpected', message: 'Insights are gathered and interpreted' },
      };
    } catch (err) {
      const message = errorMessage(err);
      const reason = err instanceof UpdateStatusError ? 'CannotAssess' : 'InternalError';
      if (!(err instanceof UpdateStatusError)) this.logger.error({ err: message }, 'assessment failed');
      return { contributions: [], health: { healthy: false, reason, message } };
    }
  }

  /**
   * Once per process: an UpdateStatus written before the informer contract (by PUT, operation Update, under the
   * aggregator's field manager) owns every field it wrote, so no informer's apply could ever prune them (insights
   * of nodes long gone would stay, trusted). Its status is cleared, guarded by its resourceVersion; every informer
   * writes its entries again (Tessera's at once, others by their next heartbeat).
   */
  private async migratePreContractStatus(
    signal: AbortSignal,
  ): Promise<(UpdateStatus & KubeObject) | undefined> {
    const manager = this.options.fieldManager ?? AGGREGATOR_FIELD_MANAGER;
    const current = await ignoreNotFound(this.statuses.get({ name: SINGLETON_NAME }, signal));
    const managedFields =
      (
        current?.metadata as {
          managedFields?: { manager?: string; operation?: string; subresource?: string }[];
        }
      )?.managedFields ?? [];
    const preContract = managedFields.some(
      (f) => f.manager === manager && f.operation === 'Update' && f.subresource === 'status',
    );
    if (!current || !preContract) return undefined;
    this.logger.info(
      { fieldManager: manager },
      'clearing the UpdateStatus written before the informer contract, so that each informer owns its entries',
    );
    const cleared = await this.statuses.jsonPatch(
      { name: SINGLETON_NAME },
      [
        { op: 'test', path: '/metadata/resourceVersion', value: current.metadata?.resourceVersion },
        { op: 'remove', path: '/status' },
      ],
      { subresource: 'status', fieldManager: `${manager}-migration`, signal },
    );
    this.stats.writes++;
    this.stats.writesBy.aggregate++;
    return cleared;
  }

  private async assessAndWrite(signal: AbortSignal): Promise<ReconcileResult> {
    // The cache may not have seen the clearing yet: this look starts from what the API server answered.
    let cleared: (UpdateStatus & KubeObject) | undefined;
    if (!this.migrated) {
      cleared = await this.migratePreContractStatus(signal);
      this.migrated = true;
    }
    const resync = Math.min(this.options.resyncMs ?? 30_000, HEARTBEAT_INTERVAL_MS / 2);
    // Right after a write, the changes of the next minWriteIntervalMs are looked at once, when it ends: an
    // assessment per event (100 node changes a second on a large cluster) would mostly find its write put off,
    // and costs the CPU the API server needs for the writes. A writer with nothing written lately waits at most
    // that interval more.
    const gateMs = writeDelayMs(
      this.clock.now(),
      this.lastWriteStartedAt,
      this.options.minWriteIntervalMs ?? 1_000,
    );
    if (gateMs > 0) {
      this.stats.throttled++;
      return { requeueAfterMs: gateMs };
    }
    this.stats.assessments++;
    const assessStarted = performance.now();
    let stored = cleared ?? this.stored();
    const { contributions, health } = await this.assess(stored?.status, this.clock.now());
    this.stats.assessMs += performance.now() - assessStarted;

    // An informer that cannot observe writes nothing, heartbeat included: its insights go stale, as the
    // contract says for an informer that stopped; the Healthy condition says why.
    let retryAfterMs = resync;
    let informerError: unknown;
    for (const contribution of contributions) {
      const writer = this.informerWriters.get(contribution.name);
      if (!writer) continue;
      const writeStarted = performance.now();
      const writeStartedAt = this.clock.now();
      let outcome: InformerWriteOutcome;
      try {
        outcome = await writer.write(contribution, stored, signal);
      } catch (err) {
        if (signal.aborted) throw err;
        // A refused write (e.g. a list another informer filled to its maxItems) must not stop the aggregation,
        // whose removals may be what frees the room: the error is raised after it, so the queue still backs off.
        informerError ??= err;
        continue;
      }
      if (outcome.kind === 'written') {
        this.lastWriteStartedAt = writeStartedAt;
        this.stats.writeMs += performance.now() - writeStarted;
        this.stats.writes++;
        this.stats.writesBy[contribution.name === CONTROL_PLANE_INFORMER ? 'cpi' : 'nodes']++;
        stored = outcome.stored;
      } else if (outcome.kind === 'throttled') {
        this.stats.throttled++;
        retryAfterMs = Math.min(retryAfterMs, outcome.retryAfterMs);
      } else retryAfterMs = Math.min(retryAfterMs, outcome.heartbeatDueInMs);
    }
    const result = await this.aggregateAndWrite(stored, health, retryAfterMs, signal);
    if (informerError !== undefined) throw informerError;
    return result;
  }

  /** `write` in a turn with the UpdateStatus's other writers, when this controller takes turns. */
  private inTurn<T>(write: () => Promise<T>, signal: AbortSignal): Promise<T> {
    return this.options.writeTurn ? this.options.writeTurn.run(write, signal) : write();
  }

  /** The aggregation over every informer's insights, written when it changed, and the removals. */
  private async aggregateAndWrite(
    stored: (UpdateStatus & KubeObject) | undefined,
    health: Health,
    retryAfterMs: number,
    signal: AbortSignal,
  ): Promise<ReconcileResult> {
    const minWrite = this.options.minWriteIntervalMs ?? 1_000;
    const nowMs = this.clock.now();
    this.removed = this.removed.filter((r) => nowMs - r.atMs <= REMOVAL_MEMORY_MS);
    const aggregateOf = (status: UpdateStatus['status']) =>
      aggregateUpdateStatus(status, nowMs, {
        healthy: healthConditions(status?.conditions, health, nowMs)[0],
        removed: this.removed,
      });
    let aggregate = aggregateOf(stored?.status);
    const storedFields = storedAggregate(stored?.status);
    const nextFields = storedAggregate(aggregate.apply.status);
    // Stored as this aggregator's last write left it, and about to write the same: another field manager owns the
    // difference (e.g. a pre-contract write), which an apply cannot remove, so writing again would change nothing.
    const asLastWritten =
      this.lastAggregate !== undefined &&
      isDeepStrictEqual(this.lastAggregate.applied, nextFields) &&
      isDeepStrictEqual(this.lastAggregate.result, storedFields);
    const changed = !asLastWritten && !isDeepStrictEqual(storedFields, nextFields);
    const removals = removalPatch(stored?.status, aggregate.removals);
    if (changed || removals.length > 0) {
      const delayMs = writeDelayMs(nowMs, this.lastAggregateAt, minWrite);
      if (delayMs > 0) {
        this.stats.throttled++;
        return { requeueAfterMs: Math.min(retryAfterMs, delayMs) };
      }
      const writeStarted = performance.now();
      // As the informers' writers do (informer.ts): the interval counts from when the write started.
      const writeStartedAt = this.clock.now();
      if (removals.length > 0) {
        this.logger.info(
          { informers: [...aggregate.removals] },
          'removing the insights of informers that expired or exceed their budget',
        );
        // A failed `test` (the list changed meanwhile) is an error: the queue retries with fresh data.
        stored = await this.inTurn(
          () =>
            this.statuses.jsonPatch({ name: SINGLETON_NAME }, removals, {
              subresource: 'status',
              // Its own manager: an Update-operation entry under the aggregator's would read as a pre-contract write.
              fieldManager: `${this.options.fieldManager ?? AGGREGATOR_FIELD_MANAGER}-removals`,
              signal,
            }),
          signal,
        );
        this.stats.writes++;
        this.stats.writesBy.aggregate++;
        for (const s of aggregate.states) {
          if (!aggregate.removals.has(s.name)) continue;
          const removed: RemovedInformer = {
            name: s.name,
            reason: s.state === 'over-budget' ? 'over-budget' : 'expired',
            atMs: nowMs,
          };
          this.removed = [...this.removed.filter((r) => r.name !== s.name), removed].slice(
            -INFORMER_BUDGETS.maxInformers,
          );
        }
        // The aggregate written next names them as removed (the one above was computed before the removal).
        aggregate = aggregateOf(stored.status);
      }
      if (changed || removals.length > 0) {
        stored = await this.inTurn(
          () =>
            applyCreatingObject(
              this.statuses,
              aggregate.apply,
              this.options.fieldManager ?? AGGREGATOR_FIELD_MANAGER,
              signal,
            ),
          signal,
        );
        this.lastAggregate = {
          applied: storedAggregate(aggregate.apply.status),
          result: storedAggregate(stored.status),
        };
        this.stats.writes++;
        this.stats.writesBy.aggregate++;
      }
      this.stats.writeMs += performance.now() - writeStarted;
      this.lastAggregateAt = writeStartedAt;
      this.lastWriteStartedAt = Math.max(this.lastWriteStartedAt, writeStartedAt);
    }
    return { requeueAfterMs: retryAfterMs };
  }
}

/**
 * Builds the controller (not started): register it and the informer factory with the manager, or start both.
 * Informers are requested from `options.informers` here.
 */
export function createUpdateStatusController(options: UpdateStatusControllerOptions): UpdateStatusController {
  validateTuning(options);
  const f = options.informers;
  const sources: UpdateStatusSources = {
    ...clusterInputInformers(f),
    statuses: f.informerFor({ type: UpdateStatuses }),
  };
  return createUpdateStatusControllerFromSources(
    sources,
    new ResourceClient<UpdateStatus & KubeObject>(options.client, UpdateStatuses),
    {
      ...options,
      writeTurn:
        options.writeTurn ??
        WriteTurn.forClient(options.client, 'tessera-updatestatus', {
          clock: options.clock,
          logger: options.logger,
        }),
    },
  );
}

/**
 * Builds the controller (not started) on the given informers and writer; the caller starts the informers.
 * Every event of every source queues the one key `cluster`.
 */
export function createUpdateStatusControllerFromSources(
  sources: UpdateStatusSources,
  writer: UpdateStatusWriter,
  options: UpdateStatusControllerTuning = {},
): UpdateStatusController {
  validateTuning(options);
  const stats: UpdateStatusControllerStats = {
    reconciles: 0,
    throttled: 0,
    assessments: 0,
    writes: 0,
    writesBy: { cpi: 0, nodes: 0, aggregate: 0 },
    assessMs: 0,
    writeMs: 0,
  };
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? silentLogger;
  const reconciler = new UpdateStatusReconciler(sources, writer, options, clock, logger, stats);
  const controller = new Controller<string>({
    name: 'updatestatus',
    reconciler,
    clock,
    logger,
    registry: options.registry,
    queueMetrics: options.queueMetrics,
  });
  const toSingleton = (): readonly string[] => [SINGLETON_NAME];
  for (const informer of Object.values(sources) as (SharedInformer<KubeObject> | undefined)[])
    if (informer) controller.watch(informer, toSingleton);
  return { controller, stats };
}

function validateTuning(options: UpdateStatusControllerTuning): void {
  const minWrite = options.minWriteIntervalMs ?? 1_000;
  if (!(minWrite >= 0)) throw new InvalidArgumentError('minWriteIntervalMs', `must be >= 0, got ${minWrite}`);
}
