// One bounded HTTP GET against a registry, following redirects itself: at most `maxRedirects` hops, each one
// checked by the redirect policy before any connection (https only unless the target is an insecure registry; no
// link-local, unspecified, or foreign loopback/private addresses: see redirect-policy.ts) and every hop's address
// by the address policy (address-policy.ts; resolved names at connect time), `Authorization` dropped when a
// redirect leaves the origin (blob storage must not see registry credentials). Each connection is verified with the
// CAs of the host it dials (registry-cas.ts). Bodies larger than the caller's limit are cut off; every attempt
// has a deadline; 429/5xx and transport failures are retried per the RetryPolicy, honouring Retry-After.
// The caller owns `close()`. Errors are RegistryResponseError with URLs that never carry credentials.
// The HTTP library (undici by default, node:https for one-shot commands) is loaded on first use.
import { defaultAddressPolicy, type AddressPolicy } from './address-policy.js';
import { ProxyError, RegistryError, RegistryResponseError } from './errors.js';
import type { ExchangeOptions, ExchangeResponse, HostLookup, HttpExchange } from './http-exchange.js';
import type { ProxyConfig } from './proxy-config.js';
import { addressRefusedCode, defaultRedirectVerdict, type RedirectPolicy } from './redirect-policy.js';
import { sameHostCaCertificates, type HostCaCertificates } from './registry-cas.js';
import { registryText } from './registry-text.js';
import {
  defaultRetryPolicy,
  isRetryableStatus,
  parseRetryAfter,
  retryDelayMs,
  type RetryPolicy,
} from './retry-policy.js';

export interface TransportOptions {
  /** Extra PEM CA certificates trusted on top of Node's bundled roots, for every host. Default: none. */
  readonly caCertificates?: readonly string[];
  /**
   * PEM CA bundles trusted only for connections to their host (`host` or `host:port`, see registryHostKey), as
   * CRI-O reads /etc/docker/certs.d/<host>/: a redirect or token realm on another host never uses them.
   * Default: none.
   */
  readonly hostCaCertificates?: HostCaCertificates;
  /**
   * Which addresses may be dialed, for every hop (images, mirrors, redirects, token realms), literals before the
   * request and names when resolved. Refusals fail with TESSERA_REGISTRY_BLOCKED. Default: defaultAddressPolicy
   * (no link-local or unspecified address).
   */
  readonly addressPolicy?: AddressPolicy;
  /** Connect timeout in ms. Default: 10_000. */
  readonly connectTimeoutMs?: number;
  /** Deadline of one attempt (connect, headers and body) in ms. Default: 30_000. */
  readonly attemptTimeoutMs?: number;
  /** Redirect hops followed per request. Default: 5. */
  readonly maxRedirects?: number;
  /**
   * Overrides the redirect decision (called for every hop with the default verdict). Default: the default verdict,
   * see `defaultRedirectVerdict`. Refused redirects fail with TESSERA_REGISTRY_REDIRECT_REFUSED.
   */
  readonly redirectPolicy?: RedirectPolicy;
  /** Retry policy for 429, 5xx and transport failures. Default: 3 retries, 200 ms base, 10 s cap. */
  readonly retry?: Partial<RetryPolicy>;
  /** Waits `ms` (tests pass a fake). Default: a real timer that honours the signal. */
  readonly sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** Wall clock in ms, for Retry-After dates. Default: Date.now. */
  readonly now?: () => number;
  /** Jitter source in [0, 1). Default: Math.random. */
  readonly random?: () => number;
  /** Connections kept per origin. Default: 16. */
  readonly connectionsPerOrigin?: number;
  /**
   * Host name resolver (tests inject one). Default: dns.lookup. Either way, names resolving to an address the
   * address policy refuses are refused at connect time (TESSERA_REGISTRY_BLOCKED).
   */
  readonly lookup?: HostLookup;
  /**
   * Told the technical detail of every failure to reach a host (refused, timed out, reset, TLS), which the error
   * itself does not carry in its message: tenants see one uniform message, so the operator log is where the
   * detail belongs. Default: none.
   */
  readonly onUnreachable?: (event: UnreachableEvent) => void;
  /**
   * HTTP library: 'undici' (pooled; for controllers) or 'node' (node:https, already loaded by Node; for one-shot
   * commands that must start fast). Default: 'undici'. With a `proxy`, always undici.
   */
  readonly httpClient?: 'undici' | 'node';
  /**
   * Egress proxy (see proxy-config.ts; the shell reads it from HTTPS_PROXY / HTTP_PROXY / NO_PROXY): requests it
   * applies to go through a CONNECT tunnel; a proxy that cannot be reached or refuses the tunnel fails with
   * TESSERA_REGISTRY_PROXY_UNAVAILABLE / _REFUSED naming the proxy. Default: none (direct connections).
   */
  readonly proxy?: ProxyConfig;
}

