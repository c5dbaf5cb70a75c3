// A controller: a rate-limited work queue of keys fed by informer handlers, drained by N workers that call a
// level-based reconcile(key). Guarantees: one key is never reconciled by two workers at once; a key changed during
// its reconcile is reconciled again afterwards; failures back off per key (5 ms..1000 s) and never crash the
// process (they are logged with the key). With `shardOf`, waiting keys are handed to workers round-robin between
// shards (e.g. namespaces: tenants), so one tenant's many keys do not queue ahead of another's. On stop, intake stops, queued keys are dropped (the next start relists)
// and start() resolves once in-flight reconciles have returned. The reconciler must honour `signal`.
import { setMaxListeners } from 'node:events';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { SharedInformer } from './cache/shared-informer.js';
import { realClock, type Clock } from './clock.js';
import { InvalidArgumentError } from './errors.js';
import { silentLogger, type Logger } from './logging.js';
import { objectKey, type KubeObject } from './object.js';
import { decideRequeue, type ReconcileResult } from './requeue-policy.js';
import type { Runnable } from './runnable.js';
import type { TriggerSource } from './trigger.js';
import { FairOrder } from './workqueue/fair-order.js';
import type { WorkQueueMetricsProvider } from './workqueue/metrics.js';
import { RateLimitingWorkQueue, type RateLimitingQueue } from './workqueue/rate-limiting-queue.js';
import type { RateLimiter } from './workqueue/rate-limiters.js';

export interface Reconciler<K = string> {
  /**
   * Makes the world match the desired state for `key` (level-based: read the current state, do not rely on the
   * event that queued it). Return `{ requeueAfterMs }` to look again later; throw to retry with backoff; throw
   * TerminalError when retrying cannot help. `signal` aborts when the controller stops or loses leadership.
   */
  reconcile(key: K, signal: AbortSignal): Promise<ReconcileResult | void>;
}

/**
 * Which events of a watched informer queue keys, as controller-runtime's predicates: each returns false to drop
 * the event (e.g. one that only echoes the controller's own write). A missing function lets every event of that
 * kind through. The initial sync and every (re)start still queue all cached objects: predicates filter changes only.
 */
export interface WatchPredicate<T> {
  add?(obj: T): boolean;
  update?(oldObj: T, newObj: T): boolean;
  delete?(obj: T, finalStateUnknown: boolean): boolean;
}

export interface ControllerOptions<K> {
  /** Names the queue (metrics label `name`) and the logs. Required, unique per process. */
  name: string;
  reconciler: Reconciler<K>;
  /** Concurrent reconciles (of different keys). Default: 1. */
  workers?: number;
  /** Default: defaultControllerRateLimiter (per key 5 ms..1000 s, max'd with 10 qps / burst 100). */
  rateLimiter?: RateLimiter<K>;
  /**
   * The shard (tenant) of a key, e.g. its namespace (`(key) => splitObjectKey(key).namespace`): waiting keys are handed out round-robin
   * between shards (FairOrder) instead of first come, first served. Must be pure. Default: none (FIFO).
   */
  shardOf?: (key: K) => string;
  /** Run only on the leader. Default: true. */
  needsLeaderElection?: boolean;
  clock?: Clock;
  logger?: Logger;
  /** Work-queue metrics (see prometheusWorkQueueMetrics). Default: none. */
  queueMetrics?: WorkQueueMetricsProvider;
  /** Registers controller_runtime_reconcile_{total,errors_total,time_seconds}. Default: none. */
  registry?: Registry;
}

export class Controller<K = string> implements Runnable {
  readonly name: string;
  readonly needsLeaderElection: boolean;
  private readonly reconciler: Reconciler<K>;
  private readonly workers: number;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly options: ControllerOptions<K>;
  /** Informers feeding the queue and how their objects map to keys; replayed in full at every start. */
  private readonly sources: Array<{
    informer: SharedInformer<KubeObject>;
    keysOf: (obj: KubeObject) => readonly K[];
  }> = [];
  private readonly metrics: { total?: Counter<string>; errors?: Counter<string>; time?: Histogram<string> } =
    {};
  /** The queue of the current (or next) run; replaced by a fresh one when a run starts after a stop. */
  private currentQueue: RateLimitingWorkQueue<K>;
  private running = false;

