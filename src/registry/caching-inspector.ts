// Caches inspections of an inner ImageInspector: LRU bounded by `max`, entries live `ttlMs`, failures live
// `negativeTtlMs` (a cancelled wait is never remembered). The key is (image string, keyring fingerprint), so a
// pod without some credentials can never see a result obtained with them. Concurrent misses for one key share a
// single inner call, which runs to completion even if every waiter gives up. `bypassCache` neither reads nor
// writes. purge() forgets everything, answers under way included (call it when the global pull secret, the registry
// policy or the trusted CAs change).
import { LRUCache } from 'lru-cache';
import { isAbort, RegistryError } from './errors.js';
import type { ImageInspection, ImageInspector, InspectOptions } from './inspector.js';
import { Keyring } from './keyring.js';

/** What the cache reports; implemented with prom-client by createInspectionCacheMetrics(). */
export interface InspectionCacheMetrics {
  setCacheSize(entries: number): void;
  observeHit(seconds: number): void;
  observeMiss(seconds: number): void;
}

export interface CachingInspectorOptions {
  /** Entries kept. Default: 256 (the reference operator's size). */
  readonly max?: number;
  /**
   * Estimated bytes kept (entries are compact results: platforms and architectures, never manifests); the least
   * recently used entries are dropped first. Default: 16 MiB.
   */
  readonly maxBytes?: number;
  /** Lifetime of a successful inspection in ms. Default: 6 h. */
  readonly ttlMs?: number;
  /** Lifetime of a failed inspection in ms; 0 disables negative caching. Default: 10_000. */
  readonly negativeTtlMs?: number;
  /** Monotonic clock in ms, for TTLs and durations. Default: performance.now. */
  readonly now?: () => number;
  readonly metrics?: InspectionCacheMetrics;
}

type Entry =
  { readonly ok: true; readonly value: ImageInspection } | { readonly ok: false; readonly error: unknown };

/** Fixed overhead per entry (objects, LRU bookkeeping), in bytes: an estimate on the safe side. */
const entryOverheadBytes = 512;

/** Estimated heap bytes of a cache entry: UTF-16 strings plus per-object overhead. */
export function estimateEntryBytes(key: string, entry: Entry): number {
  let bytes = entryOverheadBytes + key.length * 2;
  if (!entry.ok) {
    const message = entry.error instanceof Error ? entry.error.message : String(entry.error);
    return bytes + message.length * 2 + 1024; // the error object and its cause
  }
  const v = entry.value;
  bytes += (v.reference.length + v.digest.length + v.mediaType.length + v.source.length) * 2;
  for (const a of v.architectures) bytes += 32 + a.length * 2;
  for (const p of v.platforms)
    bytes += 96 + (p.os.length + p.architecture.length + (p.variant?.length ?? 0) + p.digest.length) * 2;
  if (v.shortName) {
    bytes += 96 + v.shortName.name.length * 2;
    for (const c of v.shortName.candidates) bytes += 64 + c.reference.length * 2;
  }
  return bytes;
}

function waitOrAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

function abortError(reason: unknown): RegistryError {
  return new RegistryError('TESSERA_REGISTRY_ABORTED', 'image inspection cancelled', { cause: reason });
}

export class CachingInspector implements ImageInspector {
  private readonly entries: LRUCache<string, Entry>;
  /** Inner calls in flight; a key is here only while its call runs and is not in `entries` meanwhile. */
  private readonly inflight = new Map<string, Promise<ImageInspection>>();
  /** Bumped by purge(): an inspection begun before it answers its own callers but is not stored. */
  private generation = 0;
  private readonly negativeTtlMs: number;
  private readonly now: () => number;
  private readonly metrics: InspectionCacheMetrics | undefined;