/** Operator-only detail of a failure to reach a host (see TransportOptions.onUnreachable). */
export interface UnreachableEvent {
  /** URL without credentials or query. */
  readonly url: string;
  readonly what: string;
  /** Node/undici error code (`ECONNREFUSED`, `UND_ERR_CONNECT_TIMEOUT`, `ERR_SSL_...`) or `TIMEOUT`. */
  readonly code: string;
  readonly message: string;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
  /** Final URL after redirects. */
  readonly url: URL;
}

export interface GetOptions {
  readonly headers: Readonly<Record<string, string>>;
  /** Largest accepted body of a 2xx response in bytes; error bodies are read up to 64 KiB. */
  readonly maxBodyBytes: number;
  /** Skip TLS verification and allow plain http (an insecure registry) for the first URL's host. */
  readonly insecure: boolean;
  /**
   * Whether a redirect target `host[:port]` is a configured insecure registry (then plain http and unverified
   * TLS are allowed for it). Default: only the first URL's host, when `insecure`.
   */
  readonly isInsecureHost?: (host: string) => boolean;
  readonly signal?: AbortSignal;
  /** Describes the request in error messages (`manifest of quay.io/x:y`). */
  readonly what: string;
  /**
   * Where the request comes from, for the address policy of its first hop: a token realm named by a registry is
   * judged as a redirect from that registry. Default: the URL itself (a registry the pod named).
   */
  readonly origin?: URL;
}

const errorBodyLimit = 64 * 1024;

/** undici's header/body timeout errors, and node:http's socket timeouts, by their stable codes. */
function isTimeout(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ETIMEDOUT';
}

function errorCode(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
}

/** Node's codes for certificates that do not verify: retrying cannot help, the trust configuration must change. */
const untrustedCertificateCodes = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function defaultSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function redactedUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** Whether two CA certificate lists are the same, in the same order (trust stores are built in that order). */
export function sameCaCertificates(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}

export class RegistryTransport {
  private exchange: Promise<HttpExchange> | undefined;
  private exchangeOptions: ExchangeOptions;
  /** Exchanges replaced by setCaCertificates, closed once no attempt on them can still be running. */
  private readonly retired = new Set<{ exchange: Promise<HttpExchange>; timer: NodeJS.Timeout }>();
  private readonly httpClient: 'undici' | 'node';
  private readonly attemptTimeoutMs: number;
  private readonly maxRedirects: number;
  private readonly redirectPolicy: RedirectPolicy;
  private readonly retry: RetryPolicy;
  private readonly sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly onUnreachable: ((event: UnreachableEvent) => void) | undefined;
  private readonly addressPolicy: AddressPolicy;

  constructor(options: TransportOptions = {}) {
    this.exchangeOptions = {
      caCertificates: options.caCertificates ?? [],
      hostCaCertificates: new Map(options.hostCaCertificates ?? []),
      addressPolicy: options.addressPolicy ?? defaultAddressPolicy,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      connectionsPerOrigin: options.connectionsPerOrigin ?? 16,
      ...(options.lookup ? { lookup: options.lookup } : {}),
      ...(options.proxy ? { proxy: options.proxy } : {}),
    };
    // Only the undici exchange tunnels through a proxy.
    this.httpClient = options.proxy ? 'undici' : (options.httpClient ?? 'undici');
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 30_000;
    this.maxRedirects = options.maxRedirects ?? 5;
    this.redirectPolicy = options.redirectPolicy ?? ((_candidate, verdict) => verdict);
    this.retry = { ...defaultRetryPolicy, ...options.retry };
    this.sleep = options.sleep ?? defaultSleep;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.onUnreachable = options.onUnreachable;
    this.addressPolicy = options.addressPolicy ?? defaultAddressPolicy;
  }

