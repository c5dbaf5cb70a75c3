// Raw HTTP access to the API server, authenticated from a @kubernetes/client-node KubeConfig.
// Why not client-node's Watch/ListWatch: its watch goes through node-fetch with a body timeout we cannot tune, hands
// back `any`, and its informer stops on errors and gives no old object. We need control over timeoutSeconds,
// bookmarks, quiet-stream detection and connection teardown, so watches and requests use undici directly with
// the TLS material and auth headers KubeConfig computes. Auth headers are refreshed every `authRefreshMs` and after
// a 401, so rotating exec/OIDC tokens keep working. Non-2xx answers throw ApiStatusError; no answer throws
// ApiTransportError; an answer over a budget or not of the expected shape throws ApiResponseError. Objects are plain
// parsed JSON. Lists and watches are decoded while they arrive, one object at a time (list-decoder.ts,
// watch-decoder.ts): a page of large objects is never one string in memory.
import type https from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import { Agent, request, type Dispatcher } from 'undici';
import { ApiResponseError, ApiStatusError, ApiTransportError, InvalidArgumentError } from './errors.js';
import { decodeListStream, type ListDecodeOptions } from './list-decoder.js';
import type { KubeConnection } from './kubeconfig.js';
import type { KubeList } from './object.js';
import { decodeWatchStream, type WatchEvent } from './watch-decoder.js';
import { realClock } from './clock.js';

export type QueryValue = string | number | boolean | undefined;

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute API path such as `/api/v1/namespaces/x/pods`. */
  path: string;
  query?: Record<string, QueryValue>;
  /** Serialized as JSON. */
  body?: unknown;
  /** Default: application/json. */
  contentType?: string;
  signal?: AbortSignal;
  /** Time to receive the full answer (ms). Default: the client's requestTimeoutMs. */
  timeoutMs?: number;
  /**
   * Drop a successful answer unread and resolve with undefined: for writes whose result the caller does not use
   * (Events, a pod patch), so a whole object is not decoded and parsed for nothing. Errors are read as usual.
   */
  discardAnswer?: boolean;
}

/** One page of a list: a GET whose answer is decoded item by item (see ListDecodeOptions for the budgets). */
export interface ListRequestOptions<T> extends ListDecodeOptions<T> {
  /** Absolute API path of the collection, such as `/api/v1/namespaces/x/pods`. */
  path: string;
  /** labelSelector, fieldSelector, limit, continue, resourceVersion... */
  query?: Record<string, QueryValue>;
  signal?: AbortSignal;
  /** Time to receive the whole page (ms). Default: the client's requestTimeoutMs. */
  timeoutMs?: number;
}

export interface KubeClientOptions {
  /** Time to receive an answer to a non-watch request (ms). Default: 30,000. */
  requestTimeoutMs?: number;
  /** How often auth headers are recomputed from the KubeConfig (ms). Default: 60,000. */
  authRefreshMs?: number;
  /** Sent as User-Agent. Default: `tessera`. */
  userAgent?: string;
}

export type { WatchEvent };

/** An open watch: iterate `events`; close() (or the signal) ends it. */
export interface WatchStream<T> {
  readonly events: AsyncIterable<WatchEvent<T>>;
  close(): void;
}

/** client-go's limit on attempts after a Retry-After answer (maxRetries in rest.Request). */
export const MAX_RETRY_AFTER_ATTEMPTS = 10;
/** A Retry-After longer than this is waited only this long (ms): the caller's own deadline governs. */
const MAX_RETRY_AFTER_MS = 10_000;

/**
 * How long to wait before asking again, or undefined to take the answer as it is: the API server's Retry-After
 * (whole seconds) on a 429 or a 5xx, for any method, for at most MAX_RETRY_AFTER_ATTEMPTS attempts, as client-go's
 * rest client does (checkWait). The server sends Retry-After only for requests it turned away unprocessed: a write
 * that reaches a CRD's storage while an update of that CRD replaces it gets "503 apiserver is shutting down" with
 * Retry-After: 1, and succeeds when asked again.
 */
export function retryAfterDelayMs(
  statusCode: number,
  retryAfter: string | string[] | undefined,
  attempt: number,
): number | undefined {
  if (attempt >= MAX_RETRY_AFTER_ATTEMPTS) return undefined;
  if (!(statusCode === 429 || statusCode >= 500)) return undefined;
  const value = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  if (value === undefined || !/^\d{1,6}$/.test(value.trim())) return undefined;
  return Math.min(Number(value.trim()) * 1000, MAX_RETRY_AFTER_MS);
}

