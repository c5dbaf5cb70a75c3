// HTTPS server for admission and CRD conversion webhooks (TLS 1.2+). Each registered path serves one
// AdmissionHandler or one Converter (ConversionReview v1, see ./conversion.ts).
// Guarantees: a request is answered, never crashes the process: a malformed or non-v1 review gets 400 (and a warn
// log line), a body over maxRequestBytes gets 413, a wrong method 405, a wrong content type 415, an unknown path
// 404; a handler that throws or exceeds handlerTimeoutMs yields an AdmissionReview with allowed=false and code 500,
// a converter that throws a ConversionReview with result Failure (converters are synchronous and pure).
// Slow clients are cut off by headers/request timeouts. Certificates come from files (reloaded on change) or are
// generated for development (`caBundle()` then returns the CA for the webhook configuration). If start() fails
// (unusable certificate, port taken), ready() rejects with the same error and nothing is left running; after a
// clean stop no timer or watcher keeps the process alive.
import https from 'node:https';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { realClock, type Clock, type Timer } from '../clock.js';
import { InvalidArgumentError } from '../errors.js';
import { silentLogger, type Logger } from '../logging.js';
import type { Runnable } from '../runnable.js';
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
import { generateDevCertificate, type DevCertificateOptions } from './dev-certificate.js';

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
  /** Largest accepted request body (bytes). Default: 7 MiB (kube-apiserver sends at most ~3 MiB objects). */
  maxRequestBytes?: number;
  /** Time to receive request headers (ms). Default: 10,000. */
  headersTimeoutMs?: number;
  /** Time to receive the whole request (ms). Default: 15,000. */
  requestTimeoutMs?: number;
  /** Time a handler may take before the request is answered as failed (ms). Default: 10,000 (the API server's default timeoutSeconds). */
  handlerTimeoutMs?: number;
  clock?: Clock;
  logger?: Logger;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class WebhookServer implements Runnable {
  readonly name = 'webhook';
  readonly needsLeaderElection = false;
  private readonly handlers = new Map<string, AdmissionHandler>();
  private readonly converters = new Map<string, Converter>();
  private readonly clock: Clock;
  private readonly logger: Logger;
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
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ component: 'webhook' });
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
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
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

  /** Loads the certificate and binds the port; on failure the caller cleans up. */
  private async listen(): Promise<https.Server> {
    const pair = await this.initialKeyPair();
    const server = https.createServer(
      { cert: pair.certPem, key: pair.keyPem, minVersion: 'TLSv1.2' },
      (req, res) => void this.serve(req, res),
    );
    server.headersTimeout = this.options.headersTimeoutMs ?? 10_000;
    server.requestTimeout = this.options.requestTimeoutMs ?? 15_000;
    server.on('tlsClientError', (err) => this.logger.debug({ err: err.message }, 'TLS handshake failed'));
    server.on('clientError', (err, socket) => {
      this.logger.debug({ err: err.message }, 'bad HTTP request');
      socket.destroy();
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 9443, this.options.host ?? '0.0.0.0', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return server;
  }

  private async initialKeyPair(): Promise<KeyPair> {
    if (this.options.devCertificate) {
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
        this.server?.setSecureContext({ cert: pair.certPem, key: pair.keyPem, minVersion: 'TLSv1.2' }),
    );
    return this.certWatcher.start();
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = this.clock.now();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    try {
      const handler = this.handlers.get(path);
      const converter = this.converters.get(path);
      if (!handler && !converter) throw new HttpError(404, `no webhook at ${path}`);
      if (req.method !== 'POST') throw new HttpError(405, `method ${req.method ?? ''} not allowed; use POST`);
      const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
      if (type !== 'application/json')
        throw new HttpError(415, `content-type must be application/json, got "${type ?? ''}"`);
      const body = await this.readBody(req);
      let decoded: unknown;
      try {
        decoded = JSON.parse(body);
      } catch (err) {
        throw new WebhookBadRequestError(
          `body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
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
      if (!handler) throw new HttpError(404, `no webhook at ${path}`);
      const request = parseAdmissionReview(decoded);
      const result = await this.decide(request.uid, () =>
        handler.handle(request, AbortSignal.timeout(this.handlerTimeoutMs())),
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
      const status =
        err instanceof HttpError ? err.status : err instanceof WebhookBadRequestError ? 400 : 500;
      const message = err instanceof Error ? err.message : String(err);
      this.logger.warn(
        { path, status, err: message, remote: req.socket.remoteAddress },
        'rejected webhook request',
      );
      if (!res.headersSent)
        res.writeHead(status, {
          'content-type': 'text/plain; charset=utf-8',
          connection: status === 413 || this.stopping ? 'close' : 'keep-alive',
        });
      res.end(`${message}\n`);
      if (status === 413) req.destroy();
    }
  }

  private handlerTimeoutMs(): number {
    return this.options.handlerTimeoutMs ?? 10_000;
  }

  private async decide(
    uid: string,
    run: () => Promise<AdmissionResult> | AdmissionResult,
  ): Promise<AdmissionResult> {
    const timeoutMs = this.handlerTimeoutMs();
    let timer: { cancel(): void } | undefined;
    try {
      const timeout = new Promise<AdmissionResult>((resolve) => {
        timer = this.clock.setTimer(
          () => resolve(errored(500, new Error(`webhook handler did not answer within ${timeoutMs} ms`))),
          timeoutMs,
        );
      });
      return await Promise.race([Promise.resolve().then(run), timeout]);
    } catch (err) {
      this.logger.error({ uid, err }, 'admission handler threw');
      return errored(500, err);
    } finally {
      timer?.cancel();
    }
  }

  private async readBody(req: http.IncomingMessage): Promise<string> {
    const limit = this.options.maxRequestBytes ?? 7 * 1024 * 1024;
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > limit)
      throw new HttpError(413, `request body of ${declared} bytes exceeds the ${limit} byte limit`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > limit) throw new HttpError(413, `request body exceeds the ${limit} byte limit`);
      chunks.push(buf);
    }
    return Buffer.concat(chunks).toString('utf8');
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
