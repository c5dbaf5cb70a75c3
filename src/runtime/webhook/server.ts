// HTTPS server for admission and CRD conversion webhooks (TLS 1.2+). Each registered path serves one
// AdmissionHandler or one Converter (ConversionReview v1, see ./conversion.ts).
// The port is reachable by anything that can reach the pod (unless configured to, the API server presents no client
// certificate), so every caller is treated as hostile and each input has a budget, enforced before the step it
// protects:
// - connections: at most maxConnections at once; at the cap a new connection is admitted and the least useful open
//   one closed (idle keep-alive first, then the one longest stuck in its handshake, head or body; see
//   ../connection-shedding.ts), so idle or trickling connections cannot lock callers out. A TLS handshake must
//   finish within tlsHandshakeTimeoutMs, headers within headersTimeoutMs, the whole request within
//   requestTimeoutMs. Node checks the last two only every connectionsCheckingInterval (30 s by default), so it is
//   set to 1 s here;
// - headers: maxHeadersCount headers, maxHeaderBytes bytes;
// - body: counted as it arrives (chunked or not) and refused with 413 past maxRequestBytes; never buffered beyond;
// - JSON shape: nesting depth (maxJsonDepth) and value count (maxJsonValues) are measured by a linear scan of the
//   bytes as they arrive (../json-budget.ts), so JSON.parse only ever sees shallow, bounded documents (400);
// - memory across requests: requests being read or decided at once may hold at most maxInFlightBytes of estimated
//   memory (2 x body bytes received + 64 bytes per JSON value, grown chunk by chunk: a declared Content-Length
//   reserves nothing); a request that would exceed it gets 503 and its connection is closed;
// - callers the API server's client CA verifies (clientCa): the TLS handshake asks for a client certificate, and a
//   connection presenting one that clientCa verifies gets its own pool of maxVerifiedConnections, out of reach of
//   strangers' shedding, and requests on other connections may hold only a third of maxInFlightBytes. Others are
//   limited, not refused: the API server presents no certificate to CRD conversion webhooks (kubernetes#131810),
//   and a stale CA then costs the API server its reserved share, not its admissions;
// - time: a handler has handlerTimeoutMs from the request's arrival, kept well under the API server's
//   timeoutSeconds (see handlerBudgetMs) so the caller reads this server's explanation, not a bare timeout.
// Other guarantees: a request is answered, never crashes the process: a malformed or non-v1 review gets 400 (and a
// warn log line), a wrong method 405, a wrong content type 415, an unknown path 404; a handler that throws or misses
// its budget is answered by its failurePolicy ('Fail': allowed=false with code 500; 'Ignore': allowed=true,
// unchanged), a converter that throws a ConversionReview with result Failure (converters are synchronous and pure).
// Every refusal is logged and counted (stats(), and Prometheus when a registry is given). Certificates come from
// files (reloaded on change) or are generated for development (`caBundle()` then returns the CA for the webhook
// configuration). If start() fails (unusable certificate, port taken), ready() rejects with the same error and
// nothing is left running; after a clean stop no timer or watcher keeps the process alive.
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import type http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Counter, type Registry } from 'prom-client';
import { realClock, type Clock, type Timer } from '../clock.js';
import { ConnectionLimiter } from '../connection-shedding.js';
import { InvalidArgumentError, RuntimeError } from '../errors.js';
import {
  DEFAULT_LISTEN_HOST,
  DEFAULT_WEBHOOK_MAX_CONNECTIONS,
  DEFAULT_WEBHOOK_MAX_REQUEST_BYTES,
  DEFAULT_WEBHOOK_PORT,
} from '../listener-defaults.js';
import { silentLogger, type Logger } from '../logging.js';
import { waitForAbort, type Runnable } from '../runnable.js';
import {
  WebhookBadRequestError,
  admissionReviewResponse,
  errored,
  parseAdmissionReview,
  type AdmissionHandler,
  type AdmissionResult,
} from './admission.js';
import { FileCertificateWatcher, validateKeyPair, type KeyPair } from './certificate-source.js';
import {
  conversionReviewResponse,
  convertReview,
  parseConversionReview,
  type Converter,
} from './conversion.js';
import type { DevCertificateOptions } from './dev-certificate.js';
import { JsonShapeScanner } from '../json-budget.js';

