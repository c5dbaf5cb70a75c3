// The NodePool side (imperative shell), in the management cluster. For each NodePool it mirrors the referenced
// PerformanceProfile into the HCP namespace (`<cm>-<nodepool>`), reads the status ConfigMaps labelled for it,
// asks nodepool-conditions.ts for the conditions, and writes the NodePool status only when they changed
// meaningfully. It watches NodePools, status ConfigMaps (by label), mirrored PP ConfigMaps, HostedControlPlanes and
// users' tuning ConfigMaps (nodepool-caches.ts), so every status change is reflected, not only NodePool generation
// changes. Decisions are pure: profile-reference.ts (what spec.tuningConfig names), mirror-plan.ts (mirror writes),
// nodepool-conditions.ts (the conditions).
// Guarantees: one NodePool status write per meaningful change, none for timestamp-only changes; conditions of
// other controllers are preserved (read-modify-write guarded by resourceVersion; a conflict retries). The events
// that only echo this controller's own writes (its NodePool status writes, its mirrors) queue no reconcile.
// Status ConfigMaps are written from the hosted cluster and treated as hostile: the cache keeps only their `status`
// key, and not even that when it is over budget; decoding is budgeted (status-codec.ts) and cached by content
// (status-decode-cache.ts); a refused status is a NodePool condition plus a Warning event naming the ConfigMap and
// the limit, and the reconcile then succeeds (no retry until something changes). Should the API server still
// refuse the NodePool status, the conditions built from that ConfigMap are replaced by one naming it
// (PerformanceProfileStatusRejected) instead of retrying forever.
import { Counter, type Registry } from 'prom-client';
import {
  ApiStatusError,
  type Clock,
  ConfigMaps,
  Controller,
  type EventRecorder,
  InvalidArgumentError,
  isAlreadyExists,
  isConflict,
  ignoreNotFound,
  type KubeClient,
  KubeEventRecorder,
  type Logger,
  objectKey,
  OwnWrites,
  realClock,
  type ReconcileResult,
  ResourceClient,
  type Runnable,
  runTogether,
  type SharedInformerFactory,
  silentLogger,
  TerminalError,
  type WorkQueueMetricsProvider,
} from '../../runtime/index.js';
import type { ConfigMap, NodePool } from '../api/types.js';
import { hostedControlPlaneNamespace } from '../names.js';
import { NodePools } from '../resources.js';
import { refOf } from '../status-configmap.js';
import { planMirrors, type WantedMirror } from './mirror-plan.js';
import { NodePoolCaches } from './nodepool-caches.js';
import {
  assessNodePoolPerformance,
  assessRejectedStatus,
  type NodePoolAssessment,
} from './nodepool-conditions.js';
import { resolveProfileReference, type ResolvedReference } from './profile-reference.js';
import { createStatusDecodeCache, type StatusDecoder } from './status-decode-cache.js';

export interface NodePoolControllerOptions {
  /** Client of the management cluster. Required. */
  management: KubeClient;
  /**
   * A status whose newest heartbeat is older than this is reported stale. Milliseconds; 0 disables the check.
   * Default: 0, because the reference Node Tuning Operator rewrites a status only when it changes; enable it (e.g.
   * 900,000) with a writer that refreshes heartbeats, such as createStatusWriter (every 5 min by default).
   */
  staleAfterMs?: number;
  /**
   * Concurrent reconciles. Default: DEFAULT_NODEPOOL_WORKERS (64).
   */
  workers?: number;
  /** Only NodePools in this namespace. Default: all namespaces. */
  namespace?: string;
  /** Field manager of the writes. Default: `tessera-nodepool`. */
  fieldManager?: string;
  clock?: Clock;
  logger?: Logger;
  /**
   * Warning events on a NodePool whose status ConfigMap is refused (reasons as the summary condition's).
   * Default: events.k8s.io/v1 Events written with `management`, reporting controller = fieldManager.
   */
  events?: EventRecorder;
  /** Bytes of decoded status ConfigMaps remembered by content (see status-decode-cache.ts). Default: 4 MiB. */
  statusDecodeCacheBytes?: number;
  /**
   * Registers `tessera_nodepool_status_writes_total`, `tessera_nodepool_mirror_writes_total`,
   * `tessera_nodepool_status_decodes_total` and the controller's `controller_runtime_reconcile_*` metrics.
   * Default: none.
   */
  registry?: Registry;
  /** The work queue's `workqueue_*` metrics (a Manager's queueMetrics). Default: none. */
  queueMetrics?: WorkQueueMetricsProvider;
  /**
   * Shared informers to build the caches on, started by their owner: a Manager starts its own on every replica and
   * holds /readyz and leader election until they synced. Default: a factory of its own on `management`, started and
   * stopped with the controller.
   */
  informers?: SharedInformerFactory;
}

