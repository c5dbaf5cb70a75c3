// /metrics on its own listener, as controller-runtime's metrics server serves it: over HTTPS behind the
// authentication and authorization filter (./metrics-auth-filter.ts) by default, or over plain HTTP without it
// when `secure` is false (development). The probes stay on the plain probe port (./probe-server.ts) for the
// kubelet, which cannot present a token.
//
// The certificate: tls.crt/tls.key from `certDir` (OpenShift's service CA, OLM or cert-manager mount them), re-read
// when they change (service CA rotation); without a directory, a self-signed certificate generated at start, as
// controller-runtime does (a scraper must then skip verification, so give a directory in production).
//
// Budgets: the probe listener's (connections, headers, timeouts; PROBE_LIMITS), plus the filter's (token size,
// reviews in flight, cache bytes). A request without a bearer token gets 401 before any API call.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Registry } from 'prom-client';
import { realClock, type Clock } from './clock.js';
import { ConnectionLimiter } from './connection-shedding.js';
import { silentLogger, type Logger } from './logging.js';
import type { MetricsAuthFilter } from './metrics-auth-filter.js';
import { METRICS_PATH } from './metrics-auth.js';
import { PROBE_LIMITS } from './probe-server.js';
import { FileCertificateWatcher, validateKeyPair, type KeyPair } from './webhook/certificate-source.js';

export interface MetricsServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  registry: Registry;
  /** HTTPS with authentication and authorization (`filter` required); false: plain HTTP, no checks. */
  secure: boolean;
  filter?: MetricsAuthFilter;
  /** Directory holding tls.crt and tls.key; unset: a self-signed certificate generated at start. */
  certDir?: string;
  /** How often the certificate files are re-read (ms). Default: 10,000. */
  certPollIntervalMs?: number;
  clock?: Clock;
  logger?: Logger;
}

const TLS_MIN_VERSION = 'TLSv1.2';

export class MetricsServer {
  private server: http.Server | https.Server | undefined;
  private certWatcher: FileCertificateWatcher | undefined;
  private readonly logger: Logger;

  constructor(private readonly options: MetricsServerOptions) {
    this.logger = (options.logger ?? silentLogger).child({ component: 'metrics' });
  }

  port(): number {
    const addr = this.server?.address();
    return addr && typeof addr === 'object' ? (addr as AddressInfo).port : 0;
  }

  async listen(): Promise<void> {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      this.handle(req, res).catch(() => res.destroy());
    };
    const timeouts = {
      headersTimeout: PROBE_LIMITS.headersTimeoutMs,
      requestTimeout: PROBE_LIMITS.requestTimeoutMs,
      connectionsCheckingInterval: PROBE_LIMITS.timeoutCheckIntervalMs,
    };
    let server: http.Server | https.Server;
    let initialCert: string | undefined;
    if (this.options.secure) {
      const pair = await this.initialKeyPair();
      initialCert = pair.certPem;
      server = https.createServer(
        {
          ...timeouts,
          cert: pair.certPem,
          key: pair.keyPem,
          minVersion: TLS_MIN_VERSION,
          handshakeTimeout: PROBE_LIMITS.headersTimeoutMs,
        },
        handler,
      );
    } else server = http.createServer(timeouts, handler);
    server.maxHeadersCount = PROBE_LIMITS.maxHeadersCount;
    server.timeout = PROBE_LIMITS.socketIdleTimeoutMs;
    new ConnectionLimiter({
      pools: { metrics: PROBE_LIMITS.maxConnections },
      initialPool: 'metrics',
      onShed: (event) =>
        this.logger.debug({ remote: event.remoteAddress, phase: event.phase }, 'metrics connection shed'),
      onRefused: (event) => this.logger.debug({ remote: event.remoteAddress }, 'metrics connection refused'),
    }).attach(server);
    this.server = server;
    // Files that appeared while the server was being created were announced before it existed.
    const latest = this.certWatcher?.latest();
    if (server instanceof https.Server && latest && latest.certPem !== initialCert)
      server.setSecureContext({ cert: latest.certPem, key: latest.keyPem, minVersion: TLS_MIN_VERSION });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    this.certWatcher?.stop();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async initialKeyPair(): Promise<KeyPair> {
    const dir = this.options.certDir;
    if (dir === undefined || dir === '') {
      this.logger.warn(
        {},
        'serving metrics with a self-signed certificate (no --metrics-cert-dir): scrapers cannot verify it; mount a serving certificate in production',
      );
      return selfSignedKeyPair();
    }
    this.certWatcher = new FileCertificateWatcher(
      {
        certFile: path.join(dir, 'tls.crt'),
        keyFile: path.join(dir, 'tls.key'),
        pollIntervalMs: this.options.certPollIntervalMs,
        clock: this.options.clock ?? realClock,
        logger: this.logger,
      },
      (pair) =>
        (this.server as https.Server | undefined)?.setSecureContext({
          cert: pair.certPem,
          key: pair.keyPem,
          minVersion: TLS_MIN_VERSION,
        }),
    );
    // The certificate's Secret is an optional volume (the OLM bundle runs on clusters without OpenShift's service
    // CA): until its files appear, serve metrics with a self-signed certificate rather than not at all.
    const mounted = await this.certWatcher.startOrWait();
    if (mounted) return mounted;
    this.logger.warn(
      { certDir: dir },
      'no tls.crt/tls.key in --metrics-cert-dir yet: serving metrics with a self-signed certificate until they appear (on OpenShift the service CA creates the Secret; elsewhere create the Secret the metrics Service names, or let cert-manager issue it)',
    );
    return selfSignedKeyPair();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const text = (status: number, body: string, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(`${body}\n`);
    };
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname !== METRICS_PATH) return text(404, `not found; metrics are served at ${METRICS_PATH}`);
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return text(405, `method ${req.method ?? ''} not allowed; use GET`, { allow: 'GET' });
    if (this.options.secure) {
      const filter = this.options.filter;
      const decision = filter
        ? await filter.decide(req.method, req.headers.authorization, req.socket.remoteAddress)
        : ({ allowed: false, status: 503, reason: 'no authorization filter configured' } as const);
      if (!decision.allowed) {
        this.logger.debug(
          { remote: req.socket.remoteAddress, status: decision.status, reason: decision.reason },
          'metrics request refused',
        );
        const headers: Record<string, string> =
          decision.status === 401
            ? { 'www-authenticate': 'Bearer realm="metrics"' }
            : decision.status === 429 || decision.status === 503
              ? { 'retry-after': '1' }
              : {};
        return text(decision.status, decision.reason, headers);
      }
    }
    const body = await this.options.registry.metrics();
    res.writeHead(200, { 'content-type': this.options.registry.contentType });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}

async function selfSignedKeyPair(): Promise<KeyPair> {
  // Loaded only here: certificate generation pulls in @peculiar/x509.
  const { generateDevCertificate } = await import('./webhook/dev-certificate.js');
  const generated = await generateDevCertificate({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  validateKeyPair(generated);
  return generated;
}