  constructor(options: ControllerOptions<K>) {
    if (!options.name) throw new InvalidArgumentError('name', 'a controller needs a name');
    const workers = options.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1)
      throw new InvalidArgumentError('workers', `must be an integer >= 1, got ${workers}`);
    this.options = options;
    this.name = options.name;
    this.reconciler = options.reconciler;
    this.workers = workers;
    this.needsLeaderElection = options.needsLeaderElection ?? true;
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ controller: options.name });
    if (options.registry) this.registerMetrics(options.registry);
    this.currentQueue = this.newQueue();
  }

  /** The queue of the current run. */
  get queue(): RateLimitingQueue<K> {
    return this.currentQueue;
  }

  /** Queues `key` for reconciliation (no-op if already queued, or while the controller is stopping). */
  enqueue(key: K): void {
    this.currentQueue.add(key);
  }

  /** Queues `key` after `delayMs`. */
  enqueueAfter(key: K, delayMs: number): void {
    this.currentQueue.addAfter(key, delayMs);
  }

  /**
   * Reconciles keys derived from `informer`'s objects: by default the object's own key (`namespace/name`, only
   * meaningful when K is string), or the keys `toKeys` maps it to (e.g. its owner; required for other key types). Workers wait for this informer's sync before starting, and every
   * start queues the keys of all cached objects (level-based: nothing is lost while stopped or not leading).
   * `predicate` drops events that need no reconcile (see WatchPredicate).
   */
  watch<T extends KubeObject>(
    informer: SharedInformer<T>,
    toKeys?: (obj: T) => readonly K[],
    predicate: WatchPredicate<T> = {},
  ): void {
    const keysOf = toKeys ?? ((obj: T): readonly K[] => [objectKey(obj) as unknown as K]);
    // Each key once per event: a second add() of a key an idle worker has just taken would queue it again.
    const add = (...objs: T[]): void => {
      for (const k of new Set(objs.flatMap(keysOf))) this.currentQueue.add(k);
    };
    informer.addEventHandler(
      {
        onAdd: (obj) => {
          if (predicate.add?.(obj) ?? true) add(obj);
        },
        onUpdate: (oldObj, newObj) => {
          if (!(predicate.update?.(oldObj, newObj) ?? true)) return;
          // A mapped key may change with the object (e.g. a new owner): the old key needs a look too.
          if (toKeys && oldObj !== newObj) add(newObj, oldObj);
          else add(newObj);
        },
        onDelete: (obj, finalStateUnknown) => {
          if (predicate.delete?.(obj, finalStateUnknown) ?? true) add(obj);
        },
      },
      { name: `controller ${this.name}` },
    );
    this.sources.push({
      informer: informer as unknown as SharedInformer<KubeObject>,
      keysOf: keysOf as unknown as (obj: KubeObject) => readonly K[],
    });
  }

  /**
   * Reconciles the keys `toKeys` maps each event of `trigger` to (controller-runtime's source.Channel): for
   * changes that are not objects in a cache, such as a renewed certificate. Events fired before the first start wait
   * in the queue; fired after a stop (lost leadership) they are dropped, like a watch event then, and nothing is
   * replayed at the next start.
   */
  watchTrigger<E>(trigger: TriggerSource<E>, toKeys: (event: E) => readonly K[]): void {
    trigger.subscribe((event) => {
      for (const k of new Set(toKeys(event))) this.currentQueue.add(k);
    });
  }

  /** Waits for watched caches, runs the workers until `signal` aborts, then drains in-flight work. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.running) throw new InvalidArgumentError('start', `controller ${this.name} is already running`);
    this.running = true;
    if (this.currentQueue.shuttingDown()) this.currentQueue = this.newQueue();
    const queue = this.currentQueue;
    const stop = (): void => void queue.shutDownWithDrain();
    signal.addEventListener('abort', stop, { once: true });
    try {
      const synced = await Promise.all(this.sources.map((s) => s.informer.waitForSync(signal)));
      if (signal.aborted || !synced.every(Boolean)) return;
      for (const { informer, keysOf } of this.sources)
        for (const obj of informer.getIndexer().list()) for (const k of keysOf(obj)) queue.add(k);
      this.logger.info({ workers: this.workers }, 'starting workers');
      const reconciling = reconcileSignal(signal, this.workers);
      await Promise.all(Array.from({ length: this.workers }, () => this.work(queue, reconciling)));
      await queue.shutDownWithDrain();
      this.logger.info({}, 'workers stopped');
    } finally {
      signal.removeEventListener('abort', stop);
      queue.shutDown();
      this.running = false;
    }
  }

  private newQueue(): RateLimitingWorkQueue<K> {
    return new RateLimitingWorkQueue<K>({
      name: this.name,
      clock: this.clock,
      rateLimiter: this.options.rateLimiter,
      metricsProvider: this.options.queueMetrics,
      order: this.options.shardOf ? new FairOrder<K>(this.options.shardOf) : undefined,
    });
  }
  private async work(queue: RateLimitingWorkQueue<K>, signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      if (signal.aborted) {
        queue.done(key);
        continue;
      }
      await this.processOne(queue, key, signal);
    }
  }

  private async processOne(queue: RateLimitingWorkQueue<K>, key: K, signal: AbortSignal): Promise<void> {
    const started = this.clock.now();
    let outcome: { ok: true; result: ReconcileResult | void } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, result: await this.reconciler.reconcile(key, signal) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const action = decideRequeue(outcome);
    this.metrics.time?.observe({ controller: this.name }, (this.clock.now() - started) / 1000);
    switch (action.kind) {
      case 'forget':
        queue.forget(key);
        this.metrics.total?.inc({ controller: this.name, result: 'success' });
        break;
      case 'forgetAndAddAfter':
        queue.forget(key);
        queue.addAfter(key, action.delayMs);
        this.metrics.total?.inc({ controller: this.name, result: 'requeue_after' });
        break;
      case 'addRateLimited': {
        const err = outcome.ok ? undefined : outcome.error;
        const requeues = queue.numRequeues(key);
        this.logger.error({ key: String(key), err, requeues }, 'reconcile failed; retrying with backoff');
        queue.addRateLimited(key);
        this.metrics.total?.inc({ controller: this.name, result: 'error' });
        this.metrics.errors?.inc({ controller: this.name });
        break;
      }
      case 'terminal': {
        const err = outcome.ok ? undefined : outcome.error;
        this.logger.error({ key: String(key), err }, 'reconcile failed with a terminal error; not retrying');
        queue.forget(key);
        this.metrics.total?.inc({ controller: this.name, result: 'terminal_error' });
        this.metrics.errors?.inc({ controller: this.name });
        break;
      }
    }
    queue.done(key);
  }

  private registerMetrics(registry: Registry): void {
    const registers = [registry];
    const get = <M>(name: string, make: () => M): M =>
      (registry.getSingleMetric(name) as M | undefined) ?? make();
    this.metrics.total = get(
      'controller_runtime_reconcile_total',
      () =>
        new Counter({
          name: 'controller_runtime_reconcile_total',
          help: 'Total number of reconciliations per controller',
          labelNames: ['controller', 'result'],
          registers,
        }),
    );
    this.metrics.errors = get(
      'controller_runtime_reconcile_errors_total',
      () =>
        new Counter({
          name: 'controller_runtime_reconcile_errors_total',
          help: 'Total number of reconciliation errors per controller',
          labelNames: ['controller'],
          registers,
        }),
    );
    this.metrics.time = get(
      'controller_runtime_reconcile_time_seconds',
      () =>
        new Histogram({
          name: 'controller_runtime_reconcile_time_seconds',
          help: 'Length of time per reconciliation per controller',
          labelNames: ['controller'],
          registers,
        }),
    );
  }
}

/** Abort listeners one reconcile may hold on its signal at once: a request, a lock or turn wait, parallel fetches. */
const LISTENERS_PER_RECONCILE = 32;

/**
 * The signal every worker's reconcile gets: it aborts with `signal`. All workers' reconciles listen on it at once,
 * so Node's default of 10 would report a leak that is not one (pod placement's reconciles waiting on the in-flight
 * record made it print a MaxListenersExceededWarning). The limit grows with the workers, so listeners that are never
 * removed still warn.
 */
function reconcileSignal(signal: AbortSignal, workers: number): AbortSignal {
  const reconciling = AbortSignal.any([signal]);
  setMaxListeners(workers * LISTENERS_PER_RECONCILE, reconciling);
  return reconciling;
}