export interface NodePoolController extends Runnable {
  /** Namespaces whose ConfigMaps are watched as possible tuning ConfigMaps, sorted. */
  tuningNamespaces(): string[];
}

/**
 * NodePoolControllerOptions.workers's default. A reconcile is mostly one wait on a NodePool status write, so in a
 * burst the workers are the writes in flight: as many as the client's connections to the API server (64), the
 * concurrency the same writes have without a controller (the bench's floor). Fewer cap the burst at workers / write
 * latency; in alternating bursts of 500 within a run, 64 workers were faster than 8 in 8 of 10 pairs (by 2-41 %) on a
 * loaded 2-core machine, where the API server is the limit either way (`npm run bench -- nodepool`).
 */
export const DEFAULT_NODEPOOL_WORKERS = 64;

/** NodePoolControllerOptions.staleAfterMs's default (never stale): `tessera nodepool run --stale-after` names it. */
export const DEFAULT_STALE_AFTER_MS = 0;

const NAME = 'nodepool-performance-status';
/** Retry delay after a write lost to a newer object version (the cache catches up within milliseconds). */
const CACHE_LAG_RETRY_MS = 20;

/** Outcome of a NodePool status write; `{ invalid }` carries the message when the API server refuses it (422). */
type WriteOutcome = 'written' | 'conflict' | { invalid: string };

interface NodePoolMetrics {
  statusWrites?: Counter<string>;
  mirrorWrites?: Counter<string>;
  statusDecodes?: Counter<string>;
}

function registerMetrics(registry: Registry | undefined): NodePoolMetrics {
  if (!registry) return {};
  const counter = (name: string, help: string): Counter<string> =>
    (registry.getSingleMetric(name) as Counter<string> | undefined) ??
    new Counter({ name, help, registers: [registry] });
  return {
    statusWrites: counter(
      'tessera_nodepool_status_writes_total',
      'NodePool status writes for performance-profile conditions',
    ),
    mirrorWrites: counter(
      'tessera_nodepool_mirror_writes_total',
      'Writes of mirrored PerformanceProfile ConfigMaps',
    ),
    statusDecodes: counter(
      'tessera_nodepool_status_decodes_total',
      'Status ConfigMap texts actually decoded (not found in the decode cache)',
    ),
  };
}

/** Builds the controller; nothing runs until start(). */
export function createNodePoolController(options: NodePoolControllerOptions): NodePoolController {
  return new NodePoolStatusController(options);
}

class NodePoolStatusController implements NodePoolController {
  readonly name = NAME;
  readonly needsLeaderElection = true;
  private readonly staleAfterMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly fieldManager: string;
  private readonly caches: NodePoolCaches;
  private readonly controller: Controller<string>;
  private readonly nodePoolClient: ResourceClient<NodePool>;
  private readonly configMapClient: ResourceClient<ConfigMap>;
  private readonly metrics: NodePoolMetrics;
  private readonly decoder: StatusDecoder;
  private readonly events: EventRecorder;
  /** Our own NodePool status and mirror writes, whose echoes need no reconcile (others' changes still do). */
  private readonly ownStatusWrites = new OwnWrites((np) => this.controller.enqueue(objectKey(np)));
  private readonly ownMirrorWrites = new OwnWrites((cm) =>
    this.caches.nodePoolOfMirror(cm as ConfigMap).forEach((k) => this.controller.enqueue(k)),
  );

