// The dashboard's HTTP server: loopback only, read-only. It serves the built page, each view's JSON
// (GET /api/views/<name>, paginated), one pod's explanation (GET /api/explain?namespace=&name=), and a
// server-sent-events stream of change notices (GET /api/events) that tells the page which views to fetch again,
// so the page never polls. Safety: every request must carry a loopback Host header with the server's port (DNS
// rebinding); only GET and HEAD are answered; no credentials are ever sent to the page. Budgets: at most
// `maxClients` event streams (more get 503), and a stream whose unsent data passes `maxBufferedBytes` (a client
// that does not read) is closed; views are paginated (paging.ts) so no answer is unbounded.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { silentLogger, type Logger } from '../runtime/index.js';
import { ListenError, PageMissingError } from './errors.js';
import { isAllowedHost } from './host-check.js';
import type { DashboardData } from './live-data.js';
import { type ChangeNotice, type ViewName, VIEW_NAMES } from './view-types.js';

export interface DashboardServerOptions {
  readonly data: DashboardData;
  /** Where vite wrote the page (index.html, assets/). */
  readonly pageDir: string;
  /** 0: any free port. */
  readonly port: number;
  /** Event streams served at once. Default: 32. */
  readonly maxClients?: number;
  /** Unsent bytes a stream may hold before it is closed as too slow. Default: 64 KiB. */
  readonly maxBufferedBytes?: number;
  /** Comment line sent on idle streams so proxies and browsers keep them (ms). Default: 15,000. */
  readonly heartbeatMs?: number;
  readonly logger?: Logger;
}

const CONTENT_TYPES: ReadonlyMap<string, string> = new Map([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.svg', 'image/svg+xml'],
  ['.woff2', 'font/woff2'],
  ['.woff', 'font/woff'],
  ['.png', 'image/png'],
  ['.json', 'application/json'],
]);