  private getExchange(): Promise<HttpExchange> {
    this.exchange ??=
      this.httpClient === 'node'
        ? import('./node-exchange.js').then((m) => new m.NodeExchange(this.exchangeOptions))
        : import('./undici-exchange.js').then((m) => new m.UndiciExchange(this.exchangeOptions));
    return this.exchange;
  }

  /** GET with retries; resolves with any final status (the caller interprets 4xx), rejects on exhaustion. */
  async get(url: URL, options: GetOptions): Promise<HttpResponse> {
    for (let retry = 0; ; retry++) {
      let retryAfterMs: number | undefined;
      let failure: RegistryError;
      try {
        const response = await this.followRedirects(url, options);
        if (!isRetryableStatus(response.status)) return response;
        retryAfterMs = parseRetryAfter(response.headers['retry-after'], this.now());
        const hint = retryAfterMs === undefined ? '' : ` (Retry-After ${Math.round(retryAfterMs / 1000)} s)`;
        failure = new RegistryResponseError(
          'TESSERA_REGISTRY_UNAVAILABLE',
          redactedUrl(response.url),
          response.status,
          `${options.what}: the registry answered HTTP ${response.status}${hint} ${retry + 1} time(s); try again later`,
          { retryable: true },
        );
      } catch (err) {
        if (!(err instanceof RegistryError) || !err.retryable) throw err;
        failure = err;
      }
      if (retry >= this.retry.maxRetries) throw failure;
      try {
        await this.sleep(retryDelayMs(retry + 1, retryAfterMs, this.retry, this.random), options.signal);
      } catch (reason) {
        throw this.aborted(url, options, reason);
      }
    }
  }

