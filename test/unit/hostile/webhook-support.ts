// Shared by the webhook hostile-input tests: a WebhookServer on loopback with a recording handler, a client that
// speaks raw TLS (so tests control framing, chunking and timing), heap measurement after a forced GC, and an
// event-loop delay monitor.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import tls from 'node:tls';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import https from 'node:https';
import { WebhookServer, type WebhookServerOptions } from '../../../src/runtime/webhook/server.js';
import type { AdmissionHandler } from '../../../src/runtime/webhook/admission.js';

export interface RunningWebhook {
  server: WebhookServer;
  port: number;
  ca: string;
  stop(): Promise<void>;
}

/** Starts a WebhookServer on 127.0.0.1 (dev certificate) serving `handlers` by path. */
export async function startWebhook(
  options: Partial<WebhookServerOptions> = {},
  handlers: Record<string, AdmissionHandler> = { '/mutate': { handle: () => ({ allowed: true }) } },
): Promise<RunningWebhook> {
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    devCertificate: { ipAddresses: ['127.0.0.1'] },
    ...options,
  });
  for (const [path, handler] of Object.entries(handlers)) server.register(path, handler);
  const abort = new AbortController();
  const running = server.start(abort.signal);
  await server.ready();
  return {
    server,
    port: server.port(),
    ca: server.caBundle() ?? '',
    stop: async () => {
      abort.abort();
      await running;
    },
  };
}

export const review = (uid: string, object: unknown = { metadata: { name: 'p' } }): string =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      operation: 'CREATE',
      namespace: 'apps',
      userInfo: {},
      object,
    },
  });

export interface Answer {
  status: number;
  text: string;
}

/** POSTs `body` (Content-Length framing) the way the API server does; resolves with status and text. */
export function post(hook: RunningWebhook, body: string | Buffer, path = '/mutate'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: hook.port,
        path,
        method: 'POST',
        ca: hook.ca,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The admission response of a 200 answer. */
export function admission(answer: Answer): {
  uid: string;
  allowed: boolean;
  status?: { code?: number; message?: string };
  patch?: string;
} {
  if (answer.status !== 200) throw new Error(`expected 200, got ${answer.status}: ${answer.text}`);
  return (JSON.parse(answer.text) as { response: ReturnType<typeof admission> }).response;
}

/** A TLS connection that trusts the webhook's CA; data is consumed so the server's close is observed. */
export function connectTls(hook: RunningWebhook): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: hook.port, ca: hook.ca }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends on `socket` until it closes, and whether the close came from the server. */
export function collect(socket: tls.TLSSocket): Promise<{ text: string; error?: string }> {
  return new Promise((resolve) => {
    let text = '';
    let error: string | undefined;
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', (err) => (error = err.message));
    socket.on('close', () => resolve({ text, error }));
  });
}

let gcFn: (() => void) | undefined;
/** Forces a full GC (enabling it at run time when node was not started with --expose-gc). */
export function gc(): void {
  if (!gcFn) {
    v8.setFlagsFromString('--expose-gc');
    gcFn = runInNewContext('gc') as () => void;
  }
  gcFn();
}

/** heapUsed after a full GC. */
export function heapAfterGc(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

/** Starts an event-loop delay histogram; stop() returns the worst delay seen in ms. */
export function watchEventLoop(): { stop(): number } {
  const h: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return {
    stop: () => {
      h.disable();
      return h.max / 1e6;
    },
  };
}

export const MiB = 1024 * 1024;

/** How a held connection misbehaves: silent after its handshake, or sending its request head or body slowly. */
export type Holding = 'idle' | 'trickle-head' | 'trickle-body';

export interface HeldConnections {
  /** The held connections the server has not closed (yet). */
  open(): number;
  release(): void;
}

/**
 * Opens `count` TLS connections to the webhook, in waves of 50 (so the listen backlog never decides who gets in),
 * each behaving as `holding` says; trickling ones send one byte a second. Resolves once every one has completed its
 * handshake or been closed by the server. Closed connections are not reopened.
 */
export async function holdConnections(
  hook: RunningWebhook,
  count: number,
  holding: Holding | ((i: number) => Holding),
): Promise<HeldConnections> {
  const sockets = new Set<tls.TLSSocket>();
  const trickling: { socket: tls.TLSSocket; rest: string }[] = [];
  const behaviour = typeof holding === 'function' ? holding : () => holding;
  for (let wave = 0; wave < count; wave += 50) {
    const opened = Array.from({ length: Math.min(50, count - wave) }, (_, j) => {
      const how = behaviour(wave + j);
      return new Promise<void>((resolve) => {
        const socket = tls.connect({ host: '127.0.0.1', port: hook.port, ca: hook.ca }, () => {
          sockets.add(socket);
          const head = `POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
          if (how === 'trickle-head') trickling.push({ socket, rest: head });
          if (how === 'trickle-body') {
            socket.write(`${head}{"a":"`);
            trickling.push({ socket, rest: 'x'.repeat(990) });
          }
          resolve();
        });
        socket.on('error', () => undefined);
        socket.resume();
        socket.once('close', () => {
          sockets.delete(socket);
          resolve();
        });
      });
    });
    await Promise.all(opened);
  }
  const trickle = setInterval(() => {
    for (const t of trickling) {
      if (!t.socket.writable || t.rest.length === 0) continue;
      t.socket.write(t.rest[0] ?? '');
      t.rest = t.rest.slice(1);
    }
  }, 1_000);
  return {
    open: () => sockets.size,
    release: () => {
      clearInterval(trickle);
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** Client TLS identity and connection reuse for postAs. */
export interface Caller {
  cert?: string;
  key?: string;
  /** A keep-alive agent to reuse connections (its own cert/key then apply). Default: a new connection. */
  agent?: https.Agent;
}

/** POSTs `body` as `caller`; a connection the server closes or refuses is status 0. */
export function postAs(
  hook: RunningWebhook,
  body: string | Buffer,
  caller: Caller = {},
  path = '/mutate',
): Promise<Answer & { reusedSocket: boolean }> {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: hook.port,
        path,
        method: 'POST',
        ca: hook.ca,
        cert: caller.cert,
        key: caller.key,
        agent: caller.agent ?? false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, reusedSocket: req.reusedSocket }));
        res.on('error', (err) => resolve({ status: 0, text: err.message, reusedSocket: req.reusedSocket }));
      },
    );
    req.on('error', (err) => resolve({ status: 0, text: err.message, reusedSocket: req.reusedSocket }));
    req.end(body);
  });
}

/** Resolves once `condition` holds, checking every 10 ms (state, not time, decides). */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}
