// A shared informer: one reflector + one indexed cache per resource/selector, feeding any number of handlers.
// Guarantees:
//  - Handlers see each object's changes in server order; updates carry (old, new). After a relist, objects that
//    changed get onUpdate, new ones onAdd, vanished ones onDelete(lastKnown, finalStateUnknown=true). A watch
//    delete of an object the cache never had is dropped (no onDelete without a prior onAdd).
//  - A handler added late first receives onAdd(obj, true) for every cached object.
//  - A throwing handler is logged and skipped; it never stops the informer or other handlers.
//  - Each handler has its own buffer, as client-go's processorListener has. A handler that returns a promise
//    gets its next event once that promise settles; meanwhile its events wait in its buffer and the watch loop
//    and the other handlers go on (its buffer size is pendingEvents(); a warning is logged at every 10x growth
//    from 1,000). A handler that returns nothing is called at once when its buffer is empty, so the common
//    handler (enqueue a key) costs no extra turn of the event loop. Synchronous handlers must be quick: a
//    synchronous handler that blocks holds up the whole process (one thread), and a warning names it once it
//    takes more than 100 ms.
//  - The buffer coalesces per object key (unlike client-go's, which grows without bound): events for an object
//    already waiting are merged into its waiting event, which keeps its place. add+update = add of the newest;
//    update+update = update(oldest old, newest); add/update+delete = delete (an add the handler never saw and its
//    delete cancel out); a delete followed by a re-create stays a delete then an add (never an update across
//    incarnations). So a handler still sees, per object, what it last knew and then the current state, in order,
//    and its buffer holds at most two events per object it knows of or the cache holds, however fast they change.
//  - Eventually consistent: the cache may lag the server; after hasSynced() it has been complete at least once.
// The caller must not modify objects it receives (they are the cache's).
import { realClock, type Clock } from '../clock.js';
import { InvalidArgumentError } from '../errors.js';
import { silentLogger, type Logger } from '../logging.js';
import { objectKey, type KubeObject } from '../object.js';
import { Reflector, type ReflectorOptions, type ReflectorSink, type ReflectorStats } from './reflector.js';
import { IndexedStore, NAMESPACE_INDEX, namespaceIndexFunc, type IndexFunc, type Indexer } from './store.js';

/**
 * What a handler returns. A promise (any thenable) makes its next event wait, in its own buffer, until the promise
 * settles; anything else is ignored (so `(o) => list.push(o)` is a valid handler).
 */
export type HandlerResult = unknown;

export interface ResourceEventHandler<T> {
  /** `isInInitialList`: the object was in the first list (or the cache when the handler was added). */
  onAdd?(obj: T, isInInitialList: boolean): HandlerResult;
  /** `oldObj === newObj` on a periodic resync. */
  onUpdate?(oldObj: T, newObj: T): HandlerResult;
  /** `finalStateUnknown`: the deletion was inferred from a relist; `obj` is the last state the cache knew. */
  onDelete?(obj: T, finalStateUnknown: boolean): HandlerResult;
}

export interface HandlerRegistration {
  /** True once the handler has received (and finished with) the initial contents. */
  hasSynced(): boolean;
  /** Events waiting in this handler's buffer. */
  pendingEvents(): number;
  /** Stops delivering events to this handler (buffered ones are dropped). */
  remove(): void;
}

export interface HandlerOptions {
  resyncPeriodMs?: number;
  /** Names the handler in warnings (e.g. the controller that registered it). */
  name?: string;
}

/** `transform` (see ReflectorOptions) is applied to every object as it is decoded, before it is cached. */
export interface InformerOptions<T> extends Omit<ReflectorOptions<T>, 'clock' | 'logger'> {
  /** Extra indexes besides `namespace`. */
  indexers?: Record<string, IndexFunc<T>>;
  /** Default resync period for handlers (ms); 0 = never. Default: 0. */
  resyncPeriodMs?: number;
  clock?: Clock;
  logger?: Logger;
}