/** The API server's default webhook timeoutSeconds, and the one Tessera's webhook configurations set. */
export const API_SERVER_WEBHOOK_TIMEOUT_SECONDS = 10;

/**
 * The handler budget (ms) for a webhook configured with `timeoutSeconds`: 70 % of it. The rest covers reading the
 * request, TLS and the network, so the API server receives this server's answer (which names the handler and its
 * budget) instead of giving up itself with a bare "context deadline exceeded".
 */
export function handlerBudgetMs(timeoutSeconds: number): number {
  return Math.floor(timeoutSeconds * 700);
}

/** Longest a refused request's remaining body is read and discarded before the connection is closed (ms). */
const REFUSAL_DRAIN_MS = 1_000;

/** Estimated heap bytes one decoded JSON value costs (V8: an empty object is ~56 bytes, a property ~74). */
const BYTES_PER_JSON_VALUE = 64;

/** Defaults of every budget (see WebhookServerOptions). */
export const WEBHOOK_BUDGET_DEFAULTS = {
  maxRequestBytes: DEFAULT_WEBHOOK_MAX_REQUEST_BYTES,
  /** Kubernetes objects nest about 10-20 levels (managedFields included). */
  maxJsonDepth: 64,
  /** A large pod is a few thousand values; this also fits a ConversionReview of ~4,000 small custom resources. */
  maxJsonValues: 250_000,
  /** Estimated memory of all requests in flight; one maximal request (~30 MiB estimated) always fits. */
  maxInFlightBytes: 48 * 1024 * 1024,
  maxConnections: DEFAULT_WEBHOOK_MAX_CONNECTIONS,
  /**
   * With clientCa: connections verified by it, besides maxConnections. The API server's webhook client keeps a few
   * dozen idle connections per webhook host; 128 leave room for a few API servers and bursts.
   */
  maxVerifiedConnections: 128,
  maxHeadersCount: 64,
  maxHeaderBytes: 16 * 1024,
  tlsHandshakeTimeoutMs: 5_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  handlerTimeoutMs: handlerBudgetMs(API_SERVER_WEBHOOK_TIMEOUT_SECONDS),
  /** How often Node checks headersTimeout/requestTimeout (its default, 30 s, lets slow clients stay ~30 s). */
  timeoutCheckIntervalMs: 1_000,
} as const;

export interface WebhookServerOptions {
  /** Default: '0.0.0.0'. */
  host?: string;
  /** Default: 9443; 0 picks a free port. */
  port?: number;
  /** Serving certificate and key files (PEM), watched for changes. Give these or `devCertificate`. */
  certFile?: string;
  keyFile?: string;
  /** Generate a certificate in memory for these names (development and tests only). */
  devCertificate?: DevCertificateOptions;
  /** File check interval (ms). Default: 10,000. */
  certPollIntervalMs?: number;
  /** Largest accepted request body (bytes), counted as it arrives. Default: 7 MiB. */
  maxRequestBytes?: number;
  /** Deepest JSON nesting accepted in a body. Default: 64. */
  maxJsonDepth?: number;
  /** Most JSON values accepted in a body (objects/arrays + separators + 1). Default: 250,000. */
  maxJsonValues?: number;
  /** Estimated memory all requests in flight may hold together (bytes). Default: 48 MiB. */
  maxInFlightBytes?: number;
  /**
   * Most open connections (with clientCa: of callers without a verified certificate, handshaking ones included).
   * At the cap, accepting one closes the least useful open one (idle, then longest stuck); a new connection is
   * dropped only when every open one is being answered. Default: 256.
   */
  maxConnections?: number;
  /** With clientCa: most connections whose client certificate it verified (their own pool). Default: 128. */
  maxVerifiedConnections?: number;
  /**
   * PEM CA bundle that verifies the API server's client certificate (kube-apiserver presents one when its admission
   * configuration names a kubeconfig with a client certificate for this webhook). Verified connections get their own
   * connection pool and two thirds of maxInFlightBytes that others cannot take; others are still served, within the
   * rest. Default: none (no client certificate requested; every caller shares maxConnections and maxInFlightBytes).
   */
  clientCa?: string;
  /** Most request headers read. Default: 64. */
  maxHeadersCount?: number;
  /** Largest request head (bytes). Default: 16 KiB. */
  maxHeaderBytes?: number;
  /** Time a connection may take to complete its TLS handshake (ms). Default: 5,000. */
  tlsHandshakeTimeoutMs?: number;
  /** Time to receive request headers (ms). Default: 10,000. */
  headersTimeoutMs?: number;
  /** Time to receive the whole request (ms). Default: 15,000. */
  requestTimeoutMs?: number;
  /** Time an idle keep-alive connection stays open (ms). Default: 5,000. */
  keepAliveTimeoutMs?: number;
  /** How often header/request timeouts are checked (ms). Default: 1,000. */
  timeoutCheckIntervalMs?: number;
  /**
   * Time a handler may take, from the request's arrival, before its failurePolicy answers for it (ms).
   * Default: handlerBudgetMs(10) = 7,000, under the API server's timeoutSeconds of 10. Pass
   * handlerBudgetMs(timeoutSeconds) when the webhook configurations set another timeout.
   */
  handlerTimeoutMs?: number;
  /** Where refusals are counted (tessera_webhook_refusals_total). Default: none (stats() only). */
  registry?: Registry;
  clock?: Clock;
  logger?: Logger;
}