export class KubeClient {
  readonly server: string;
  private readonly kubeConfig: KubeConnection;
  private readonly requestTimeoutMs: number;
  private readonly authRefreshMs: number;
  private readonly userAgent: string;
  private dispatcher: Dispatcher | undefined;
  /** Auth headers; a list is sent as one header line per value (Impersonate-Group). */
  private headers: Record<string, string | string[]> = {};
  private headersAt = -Infinity;
  private setup: Promise<void> | undefined;

  constructor(kubeConfig: KubeConnection, options: KubeClientOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new InvalidArgumentError('kubeConfig', 'no current cluster; set a current-context');
    this.server = cluster.server.replace(/\/+$/, '');
    this.kubeConfig = kubeConfig;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.authRefreshMs = options.authRefreshMs ?? 60_000;
    this.userAgent = options.userAgent ?? 'tessera';
  }

  /** Sends one request and parses the JSON answer. */
  async request<T>(opts: RequestOptions): Promise<T> {
    const res = await this.send(opts, opts.timeoutMs ?? this.requestTimeoutMs);
    if (opts.discardAnswer && res.statusCode >= 200 && res.statusCode < 300) {
      // Read to the end (up to undici's dump limit, else the connection is closed) so the connection is reused.
      await res.body.dump();
      return undefined as T;
    }
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300) throw this.statusError(opts, res.statusCode, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Sends one request and returns its answer as text (UTF-8), of which at most `maxBytes` are read; the rest is not
   * received. For text/plain answers such as a container's log (pods/log). Errors are read as usual.
   */
  async requestText(opts: RequestOptions, maxBytes: number): Promise<string> {
    const res = await this.send(opts, opts.timeoutMs ?? this.requestTimeoutMs);
    if (res.statusCode < 200 || res.statusCode >= 300)
      throw this.statusError(opts, res.statusCode, await res.body.text());
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) break; // leaving the loop destroys the body: the rest is not read
    }
    return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
  }

  /**
   * Reads one page of a list, decoding its items one at a time as the answer arrives: each item is parsed alone and
   * passed to `opts.item` at once, so the page costs one raw item plus what `item` keeps. Throws ApiResponseError
   * (before reading further) when an item or the envelope breaks its budget, or the answer is not a list.
   */
  async list<T>(opts: ListRequestOptions<T>): Promise<KubeList<T>> {
    const req: RequestOptions = { method: 'GET', path: opts.path, query: opts.query, signal: opts.signal };
    const res = await this.send(req, opts.timeoutMs ?? this.requestTimeoutMs);
    if (res.statusCode < 200 || res.statusCode >= 300)
      throw this.statusError(req, res.statusCode, await res.body.text());
    try {
      return await decodeListStream<T>(res.body, { ...opts, what: opts.what ?? `GET ${opts.path}` });
    } catch (err) {
      // Stop receiving what is left of a refused answer.
      res.body.destroy();
      if (err instanceof ApiResponseError) throw err;
      throw new ApiTransportError('GET', opts.path, err);
    }
  }

  /**
   * Opens a watch (the caller sets `watch=1` etc. in `query`). Throws ApiStatusError when the server refuses it.
   * The stream has no body timeout: the caller detects silence (see the reflector's watchdog).
   */
  async watch<T>(
    path: string,
    query: Record<string, QueryValue>,
    signal?: AbortSignal,
  ): Promise<WatchStream<T>> {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const opts: RequestOptions = { method: 'GET', path, query, signal: controller.signal };
    let res: Dispatcher.ResponseData;
    try {
      res = await this.send(opts, 0);
    } catch (err) {
      signal?.removeEventListener('abort', onAbort);
      throw err;
    }
    if (res.statusCode !== 200) {
      const text = await res.body.text().catch(() => '');
      signal?.removeEventListener('abort', onAbort);
      throw this.statusError(opts, res.statusCode, text);
    }
    const body = res.body;
    async function* events(): AsyncGenerator<WatchEvent<T>> {
      try {
        yield* decodeWatchStream<T>(body, { what: `WATCH ${path}` });
      } catch (err) {
        if (controller.signal.aborted) return;
        if (err instanceof ApiResponseError) throw err;
        throw new ApiTransportError('WATCH', path, err);
      } finally {
        signal?.removeEventListener('abort', onAbort);
        controller.abort();
        body.destroy();
      }
    }
    return { events: events(), close: () => controller.abort() };
  }

  /** Releases pooled connections. */
  async close(): Promise<void> {
    const d = this.dispatcher;
    this.dispatcher = undefined;
    this.setup = undefined;
    if (d) await d.destroy();
  }

  /**
   * One request, repeated as client-go repeats it when the API server asks to be asked again (429, or a 5xx on a
   * read, with Retry-After; e.g. "storage is (re)initializing" right after a CRD is created).
   */
  private async send(opts: RequestOptions, timeoutMs: number): Promise<Dispatcher.ResponseData> {
    for (let attempt = 1; ; attempt++) {
      const res = await this.sendOnce(opts, timeoutMs);
      const waitMs = retryAfterDelayMs(res.statusCode, res.headers['retry-after'], attempt);
      if (waitMs === undefined) return res;
      // The refused answer's body is only drained so the connection can be reused; a broken one changes nothing.
      await res.body.dump().catch(() => undefined);
      await realClock.sleep(waitMs, opts.signal);
      if (opts.signal?.aborted) throw new ApiTransportError(opts.method, opts.path, opts.signal.reason);
    }
  }

  private async sendOnce(opts: RequestOptions, timeoutMs: number): Promise<Dispatcher.ResponseData> {
    const dispatcher = await this.prepare();
    const url = new URL(this.server + opts.path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    const headers: Record<string, string | string[]> = {
      ...this.headers,
      accept: 'application/json',
      'user-agent': this.userAgent,
    };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
    }
    let signal = opts.signal;
    if (timeoutMs > 0)
      signal = signal
        ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
        : AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(url, {
        dispatcher,
        method: opts.method,
        headers,
        body,
        signal,
        headersTimeout: timeoutMs > 0 ? timeoutMs : 60_000,
        bodyTimeout: timeoutMs > 0 ? timeoutMs : 0,
      });
      if (res.statusCode === 401) this.headersAt = -Infinity;
      return res;
    } catch (err) {
      throw new ApiTransportError(opts.method, opts.path, err);
    }
  }

  private async prepare(): Promise<Dispatcher> {
    if (!this.setup) this.setup = this.buildDispatcher();
    await this.setup;
    if (performance.now() - this.headersAt > this.authRefreshMs) await this.refreshHeaders();
    if (!this.dispatcher) throw new ApiTransportError('CONNECT', this.server, 'the client was closed');
    return this.dispatcher;
  }

  private async buildDispatcher(): Promise<void> {
    const opts: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(opts);
    this.captureHeaders(opts);
    // One TLS context for every connection: given as ca/cert/key, tls.connect would parse the CA and the private
    // key again for each new connection (milliseconds of CPU each, and a reconnect storm is when it hurts).
    let secureContext: SecureContext;
    try {
      secureContext = createSecureContext({
        ca: opts.ca,
        cert: opts.cert,
        key: opts.key,
        pfx: opts.pfx,
        passphrase: opts.passphrase,
      });
    } catch (err) {
      // A kubeconfig whose CA, certificate or key does not load; a later call tries again (it may be fixed).
      this.setup = undefined;
      throw new ApiTransportError('CONNECT', this.server, err);
    }
    this.dispatcher = new Agent({
      connect: {
        secureContext,
        servername: opts.servername,
        rejectUnauthorized: opts.rejectUnauthorized ?? true,
      },
      keepAliveTimeout: 30_000,
      connections: 64,
    });
  }

  private async refreshHeaders(): Promise<void> {
    const opts: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(opts);
    this.captureHeaders(opts);
  }

  private captureHeaders(opts: https.RequestOptions): void {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (typeof v === 'string' || typeof v === 'number') headers[k.toLowerCase()] = String(v);
      // Not joined with commas: the API server reads each Impersonate-Group line as one group, commas and all.
      else if (Array.isArray(v)) headers[k.toLowerCase()] = v.map(String);
    }
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    this.headers = headers;
    this.headersAt = performance.now();
  }

  private statusError(opts: RequestOptions, statusCode: number, text: string): ApiStatusError {
    let reason = '';
    let message = text.slice(0, 500);
    let body: unknown = text;
    try {
      const status = JSON.parse(text) as { reason?: unknown; message?: unknown };
      body = status;
      if (typeof status.reason === 'string') reason = status.reason;
      if (typeof status.message === 'string') message = status.message;
    } catch {
      // not JSON: keep the text
    }
    return new ApiStatusError(opts.method, opts.path, statusCode, reason, message, body);
  }
}
