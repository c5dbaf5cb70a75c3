// A real forward proxy on loopback for tests: the `proxy` npm package (a Squid-like HTTP proxy, the one undici's own
// tests use) on an http.Server, with what a test needs around it: every CONNECT and every forwarded request is
// recorded (target and headers), names can be resolved by the proxy itself (`hosts`: name -> address, as a proxy
// with its own DNS would: the client never learns the address), tunnels can be refused with 403 (`refuse`), and
// Basic credentials can be required (`credentials`: the package answers 407 without them).
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createProxy } from 'proxy';

export interface ProxiedRequest {
  /** CONNECT: `host:port` as asked; forwarded: the absolute URL. */
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
}

export interface ForwardProxyOptions {
  /** Names the proxy resolves itself (`registry.proxy-test` -> `127.0.0.1`). Default: none (system DNS). */
  readonly hosts?: Readonly<Record<string, string>>;
  /** Answer CONNECT to these `host:port` targets with 403 Forbidden. Default: none. */
  readonly refuse?: (target: string) => boolean;
  /** Require these Basic credentials (Proxy-Authorization), else 407. Default: none. */
  readonly credentials?: { readonly user: string; readonly password: string };
  /** Serve the proxy itself over TLS (an `https://` proxy) with this certificate. Default: plain http. */
  readonly tls?: { readonly certPem: string; readonly keyPem: string };
}

export interface ForwardProxy {
  /** `http://127.0.0.1:PORT` (`https://` with `tls`) */
  readonly url: string;
  readonly port: number;
  /** CONNECT requests received, in order. */
  connects(): readonly ProxiedRequest[];
  /** Requests received in absolute form (plain HTTP forwarding), in order. */
  forwarded(): readonly ProxiedRequest[];
  close(): Promise<void>;
}

type ConnectListener = (req: http.IncomingMessage, socket: Socket, head: Buffer) => void;

export async function startForwardProxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const server: http.Server = options.tls
    ? https.createServer({ cert: options.tls.certPem, key: options.tls.keyPem })
    : http.createServer();
  const proxy = createProxy(server);
  const credentials = options.credentials;
  if (credentials !== undefined) {
    const expected = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;
    proxy.authenticate = (req) => req.headers['proxy-authorization'] === expected;
  }
  const connects: ProxiedRequest[] = [];
  const forwarded: ProxiedRequest[] = [];
  // Wrap the package's own listeners: record, refuse or resolve, then let the package do the proxying.
  const [onConnect] = server.listeners('connect') as ConnectListener[];
  const [onRequest] = server.listeners('request') as http.RequestListener[];
  if (onConnect === undefined || onRequest === undefined)
    throw new TypeError('the proxy package registered no connect/request listener');
  server.removeAllListeners('connect');
  server.removeAllListeners('request');
  server.on('connect', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    const target = req.url ?? '';
    connects.push({ target, headers: { ...req.headers } });
    socket.on('error', () => undefined);
    if (options.refuse?.(target) === true) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const colon = target.lastIndexOf(':');
    const resolved = options.hosts?.[target.slice(0, colon)];
    if (resolved !== undefined) req.url = `${resolved}${target.slice(colon)}`;
    onConnect.call(server, req, socket, head);
  });
  server.on('request', (req, res) => {
    forwarded.push({ target: req.url ?? '', headers: { ...req.headers } });
    onRequest.call(server, req, res);
  });
  // Tunnels leave the HTTP server's bookkeeping once open: track every socket so close() ends them too.
  const sockets = new Set<Socket>();
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    connects: () => connects,
    forwarded: () => forwarded,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
