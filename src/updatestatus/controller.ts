// The update-status controller: keeps `.status` of the UpdateStatus `cluster` current.
// Two informer groups feed it, as in the reference controller: control plane (ClusterVersion, ClusterOperators,
// the MCO Deployment) and nodes (Nodes, MachineConfigPools, MachineConfigs). Every event queues the one key
// `cluster`; the queue coalesces bursts, and one reconcile assesses the cached state (pure), projects it, and
// writes the status subresource only when it differs, at most once per `minWriteIntervalMs`. The decisions
// (throttling, the Healthy condition's times, "unchanged") are pure functions in write-policy.ts; this shell
// observes the caches and the clock, and applies them.
// `.status.conditions` says whether the controller could gather and interpret the data, not how the update goes.
// The caller must install the UpdateStatus CRD first (api/install.ts) and run the informer factory
// (newUpdateStatusController takes the informers and the writer directly, e.g. to test without a server).
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
  ApiStatusError,
  InvalidArgumentError,
  silentLogger,
  type Logger,
  type KubeObject,
  type ReconcileResult,
  ResourceClient,
  Nodes,
  type ResourceType,
  type WorkQueueMetricsProvider,
} from '../runtime/index.js';
import type { AlertsReading } from './alerts.js';
import { assessUpdateStatus } from './assess.js';
import { UpdateStatuses } from './api/install.js';
import { projectUpdateStatus } from './api/project.js';
import { SINGLETON_NAME, type UpdateStatus } from './api/schema.js';
import { UpdateStatusError } from './errors.js';
import { MILLISECOND } from './gotime.js';
import type {
  ClusterOperator,
  ClusterSnapshot,
  ClusterVersion,
  Deployment,
  MachineConfig,
  MachineConfigPool,
  Node,
} from './inputs.js';
import { ClusterOperators, ClusterVersions, MachineConfigPools, MachineConfigs } from './api/dev-crds.js';
import { mcoImageOf } from './snapshot.js';
import { type Health, healthConditions, statusUnchanged, writeDelayMs } from './write-policy.js';

const MCO_NAMESPACE = 'openshift-machine-config-operator';
const Deployments: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
  namespaced: true,
};

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
  /** Field manager of the writes. Default: `tessera-updatestatus`. */
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
}

/** Counters for tests and benchmarks. */
export interface UpdateStatusControllerStats {
  /** Reconciles that have finished (returned or thrown), with any write they made. */
  reconciles: number;
  /** Reconciles put off (requeued) because the last write was less than minWriteIntervalMs ago. */
  throttled: number;
  writes: number;
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
export interface UpdateStatusSources {
  readonly clusterVersions: SharedInformer<ClusterVersion & KubeObject>;
  readonly clusterOperators: SharedInformer<ClusterOperator & KubeObject>;
  /** Only the MCO Deployment (namespace openshift-machine-config-operator) is read. */
  readonly deployments: SharedInformer<Deployment & KubeObject>;
  readonly nodes: SharedInformer<Node & KubeObject>;
  readonly pools: SharedInformer<MachineConfigPool & KubeObject>;
  readonly machineConfigs: SharedInformer<MachineConfig & KubeObject>;
  /** The UpdateStatus objects: the controller's previous write, and the resourceVersion its next write uses. */
  readonly statuses: SharedInformer<UpdateStatus & KubeObject>;
}

/** The writes the controller makes on UpdateStatus objects (a ResourceClient in production). */
export type UpdateStatusWriter = Pick<
  ResourceClient<UpdateStatus & KubeObject>,
  'create' | 'get' | 'updateStatus'
>;

/** Options for {@link newUpdateStatusController}: the controller's own, without where its data comes from. */
export type UpdateStatusControllerTuning = Omit<UpdateStatusControllerOptions, 'client' | 'informers'>;

/** The reconciler: cached objects -> assessment -> projected status -> (maybe) one write. */
class UpdateStatusReconciler implements Reconciler<string> {
  private lastWriteAt = -Infinity;
  private lastAlertsNotice = '';

  constructor(
    private readonly sources: UpdateStatusSources,
    private readonly statuses: UpdateStatusWriter,
    private readonly options: UpdateStatusControllerTuning,
    private readonly clock: Clock,
    private readonly logger: Logger,
    readonly stats: UpdateStatusControllerStats,
  ) {}

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