/** Asset file names vite writes: no directories, no dot-dot. */
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;
/** Kubernetes names and namespaces are at most 253 characters of this alphabet. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  // Scripts only from the page's own files: an injected <script> or on* attribute would not run even if markup
  // got through. PatternFly sets inline styles through the DOM, which 'unsafe-inline' for styles permits.
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

export class DashboardServer {
  private readonly server: http.Server;
  private readonly clients = new Set<http.ServerResponse>();
  private readonly maxClients: number;
  private readonly maxBufferedBytes: number;
  private readonly logger: Logger;
  private unsubscribe: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private port = 0;
  private readonly requests = new AbortController();

  constructor(private readonly options: DashboardServerOptions) {
    this.maxClients = options.maxClients ?? 32;
    this.maxBufferedBytes = options.maxBufferedBytes ?? 64 * 1024;
    this.logger = options.logger ?? silentLogger;
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.logger.warn({ err, url: req.url }, 'dashboard request failed');
        if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
        else res.destroy();
      });
    });
    // Bounded time for a request's headers and body: a client that trickles bytes does not hold a socket.
    this.server.headersTimeout = 10_000;
    this.server.requestTimeout = 30_000;
    this.server.maxHeadersCount = 64;
  }

  /** Listens on 127.0.0.1 (never another interface); resolves with the URL to open. */
  async start(): Promise<string> {
    try {
      await readFile(path.join(this.options.pageDir, 'index.html'));
    } catch {
      throw new PageMissingError(this.options.pageDir);
    }
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', (err) => reject(new ListenError(this.options.port, err)));
      this.server.listen(this.options.port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.unsubscribe = this.options.data.subscribe((notice) => this.broadcast(notice));
    this.heartbeat = setInterval(
      () => this.broadcastRaw(': keep-alive\n\n'),
      this.options.heartbeatMs ?? 15_000,
    );
    this.heartbeat.unref();
    return this.url;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  /** Event streams open now. */
  get clientCount(): number {
    return this.clients.size;
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    clearInterval(this.heartbeat);
    this.requests.abort();
    for (const res of this.clients) res.end();
    this.clients.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!isAllowedHost(req.headers.host, this.port)) {
      send(
        res,
        421,
        'text/plain; charset=utf-8',
        'this dashboard answers only to localhost, 127.0.0.1 or [::1] with its port\n',
      );
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      send(res, 405, 'text/plain; charset=utf-8', 'the dashboard is read-only\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const p = url.pathname;
    if (p === '/' || p === '/index.html') return this.file(res, 'index.html');
    if (p.startsWith('/assets/')) {
      const name = p.slice('/assets/'.length);
      if (!ASSET_NAME.test(name)) return notFound(res);
      return this.file(res, path.join('assets', name));
    }
    if (p === '/api/events') return this.stream(req, res);
    if (p.startsWith('/api/views/')) {
      const name = p.slice('/api/views/'.length);
      if (!(VIEW_NAMES as readonly string[]).includes(name)) return notFound(res);
      return json(res, 200, this.options.data.view(name as ViewName, url.searchParams));
    }
    if (p === '/api/explain') {
      const namespace = url.searchParams.get('namespace') ?? '';
      const name = url.searchParams.get('name') ?? '';
      if (!OBJECT_NAME.test(namespace) || !OBJECT_NAME.test(name))
        return json(res, 400, { error: 'namespace and name must be Kubernetes object names' });
      const explanation = await this.options.data.explain(namespace, name, this.requests.signal);
      if (!explanation)
        return json(res, 404, { error: `pod ${namespace}/${name} is not in the cluster (any more)` });
      return json(res, 200, explanation);
    }
    notFound(res);
  }

  private async file(res: http.ServerResponse, relative: string): Promise<void> {
    let body: Buffer;
    try {
      body = await readFile(path.join(this.options.pageDir, relative));
    } catch {
      return notFound(res);
    }
    const type = CONTENT_TYPES.get(path.extname(relative)) ?? 'application/octet-stream';
    // Asset names carry a content hash: cache them; the page itself is always fetched fresh.
    res.setHeader(
      'cache-control',
      relative.startsWith('assets') ? 'public, max-age=31536000, immutable' : 'no-store',
    );
    send(res, 200, type, body);
  }

  private stream(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.clients.size >= this.maxClients) {
      res.setHeader('retry-after', '5');
      send(
        res,
        503,
        'text/plain; charset=utf-8',
        `at most ${this.maxClients} dashboard pages may be open at once\n`,
      );
      return;
    }
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    this.clients.add(res);
    const drop = (): void => void this.clients.delete(res);
    req.once('close', drop);
    res.once('close', drop);
    this.write(res, `retry: 2000\n\n${event(this.options.data.current())}`);
  }

  private broadcast(notice: ChangeNotice): void {
    this.broadcastRaw(event(notice));
  }

  private broadcastRaw(chunk: string): void {
    for (const res of this.clients) this.write(res, chunk);
  }

  /** Writes to one stream, or closes it when it already holds more unsent data than its budget. */
  private write(res: http.ServerResponse, chunk: string): void {
    if (res.writableLength + Buffer.byteLength(chunk) > this.maxBufferedBytes) {
      this.logger.warn(
        { buffered: res.writableLength },
        'closing a dashboard event stream that does not keep up',
      );
      this.clients.delete(res);
      res.destroy();
      return;
    }
    res.write(chunk);
  }
}

function event(notice: ChangeNotice): string {
  return `event: change\ndata: ${JSON.stringify(notice)}\n\n`;
}

function send(res: http.ServerResponse, status: number, type: string, body: string | Buffer): void {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
  res.statusCode = status;
  res.setHeader('content-type', type);
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function json(res: http.ServerResponse, status: number, value: unknown): void {
  res.setHeader('cache-control', 'no-store');
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function notFound(res: http.ServerResponse): void {
  send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
}