  constructor(private readonly options: NodePoolControllerOptions) {
    this.staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
    if (!(this.staleAfterMs >= 0)) throw new InvalidArgumentError('staleAfterMs', 'must be >= 0');
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ component: NAME });
    this.fieldManager = options.fieldManager ?? 'tessera-nodepool';
    const { clock, logger } = this;
    this.caches = new NodePoolCaches({
      client: options.management,
      informers: options.informers,
      namespace: options.namespace,
      clock,
      logger,
      // Its first list queues every NodePool naming a ConfigMap there, so nothing changed meanwhile is missed.
      onTuningInformer: (informer) =>
        this.controller.watch(informer, (cm) => this.caches.nodePoolsNaming(cm)),
    });
    this.nodePoolClient = new ResourceClient<NodePool>(options.management, NodePools);
    this.configMapClient = new ResourceClient<ConfigMap>(options.management, ConfigMaps);
    this.metrics = registerMetrics(options.registry);
    this.decoder = createStatusDecodeCache({
      maxBytes: options.statusDecodeCacheBytes,
      onDecode: () => this.metrics.statusDecodes?.inc(),
    });
    this.events =
      options.events ??
      new KubeEventRecorder({ client: options.management, component: this.fieldManager, clock, logger });
    this.controller = new Controller<string>({
      name: NAME,
      reconciler: { reconcile: (key, signal) => this.reconcile(key, signal) },
      workers: options.workers ?? DEFAULT_NODEPOOL_WORKERS,
      needsLeaderElection: false,
      clock,
      logger,
      registry: options.registry,
      queueMetrics: options.queueMetrics,
    });
    this.watchCaches();
  }

  private watchCaches(): void {
    const { caches, controller } = this;
    controller.watch(caches.nodePools, undefined, this.ownStatusWrites.predicate());
    if (this.options.namespace) caches.tuningConfigMapsIn(this.options.namespace);
    controller.watch(caches.statusConfigMaps, (cm) => caches.nodePoolOfStatus(cm));
    controller.watch(caches.mirrors, (cm) => caches.nodePoolOfMirror(cm), this.ownMirrorWrites.predicate());
    controller.watch(caches.hcps, (hcp) => caches.nodePoolsOfControlPlane(hcp));
  }

  start(signal: AbortSignal): Promise<void> {
    const parts = this.caches.ownsFactory ? [this.caches.factory, this.controller] : [this.controller];
    return runTogether(NAME, parts).start(signal);
  }

  tuningNamespaces(): string[] {
    return this.caches.tuningNamespaces();
  }

  private async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    // Keys mapped from cluster-wide ConfigMaps may name NodePools of namespaces another instance serves.
    if (this.options.namespace && !key.startsWith(`${this.options.namespace}/`)) return;
    const np = this.caches.nodePools.getIndexer().get(key);
    // Deleted NodePool: its mirrors (found through their annotation) go; their status ConfigMaps follow.
    if (!np) return this.deleteConfigMaps(this.caches.mirrorsFor(key), signal);
    const hcpNs = hostedControlPlaneNamespace(np.metadata.namespace ?? '', np.spec.clusterName);
    const resolved = await this.resolve(np, hcpNs, signal);
    // An unresolved reference keeps the mirrors as they are: it may be a passing state (e.g. an edit in progress).
    if (resolved.reference.kind !== 'unresolved') await this.applyMirrors(np, hcpNs, resolved.mirror, signal);
    const assessment = assessNodePoolPerformance({
      nodePool: np,
      reference: resolved.reference,
      statusConfigMaps: this.caches.statusConfigMapsIn(hcpNs, np.metadata.name ?? ''),
      now: this.clock.now(),
      staleAfterMs: this.staleAfterMs,
      decodeStatus: this.decoder.decode,
    });
    if (assessment.changed) {
      const written = await this.writeConditions(np, assessment, signal);
      // Our cache is behind the server (another writer, or our own last write): look again shortly.
      if (written === 'conflict') return { requeueAfterMs: CACHE_LAG_RETRY_MS };
      if (written !== 'written') return this.reportRejected(key, np, assessment, written.invalid, signal);
      this.reportWritten(key, np, assessment);
    }
    return assessment.recheckAfterMs !== undefined
      ? { requeueAfterMs: assessment.recheckAfterMs }
      : undefined;
  }

  /** Reads the tuning ConfigMaps the NodePool names and decides what it references. */
  private async resolve(np: NodePool, hcpNs: string, signal: AbortSignal): Promise<ResolvedReference> {
    const namespace = np.metadata.namespace ?? '';
    const tuningConfigMaps: { name: string; configMap?: ConfigMap }[] = [];
    for (const { name } of np.spec.tuningConfig ?? []) {
      const configMap = await this.tuningConfigMap(namespace, name, signal);
      tuningConfigMaps.push({ name, configMap });
      if (!configMap) break; // the first missing one is reported
    }
    return resolveProfileReference({
      nodePool: np,
      tuningConfigMaps,
      controlPlaneExists: this.caches.hasControlPlaneIn(hcpNs),
    });
  }

  /**
   * The cache, or (when it has not seen the ConfigMap yet) the API server: a ConfigMap created just before its
   * NodePool must not be reported missing.
   */
  private async tuningConfigMap(
    namespace: string,
    name: string,
    signal: AbortSignal,
  ): Promise<ConfigMap | undefined> {
    const cached = this.caches.tuningConfigMapsIn(namespace).getIndexer().get(`${namespace}/${name}`);
    if (cached) return cached;
    return ignoreNotFound(this.configMapClient.get({ namespace, name }, signal));
  }

  /** Creates/updates the wanted mirror and deletes the NodePool's other mirrors in `hcpNs`. */
  private async applyMirrors(
    np: NodePool,
    hcpNs: string,
    wanted: WantedMirror | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const plan = planMirrors(this.caches.mirrorsIn(hcpNs, np.metadata.name ?? ''), wanted);
    await this.deleteConfigMaps(plan.delete, signal);
    const { fieldManager } = this;
    const { create, update } = plan;
    if (create) {
      try {
        await this.ownMirrorWrites.track(refOf(create), () =>
          this.configMapClient.create(create, { fieldManager, signal }),
        );
      } catch (err) {
        // Created by our previous pass, not yet in the cache: the next pass compares it.
        if (!isAlreadyExists(err)) throw err;
      }
      this.metrics.mirrorWrites?.inc();
      this.logger.info(
        { nodePool: wanted?.nodePoolKey, configMap: refOf(create) },
        'mirrored PerformanceProfile ConfigMap',
      );
    }
    if (update) {
      await this.ownMirrorWrites.track(refOf(update), () =>
        this.configMapClient.update(update, { fieldManager, signal }),
      );
      this.metrics.mirrorWrites?.inc();
    }
  }

  private async deleteConfigMaps(configMaps: readonly ConfigMap[], signal: AbortSignal): Promise<void> {
    for (const cm of configMaps) {
      await ignoreNotFound(
        this.configMapClient.delete(
          { namespace: cm.metadata.namespace ?? '', name: cm.metadata.name ?? '' },
          { signal },
        ),
      );
      this.metrics.mirrorWrites?.inc();
      this.logger.info({ configMap: refOf(cm) }, 'deleted mirrored PerformanceProfile ConfigMap');
    }
  }

  /** Writes the NodePool status (read-modify-write of the cached object, guarded by its resourceVersion). */
  private async writeConditions(
    np: NodePool,
    assessment: NodePoolAssessment,
    signal: AbortSignal,
  ): Promise<WriteOutcome> {
    const updated: NodePool = structuredClone(np);
    updated.status = { ...updated.status, conditions: assessment.conditions };
    try {
      await this.ownStatusWrites.track(objectKey(np), () =>
        this.nodePoolClient.updateStatus(updated, { fieldManager: this.fieldManager, signal }),
      );
    } catch (err) {
      if (isConflict(err)) return 'conflict';
      if (err instanceof ApiStatusError && err.statusCode === 422) return { invalid: err.message };
      throw err;
    }
    this.metrics.statusWrites?.inc();
    return 'written';
  }

  private reportWritten(key: string, np: NodePool, assessment: NodePoolAssessment): void {
    if (assessment.refused) {
      this.events.event(np, 'Warning', assessment.refused.reason, assessment.refused.message);
      this.logger.warn(
        { nodePool: key, source: assessment.source, reason: assessment.refused.reason },
        'refused status ConfigMap',
      );
    }
    this.logger.info(
      { nodePool: key, source: assessment.source },
      'updated NodePool performance-profile conditions',
    );
  }

  /**
   * Refused although every condition we build fits the CRD (e.g. a schema stricter than ours): say so on the
   * NodePool instead of retrying the same refused write forever.
   */
  private async reportRejected(
    key: string,
    np: NodePool,
    assessment: NodePoolAssessment,
    invalid: string,
    signal: AbortSignal,
  ): Promise<ReconcileResult | void> {
    const rejected = assessRejectedStatus(np, assessment.source, invalid, this.clock.now());
    const retried = await this.writeConditions(np, rejected, signal);
    if (retried === 'conflict') return { requeueAfterMs: CACHE_LAG_RETRY_MS };
    if (rejected.refused) this.events.event(np, 'Warning', rejected.refused.reason, rejected.refused.message);
    if (retried !== 'written') {
      throw new TerminalError(
        `NodePool ${key}: the API server refused its status twice (${retried.invalid}); not retrying until it changes`,
      );
    }
    this.logger.warn(
      { nodePool: key, source: assessment.source, err: invalid },
      'NodePool status refused; reported PerformanceProfileStatusRejected instead',
    );
  }
}