  private async assessAndWrite(signal: AbortSignal): Promise<ReconcileResult> {
    const resync = this.options.resyncMs ?? 30_000;
    // Coalesce: within the write interval, look again when it ends (the queue keeps one pending key).
    const delayMs = writeDelayMs(
      this.clock.now(),
      this.lastWriteAt,
      this.options.minWriteIntervalMs ?? 1_000,
    );
    if (delayMs > 0) {
      this.stats.throttled++;
      return { requeueAfterMs: delayMs };
    }

    const nowMs = this.clock.now();
    const assessStarted = performance.now();
    const now = BigInt(nowMs) * MILLISECOND;
    const stored = this.sources.statuses
      .getIndexer()
      .list()
      .find((s) => s.metadata?.name === SINGLETON_NAME);
    const previous = stored?.status;

    const conditions = (health: Health) => healthConditions(previous?.conditions, health, nowMs);
    let status: UpdateStatus['status'];
    const snapshot = this.snapshot();
    if (typeof snapshot === 'string') {
      status = {
        ...previous,
        conditions: conditions({ healthy: false, reason: 'InsufficientData', message: snapshot }),
      };
    } else {
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
        status = projectUpdateStatus(report, now, {
          previous,
          conditions: conditions({
            healthy: true,
            reason: 'AsExpected',
            message: 'Insights are gathered and interpreted',
          }),
          maxNodeInsightsPerPool: this.options.maxNodeInsightsPerPool,
        });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const reason = err instanceof UpdateStatusError ? 'CannotAssess' : 'InternalError';
        if (!(err instanceof UpdateStatusError)) this.logger.error({ err: message }, 'assessment failed');
        status = { ...previous, conditions: conditions({ healthy: false, reason, message }) };
      }
    }
    this.stats.assessMs += performance.now() - assessStarted;
    if (statusUnchanged(stored, status)) return { requeueAfterMs: resync };

    const fieldManager = this.options.fieldManager ?? 'tessera-updatestatus';
    let base = stored;
    if (!base) {
      try {
        base = await this.statuses.create(
          { metadata: { name: SINGLETON_NAME }, spec: {} },
          { fieldManager, signal },
        );
      } catch (err) {
        if (!(err instanceof ApiStatusError && err.statusCode === 409)) throw err;
        base = await this.statuses.get({ name: SINGLETON_NAME }, signal);
      }
    }
    // resourceVersion from the cache: a conflict means the cache is behind; the error requeues with backoff.
    const writeStarted = performance.now();
    await this.statuses.updateStatus({ ...base, status }, { fieldManager, signal });
    this.stats.writeMs += performance.now() - writeStarted;
    this.lastWriteAt = this.clock.now();
    this.stats.writes++;
    return { requeueAfterMs: resync };
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
    clusterVersions: f.informerFor({ type: ClusterVersions }),
    clusterOperators: f.informerFor({ type: ClusterOperators }),
    deployments: f.informerFor({
      type: Deployments,
      namespace: MCO_NAMESPACE,
      fieldSelector: 'metadata.name=machine-config-operator',
    }),
    nodes: f.informerFor({ type: Nodes }),
    pools: f.informerFor({ type: MachineConfigPools }),
    machineConfigs: f.informerFor({ type: MachineConfigs }),
    statuses: f.informerFor({ type: UpdateStatuses }),
  };
  return newUpdateStatusController(
    sources,
    new ResourceClient<UpdateStatus & KubeObject>(options.client, UpdateStatuses),
    options,
  );
}

/**
 * Builds the controller (not started) on the given informers and writer; the caller starts the informers.
 * Every event of every source queues the one key `cluster`.
 */
export function newUpdateStatusController(
  sources: UpdateStatusSources,
  writer: UpdateStatusWriter,
  options: UpdateStatusControllerTuning = {},
): UpdateStatusController {
  validateTuning(options);
  const stats: UpdateStatusControllerStats = {
    reconciles: 0,
    throttled: 0,
    writes: 0,
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
  for (const informer of Object.values(sources) as SharedInformer<KubeObject>[])
    controller.watch(informer, toSingleton);
  return { controller, stats };
}

function validateTuning(options: UpdateStatusControllerTuning): void {
  const minWrite = options.minWriteIntervalMs ?? 1_000;
  if (!(minWrite >= 0)) throw new InvalidArgumentError('minWriteIntervalMs', `must be >= 0, got ${minWrite}`);
}
