// Keeps a sink in step with the API server by list + watch, client-go style:
//  - paginated list (consistent read), then watch from its resourceVersion with allowWatchBookmarks and a
//    randomized timeoutSeconds in [min, 2*min]; a watch that ends normally is restarted from the last seen version;
//  - 410 Gone (HTTP or ERROR event) -> relist from scratch; any other error -> retry after capped exponential
//    backoff with jitter. It never stops on its own: only the signal ends run();
//  - a watchdog restarts a watch that delivered nothing (not even a bookmark) for `watchdogMs`.
// The sink receives events in server order, one at a time, and replace() only ever gets a complete list: a paged
// list whose continue token expires is restarted from scratch (unpaged), never cut short.
// Memory: list pages are decoded item by item and `transform` is applied to each item as it is parsed (and to each
// watch event's object), so a list costs one raw object at a time plus the transformed objects, whatever the size of
// a page. An object over `maxObjectBytes` fails the list or watch (ApiResponseError, logged and retried as any
// failure), naming the budget.
// An `optional` resource (one the cluster may not serve, e.g. a CRD of a newer release) that answers 404, or 403
// (not granted), counts as empty: the sink gets an empty list, so the informer syncs and an empty cache stands for
// "none", and the list is retried with backoff until the resource is served (then list + watch as usual; it may
// appear mid-run, as when the cluster is updated to a release that brings it). Without `optional` such an answer
// is retried like any failure and the informer never syncs, which would hold up whoever waits for it.
import { Backoff, type BackoffOptions } from '../backoff.js';
import type { KubeClient, QueryValue, WatchEvent, WatchStream } from '../client.js';
import { realClock, type Clock } from '../clock.js';
import { ApiStatusError, WatchExpiredError, WatchStalledError, isGone } from '../errors.js';
import { silentLogger, type Logger } from '../logging.js';
import type { KubeList, KubeObject } from '../object.js';
import { resourcePath, type ResourceType } from '../resources.js';

/** What the reflector feeds: the informer implements it. */
export interface ReflectorSink<T> {
  /** The full current state after a list; objects absent from `items` are gone. */
  replace(items: T[], resourceVersion: string): void;
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void;
}

/** The subset of KubeClient the reflector uses (tests pass a scripted list/watch source). */
export type ListWatchClient = Pick<KubeClient, 'list' | 'watch'>;

export interface ReflectorOptions<T = KubeObject> {
  client: ListWatchClient;
  type: ResourceType;
  /** Only this namespace. Default: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Items per list page. Default: 500. */
  pageSize?: number;
  /**
   * Applied to every object as it is decoded (each list item as soon as it is parsed, each watch event's object)
   * before the sink sees it, e.g. to keep only the fields a controller reads. Must keep namespace, name and
   * resourceVersion. Default: none.
   */
  transform?: (obj: T) => T;
  /** Largest object accepted in a list page, in bytes of JSON. Default: DEFAULT_MAX_OBJECT_BYTES (10 MiB). */
  maxObjectBytes?: number;
  /** Watches last a random time in [min, 2*min] seconds. Default: 300 (client-go). */
  minWatchTimeoutSeconds?: number;
  /** Restart a watch that received nothing for this long (ms). Default: 150,000 (bookmarks come about every minute). */
  watchdogMs?: number;
  /** Retry timing. Default: 800 ms doubling to 30 s, jitter 1.0. */
  backoff?: BackoffOptions;
  clock?: Clock;
  logger?: Logger;
  /** Uniform [0,1) source for timeouts and jitter. Default: Math.random. */
  random?: () => number;
  /** The resource may not be served or readable: 404 and 403 mean no objects (see the module comment). */
  optional?: boolean;
}

/** Counters for tests and debugging. */
export interface ReflectorStats {
  lists: number;
  watches: number;
  watchErrors: number;
  relistsAfterGone: number;
  watchdogRestarts: number;
  events: number;
  /** Lists and watches of an optional resource answered 404 or 403 (counted as empty). */
  unavailable: number;
}

type StatusObject = { kind?: string; code?: number; reason?: string; message?: string };

export class Reflector<T extends KubeObject> {
  readonly stats: ReflectorStats = {
    lists: 0,
    watches: 0,
    watchErrors: 0,
    relistsAfterGone: 0,
    watchdogRestarts: 0,
    events: 0,
    unavailable: 0,
  };
  private lastRv = '';
  /** The status code of the last 404/403 of an optional resource, until it is served again (0: served). */
  private unavailableStatus = 0;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly random: () => number;
  private readonly backoff: Backoff;
  private readonly path: string;

