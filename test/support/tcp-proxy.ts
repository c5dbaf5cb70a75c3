// A loopback TCP proxy the tests put between a client and a server (the API server, a registry), so they can break
// every open connection (watches included) on demand, like a flaky network or a load balancer dropping streams, or
// cut the link altogether. TLS passes through.
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Destroys every open connection; new ones are accepted. Returns how many were cut. */
  breakConnections(): number;
  /** Silently stops forwarding on every open connection (no FIN, no RST), like a dead NAT entry. */
  freezeConnections(): number;
  /** Cuts the link: open connections are destroyed and new ones are closed as soon as they are accepted. */
  cut(): void;
  /** Forwards new connections again after cut(). */
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  let cutOff = false;
  const server = net.createServer((client) => {
    if (cutOff) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const pair = { client, upstream };
    pairs.add(pair);
    const cleanup = (): void => {
      pairs.delete(pair);
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', cleanup).on('close', cleanup);
    upstream.on('error', cleanup).on('close', cleanup);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    breakConnections() {
      const n = open.size;
      for (const s of [...open]) s.destroy();
      return n;
    },
    freezeConnections() {
      for (const { client, upstream } of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      return pairs.size;
    },
    cut() {
      cutOff = true;
      for (const s of [...open]) s.destroy();
    },
    restore() {
      cutOff = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of [...open]) s.destroy();
        server.close(() => resolve());
      }),
  };
}
