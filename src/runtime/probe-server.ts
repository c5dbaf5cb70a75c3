// Plain-HTTP endpoints for the kubelet and Prometheus: /healthz and /readyz (200 "ok" or 500 listing the failing
// checks; `?verbose` lists all), /metrics (prom-client text format; unless the metrics have their own, usually
// authenticated HTTPS listener, ./metrics-auth-server.ts), and /debug/loglevel (GET the current level;
// PUT a new one, so verbosity can be raised on a live process). Checks are synchronous and must be cheap.
//
// Why changing the level is served on loopback only: the probe port has no authentication and is usually bound to
// every interface and exposed by a Service, so anyone who can reach the pod could silence its logs (PUT silent)
// and hide what they do next. Reading probes and metrics is harmless; changing state is not. So PUT is answered
// only by a listener bound to a loopback address: the main listener itself when `host` is loopback, otherwise a
// second listener on 127.0.0.1:`debugPort`. Only processes inside the pod's network namespace reach it, i.e.
// someone allowed to `kubectl exec` or `kubectl port-forward` the pod, which the API server authorizes. The
// loopback address is decided by where the listener is bound, not by the caller's address: a proxy sidecar
// (Istio) forwards outside traffic from a loopback source address, so checking the source would let it in.
// Every listener bounds its connections on its own (the kubelet's probes never share a cap with another port's
// callers) and sheds at that cap like the webhook (./connection-shedding.ts): a probe, a short-lived request sent
// at once, takes the place of the longest idle or stuck connection, so a flood of idle or trickling connections
// cannot fail liveness. Header and request timeouts are short and enforced within about a second.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { ConnectionLimiter } from './connection-shedding.js';
import { LOG_LEVELS, isLogLevel, silentLogger, type LogLevel, type Logger } from './logging.js';
import { errorMessage } from './errors.js';
import { DEFAULT_LISTEN_HOST, DEFAULT_PROBE_PORT } from './listener-defaults.js';

export type Check = () => true | string;

export interface ProbeServerOptions {
  /** Default: '0.0.0.0'. */
  host?: string;
  /** Default: 8081; 0 picks a free port. */
  port?: number;
  /**
   * Port of the loopback-only listener (127.0.0.1) that accepts PUT /debug/loglevel when `host` is not loopback.
   * Default: 8082, or a free port when `port` is 0; false: none (the level then changes by SIGUSR2 or a restart).
   */
  debugPort?: number | false;
  registry: Registry;
  /**
   * Serve /metrics here (plain HTTP, no authentication). Default: true. False when the metrics have their own
   * listener (./metrics-auth-server.ts): then this port answers /metrics with 404 and names where they moved.
   */
  serveMetrics?: boolean | { movedTo: string };
  getLogLevel: () => LogLevel;
  setLogLevel: (level: LogLevel) => void;
  logger?: Logger;
}

/** Budgets of every probe listener: kubelet and Prometheus send small requests on few connections. */
export const PROBE_LIMITS = {
  /** Per listener; at the cap the longest idle or stuck connection is closed for the new one. */
  maxConnections: 128,
  maxHeadersCount: 64,
  /** The kubelet sends its whole probe request at once and waits at most its timeoutSeconds (default 1 s). */
  headersTimeoutMs: 2_000,
  requestTimeoutMs: 5_000,
  /** A connection with no traffic either way (e.g. one not reading its /metrics answer) is closed after this. */
  socketIdleTimeoutMs: 10_000,
  /** Node checks the two timeouts above only this often (its default is 30 s). */
  timeoutCheckIntervalMs: 1_000,
  /** The longest level name is 6 bytes; anything much longer is not a level. */
  maxLevelBodyBytes: 64,
} as const;

/** True for addresses only reachable from inside the host's (pod's) network namespace. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

interface Listener {
  server: http.Server;
  /** Bound to a loopback address: may change state. */
  loopback: boolean;
}

export class ProbeServer {
  private readonly health = new Map<string, Check>();
  private readonly ready = new Map<string, Check>();
  private readonly logger: Logger;
  private main: Listener | undefined;
  private debug: Listener | undefined;

  constructor(private readonly options: ProbeServerOptions) {
    this.logger = (options.logger ?? silentLogger).child({ component: 'probes' });
  }

  addHealthCheck(name: string, check: Check): void {
    this.health.set(name, check);
  }
  addReadyCheck(name: string, check: Check): void {
    this.ready.set(name, check);
  }

  /** The bound port (after listen()). */
  port(): number {
    return boundPort(this.main?.server);
  }

  /** Port of the loopback debug listener (0 when there is none). */
  debugPort(): number {
    return boundPort(this.debug?.server);
  }

  async listen(): Promise<void> {
    const host = this.options.host ?? DEFAULT_LISTEN_HOST;
    const port = this.options.port ?? DEFAULT_PROBE_PORT;
    const loopback = isLoopbackHost(host);
    this.main = { server: await this.bind(host, port, loopback), loopback };
    if (loopback || this.options.debugPort === false) return;
    const debugPort = this.options.debugPort ?? (port === 0 ? 0 : 8082);
    try {
      this.debug = { server: await this.bind('127.0.0.1', debugPort, true), loopback: true };
    } catch (err) {
      // A convenience, not a reason to fail the process: the level still changes with SIGUSR2 or a restart.
      this.logger.warn(
        { port: debugPort, err: errorMessage(err) },
        'cannot open the loopback debug listener; PUT /debug/loglevel is unavailable (SIGUSR2 still toggles debug)',
      );
    }
  }