  constructor(
    private readonly inner: ImageInspector,
    options: CachingInspectorOptions = {},
  ) {
    const max = options.max ?? 256;
    const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
    const ttlMs = options.ttlMs ?? 6 * 60 * 60 * 1000;
    this.negativeTtlMs = options.negativeTtlMs ?? 10_000;
    if (!Number.isInteger(max) || max < 1)
      throw new RangeError('CachingInspector: max must be a positive integer');
    if (!Number.isInteger(maxBytes) || maxBytes < 1)
      throw new RangeError('CachingInspector: maxBytes must be a positive integer');
    if (!(ttlMs > 0)) throw new RangeError('CachingInspector: ttlMs must be positive');
    this.now = options.now ?? (() => performance.now());
    this.metrics = options.metrics;
    this.entries = new LRUCache<string, Entry>({
      max,
      maxSize: maxBytes,
      // An entry larger than the whole budget is simply not stored (lru-cache refuses it).
      sizeCalculation: (entry, key) => estimateEntryBytes(key, entry),
      ttl: ttlMs,
      ttlResolution: 0,
      perf: { now: this.now },
      dispose: () => this.metrics?.setCacheSize(this.entries.size),
    });
  }

  /**
   * Cache key: image string and credential fingerprint (a hash, so no secret material is kept in keys), and whether
   * an index of several platforms was probed for an operator bundle (a probed answer may be wider).
   */
  static keyOf(image: string, keyring: Keyring, probeOperatorBundle = false): string {
    return `${keyring.fingerprint}\0${probeOperatorBundle ? 'bundle-probe' : 'plain'}\0${image}`;
  }

  async inspect(image: string, options: InspectOptions = {}): Promise<ImageInspection> {
    if (options.bypassCache === true) return this.inner.inspect(image, options);
    const started = this.now();
    const key = CachingInspector.keyOf(
      image,
      options.keyring ?? Keyring.empty,
      options.probeOperatorBundle === true,
    );
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      this.metrics?.observeHit((this.now() - started) / 1000);
      if (entry.ok) return entry.value;
      throw entry.error;
    }
    let pending = this.inflight.get(key);
    if (pending === undefined) {
      const { signal: _callerSignal, ...shared } = options;
      const generation = this.generation;
      const settle = (): boolean => {
        if (this.inflight.get(key) === pending) this.inflight.delete(key);
        return generation === this.generation;
      };
      pending = this.inner.inspect(image, shared).then(
        (value) => {
          if (!settle()) return value;
          this.entries.set(key, { ok: true, value });
          this.metrics?.setCacheSize(this.entries.size);
          return value;
        },
        (error: unknown) => {
          if (settle() && this.negativeTtlMs > 0 && !isAbort(error)) {
            this.entries.set(key, { ok: false, error }, { ttl: this.negativeTtlMs });
            this.metrics?.setCacheSize(this.entries.size);
          }
          throw error;
        },
      );
      this.inflight.set(key, pending);
    }
    try {
      return await waitOrAbort(pending, options.signal);
    } finally {
      this.metrics?.observeMiss((this.now() - started) / 1000);
    }
  }

  /** Whether inspect() would answer from the cache (a live entry, success or failure), with no registry request. */
  isCached(image: string, keyring: Keyring, options?: Pick<InspectOptions, 'probeOperatorBundle'>): boolean {
    return this.entries.has(CachingInspector.keyOf(image, keyring, options?.probeOperatorBundle === true));
  }

  /**
   * Forgets every entry, and every inspection under way: those still answer the callers waiting on them, but a
   * later caller starts a new one and their answers are not stored (they may predate the change that caused the
   * purge: new credentials, policy or trusted CAs).
   */
  purge(): void {
    this.generation++;
    this.inflight.clear();
    this.entries.clear();
    this.metrics?.setCacheSize(0);
  }

  /** Entries currently cached (including failures not yet expired). */
  get size(): number {
    return this.entries.size;
  }

  /** Estimated bytes currently cached. */
  get bytes(): number {
    return this.entries.calculatedSize;
  }
}