  constructor(
    private readonly options: ReflectorOptions<T>,
    private readonly sink: ReflectorSink<T>,
  ) {
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.logger = (options.logger ?? silentLogger).child({
      resource: options.type.plural,
      namespace: options.namespace ?? '',
    });
    this.backoff = new Backoff({
      initialMs: 800,
      maxMs: 30_000,
      jitter: 1,
      random: this.random,
      ...options.backoff,
    });
    this.path = resourcePath(options.type, options.namespace);
  }

  /** resourceVersion of the last list or event seen ('' before the first list). */
  lastSyncResourceVersion(): string {
    return this.lastRv;
  }

  /** Lists and watches until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.list(signal);
          needList = false;
          this.backoff.reset();
        }
        const delivered = await this.watch(signal);
        if (delivered) this.backoff.reset();
        // A watch that ended by timeout is restarted at once, unless it delivered nothing (server closing
        // early), which is retried with backoff to avoid a hot loop.
        if (delivered || signal.aborted) continue;
        await this.clock.sleep(this.backoff.next(), signal);
      } catch (err) {
        if (signal.aborted) break;
        if (this.options.optional && isUnavailable(err)) {
          needList = true;
          this.reportUnavailable(err.statusCode);
          await this.clock.sleep(this.backoff.next(), signal);
          continue;
        }
        if (isGone(err)) {
          this.stats.relistsAfterGone++;
          needList = true;
          this.logger.info({ resourceVersion: this.lastRv }, 'watch resourceVersion expired; relisting');
          continue;
        }
        this.stats.watchErrors++;
        const delayMs = this.backoff.next();
        const level = listWatchFailureLevel(err, this.backoff.attempts());
        this.logger[level](
          { err: errorSummary(err), retryInMs: Math.round(delayMs), attempt: this.backoff.attempts() },
          'list/watch failed; retrying',
        );
        await this.clock.sleep(delayMs, signal);
      }
    }
  }

  private async list(signal: AbortSignal): Promise<void> {
    const { pageSize = 500, transform, maxObjectBytes } = this.options;
    // Items of a list carry no kind/apiVersion; they are restored before the transform, so handlers see complete
    // objects and a projection can keep them.
    const { kind } = this.options.type;
    const apiVersion = this.options.type.group
      ? `${this.options.type.group}/${this.options.type.version}`
      : this.options.type.version;
    const item = (raw: unknown): T => {
      const obj = raw as T;
      if (!obj.kind) obj.kind = kind;
      if (!obj.apiVersion) obj.apiVersion = apiVersion;
      return transform ? transform(obj) : obj;
    };
    // `items` and `rv` always describe the pages of one consistent snapshot: both are reset when it is abandoned.
    let items: T[] = [];
    let rv = '';
    let cont: string | undefined;
    let limit: number | undefined = pageSize > 0 ? pageSize : undefined;
    for (;;) {
      let page: KubeList<T>;
      try {
        page = await this.options.client.list<T>({
          path: this.path,
          query: { ...this.selectors(), limit, continue: cont },
          signal,
          timeoutMs: 60_000,
          item,
          maxItemBytes: maxObjectBytes,
        });
      } catch (err) {
        // The continue token expired mid-list: the snapshot is gone, so start over with one unpaged list
        // (client-go falls back the same way). The pages read so far belong to the old snapshot: drop them.
        if (cont && err instanceof ApiStatusError && err.statusCode === 410) {
          this.logger.info(
            { itemsDropped: items.length },
            'list continue token expired; listing without pages',
          );
          items = [];
          rv = '';
          cont = undefined;
          limit = undefined;
          continue;
        }
        throw err;
      }
      for (const obj of page.items) items.push(obj);
      rv = page.metadata?.resourceVersion ?? rv;
      cont = page.metadata?.continue || undefined;
      if (!cont) break;
    }
    this.stats.lists++;
    if (this.unavailableStatus !== 0) {
      this.unavailableStatus = 0;
      this.logger.info({}, 'optional resource is served; listing and watching it');
    }
    this.sink.replace(items, rv);
    this.lastRv = rv;
    this.logger.debug({ count: items.length, resourceVersion: rv }, 'listed');
  }

  /** One watch; resolves when it ends normally, with whether it delivered anything. */
  private async watch(signal: AbortSignal): Promise<boolean> {
    const min = this.options.minWatchTimeoutSeconds ?? 300;
    const timeoutSeconds = Math.floor(min * (1 + this.random()));
    const query: Record<string, QueryValue> = {
      ...this.selectors(),
      watch: 1,
      allowWatchBookmarks: true,
      resourceVersion: this.lastRv,
      timeoutSeconds,
    };
    // The watchdog covers the whole watch, including connecting and waiting for headers: a pooled connection
    // that went silent would otherwise hang the new watch too.
    const watchdogMs = this.options.watchdogMs ?? 150_000;
    const attempt = new AbortController();
    const onOuterAbort = (): void => attempt.abort();
    signal.addEventListener('abort', onOuterAbort, { once: true });
    let stalled = false;
    const onQuiet = (): void => {
      stalled = true;
      this.stats.watchdogRestarts++;
      attempt.abort();
    };
    let timer = this.clock.setTimer(onQuiet, watchdogMs);
    let delivered = false;
    try {
      const stream: WatchStream<T | StatusObject> = await this.options.client.watch<T | StatusObject>(
        this.path,
        query,
        attempt.signal,
      );
      this.stats.watches++;
      try {
        for await (const event of stream.events) {
          timer.cancel();
          timer = this.clock.setTimer(onQuiet, watchdogMs);
          delivered = true;
          this.handle(event);
        }
      } finally {
        stream.close();
      }
    } catch (err) {
      if (!stalled || signal.aborted) throw err;
    } finally {
      timer.cancel();
      signal.removeEventListener('abort', onOuterAbort);
    }
    if (stalled && !signal.aborted) throw new WatchStalledError(watchdogMs);
    return delivered;
  }