/** Why a request was not answered by its handler's own decision (the `reason` label of the refusal counter). */
export type WebhookRefusalReason =
  | 'not_found'
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'body_too_large'
  | 'json_too_deep'
  | 'json_too_many_values'
  | 'busy'
  | 'bad_request'
  | 'client_gone'
  | 'handler_error'
  | 'handler_timeout'
  | 'connection_limit'
  | 'connection_shed'
  | 'tls_error'
  | 'client_error'
  | 'internal';

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly reason: WebhookRefusalReason,
    message: string,
  ) {
    super(message);
  }
}

/** The client hung up or the connection failed before the body was complete: nobody is left to answer. */
class ClientGoneError extends Error {}

/** Connection pools: callers whose client certificate clientCa verified, and everyone else. */
export type ConnectionPool = 'unverified' | 'verified';

/**
 * Checks that `pem` holds at least one readable PEM certificate (a client CA bundle); throws InvalidArgumentError
 * naming `field` otherwise.
 */
export function validateClientCa(pem: string, field: string): void {
  const begin = '-----BEGIN CERTIFICATE-----';
  const end = '-----END CERTIFICATE-----';
  let count = 0;
  for (let at = pem.indexOf(begin); at >= 0; at = pem.indexOf(begin, at + begin.length)) {
    const stop = pem.indexOf(end, at);
    if (stop < 0) throw new InvalidArgumentError(field, `certificate ${count + 1} has no "${end}" line`);
    try {
      new X509Certificate(pem.slice(at, stop + end.length));
    } catch (err) {
      throw new InvalidArgumentError(
        field,
        `certificate ${count + 1} is unreadable: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    count++;
  }
  if (count === 0) throw new InvalidArgumentError(field, `holds no PEM certificate ("${begin}")`);
}

/** Share of maxInFlightBytes that requests of unverified callers may hold when a client CA is configured. */
const UNVERIFIED_IN_FLIGHT_SHARE = 1 / 3;

/**
 * Memory held by requests in flight, in the estimate's units (see WEBHOOK_BUDGET_DEFAULTS.maxInFlightBytes).
 * Requests of unverified callers together hold at most `unverifiedLimit`, so verified callers always have the rest.
 */
class InFlightBudget {
  private used = 0;
  /** The part of `used` held by unverified callers' requests. */
  private usedUnverified = 0;
  constructor(
    readonly limit: number,
    readonly unverifiedLimit: number,
  ) {}

  /** A reservation of one request, grown as its body arrives and released once answered. */
  reserve(verified: boolean): { grow(to: number): boolean; release(): void } {
    let held = 0;
    return {
      grow: (to) => {
        const more = to - held;
        if (more <= 0) return true;
        if (this.used + more > this.limit) return false;
        if (!verified && this.usedUnverified + more > this.unverifiedLimit) return false;
        this.used += more;
        if (!verified) this.usedUnverified += more;
        held = to;
        return true;
      },
      release: () => {
        this.used -= held;
        if (!verified) this.usedUnverified -= held;
        held = 0;
      },
    };
  }

  inUse(): number {
    return this.used;
  }
}

const REFUSALS_METRIC = 'tessera_webhook_refusals_total';

export class WebhookServer implements Runnable {
  readonly name = 'webhook';
  readonly needsLeaderElection = false;
  private readonly handlers = new Map<string, AdmissionHandler>();
  private readonly converters = new Map<string, Converter>();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly inFlight: InFlightBudget;
  /** Sheds at maxConnections (pool 'unverified') and maxVerifiedConnections ('verified'). */
  private readonly connections: ConnectionLimiter<ConnectionPool>;
  private readonly refusals = new Map<WebhookRefusalReason, number>();
  private readonly refusalCounter: Counter<'reason'> | undefined;
  private server: https.Server | undefined;
  /** Set once stop begins: answers then close their connection instead of keeping it alive. */
  private stopping = false;
  private ca: string | undefined;
  private certWatcher: FileCertificateWatcher | undefined;
  /** Settles once: resolved when listening, rejected with start()'s error when start() fails first. */
  private readonly listening: Promise<void>;
  private resolveListening: (() => void) | undefined;
  private rejectListening: ((err: unknown) => void) | undefined;

  constructor(private readonly options: WebhookServerOptions) {
    const hasFiles = Boolean(options.certFile || options.keyFile);
    if (hasFiles && !(options.certFile && options.keyFile))
      throw new InvalidArgumentError('certFile/keyFile', 'give both files');
    if (hasFiles === Boolean(options.devCertificate))
      throw new InvalidArgumentError('certFile', 'give either certFile+keyFile or devCertificate');
    for (const key of Object.keys(WEBHOOK_BUDGET_DEFAULTS) as (keyof typeof WEBHOOK_BUDGET_DEFAULTS)[]) {
      const value = options[key];
      if (value !== undefined && !(Number.isInteger(value) && value > 0))
        throw new InvalidArgumentError(key, `must be a positive integer, got ${String(value)}`);
    }
    if (this.budget('headersTimeoutMs') > this.budget('requestTimeoutMs'))
      throw new InvalidArgumentError('headersTimeoutMs', 'must not exceed requestTimeoutMs');
    if (options.clientCa !== undefined) validateClientCa(options.clientCa, 'clientCa');
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ component: 'webhook' });
    const maxInFlight = this.budget('maxInFlightBytes');
    this.inFlight = new InFlightBudget(
      maxInFlight,
      options.clientCa === undefined ? maxInFlight : Math.floor(maxInFlight * UNVERIFIED_IN_FLIGHT_SHARE),
    );
    this.connections = new ConnectionLimiter<ConnectionPool>({
      pools: { unverified: this.budget('maxConnections'), verified: this.budget('maxVerifiedConnections') },
      initialPool: 'unverified',
      clock: this.clock,
      onShed: (event) => {
        this.count('connection_shed');
        this.logger.debug(
          { remote: event.remoteAddress, pool: event.pool, phase: event.phase },
          'connection closed to make room for a new one (the pool is at its cap)',
        );
      },
      onRefused: (event) => {
        this.count('connection_limit');
        this.logger.debug(
          { remote: event.remoteAddress, pool: event.pool },
          'connection dropped: every open connection is being answered',
        );
      },
    });
    if (options.registry) {
      // Several servers may share one registry (tests, a process serving two ports): one counter for all.
      const existing = options.registry.getSingleMetric(REFUSALS_METRIC);
      this.refusalCounter =
        (existing as Counter<'reason'> | undefined) ??
        new Counter({
          name: REFUSALS_METRIC,
          help: 'Webhook requests not answered by a handler decision (budget exceeded, malformed, handler failure), by reason',
          labelNames: ['reason'],
          registers: [options.registry],
        });
    }
    this.listening = new Promise((resolve, reject) => {
      this.resolveListening = resolve;
      this.rejectListening = reject;
    });
    // start() reports the same failure to its own caller; without this, nobody calling ready() would turn a
    // failed start into an unhandled rejection.
    this.listening.catch(() => undefined);
  }

  /** Serves `handler` at `path` (e.g. `/mutate-pods`). Call before start(). */
  register(path: string, handler: AdmissionHandler): void {
    if (!path.startsWith('/')) throw new InvalidArgumentError('path', `must start with "/", got "${path}"`);
    if (this.converters.has(path))
      throw new InvalidArgumentError('path', `${path} already serves conversion`);
    this.handlers.set(path, handler);
  }

  /** Serves CRD conversion (ConversionReview v1) with `converter` at `path` (e.g. `/convert`). Call before start(). */
  registerConversion(path: string, converter: Converter): void {
    if (!path.startsWith('/')) throw new InvalidArgumentError('path', `must start with "/", got "${path}"`);
    if (this.handlers.has(path)) throw new InvalidArgumentError('path', `${path} already serves admission`);
    this.converters.set(path, converter);
  }

  /** Resolves once the server accepts connections; rejects with start()'s error if it failed before that. */
  ready(): Promise<void> {
    return this.listening;
  }

  port(): number {
    const addr = this.server?.address();
    return addr && typeof addr === 'object' ? (addr as AddressInfo).port : 0;
  }

  /** PEM CA of a generated development certificate (undefined when serving files). */
  caBundle(): string | undefined {
    return this.ca;
  }

  /** Refusals so far by reason, and the estimated memory requests in flight hold now. */
  stats(): { refusals: Readonly<Partial<Record<WebhookRefusalReason, number>>>; inFlightBytes: number } {
    return { refusals: Object.fromEntries(this.refusals), inFlightBytes: this.inFlight.inUse() };
  }

  /** Connections open now (0 when not listening); `verified` counts those whose client certificate clientCa verified. */
  openConnections(pool?: ConnectionPool): Promise<number> {
    return Promise.resolve(this.server ? this.connections.size(pool) : 0);
  }

  async start(signal: AbortSignal): Promise<void> {
    let server: https.Server;
    try {
      server = await this.listen();
    } catch (err) {
      // Leave nothing behind: the certificate watcher polls and watches files, which would keep the process alive.
      this.certWatcher?.stop();
      this.server = undefined;
      this.logger.error(
        { err: err instanceof Error ? err.message : String(err) },
        'webhook server failed to start',
      );
      this.rejectListening?.(err);
      throw err;
    }
    this.logger.info({ port: this.port() }, 'webhook server listening');
    this.resolveListening?.();
    await waitForAbort(signal);
    this.certWatcher?.stop();
    // From now on every answer says `connection: close` and idle keep-alive connections are closed as soon as
    // they go idle, so a clean stop does not wait for the API server to drop its pooled connections.
    this.stopping = true;
    // In-flight reviews get a little time, then are cut; the timer must not outlive a close that finished first.
    let forceClose: Timer | undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      forceClose = this.clock.setTimer(() => server.closeAllConnections(), 5_000);
    });
    forceClose?.cancel();
    this.logger.info({}, 'webhook server stopped');
  }

  private budget<K extends keyof typeof WEBHOOK_BUDGET_DEFAULTS>(key: K): number {
    return this.options[key] ?? WEBHOOK_BUDGET_DEFAULTS[key];
  }

  /** TLS options that ask callers for a client certificate and verify it against clientCa (never required). */
  private clientVerification(): { requestCert?: boolean; rejectUnauthorized?: boolean; ca?: string } {
    const ca = this.options.clientCa;
    return ca === undefined ? {} : { requestCert: true, rejectUnauthorized: false, ca };
  }

  /** The connection presented a client certificate that clientCa verifies. */
  private isVerified(socket: Socket | null): boolean {
    return this.options.clientCa !== undefined && (socket as TLSSocket | null)?.authorized === true;
  }

  private count(reason: WebhookRefusalReason): void {
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
    this.refusalCounter?.inc({ reason });
  }

  /** Loads the certificate and binds the port; on failure the caller cleans up. */
  private async listen(): Promise<https.Server> {
    const pair = await this.initialKeyPair();
    const server = https.createServer(
      {
        cert: pair.certPem,
        key: pair.keyPem,
        minVersion: 'TLSv1.2',
        ...this.clientVerification(),
        handshakeTimeout: this.budget('tlsHandshakeTimeoutMs'),
        headersTimeout: this.budget('headersTimeoutMs'),
        requestTimeout: this.budget('requestTimeoutMs'),
        keepAliveTimeout: this.budget('keepAliveTimeoutMs'),
        connectionsCheckingInterval: this.budget('timeoutCheckIntervalMs'),
        maxHeaderSize: this.budget('maxHeaderBytes'),
      },
      (req, res) => {
        // serve() answers every error itself; this catches only a bug in that path, which must not become an
        // unhandled rejection (Node exits on those).
        this.serve(req, res).catch((err: unknown) => this.lastResort(req, res, err));
      },
    );
    server.maxHeadersCount = this.budget('maxHeadersCount');
    this.connections.attach(server);
    if (this.options.clientCa !== undefined)
      server.on('secureConnection', (socket: TLSSocket) => {
        if (socket.authorized) this.connections.assign(socket, 'verified');
        else
          this.logger.debug(
            { remote: socket.remoteAddress, err: socket.authorizationError?.message },
            'caller presented no client certificate that clientCa verifies; served within the unverified share',
          );
      });
    server.on('tlsClientError', (err) => {
      // Includes connections cut by tlsHandshakeTimeoutMs.
      this.count('tls_error');
      this.logger.debug({ err: err.message }, 'TLS handshake failed');
    });
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      this.count('client_error');
      this.logger.debug({ err: err.message, code: err.code }, 'bad HTTP request');
      // Mirror Node's default answers (it only replies on a connection that has not started a response).
      const status =
        err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? '408 Request Timeout'
          : err.code === 'HPE_HEADER_OVERFLOW'
            ? '431 Request Header Fields Too Large'
            : '400 Bad Request';
      if (socket.writable && !(socket as Socket & { _httpMessage?: unknown })._httpMessage)
        socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(
        this.options.port ?? DEFAULT_WEBHOOK_PORT,
        this.options.host ?? DEFAULT_LISTEN_HOST,
        () => {
          server.off('error', reject);
          resolve();
        },
      );
    });
    return server;
  }

  private async initialKeyPair(): Promise<KeyPair> {
    if (this.options.devCertificate) {
      // Loaded only here: certificate generation needs @peculiar/x509 and its Reflect metadata polyfill, which a
      // server with certificate files never uses.
      const { generateDevCertificate } = await import('./dev-certificate.js');
      const dev = await generateDevCertificate(this.options.devCertificate);
      this.ca = dev.caPem;
      validateKeyPair(dev);
      return dev;
    }
    this.certWatcher = new FileCertificateWatcher(
      {
        certFile: this.options.certFile ?? '',
        keyFile: this.options.keyFile ?? '',
        pollIntervalMs: this.options.certPollIntervalMs,
        clock: this.clock,
        logger: this.logger,
      },
      (pair) =>
        this.server?.setSecureContext({
          cert: pair.certPem,
          key: pair.keyPem,
          minVersion: 'TLSv1.2',
          ...this.clientVerification(),
        }),
    );
    return this.certWatcher.start();
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = this.clock.now();
    // Read once, up front: after a failed read the socket may already be detached (req.socket is then null).
    const remote = req.socket?.remoteAddress ?? '';
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const reservation = this.inFlight.reserve(this.isVerified(req.socket));
    try {
      const handler = this.handlers.get(path);
      const converter = this.converters.get(path);
      if (!handler && !converter) throw new HttpError(404, 'not_found', `no webhook at ${path}`);
      if (req.method !== 'POST')
        throw new HttpError(405, 'method_not_allowed', `method ${req.method ?? ''} not allowed; use POST`);
      const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
      if (type !== 'application/json')
        throw new HttpError(
          415,
          'unsupported_media_type',
          `content-type must be application/json, got "${type ?? ''}"`,
        );
      // No local keeps the raw body: it can be collected while an async handler decides.
      const decoded = decodeJson(await this.readBody(req, reservation));
      if (converter) {
        const review = parseConversionReview(decoded);
        const response = convertReview(review, converter);
        this.logger.debug(
          {
            path,
            uid: review.uid,
            desiredAPIVersion: review.desiredAPIVersion,
            objects: review.objects.length,
            result: response.result.status,
            ms: this.clock.now() - started,
          },
          'conversion reviewed',
        );
        if (response.result.status === 'Failure')
          this.logger.warn({ path, uid: review.uid, err: response.result.message }, 'conversion failed');
        this.reply(res, 200, conversionReviewResponse(response));
        return;
      }
      if (!handler) throw new HttpError(404, 'not_found', `no webhook at ${path}`);
      const request = parseAdmissionReview(decoded);
      const result = await this.decide(path, request.uid, handler, started, (signal) =>
        handler.handle(request, signal),
      );
      this.logger.debug(
        {
          path,
          uid: request.uid,
          operation: request.operation,
          allowed: result.allowed,
          ms: this.clock.now() - started,
        },
        'admission reviewed',
      );
      this.reply(res, 200, admissionReviewResponse(request.uid, result));
    } catch (err) {
      this.refuse(req, res, path, remote, err);
    } finally {
      reservation.release();
    }
  }

  /** Answers a request that failed before a handler decided (or whose client left). */
  private refuse(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    path: string,
    remote: string,
    err: unknown,
  ): void {
    if (err instanceof ClientGoneError) {
      this.count('client_gone');
      this.logger.debug({ path, remote, err: err.message }, 'client left before sending the whole request');
      req.socket?.destroy();
      return;
    }
    const status = err instanceof HttpError ? err.status : err instanceof WebhookBadRequestError ? 400 : 500;
    const reason: WebhookRefusalReason =
      err instanceof HttpError
        ? err.reason
        : err instanceof WebhookBadRequestError
          ? 'bad_request'
          : 'internal';
    const message = err instanceof Error ? err.message : String(err);
    this.count(reason);
    this.logger.warn({ path, status, reason, err: message, remote }, 'rejected webhook request');
    // The socket is taken now: once the answer is sent Node detaches it from req and res.
    const socket = req.socket ?? res.socket;
    if (res.headersSent || res.destroyed) {
      socket?.destroy();
      return;
    }
    const text = `${message}\n`;
    const complete = req.complete;
    res.writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      // A body we stopped reading leaves the connection unusable: answer, then close it.
      connection: !complete || this.stopping ? 'close' : 'keep-alive',
      ...(status === 503 ? { 'retry-after': '1' } : {}),
    });
    if (complete) {
      res.end(text);
      return;
    }
    res.write(text);
    this.discardThenClose(req, res, socket);
  }

  /**
   * After refusing a request whose body is still arriving: the whole answer is already written, but closing now
   * would reset the connection while the client is still sending, and a reset makes the client drop the answer
   * unread. So, like Go's net/http, the rest of the body is read and thrown away (never buffered) until it ends,
   * for at most REFUSAL_DRAIN_MS and maxRequestBytes more bytes; then the connection is closed.
   */
  private discardThenClose(req: http.IncomingMessage, res: http.ServerResponse, socket: Socket | null): void {
    const cap = this.budget('maxRequestBytes');
    let discarded = 0;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      timer.cancel();
      req.off('data', onData);
      req.off('end', finish);
      req.off('close', finish);
      req.off('error', finish);
      res.end(() => socket?.destroy());
      // The client may still be sending after the cap: don't wait for a graceful end.
      if (!req.complete) socket?.destroy();
    };
    const onData = (chunk: Buffer): void => {
      discarded += chunk.length;
      if (discarded > cap) finish();
    };
    const timer = this.clock.setTimer(finish, REFUSAL_DRAIN_MS);
    req.on('data', onData);
    req.on('end', finish);
    req.on('close', finish);
    req.on('error', finish);
    req.resume();
  }

  /** serve() threw from its own error path (a bug): log it and drop the connection rather than the process. */
  private lastResort(req: http.IncomingMessage, res: http.ServerResponse, err: unknown): void {
    this.count('internal');
    this.logger.error(
      { err: err instanceof Error ? err.message : String(err) },
      'webhook request failed unexpectedly; connection closed',
    );
    try {
      if (!res.headersSent && !res.destroyed)
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end();
    } catch {
      // The connection is going away below anyway.
    }
    req.socket?.destroy();
  }

  /**
   * Runs the handler within its budget (counted from `started`, the request's arrival). A throw or a miss is
   * answered by the handler's failurePolicy; the signal handed to the handler aborts when the budget runs out.
   */
  private async decide(
    path: string,
    uid: string,
    handler: AdmissionHandler,
    started: number,
    run: (signal: AbortSignal) => Promise<AdmissionResult> | AdmissionResult,
  ): Promise<AdmissionResult> {
    const budgetMs = this.budget('handlerTimeoutMs');
    const policy = handler.failurePolicy ?? 'Fail';
    const abort = new AbortController();
    let timer: Timer | undefined;
    const failed = (reason: 'handler_error' | 'handler_timeout', err: unknown): AdmissionResult => {
      this.count(reason);
      const message = err instanceof Error ? err.message : String(err);
      if (policy === 'Ignore') {
        this.logger.error(
          { path, uid, reason, err: message },
          'admission handler failed; admitting the object unchanged (failurePolicy Ignore)',
        );
        return { allowed: true };
      }
      this.logger.error({ path, uid, reason, err: message }, 'admission handler failed; refusing');
      return errored(500, err);
    };
    try {
      const timeout = new Promise<AdmissionResult>((resolve) => {
        timer = this.clock.setTimer(
          () => {
            abort.abort();
            resolve(
              failed(
                'handler_timeout',
                new RuntimeError(
                  'TESSERA_WEBHOOK_HANDLER_TIMEOUT',
                  `admission webhook ${path} did not decide within its ${budgetMs} ms budget, so the request ` +
                    `was ${policy === 'Ignore' ? 'admitted unchanged' : 'refused'}; the webhook's logs name request ${uid}`,
                ),
              ),
            );
          },
          Math.max(0, started + budgetMs - this.clock.now()),
        );
      });
      return await Promise.race([Promise.resolve().then(() => run(abort.signal)), timeout]);
    } catch (err) {
      return failed('handler_error', err);
    } finally {
      timer?.cancel();
    }
  }

  /**
   * Reads the body, enforcing the byte, JSON-shape and in-flight budgets on every chunk as it arrives (so a chunked
   * body without Content-Length is bounded too). On a violation it stops reading at once and rejects; it never
   * holds more than maxRequestBytes.
   */
  private readBody(req: http.IncomingMessage, reservation: { grow(to: number): boolean }): Promise<Buffer> {
    const limit = this.budget('maxRequestBytes');
    const busy = (): HttpError =>
      new HttpError(
        503,
        'busy',
        `webhook is busy: requests in flight would exceed the ${this.budget('maxInFlightBytes')} byte memory budget; retry`,
      );
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > limit)
      return Promise.reject(
        new HttpError(
          413,
          'body_too_large',
          `request body of ${declared} bytes exceeds the ${limit} byte limit`,
        ),
      );
    // Nothing is reserved for the declared length: a caller declaring 7 MiB and trickling bytes would otherwise
    // hold 14 MiB of the budget for nothing. The reservation grows with each chunk received (below).
    const scanner = new JsonShapeScanner({
      maxDepth: this.budget('maxJsonDepth'),
      maxValues: this.budget('maxJsonValues'),
    });
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const cleanup = (): void => {
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onError);
        req.off('close', onClose);
      };
      const stop = (err: Error): void => {
        cleanup();
        // Stop reading from the socket: the rest of the body is never buffered.
        req.pause();
        chunks.length = 0;
        reject(err);
      };
      const onData = (chunk: Buffer): void => {
        size += chunk.length;
        if (size > limit) {
          stop(new HttpError(413, 'body_too_large', `request body exceeds the ${limit} byte limit`));
          return;
        }
        const violation = scanner.push(chunk);
        if (violation) {
          stop(
            violation.budget === 'depth'
              ? new HttpError(
                  400,
                  'json_too_deep',
                  `request body nests JSON deeper than the limit of ${violation.limit} levels`,
                )
              : new HttpError(
                  400,
                  'json_too_many_values',
                  `request body has more JSON values than the limit of ${violation.limit}`,
                ),
          );
          return;
        }
        if (!reservation.grow(2 * size + BYTES_PER_JSON_VALUE * scanner.values())) {
          stop(busy());
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = (): void => {
        cleanup();
        resolve(Buffer.concat(chunks, size));
      };
      const onError = (err: Error): void => {
        cleanup();
        reject(new ClientGoneError(err.message));
      };
      const onClose = (): void => {
        cleanup();
        reject(new ClientGoneError('connection closed before the request body was complete'));
      };
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', onError);
      req.on('close', onClose);
    });
  }

  private reply(res: http.ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...(this.stopping ? { connection: 'close' } : {}),
    });
    res.end(text);
  }
}

/** Parses a body that passed the JSON shape budgets; malformed JSON is a bad request. */
function decodeJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new WebhookBadRequestError(
      `body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
