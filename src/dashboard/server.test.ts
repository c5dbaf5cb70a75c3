// The HTTP server against a scripted data source: the Host-header check, read-only routes, paginated answers and
// the event stream's budgets, over real sockets.
import http from 'node:http';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DashboardData } from './live-data.js';
import { DashboardServer } from './server.js';
import type { ChangeNotice, ViewName } from './view-types.js';

function pageDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dashboard-page-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(path.join(dir, 'assets', 'app-1.js'), 'console.log(1)');
  return dir;
}

class ScriptedData implements DashboardData {
  readonly listeners = new Set<(n: ChangeNotice) => void>();
  revision = 0;
  view(name: ViewName, query: URLSearchParams) {
    return { available: true, name, offset: query.get('gatedOffset') };
  }
  explain(namespace: string, name: string) {
    return Promise.resolve(name === 'known' ? { namespace, name, text: 'explained' } : undefined);
  }
  subscribe(listener: (n: ChangeNotice) => void) {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
  current(): ChangeNotice {
    return { views: ['update', 'placement', 'nodepools'], revision: this.revision };
  }
  fire(notice: ChangeNotice): void {
    for (const l of this.listeners) l(notice);
  }
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(
  port: number,
  pathname: string,
  options: { host?: string; method?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: pathname,
        method: options.method ?? 'GET',
        headers: { host: options.host ?? `127.0.0.1:${port}` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Opens an event stream and collects its text; `res` is paused when `read` is false (a client that never reads). */
function openStream(
  port: number,
  read = true,
): Promise<{ res: http.IncomingMessage; text: () => string; req: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const req = http.get(
      { host: '127.0.0.1', port, path: '/api/events', headers: { host: `localhost:${port}` } },
      (res) => {
        if (read) {
          res.setEncoding('utf8');
          // Only the latest text is kept: the budget test sends megabytes.
          res.on('data', (c: string) => (text = (text + c).slice(-4096)));
        } else res.pause();
        resolve({ res, text: () => text, req });
      },
    );
    req.on('error', reject);
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setImmediate(r));
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`never saw ${what}`);
}

let server: DashboardServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(data: DashboardData, options: { maxClients?: number; maxBufferedBytes?: number } = {}) {
  server = new DashboardServer({ data, pageDir: pageDir(), port: 0, ...options });
  const url = await server.start();
  return Number(new URL(url).port);
}

describe('the dashboard server', () => {
  it('listens on 127.0.0.1 only and serves the page, its assets and the views with a strict CSP', async () => {
    const port = await start(new ScriptedData());
    expect(server?.url).toBe(`http://127.0.0.1:${port}/`);
    const page = await request(port, '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect((await request(port, '/assets/app-1.js')).headers['content-type']).toContain('javascript');
    expect((await request(port, '/assets/..%2Findex.html')).status).toBe(404);
    expect((await request(port, '/assets/../../etc/passwd')).status).toBe(404);
    const view = await request(port, '/api/views/placement?gatedOffset=100');
    expect(JSON.parse(view.body)).toEqual({ available: true, name: 'placement', offset: '100' });
    expect((await request(port, '/api/views/secrets')).status).toBe(404);
  });

  it('refuses requests whose Host is not loopback with its port (DNS rebinding)', async () => {
    const port = await start(new ScriptedData());
    for (const host of [
      'attacker.example',
      `attacker.example:${port}`,
      `localhost:${port + 1}`,
      'localhost',
    ]) {
      const answer = await request(port, '/api/views/update', { host });
      expect(answer.status).toBe(421);
      expect(answer.body).not.toContain('available');
    }
    expect((await request(port, '/', { host: `localhost:${port}` })).status).toBe(200);
    expect((await request(port, '/', { host: `[::1]:${port}` })).status).toBe(200);
  });

  it('is read-only: every other method is refused', async () => {
    const port = await start(new ScriptedData());
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const answer = await request(port, '/api/views/update', { method });
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('GET, HEAD');
    }
  });

  it('explains a known pod, 404s an unknown one and refuses names that are not Kubernetes names', async () => {
    const port = await start(new ScriptedData());
    expect(JSON.parse((await request(port, '/api/explain?namespace=ns&name=known')).body)).toMatchObject({
      text: 'explained',
    });
    expect((await request(port, '/api/explain?namespace=ns&name=gone')).status).toBe(404);
    expect((await request(port, '/api/explain?namespace=ns&name=%3Cscript%3E')).status).toBe(400);
  });

  it('streams change notices, starting from the current revision', async () => {
    const data = new ScriptedData();
    data.revision = 7;
    const port = await start(data);
    const stream = await openStream(port);
    await until(() => stream.text().includes('"revision":7'), 'the initial notice');
    data.fire({ views: ['placement'], revision: 8 });
    await until(() => stream.text().includes('{"views":["placement"],"revision":8}'), 'the change notice');
    expect(stream.res.headers['content-type']).toContain('text/event-stream');
    stream.req.destroy();
  });

  it('serves at most maxClients streams; the next one gets 503', async () => {
    const port = await start(new ScriptedData(), { maxClients: 2 });
    const a = await openStream(port);
    const b = await openStream(port);
    await until(() => server?.clientCount === 2, 'two clients');
    const third = await request(port, '/api/events');
    expect(third.status).toBe(503);
    a.req.destroy();
    await until(() => server?.clientCount === 1, 'a client leaving');
    const c = await openStream(port);
    expect(c.res.statusCode).toBe(200);
    b.req.destroy();
    c.req.destroy();
  });

  it('closes a stream whose client does not read once its unsent data passes the budget', async () => {
    const data = new ScriptedData();
    const port = await start(data, { maxBufferedBytes: 16 * 1024 });
    const slow = await openStream(port, false);
    const fast = await openStream(port);
    await until(() => server?.clientCount === 2, 'two clients');
    const views: ViewName[] = ['update', 'placement', 'nodepools'];
    // Enough notices to fill the socket buffers of the client that never reads, and then the server's budget; a
    // few KiB per turn of the event loop, which the reading client keeps up with.
    for (let i = 0; i < 2_000_000 && (server?.clientCount ?? 0) === 2; i++) {
      data.fire({ views, revision: i });
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 0));
    }
    await until(() => server?.clientCount === 1, 'the slow client dropped');
    await until(() => fast.text().includes('"revision":'), 'the fast client still served');
    slow.req.destroy();
    fast.req.destroy();
  });

  it('says the page is not built instead of serving nothing', async () => {
    server = new DashboardServer({ data: new ScriptedData(), pageDir: '/nonexistent', port: 0 });
    await expect(server.start()).rejects.toMatchObject({ code: 'TESSERA_DASHBOARD_PAGE_MISSING' });
    server = undefined;
  });
});
