// A shared informer: one reflector + one indexed cache per resource/selector, feeding any number of handlers.
// Guarantees:
//  - Handlers see each object's changes in server order; updates carry (old, new). After a relist, objects that
//    changed get onUpdate, new ones onAdd, vanished ones onDelete(lastKnown, finalStateUnknown=true). A watch
//    delete of an object the cache never had is dropped (no onDelete without a prior onAdd).
//  - A handler added late first receives onAdd(obj, true) for every cached object.
//  - A throwing handler is logged and skipped; it never stops the informer or other handlers.
//  - Eventually consistent: the cache may lag the server; after hasSynced() it has been complete at least once.
// The caller must not modify objects it receives (they are the cache's).
import { realClock, type Clock } from '../clock.js';
import { InvalidArgumentError } from '../errors.js';
import { silentLogger, type Logger } from '../logging.js';
import { objectKey, type KubeObject } from '../object.js';
import { Reflector, type ReflectorOptions, type ReflectorSink, type ReflectorStats } from './reflector.js';
import { IndexedStore, NAMESPACE_INDEX, namespaceIndexFunc, type IndexFunc, type Indexer } from './store.js';

export interface ResourceEventHandler<T> {
  /** `isInInitialList`: the object was in the first list (or the cache when the handler was added). */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** `oldObj === newObj` on a periodic resync. */
  onUpdate?(oldObj: T, newObj: T): void;
  /** `finalStateUnknown`: the deletion was inferred from a relist; `obj` is the last state the cache knew. */
  onDelete?(obj: T, finalStateUnknown: boolean): void;
}

export interface HandlerRegistration {
  /** True once the handler has received the initial contents. */
  hasSynced(): boolean;
  /** Stops delivering events to this handler. */
  remove(): void;
}

export interface InformerOptions<T> extends Omit<ReflectorOptions, 'clock' | 'logger'> {
  /** Extra indexes besides `namespace`. */
  indexers?: Record<string, IndexFunc<T>>;
  /** Default resync period for handlers (ms); 0 = never. Default: 0. */
  resyncPeriodMs?: number;
  /**
   * Applied to every object before it is cached (e.g. drop managedFields to save memory). Must return a
   * KubeObject with the same namespace/name. Default: none.
   */
  transform?: (obj: T) => T;
  clock?: Clock;
  logger?: Logger;
}

export interface SharedInformer<T> {
  addEventHandler(
    handler: ResourceEventHandler<T>,
    options?: { resyncPeriodMs?: number },
  ): HandlerRegistration;
  /** The cache (read-only for callers). */
  getIndexer(): Indexer<T>;
  /** True once the first list has been delivered to the cache. */
  hasSynced(): boolean;
  /** Resolves true once synced, false if `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<boolean>;
  lastSyncResourceVersion(): string;
  /** Runs list/watch until `signal` aborts. Call once. */
  start(signal: AbortSignal): Promise<void>;
}

interface Listener<T> {
  handler: ResourceEventHandler<T>;
  resyncPeriodMs: number;
  nextResyncAt: number;
  synced: boolean;
  removed: boolean;
}

export class DefaultSharedInformer<T extends KubeObject> implements SharedInformer<T>, ReflectorSink<T> {
  private readonly store: IndexedStore<T>;
  private readonly reflector: Reflector<T>;
  private readonly listeners: Listener<T>[] = [];
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly transform: ((obj: T) => T) | undefined;
  private readonly defaultResyncMs: number;
  private synced = false;
  private started = false;
  private syncWaiters: Array<() => void> = [];