  async close(): Promise<void> {
    const listeners = [this.main, this.debug].filter((l) => l !== undefined);
    this.main = undefined;
    this.debug = undefined;
    await Promise.all(
      listeners.map(
        (l) =>
          new Promise<void>((resolve) => {
            l.server.close(() => resolve());
            l.server.closeAllConnections();
          }),
      ),
    );
  }

  private async bind(host: string, port: number, loopback: boolean): Promise<http.Server> {
    const server = http.createServer(
      {
        headersTimeout: PROBE_LIMITS.headersTimeoutMs,
        requestTimeout: PROBE_LIMITS.requestTimeoutMs,
        connectionsCheckingInterval: PROBE_LIMITS.timeoutCheckIntervalMs,
      },
      (req, res) => {
        this.handle(req, res, loopback).catch(() => res.destroy());
      },
    );
    server.maxHeadersCount = PROBE_LIMITS.maxHeadersCount;
    server.timeout = PROBE_LIMITS.socketIdleTimeoutMs;
    new ConnectionLimiter({
      pools: { probes: PROBE_LIMITS.maxConnections },
      initialPool: 'probes',
      onShed: (event) =>
        this.logger.debug(
          { remote: event.remoteAddress, phase: event.phase, port },
          'probe connection closed to make room for a new one',
        ),
      onRefused: (event) =>
        this.logger.debug({ remote: event.remoteAddress, port }, 'probe connection dropped: all busy'),
    }).attach(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return server;
  }

  private async handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    loopback: boolean,
  ): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://probe');
    try {
      if (url.pathname === '/healthz' || url.pathname === '/livez')
        return this.checks(res, this.health, url.searchParams.has('verbose'));
      if (url.pathname === '/readyz') return this.checks(res, this.ready, url.searchParams.has('verbose'));
      if (url.pathname === '/metrics') {
        const moved = this.options.serveMetrics;
        if (moved !== undefined && moved !== true) {
          const where = typeof moved === 'object' ? `: they are served at ${moved.movedTo}` : ' (disabled)';
          res
            .writeHead(404, { 'content-type': 'text/plain' })
            .end(`metrics are not served on this port${where}\n`);
          return;
        }
        const body = await this.options.registry.metrics();
        res.writeHead(200, { 'content-type': this.options.registry.contentType });
        res.end(body);
        return;
      }
      if (url.pathname === '/debug/loglevel') return await this.logLevel(req, res, loopback);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${errorMessage(err)}\n`);
    }
  }

  private checks(res: http.ServerResponse, checks: Map<string, Check>, verbose: boolean): void {
    const lines: string[] = [];
    let ok = true;
    for (const [name, check] of checks) {
      let result: true | string;
      try {
        result = check();
      } catch (err) {
        result = errorMessage(err);
      }
      if (result === true) {
        if (verbose) lines.push(`[+]${name} ok`);
      } else {
        ok = false;
        lines.push(`[-]${name} failed: ${result}`);
      }
    }
    lines.push(ok ? 'ok' : 'check failed');
    res
      .writeHead(ok ? 200 : 500, { 'content-type': 'text/plain; charset=utf-8' })
      .end(`${lines.join('\n')}\n`);
  }

  private async logLevel(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    loopback: boolean,
  ): Promise<void> {
    const text = (status: number, body: string, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(`${body}\n`);
    };
    if (req.method === 'GET' || req.method === 'HEAD') return text(200, this.options.getLogLevel());
    if (req.method !== 'PUT' && req.method !== 'POST')
      return text(405, `method ${req.method ?? ''} not allowed; use GET or PUT`, { allow: 'GET, PUT' });
    if (!loopback) {
      this.logger.warn(
        { remote: req.socket.remoteAddress },
        'refused a log level change from the network; it is served on the loopback debug listener only',
      );
      const port = this.debugPort();
      return text(
        403,
        port
          ? `changing the log level is served on 127.0.0.1:${port} only: kubectl port-forward the pod to ${port} and PUT there, or send SIGUSR2 to toggle debug`
          : 'changing the log level is not served on this address: send SIGUSR2 to toggle debug, or restart with another level',
        { connection: 'close' },
      );
    }
    const body = await readSmallBody(req, PROBE_LIMITS.maxLevelBodyBytes);
    if (body === undefined)
      return text(413, `body over ${PROBE_LIMITS.maxLevelBodyBytes} bytes; send just the level name`, {
        connection: 'close',
      });
    const level = body.trim();
    if (!isLogLevel(level))
      return text(400, `unknown level "${level.slice(0, 20)}"; use ${LOG_LEVELS.join(', ')}`);
    this.options.setLogLevel(level);
    return text(200, this.options.getLogLevel());
  }
}

function boundPort(server: http.Server | undefined): number {
  const addr = server?.address();
  return addr && typeof addr === 'object' ? (addr as AddressInfo).port : 0;
}

/** The body as text, or undefined once it exceeds `limit` bytes (reading stops there; nothing more is kept). */
function readSmallBody(req: http.IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (value: string | undefined): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        done(undefined);
      } else chunks.push(chunk);
    };
    const onEnd = (): void => done(Buffer.concat(chunks).toString('utf8'));
    const onClose = (): void => done(undefined);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
  });
}
