// Lets the local kube-apiserver reach Services whose backends run on this machine rather than in pods (kwok runs no
// containers). kube-apiserver dials Service-referenced webhooks (admission, CRD conversion) and aggregated APIs
// through its "cluster" egress selector, at the Service's ClusterIP and port (its default service resolver); a
// cluster started with `serviceRouterSocket` points that selector at this HTTP CONNECT proxy on a Unix socket,
// which maps such addresses to local ones. This is what Konnectivity does for real clusters whose control plane
// cannot reach the pod network. Addresses without a route are refused (502), as a Service without endpoints would
// fail. URL-referenced webhooks do not go through it.
import net from 'node:net';

/** Longest CONNECT request head accepted (kube-apiserver sends ~100 bytes). */
const MAX_REQUEST_HEAD_BYTES = 8 * 1024;
/** How long a client may take to send its request head. */
const HEAD_TIMEOUT_MS = 10_000;
/** Unrouted targets remembered for failure messages. */
const MAX_UNROUTED_RECORDED = 100;

/** The egress selector configuration that sends kube-apiserver's cluster traffic to `socketPath`. */
export function egressSelectorConfiguration(socketPath: string): string {
  return [
    'apiVersion: apiserver.k8s.io/v1beta1',
    'kind: EgressSelectorConfiguration',
    'egressSelections:',
    '  - name: cluster',
    '    connection:',
    '      proxyProtocol: HTTPConnect',
    '      transport:',
    '        uds:',
    `          udsName: ${JSON.stringify(socketPath)}`,
    '',
  ].join('\n');
}

/** The CONNECT target `host:port` of a request head, or undefined when it is not a CONNECT request. Pure. */
export function connectTarget(head: string): string | undefined {
  const match = /^CONNECT ([^\s]+) HTTP\/1\.[01]\r\n/.exec(head);
  return match?.[1];
}

export class ServiceRouter {
  private readonly routes = new Map<string, { host: string; port: number }>();
  private readonly sockets = new Set<net.Socket>();
  /** Targets asked for without a route, for failure messages. */
  readonly unrouted: string[] = [];

  private constructor(
    private readonly server: net.Server,
    readonly socketPath: string,
  ) {}

  /** Listens on `socketPath` (keep it short: Unix socket paths are limited to ~107 bytes). */
  static async listen(socketPath: string): Promise<ServiceRouter> {
    const server = net.createServer();
    const router = new ServiceRouter(server, socketPath);
    server.on('connection', (socket) => router.handle(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
    return router;
  }

  /**
   * Sends connections for `address` (`host:port`: a Service's `<clusterIP>:<port>`, which kube-apiserver dials, or
   * `<name>.<namespace>.svc:<port>`) to `target`, replacing an earlier route.
   */
  route(address: string, target: { host: string; port: number }): void {
    this.routes.set(address, target);
  }

  /** Stops listening and cuts every open tunnel (kube-apiserver keeps its connections alive). */
  close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    return closed;
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private handle(client: net.Socket): void {
    this.track(client);
    let head = Buffer.alloc(0);
    client.on('error', () => client.destroy());
    // A client that never finishes its request head is dropped.
    client.setTimeout(HEAD_TIMEOUT_MS, () => client.destroy());
    const refuse = (status: string): void => {
      client.off('data', onData);
      client.end(`HTTP/1.1 ${status}\r\n\r\n`);
    };
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > MAX_REQUEST_HEAD_BYTES) refuse('431 Request Header Fields Too Large');
        return;
      }
      client.off('data', onData);
      // Bytes after the head wait until the tunnel is up (pipe() resumes the socket).
      client.pause();
      client.setTimeout(0);
      const rest = head.subarray(end + 4);
      const target = connectTarget(head.subarray(0, end + 2).toString('latin1'));
      const route = target === undefined ? undefined : this.routes.get(target);
      if (!route) {
        if (target !== undefined && this.unrouted.length < MAX_UNROUTED_RECORDED) this.unrouted.push(target);
        refuse(target === undefined ? '405 Method Not Allowed' : '502 Bad Gateway');
        return;
      }
      let connected = false;
      const upstream = net.connect(route.port, route.host, () => {
        connected = true;
        client.write('HTTP/1.1 200 Connection established\r\n\r\n');
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream);
        upstream.pipe(client);
      });
      this.track(upstream);
      upstream.on('error', () => {
        // Before the tunnel is up the client still expects a status line; after, only the bytes stop.
        if (connected) client.destroy();
        else client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
        upstream.destroy();
      });
      client.on('close', () => upstream.destroy());
    };
    client.on('data', onData);
  }
}