export interface SharedInformer<T> {
  addEventHandler(handler: ResourceEventHandler<T>, options?: HandlerOptions): HandlerRegistration;
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

export class DefaultSharedInformer<T extends KubeObject> implements SharedInformer<T>, ReflectorSink<T> {
  private readonly store: IndexedStore<T>;
  private readonly reflector: Reflector<T>;
  /** Replaced, never changed in place: a dispatch in progress keeps the array it started with. */
  private listeners: readonly Listener<T>[] = [];
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly defaultResyncMs: number;
  private synced = false;
  private started = false;
  private syncWaiters: Array<() => void> = [];

  constructor(options: InformerOptions<T>) {
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ informer: options.type.plural });
    this.defaultResyncMs = options.resyncPeriodMs ?? 0;
    this.store = new IndexedStore<T>({ [NAMESPACE_INDEX]: namespaceIndexFunc, ...(options.indexers ?? {}) });
    this.reflector = new Reflector<T>({ ...options, clock: this.clock, logger: options.logger }, this);
  }

  get stats(): ReflectorStats {
    return this.reflector.stats;
  }

  addEventHandler(handler: ResourceEventHandler<T>, options: HandlerOptions = {}): HandlerRegistration {
    const resyncPeriodMs = options.resyncPeriodMs ?? this.defaultResyncMs;
    if (resyncPeriodMs < 0) throw new InvalidArgumentError('resyncPeriodMs', 'must be >= 0');
    const listener = new Listener(handler, {
      name: options.name ?? `handler-${this.listeners.length + 1}`,
      resyncPeriodMs,
      nextResyncAt: this.clock.now() + resyncPeriodMs,
      clock: this.clock,
      logger: this.logger,
    });
    this.listeners = [...this.listeners, listener];
    // What the cache holds now (also mid-list, when added from another handler); later changes come by dispatch.
    for (const obj of this.store.list()) listener.deliver({ kind: 'add', obj, initial: true });
    if (this.synced) listener.deliver({ kind: 'synced' });
    return {
      hasSynced: () => listener.synced,
      pendingEvents: () => listener.pendingEvents(),
      remove: () => {
        listener.remove();
        this.listeners = this.listeners.filter((l) => l !== listener);
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
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.store.upsert(obj);
      if (!old) this.dispatch({ kind: 'add', obj, initial });
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        this.dispatch({ kind: 'update', old, obj });
    }
    for (const key of this.store.listKeys()) {
      if (seen.has(key)) continue;
      const old = this.store.remove(key);
      if (old) this.dispatch({ kind: 'delete', obj: old, finalStateUnknown: true });
    }
    if (!this.synced) {
      this.synced = true;
      this.dispatch({ kind: 'synced' });
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** ReflectorSink: one watch event. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void {
    if (type === 'DELETED') {
      // Like client-go, a delete of an object the cache never had is dropped: handlers never saw it added, so
      // a delete would be their first (and only) news of it. Otherwise they get the server's final state.
      const old = this.store.remove(objectKey(obj));
      if (old) this.dispatch({ kind: 'delete', obj, finalStateUnknown: false });
      return;
    }
    const old = this.store.upsert(obj);
    if (old) this.dispatch({ kind: 'update', old, obj });
    else this.dispatch({ kind: 'add', obj, initial: false });
  }

  private dispatch(notification: Notification<T>): void {
    // The array of this moment: a handler that adds or removes handlers changes this.listeners, not this loop.
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) (listeners[i] as Listener<T>).deliver(notification);
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
        for (const obj of this.store.list()) l.deliver({ kind: 'update', old: obj, obj });
      }
    }
  }
}

type Notification<T> =
  | { kind: 'add'; obj: T; initial: boolean }
  | { kind: 'update'; old: T; obj: T }
  | { kind: 'delete'; obj: T; finalStateUnknown: boolean }
  /** The initial contents have been delivered before this. */
  | { kind: 'synced' };