  constructor(options: InformerOptions<T>) {
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ informer: options.type.plural });
    this.transform = options.transform;
    this.defaultResyncMs = options.resyncPeriodMs ?? 0;
    this.store = new IndexedStore<T>({ [NAMESPACE_INDEX]: namespaceIndexFunc, ...(options.indexers ?? {}) });
    this.reflector = new Reflector<T>({ ...options, clock: this.clock, logger: options.logger }, this);
  }

  get stats(): ReflectorStats {
    return this.reflector.stats;
  }

  addEventHandler(
    handler: ResourceEventHandler<T>,
    options: { resyncPeriodMs?: number } = {},
  ): HandlerRegistration {
    const resyncPeriodMs = options.resyncPeriodMs ?? this.defaultResyncMs;
    if (resyncPeriodMs < 0) throw new InvalidArgumentError('resyncPeriodMs', 'must be >= 0');
    const listener: Listener<T> = {
      handler,
      resyncPeriodMs,
      nextResyncAt: this.clock.now() + resyncPeriodMs,
      synced: false,
      removed: false,
    };
    this.listeners.push(listener);
    if (this.synced) {
      for (const obj of this.store.list()) this.call('onAdd', () => handler.onAdd?.(obj, true));
      listener.synced = true;
    }
    return {
      hasSynced: () => listener.synced,
      remove: () => {
        listener.removed = true;
        const i = this.listeners.indexOf(listener);
        if (i >= 0) this.listeners.splice(i, 1);
      },
    };
  }

  /** Adds indexes (also allowed after start). */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    this.store.addIndexers(indexers);
  }

  getIndexer(): Indexer<T> {
    return this.store;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(false);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      });
    });
  }

  lastSyncResourceVersion(): string {
    return this.reflector.lastSyncResourceVersion();
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new InvalidArgumentError('start', 'informer already started');
    this.started = true;
    const resync = this.scheduleResync(signal);
    await this.reflector.run(signal);
    await resync;
  }

  /** ReflectorSink: a complete list. */
  replace(items: T[], _resourceVersion: string): void {
    const seen = new Set<string>();
    const initial = !this.synced;
    for (const raw of items) {
      const obj = this.transform ? this.transform(raw) : raw;
      const key = objectKey(obj);
      seen.add(key);
      const old = this.store.upsert(obj);
      if (!old) this.dispatch((h) => h.onAdd?.(obj, initial));
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        this.dispatch((h) => h.onUpdate?.(old, obj));
    }
    for (const key of this.store.listKeys()) {
      if (seen.has(key)) continue;
      const old = this.store.remove(key);
      if (old) this.dispatch((h) => h.onDelete?.(old, true));
    }
    if (!this.synced) {
      this.synced = true;
      for (const l of this.listeners) l.synced = true;
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** ReflectorSink: one watch event. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', raw: T): void {
    const obj = this.transform ? this.transform(raw) : raw;
    if (type === 'DELETED') {
      // Like client-go, a delete of an object the cache never had is dropped: handlers never saw it added, so
      // a delete would be their first (and only) news of it. Otherwise they get the server's final state.
      const old = this.store.remove(objectKey(obj));
      if (old) this.dispatch((h) => h.onDelete?.(obj, false));
      return;
    }
    const old = this.store.upsert(obj);
    if (old) this.dispatch((h) => h.onUpdate?.(old, obj));
    else this.dispatch((h) => h.onAdd?.(obj, false));
  }

  private dispatch(fn: (h: ResourceEventHandler<T>) => void): void {
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) {
      const l = listeners[i] as Listener<T>;
      try {
        fn(l.handler);
      } catch (err) {
        this.logger.error({ err }, 'event handler threw; continuing');
      }
    }
  }

  private call(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error({ err, handler: what }, 'event handler threw; continuing');
    }
  }

  private async scheduleResync(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const periods = this.listeners.filter((l) => l.resyncPeriodMs > 0);
      if (periods.length === 0) {
        // Check again later: handlers with a resync period may be added after start.
        await this.clock.sleep(1000, signal);
        continue;
      }
      const now = this.clock.now();
      const nextAt = Math.min(...periods.map((l) => l.nextResyncAt));
      if (nextAt > now) {
        await this.clock.sleep(Math.min(nextAt - now, 1000), signal);
        continue;
      }
      for (const l of periods) {
        if (l.nextResyncAt > now || l.removed) continue;
        l.nextResyncAt = now + l.resyncPeriodMs;
        if (!this.synced) continue;
        for (const obj of this.store.list()) this.call('onUpdate', () => l.handler.onUpdate?.(obj, obj));
      }
    }
  }
}