  private async followRedirects(start: URL, options: GetOptions): Promise<HttpResponse> {
    // The first hop passes the same address policy as a redirect: an image reference (or a realm) naming a
    // link-local or unspecified address (cloud metadata, node-local services) is never contacted.
    const origin = options.origin ?? start;
    const firstHop = { origin, from: origin, to: start, targetInsecure: options.insecure };
    // The default verdict only: the RedirectPolicy hook decides redirects, not the address a pod named.
    const firstVerdict = defaultRedirectVerdict(firstHop);
    if (!firstVerdict.allow) {
      throw new RegistryResponseError(
        'TESSERA_REGISTRY_BLOCKED',
        redactedUrl(start),
        undefined,
        `${options.what}: refusing to contact ${registryText(start.host)}: ${registryText(firstVerdict.reason)}; the operator does not reach such addresses`,
      );
    }
    let url = start;
    let headers = { ...options.headers };
    let insecure = options.insecure;
    for (let hop = 0; ; hop++) {
      // An address literal the address policy refuses is never connected to (names: at connect time, see
      // refusingLookup), so a denied range answers at once, whatever listens there: no timing to measure.
      const address = this.addressPolicy.judgeHost(url.hostname);
      if (!address.allow) {
        throw new RegistryResponseError(
          'TESSERA_REGISTRY_BLOCKED',
          redactedUrl(url),
          undefined,
          `${options.what}: refusing to contact ${registryText(url.host)}: ${registryText(address.reason)}; the operator does not reach such addresses`,
        );
      }
      const response = await this.once(url, headers, insecure, options);
      if (![301, 302, 303, 307, 308].includes(response.status)) return response;
      const location = response.headers.location;
      if (location === undefined) return response;
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw this.redirectRefused(start, response.status, options, 'the Location header is not a URL');
      }
      if (hop >= this.maxRedirects) {
        throw new RegistryResponseError(
          'TESSERA_REGISTRY_TOO_MANY_REDIRECTS',
          redactedUrl(start),
          response.status,
          `${options.what}: more than ${this.maxRedirects} redirects (last to ${registryText(redactedUrl(next))}); the registry or its storage is misconfigured`,
        );
      }
      const sameHost = next.host.toLowerCase() === start.host.toLowerCase();
      const targetInsecure = sameHost
        ? options.insecure
        : (options.isInsecureHost?.(next.host.toLowerCase()) ?? false);
      const candidate = { origin: start, from: url, to: next, targetInsecure };
      const verdict = this.redirectPolicy(candidate, defaultRedirectVerdict(candidate));
      if (!verdict.allow) {
        throw this.redirectRefused(
          start,
          response.status,
          options,
          `refusing a redirect to ${registryText(next.origin)}: ${registryText(verdict.reason)}`,
        );
      }
      if (next.origin !== url.origin) {
        const { authorization: _dropped, ...rest } = headers;
        headers = rest;
      }
      insecure = targetInsecure;
      url = next;
    }
  }

  private redirectRefused(start: URL, status: number, options: GetOptions, reason: string): RegistryError {
    return new RegistryResponseError(
      'TESSERA_REGISTRY_REDIRECT_REFUSED',
      redactedUrl(start),
      status,
      `${options.what}: ${reason}; the registry or its storage is misconfigured, or the redirect must be allowed explicitly (a redirect policy, or for a plain-http target an insecure registry entry for its host)`,
    );
  }

  private aborted(url: URL, options: GetOptions, reason: unknown): RegistryError {
    return new RegistryResponseError(
      'TESSERA_REGISTRY_ABORTED',
      redactedUrl(url),
      undefined,
      `${options.what}: cancelled`,
      {
        cause: reason,
      },
    );
  }

  private async once(
    url: URL,
    headers: Record<string, string>,
    insecure: boolean,
    options: GetOptions,
  ): Promise<HttpResponse> {
    if (options.signal?.aborted) throw this.aborted(url, options, options.signal.reason);
    const deadline = AbortSignal.timeout(this.attemptTimeoutMs);
    const signal = options.signal === undefined ? deadline : AbortSignal.any([options.signal, deadline]);
    const timedOut = (): RegistryError =>
      new RegistryResponseError(
        'TESSERA_REGISTRY_TIMEOUT',
        redactedUrl(url),
        undefined,
        `${options.what}: no complete answer from ${url.host} within ${this.attemptTimeoutMs} ms`,
        { retryable: true },
      );
    let response: ExchangeResponse;
    try {
      const exchange = await this.getExchange();
      response = await exchange.send({
        url,
        headers,
        insecure,
        signal,
        timeoutMs: this.attemptTimeoutMs,
      });
    } catch (err) {
      if (options.signal?.aborted && !deadline.aborted)
        throw this.aborted(url, options, options.signal.reason);
      // The proxy, not the registry, failed: its message names the proxy and says what to do.
      if (err instanceof ProxyError) throw err.during(options.what);
      const code = deadline.aborted || isTimeout(err) ? 'TIMEOUT' : errorCode(err);
      if (
        code === addressRefusedCode ||
        errorCode((err as { cause?: unknown } | undefined)?.cause) === addressRefusedCode
      ) {
        throw new RegistryResponseError(
          'TESSERA_REGISTRY_BLOCKED',
          redactedUrl(url),
          undefined,
          `${options.what}: refusing to contact ${registryText(url.host)}: it resolves to an address the operator does not reach (link-local, unspecified, or denied by its address policy)`,
          { cause: err },
        );
      }
      throw this.unreachable(url, options, code, err);
    }
    const status = response.status;
    const limit = status >= 200 && status < 300 ? options.maxBodyBytes : errorBodyLimit;
    const responseHeaders = response.headers;
    const declared = Number(responseHeaders['content-length'] ?? NaN);
    if (status >= 200 && status < 300 && declared > limit) {
      response.discard();
      throw this.tooLarge(url, options, declared, limit);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body) {
        const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        size += buf.length;
        if (size > limit) {
          response.discard();
          if (limit === errorBodyLimit) break; // an error body is only for the message: keep what we have
          throw this.tooLarge(url, options, size, limit);
        }
        chunks.push(buf);
      }
    } catch (err) {
      if (err instanceof RegistryError) throw err;
      if (deadline.aborted || isTimeout(err)) throw timedOut();
      if (options.signal?.aborted) throw this.aborted(url, options, options.signal.reason);
      throw new RegistryResponseError(
        'TESSERA_REGISTRY_UNAVAILABLE',
        redactedUrl(url),
        status,
        `${options.what}: the connection to ${url.host} broke while reading the answer`,
        { cause: err, retryable: true },
      );
    }
    return { status, headers: responseHeaders, body: Buffer.concat(chunks), url };
  }

  /**
   * No HTTP answer from `url`'s host: refused, silent, reset, not TLS, untrusted certificate or timed out. One
   * message for all, so the text a tenant sees (pod annotations, events) cannot tell open, silent and closed ports
   * apart; the detail goes to `onUnreachable` (the operator log) and stays in `cause`. Retryable unless retrying
   * cannot help (a certificate that does not verify, a peer that does not speak TLS).
   */
  private unreachable(url: URL, options: GetOptions, code: string, err: unknown): RegistryError {
    const message = err instanceof Error ? err.message : String(err);
    this.onUnreachable?.({ url: redactedUrl(url), what: options.what, code, message });
    const permanent = untrustedCertificateCodes.has(code) || code.startsWith('ERR_SSL_') || code === 'EPROTO';
    return new RegistryResponseError(
      'TESSERA_REGISTRY_UNAVAILABLE',
      redactedUrl(url),
      undefined,
      `${options.what}: cannot reach ${url.host}: no usable answer (refused, timed out, or TLS not accepted); ` +
        'check the address, the network path from the operator, and the CA bundle for this registry',
      { cause: err, retryable: !permanent },
    );
  }

  private tooLarge(url: URL, options: GetOptions, size: number, limit: number): RegistryError {
    return new RegistryResponseError(
      'TESSERA_REGISTRY_TOO_LARGE',
      redactedUrl(url),
      undefined,
      `${options.what}: the answer is larger than the ${limit}-byte limit (${size} bytes or more); refusing to read it`,
    );
  }

  /**
   * Trusts `caCertificates` (on top of Node's roots, every host) and `hostCaCertificates` (each only for its host)
   * from the next request on, e.g. after the cluster's registry CA bundles changed. Requests already under way
   * finish on their connections; those connections are closed once the longest attempt could have ended. No-op
   * when both are unchanged.
   */
  setCaCertificates(
    caCertificates: readonly string[],
    hostCaCertificates: HostCaCertificates = new Map(),
  ): void {
    if (
      sameCaCertificates(caCertificates, this.exchangeOptions.caCertificates) &&
      sameHostCaCertificates(hostCaCertificates, this.exchangeOptions.hostCaCertificates)
    )
      return;
    this.exchangeOptions = {
      ...this.exchangeOptions,
      caCertificates: [...caCertificates],
      hostCaCertificates: new Map(hostCaCertificates),
    };
    const old = this.exchange;
    this.exchange = undefined;
    if (old === undefined) return;
    const entry = {
      exchange: old,
      timer: setTimeout(() => {
        this.retired.delete(entry);
        // Best-effort close of a retired connection pool: its failure (or its opening's) concerns nobody now.
        void old.then((e) => e.close()).catch(() => undefined);
      }, this.attemptTimeoutMs),
    };
    entry.timer.unref();
    this.retired.add(entry);
  }

  async close(): Promise<void> {
    const exchanges = [...this.retired].map(({ exchange, timer }) => {
      clearTimeout(timer);
      return exchange;
    });
    this.retired.clear();
    if (this.exchange !== undefined) exchanges.push(this.exchange);
    this.exchange = undefined;
    await Promise.all(exchanges.map(async (exchange) => (await exchange).close()));
  }
}