type ObjectNotification<T> = Exclude<Notification<T>, { kind: 'synced' }>;

/** A synchronous handler slower than this is named in a warning: it holds up every other handler. */
const SLOW_SYNC_HANDLER_MS = 100;
/** Buffered events delivered in one turn of the event loop before yielding to I/O and timers. */
const DRAIN_BATCH = 256;
const FIRST_BACKLOG_WARNING = 1000;

/** Key of the `synced` marker in a listener's buffer: no object key is empty. */
const SYNCED_KEY = '';

/**
 * What waits for one key: `first`, then (only after a delete, for a re-created object) `then`. Invariant: `then` is
 * set only when `first` is a delete, and is an add.
 */
interface Waiting<T> {
  first: Notification<T>;
  then?: ObjectNotification<T>;
}

/** One handler and its own buffer (client-go's processorListener, coalescing per object key). */
class Listener<T extends KubeObject> {
  readonly resyncPeriodMs: number;
  nextResyncAt: number;
  synced = false;
  removed = false;
  private readonly name: string;
  private readonly clock: Clock;
  private readonly logger: Logger;
  /**
   * Events not yet delivered, by object key in the order each key first waited (Map order); the `synced` marker
   * under SYNCED_KEY. Every object key appears once, so the buffer is bounded by the objects, not the events.
   */
  private waiting = new Map<string, Waiting<T>>();
  /** Notifications in `waiting` (1 or 2 per entry). */
  private waitingCount = 0;
  /** A promise returned by the handler has not settled yet, or a drain is scheduled. */
  private busy = false;
  /** The handler is on the stack: an event it causes synchronously waits in the buffer. */
  private running = false;
  private warnAtBacklog = FIRST_BACKLOG_WARNING;
  /** Buffered events delivered since the listener last yielded to the event loop. */
  private sinceYield = 0;

  constructor(
    private readonly handler: ResourceEventHandler<T>,
    o: { name: string; resyncPeriodMs: number; nextResyncAt: number; clock: Clock; logger: Logger },
  ) {
    this.name = o.name;
    this.resyncPeriodMs = o.resyncPeriodMs;
    this.nextResyncAt = o.nextResyncAt;
    this.clock = o.clock;
    this.logger = o.logger;
  }

  pendingEvents(): number {
    return this.waitingCount;
  }

  deliver(notification: Notification<T>): void {
    if (this.removed) return;
    if (!this.busy && !this.running && this.waitingCount === 0) {
      this.run(notification);
      // Events the handler caused while it ran wait in the buffer.
      if (!this.busy && this.waitingCount > 0) this.drain();
      return;
    }
    this.enqueue(notification);
    const pending = this.waitingCount;
    if (pending >= this.warnAtBacklog) {
      this.logger.warn(
        { handler: this.name, pendingEvents: pending },
        'an informer event handler is falling behind; its events are buffered (one per object) and the others go on',
      );
      this.warnAtBacklog *= 10;
    }
  }

  remove(): void {
    this.removed = true;
    this.waiting = new Map();
    this.waitingCount = 0;
  }

  /** Adds `n` to the buffer, merged into what already waits for its object (see the module comment). */
  private enqueue(n: Notification<T>): void {
    const key = n.kind === 'synced' ? SYNCED_KEY : objectKey(n.obj);
    const w = this.waiting.get(key);
    if (w === undefined) {
      this.waiting.set(key, { first: n });
      this.waitingCount++;
      return;
    }
    if (n.kind === 'synced') return;
    if (w.then !== undefined) {
      // first is a delete, then an add: merge into the add; a delete of it cancels it.
      const merged = mergeWaiting(w.then, n);
      if (merged === undefined) {
        w.then = undefined;
        this.waitingCount--;
      } else w.then = merged;
      return;
    }
    // The synced marker has a key of its own; an object's entry never holds it.
    if (w.first.kind === 'synced') return;
    if (w.first.kind === 'delete') {
      // Re-created after a delete the handler has not seen yet: both, in order.
      if (n.kind === 'delete') return;
      w.then = n.kind === 'update' ? { kind: 'add', obj: n.obj, initial: false } : n;
      this.waitingCount++;
      return;
    }
    const merged = mergeWaiting(w.first, n);
    if (merged === undefined) {
      this.waiting.delete(key);
      this.waitingCount--;
    } else w.first = merged;
  }

