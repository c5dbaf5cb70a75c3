// Plain-HTTP endpoints for the kubelet and Prometheus: /healthz and /readyz (200 "ok" or 500 listing the failing
// checks; `?verbose` lists all), /metrics (prom-client text format), and /debug/loglevel (GET current level, PUT a
// new one) so verbosity can be raised on a live process. Checks are synchronous and must be cheap.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { isLogLevel, type LogLevel } from './logging.js';

export type Check = () => true | string;

export interface ProbeServerOptions {
  /** Default: '0.0.0.0'. */
  host?: string;
  /** Default: 8081; 0 picks a free port. */
  port?: number;
  registry: Registry;
  getLogLevel: () => LogLevel;
  setLogLevel: (level: LogLevel) => void;
}

export class ProbeServer {
  private readonly health = new Map<string, Check>();
  private readonly ready = new Map<string, Check>();
  private server: http.Server | undefined;

  constructor(private readonly options: ProbeServerOptions) {}

  addHealthCheck(name: string, check: Check): void {
    this.health.set(name, check);
  }
  addReadyCheck(name: string, check: Check): void {
    this.ready.set(name, check);
  }

  /** The bound port (after listen()). */
  port(): number {
    const addr = this.server?.address();
    return addr && typeof addr === 'object' ? (addr as AddressInfo).port : 0;
  }

  async listen(): Promise<void> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 8081, this.options.host ?? '0.0.0.0', () => resolve());
    });
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://probe');
    try {
      if (url.pathname === '/healthz' || url.pathname === '/livez')
        return this.checks(res, this.health, url.searchParams.has('verbose'));
      if (url.pathname === '/readyz') return this.checks(res, this.ready, url.searchParams.has('verbose'));
      if (url.pathname === '/metrics') {
        const body = await this.options.registry.metrics();
        res.writeHead(200, { 'content-type': this.options.registry.contentType });
        res.end(body);
        return;
      }
      if (url.pathname === '/debug/loglevel') return await this.logLevel(req, res);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    } catch (err) {
      res
        .writeHead(500, { 'content-type': 'text/plain' })
        .end(`${err instanceof Error ? err.message : String(err)}\n`);
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
        result = err instanceof Error ? err.message : String(err);
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

  private async logLevel(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method === 'PUT' || req.method === 'POST') {
      let body = '';
      for await (const chunk of req) {
        body += String(chunk);
        if (body.length > 64) break;
      }
      const level = body.trim();
      if (!isLogLevel(level)) {
        res
          .writeHead(400, { 'content-type': 'text/plain' })
          .end(
            `unknown level "${level.slice(0, 20)}"; use fatal, error, warn, info, debug, trace or silent\n`,
          );
        return;
      }
      this.options.setLogLevel(level);
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`${this.options.getLogLevel()}\n`);
  }
}