  private handle(event: WatchEvent<T | StatusObject>): void {
    if (event.type === 'ERROR') {
      const status = event.object as StatusObject;
      if (status.code === 410) throw new WatchExpiredError(status.message ?? 'watch expired');
      throw new ApiStatusError(
        'WATCH',
        this.path,
        status.code ?? 500,
        status.reason ?? '',
        status.message ?? 'watch error event',
        status,
      );
    }
    const obj = event.object as T;
    const rv = obj.metadata?.resourceVersion;
    if (event.type === 'BOOKMARK') {
      if (rv) this.lastRv = rv;
      return;
    }
    this.stats.events++;
    this.sink.apply(event.type, this.options.transform ? this.options.transform(obj) : obj);
    if (rv) this.lastRv = rv;
  }

  /** An optional resource is not there (404) or not readable (403): no objects; logged when that starts. */
  private reportUnavailable(statusCode: number): void {
    this.stats.unavailable++;
    this.lastRv = '';
    this.sink.replace([], '');
    if (this.unavailableStatus === statusCode) return;
    this.unavailableStatus = statusCode;
    if (statusCode === 404)
      this.logger.info({}, 'optional resource is not served; treated as empty until it is');
    else this.logger.warn({}, 'optional resource may not be read (403); treated as empty, check RBAC');
  }

  private selectors(): Record<string, QueryValue> {
    return { labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector };
  }
}

function isUnavailable(err: unknown): err is ApiStatusError {
  return err instanceof ApiStatusError && (err.statusCode === 404 || err.statusCode === 403);
}

function errorSummary(err: unknown): { code?: string; message: string } {
  if (err instanceof Error) return { code: (err as { code?: string }).code, message: err.message };
  return { message: String(err) };
}

/** Consecutive 429 answers logged at debug before they count as a problem (warn). */
export const EXPECTED_THROTTLE_ATTEMPTS = 5;

/**
 * How loudly to log a failed list/watch that will be retried. A 429 is the API server asking to back off; right
 * after start-up it is expected ("storage is (re)initializing" while a new resource's watch cache fills), so the
 * first EXPECTED_THROTTLE_ATTEMPTS in a row are debug (client-go logs them at V(2)); a stalled watch is info;
 * anything else, or a 429 that persists, is warn. `attempt` counts consecutive failures from 1. Pure.
 */
export function listWatchFailureLevel(err: unknown, attempt: number): 'debug' | 'info' | 'warn' {
  if (err instanceof WatchStalledError) return 'info';
  if (err instanceof ApiStatusError && err.statusCode === 429 && attempt <= EXPECTED_THROTTLE_ATTEMPTS)
    return 'debug';
  return 'warn';
}
