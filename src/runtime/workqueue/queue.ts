// A FIFO of keys that need work, with client-go's guarantees:
//  - Stingy: a key added while already queued is queued once; a key added while being processed is queued again
//    once, after done() (so it is processed again, never concurrently).
//  - Fair: keys are handed out in the order they were first added, or in the order of `options.order` (e.g. a
//    FairOrder: round-robin between tenants).
//  - Shutdown: add() becomes a no-op; get() still hands out queued keys, then resolves `undefined`.
// The caller must call done(key) exactly once for every key get() returned.
import { realClock, type Clock } from '../clock.js';
import { FifoOrder, type KeyOrder } from './key-order.js';
import { noopQueueMetrics, type WorkQueueMetrics, type WorkQueueMetricsProvider } from './metrics.js';

export interface QueueOptions<K = unknown> {
  /** Queue name, used as the `name` label of metrics and in logs. Default: '' (unnamed: no metrics). */
  name?: string;
  /** Time source for metrics and delays. Default: realClock. */
  clock?: Clock;
  /** Metrics sink factory. Default: none (no metrics). */
  metricsProvider?: WorkQueueMetricsProvider;
  /** The order waiting keys are handed out in; owned by this queue (a fresh instance). Default: a FifoOrder. */
  order?: KeyOrder<K>;
}

export interface Queue<K> {
  /** Marks `key` as needing work. No-op when already queued or after shutdown. */
  add(key: K): void;
  /** Number of keys waiting (not counting keys being processed). Informational only. */
  len(): number;
  /** Waits for a key and marks it as processing. Resolves `undefined` once shut down and empty. Call done(). */
  get(): Promise<K | undefined>;
  /** Marks the end of processing of `key`; if it was added meanwhile, it is queued again. */
  done(key: K): void;
  /** Stops intake; waiting get() calls resolve `undefined` once the queue is empty. */
  shutDown(): void;
  /** shutDown(), then resolves once every key being processed has been marked done(). */
  shutDownWithDrain(): Promise<void>;
  shuttingDown(): boolean;
}

export class WorkQueue<K> implements Queue<K> {
  /** Keys to hand out. Every key in it is in `dirty` and not in `processing`, and is in it once. */
  private readonly order: KeyOrder<K>;
  /** Keys that need processing (queued, or re-added while processing). */
  private readonly dirty = new Set<K>();
  /** Keys handed out by get() and not yet done(); may also be in `dirty` (then queued again at done()). */
  private readonly processing = new Set<K>();
  /** get() callers waiting for a key, oldest first. */
  private waiters: Array<(key: K | undefined) => void> = [];
  private drainWaiters: Array<() => void> = [];
  private isShuttingDown = false;
  protected readonly clock: Clock;
  protected readonly metrics: WorkQueueMetrics;
  /** When each dirty key was added / each processing key started; only kept when metrics are on. */
  private readonly addedAt = new Map<K, number>();
  private readonly startedAt = new Map<K, number>();
  private readonly timed: boolean;
  readonly name: string;

  constructor(options: QueueOptions<K> = {}) {
    this.order = options.order ?? new FifoOrder<K>();
    this.name = options.name ?? '';
    this.clock = options.clock ?? realClock;
    this.timed = Boolean(options.metricsProvider && this.name);
    this.metrics =
      this.timed && options.metricsProvider ? options.metricsProvider(this.name) : noopQueueMetrics;
    this.metrics.setInFlight?.(() => {
      const now = this.clock.now();
      return [...this.startedAt.values()].map((t) => now - t);
    });
  }

  add(key: K): void {
    if (this.isShuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.timed) this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) {
      this.metrics.added(this.len());
      return;
    }
    this.enqueue(key);
    this.metrics.added(this.len());
  }

  len(): number {
    return this.order.len();
  }

  get(): Promise<K | undefined> {
    const key = this.tryGet();
    if (key !== undefined || this.isShuttingDown) return Promise.resolve(key);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Non-blocking get(): a key (now processing) or undefined when none is queued. */
  tryGet(): K | undefined {
    const key = this.order.pop();
    if (key === undefined) return undefined;
    this.startProcessing(key);
    return key;
  }

  done(key: K): void {
    if (!this.processing.delete(key)) return;
    if (this.timed) {
      const started = this.startedAt.get(key);
      this.startedAt.delete(key);
      if (started !== undefined) this.metrics.finished(this.clock.now() - started);
    }
    if (this.dirty.has(key)) {
      this.enqueue(key);
    } else if (this.processing.size === 0 && this.drainWaiters.length > 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
  }

  shutDown(): void {
    if (this.isShuttingDown) return;
    this.isShuttingDown = true;
    // Hand out nothing new to waiters: they only wait when the queue is empty, so they are done.
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(undefined);
  }

  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  shuttingDown(): boolean {
    return this.isShuttingDown;
  }

  private enqueue(key: K): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      this.startProcessing(key);
      waiter(key);
      return;
    }
    this.order.push(key);
  }

  private startProcessing(key: K): void {
    this.processing.add(key);
    this.dirty.delete(key);
    if (this.timed) {
      const now = this.clock.now();
      const added = this.addedAt.get(key);
      this.addedAt.delete(key);
      this.startedAt.set(key, now);
      this.metrics.started(added === undefined ? 0 : now - added, this.len());
    }
  }
}
