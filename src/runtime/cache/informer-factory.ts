// Hands out one shared informer per (resource, namespace, label selector, field selector), so controllers that
// watch the same thing share one watch and one cache. Informers requested after start() are started at once.
// start() resolves once every informer has stopped (after the signal aborts).
import type { BackoffOptions } from '../backoff.js';
import type { KubeClient } from '../client.js';
import { realClock, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../logging.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { Runnable } from '../runnable.js';
import { DefaultSharedInformer, type SharedInformer } from './shared-informer.js';
import type { IndexFunc } from './store.js';
import { compactForCache, shareStrings } from './transforms.js';

export interface SharedInformerFactoryOptions {
  client: KubeClient;
  /** Default namespace of informers (requests may override). Default: all namespaces. */
  namespace?: string;
  /** Default handler resync period (ms); 0 = never. Default: 0. */
  resyncPeriodMs?: number;
  /** See ReflectorOptions. Defaults: 300 s, 150,000 ms, 500, 800 ms..30 s. */
  minWatchTimeoutSeconds?: number;
  watchdogMs?: number;
  pageSize?: number;
  backoff?: BackoffOptions;
  /** Cache metadata.managedFields too (by default informers drop them to save memory). Default: false. */
  keepManagedFields?: boolean;
  clock?: Clock;
  logger?: Logger;
}

export interface InformerRequest<T> {
  type: ResourceType;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Added to the shared informer (names already present are kept). */
  indexers?: Record<string, IndexFunc<T>>;
  /**
   * Applied before caching; only honoured by the first request for this informer. Default: compactForCache (drops managedFields, shares equal strings)
   * (unless the factory has keepManagedFields).
   */
  transform?: (obj: T) => T;
  /**
   * The cluster may not serve (or let us read) this resource: while it answers 404 or 403 the informer is synced
   * and empty, and it checks again with backoff (ReflectorOptions.optional). Only honoured by the first request
   * for this informer. Default: false.
   */
  optional?: boolean;
}

export class SharedInformerFactory implements Runnable {
  readonly name = 'informers';
  private readonly informers = new Map<string, DefaultSharedInformer<KubeObject>>();
  private readonly running: Promise<void>[] = [];
  /** One per launched informer, aborted together when the factory's signal aborts. */
  private readonly stops: AbortController[] = [];
  private started = false;
  private stopped = false;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(private readonly options: SharedInformerFactoryOptions) {
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
  }

  /** The shared informer for `request`, created on first use. */
  informerFor<T extends KubeObject>(request: InformerRequest<T>): SharedInformer<T> {
    const namespace = request.namespace ?? this.options.namespace ?? '';
    const t = request.type;
    const key = [
      t.group,
      t.version,
      t.plural,
      namespace,
      request.labelSelector ?? '',
      request.fieldSelector ?? '',
    ].join('|');
    let informer = this.informers.get(key) as DefaultSharedInformer<T> | undefined;
    if (!informer) {
      informer = new DefaultSharedInformer<T>({
        client: this.options.client,
        type: t,
        namespace: t.namespaced && namespace ? namespace : undefined,
        labelSelector: request.labelSelector,
        fieldSelector: request.fieldSelector,
        resyncPeriodMs: this.options.resyncPeriodMs,
        minWatchTimeoutSeconds: this.options.minWatchTimeoutSeconds,
        watchdogMs: this.options.watchdogMs,
        pageSize: this.options.pageSize,
        backoff: this.options.backoff,
        transform: request.transform ?? (this.options.keepManagedFields ? shareStrings : compactForCache),
        optional: request.optional,
        clock: this.clock,
        logger: this.logger,
      });
      this.informers.set(key, informer as unknown as DefaultSharedInformer<KubeObject>);
      if (this.started) this.launch(informer as unknown as DefaultSharedInformer<KubeObject>);
    }
    if (request.indexers) {
      const existing = new Set(informer.getIndexer().indexNames());
      informer.addIndexers(
        Object.fromEntries(Object.entries(request.indexers).filter(([name]) => !existing.has(name))),
      );
    }
    return informer;
  }

  /** True when every informer created so far has synced. */
  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** Resolves true once all current informers synced, false if `signal` aborts first. */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
    return results.every(Boolean);
  }

  async start(signal: AbortSignal): Promise<void> {
    this.started = true;
    // One listener on the caller's signal, whatever the number of informers: each informer runs on a signal of
    // its own (as client-go gives each informer its own stop channel), which this listener aborts.
    await new Promise<void>((resolve) => {
      const stopAll = (): void => {
        this.stopped = true;
        for (const stop of this.stops) stop.abort();
        resolve();
      };
      for (const informer of this.informers.values()) this.launch(informer);
      if (signal.aborted) stopAll();
      else signal.addEventListener('abort', stopAll, { once: true });
    });
    // Then wait for every informer (including ones added later) to stop.
    await Promise.all(this.running);
  }

  private launch(informer: DefaultSharedInformer<KubeObject>): void {
    const stop = new AbortController();
    this.stops.push(stop);
    if (this.stopped) stop.abort();
    this.running.push(informer.start(stop.signal));
  }
}