  /** Takes the oldest waiting notification; its key keeps its place while it has another one waiting. */
  private takeNext(): Notification<T> | undefined {
    const next = this.waiting.entries().next();
    if (next.done) return undefined;
    const [key, w] = next.value;
    this.waitingCount--;
    if (w.then === undefined) {
      this.waiting.delete(key);
      return w.first;
    }
    const first = w.first;
    w.first = w.then;
    w.then = undefined;
    return first;
  }

  /** Calls the handler; a returned promise makes the listener busy until it settles. */
  private run(notification: Notification<T>): void {
    if (notification.kind === 'synced') {
      this.synced = true;
      return;
    }
    const started = this.clock.now();
    let result: HandlerResult;
    this.running = true;
    try {
      result = this.call(notification);
    } catch (err) {
      this.logger.error({ err, handler: this.name }, 'event handler threw; continuing');
      return;
    } finally {
      this.running = false;
    }
    const took = this.clock.now() - started;
    if (took > SLOW_SYNC_HANDLER_MS)
      this.logger.warn(
        { handler: this.name, ms: took },
        'a synchronous informer event handler blocked the process; do slow work asynchronously (return a promise)',
      );
    if (!isThenable(result)) return;
    this.busy = true;
    const failed = (err: unknown): void => {
      this.logger.error({ err, handler: this.name }, 'event handler failed; continuing');
      this.settled();
    };
    try {
      result.then(() => this.settled(), failed);
    } catch (err) {
      failed(err);
    }
  }

  private call(n: ObjectNotification<T>): HandlerResult {
    switch (n.kind) {
      case 'add':
        return this.handler.onAdd?.(n.obj, n.initial);
      case 'update':
        return this.handler.onUpdate?.(n.old, n.obj);
      case 'delete':
        return this.handler.onDelete?.(n.obj, n.finalStateUnknown);
    }
  }

  private settled(): void {
    this.busy = false;
    this.drain();
  }

  /** Delivers buffered events in order until the handler is busy again, yielding to I/O every DRAIN_BATCH. */
  private drain(): void {
    while (!this.busy && !this.removed && this.waitingCount > 0) {
      // Counted across drains too: a handler whose promises settle at once would otherwise chain microtasks
      // through the whole buffer and starve timers and I/O.
      if (++this.sinceYield > DRAIN_BATCH) {
        this.sinceYield = 0;
        this.busy = true;
        setImmediate(() => this.settled());
        return;
      }
      const next = this.takeNext();
      if (next === undefined) break;
      this.run(next);
    }
    if (this.waitingCount === 0) {
      this.sinceYield = 0;
      // Only an emptied buffer re-arms the first warning: a handler hovering near 1,000 behind warns once.
      this.warnAtBacklog = FIRST_BACKLOG_WARNING;
    }
  }
}

/**
 * `waiting` (an add or update the handler has not seen) merged with the next event of the same object, or undefined
 * when they cancel out (an add never seen, then its delete). Pure.
 */
function mergeWaiting<T>(
  waiting: ObjectNotification<T>,
  next: ObjectNotification<T>,
): ObjectNotification<T> | undefined {
  if (waiting.kind === 'add') {
    if (next.kind === 'delete') return undefined;
    return { kind: 'add', obj: next.obj, initial: waiting.initial };
  }
  if (waiting.kind === 'update') {
    if (next.kind === 'delete') return next;
    return { kind: 'update', old: waiting.old, obj: next.obj };
  }
  // A waiting delete is followed by a re-create, which the caller keeps apart.
  return next;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
