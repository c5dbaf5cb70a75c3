// Connections to a registry through an egress proxy: an HTTP CONNECT tunnel (over TLS when the proxy URL is
// https://), then, for an https registry, TLS to the registry inside it, verified end to end with the registry's own
// trust (or none for an insecure registry). Plain-http registries are tunnelled too, so the proxy never sees a
// request line or header: registry credentials only ever travel inside the tunnel; the proxy gets CONNECT with
// host:port and its own Proxy-Authorization. Used as undici's `connect` function (one per trust mode and proxy),
// so undici pools the tunnelled connections like direct ones.
// Before asking for a tunnel to a host name, the name is resolved here and judged by the address policy (the
// refusing lookup): a name that resolves to a refused address is never asked for. A name this process cannot
// resolve is left to the proxy (in an egress-proxied cluster often only the proxy resolves outside names), whose
// own rules then decide. The proxy's address itself is the admin's choice and is not judged.
// Every failure of the proxy itself (down, silent, untrusted certificate, tunnel refused, credentials wanted) is a
// ProxyError naming the proxy. The proxy failing to reach the registry (404/5xx to CONNECT) and failures inside the
// tunnel (TLS, the registry closing) are the registry's: the transport's uniform "cannot reach" error.
import http from 'node:http';
import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import type { SecureContext } from 'node:tls';
import { buildConnector } from 'undici';
import { ExchangeSocketError, ProxyError } from './errors.js';
import type { HostLookup } from './http-exchange.js';
import type { ProxyEndpoint } from './proxy-config.js';
import { addressRefusedCode } from './redirect-policy.js';

/** TLS trust options as trustOptions() makes them, or `rejectUnauthorized: false` for an insecure registry. */
export type TunnelTls =
  { secureContext: SecureContext } | { ca: string[] } | { rejectUnauthorized: false } | Record<string, never>;

export interface TunnelOptions {
  readonly proxy: ProxyEndpoint;
  /** Trust for an https:// proxy's certificate (Node's roots plus the process-wide CAs). */
  readonly proxyTls: TunnelTls;
  /** Trust for the registry's certificate, inside the tunnel. */
  readonly targetTls: TunnelTls;
  /**
   * Longest wait in ms for the proxy's answer to CONNECT (from connecting to it), and for TLS to the registry. The
   * local resolution of the registry's name waits half as long at most.
   */
  readonly connectTimeoutMs: number;
  /** Resolves and judges the registry's name before the tunnel is asked for (refusingLookup). */
  readonly lookup: HostLookup;
}

type Connector = buildConnector.connector;

/**
 * Statuses a proxy answers when it could not reach the target itself (name unknown, refused, timed out: Squid 503 and
 * 504, the `proxy` package 404 and 500). They say something about the registry's host and port, not the proxy, so
 * they fail like a registry that cannot be reached: one uniform message for tenants (no port or name oracle through
 * pod annotations), the detail for the operator log.
 */
const upstreamFailure = new Set([404, 500, 502, 503, 504]);

/** The errno-style code the transport turns into its uniform "cannot reach" error (retryable). */
export const proxyUpstreamCode = 'ETESSERA_PROXY_UPSTREAM';

function reasonOf(status: number): string {
  if (status === 407)
    return (
      'it asks for credentials (407 Proxy Authentication Required); put them in the proxy URL ' +
      '(http://user:password@host:port, percent-encoded) or correct them'
    );
  if (status === 403)
    return 'it refused the tunnel (403 Forbidden); allow this host and port in the proxy, or list the registry in NO_PROXY';
  return `it answered CONNECT with HTTP ${status}; allow the tunnel in the proxy, or list the registry in NO_PROXY`;
}

/**
 * Judges `hostname` by resolving it here: rejects for a refused address, resolves otherwise (allowed, or not
 * resolvable here within `waitMs`: then the proxy resolves it).
 */
function judgeName(lookup: HostLookup, hostname: string, waitMs: number): Promise<void> {
  if (isIP(hostname) !== 0) return Promise.resolve(); // the transport judged the literal before the request
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, waitMs);
    lookup(hostname, { all: true }, (err) => {
      clearTimeout(timer);
      if ((err as { code?: unknown } | null)?.code === addressRefusedCode) reject(err as Error);
      else resolve();
    });
  });
}

/** An undici connector that reaches the registry through `options.proxy`. */
export function tunnelConnector(options: TunnelOptions): Connector {
  const { proxy } = options;
  const tls = buildConnector({ ...options.targetTls, timeout: options.connectTimeoutMs });
  const via = `through the proxy ${proxy.display} (${proxy.source})`;

  const openTunnel = (target: string): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { host: target };
      if (proxy.authorization !== undefined) headers['proxy-authorization'] = proxy.authorization;
      const common = {
        host: proxy.hostname,
        port: proxy.port,
        method: 'CONNECT',
        path: target,
        headers,
        agent: false as const,
        setHost: false,
      };
      const request =
        proxy.protocol === 'https:'
          ? https.request({
              ...common,
              ...options.proxyTls,
              servername: isIP(proxy.hostname) ? '' : proxy.hostname,
            })
          : http.request(common);
      let settled = false;
      const fail = (error: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.destroy();
        reject(error);
      };
      const timer = setTimeout(
        () =>
          fail(
            new ProxyError(
              'TESSERA_REGISTRY_PROXY_UNAVAILABLE',
              { proxy: proxy.display, target },
              `no tunnel to ${target} ${via} within ${options.connectTimeoutMs} ms: the proxy did not answer; check that it runs and that the operator can reach it`,
              { retryable: true },
            ),
          ),
        options.connectTimeoutMs,
      );
      request.once('connect', (response: http.IncomingMessage, socket: Socket, head: Buffer) => {
        const status = response.statusCode ?? 0;
        if (upstreamFailure.has(status)) {
          socket.destroy();
          fail(
            new ExchangeSocketError(
              proxyUpstreamCode,
              `the proxy ${proxy.display} (${proxy.source}) could not open a tunnel to ${target}: it answered CONNECT with HTTP ${status}`,
            ),
          );
          return;
        }
        if (status !== 200 || head.length > 0) {
          socket.destroy();
          const refused = status >= 400 && status < 500;
          fail(
            new ProxyError(
              refused ? 'TESSERA_REGISTRY_PROXY_REFUSED' : 'TESSERA_REGISTRY_PROXY_UNAVAILABLE',
              { proxy: proxy.display, target, statusCode: status },
              status === 200
                ? `no tunnel to ${target} ${via}: it sent data before the tunnel opened; the proxy does not speak HTTP CONNECT`
                : `no tunnel to ${target} ${via}: ${reasonOf(status)}`,
              { retryable: false }, // the proxy's configuration or kind must change
            ),
          );
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve(socket);
      });
      request.once('error', (err: NodeJS.ErrnoException) => {
        const code = err.code ?? 'error';
        // An https:// proxy whose certificate does not verify stays so until the trust changes: not retried.
        const untrusted = code.startsWith('ERR_TLS_') || code.includes('CERT') || code.includes('SIGNATURE');
        fail(
          new ProxyError(
            'TESSERA_REGISTRY_PROXY_UNAVAILABLE',
            { proxy: proxy.display, target },
            untrusted
              ? `no tunnel to ${target} ${via}: cannot connect to the proxy (${code}): its certificate is not trusted; add its CA to the trusted CA bundle (--trusted-ca-bundle, --registry-ca)`
              : `no tunnel to ${target} ${via}: cannot connect to the proxy (${code}); check that it runs and its address in ${proxy.source}`,
            { cause: err, retryable: !untrusted },
          ),
        );
      });
      request.end();
    });

  return (connectOptions, callback) => {
    const { hostname, protocol } = connectOptions;
    const port = connectOptions.port || (protocol === 'https:' ? '443' : '80');
    const target = isIP(hostname) === 6 ? `[${hostname}]:${port}` : `${hostname}:${port}`;
    judgeName(options.lookup, hostname, options.connectTimeoutMs / 2)
      .then(() => openTunnel(target))
      .then((socket) => {
        if (protocol !== 'https:') return callback(null, socket);
        tls({ ...connectOptions, httpSocket: socket }, (err, tlsSocket) => {
          if (err) {
            socket.destroy();
            callback(err, null);
          } else callback(null, tlsSocket);
        });
      })
      .catch((err: Error) => callback(err, null));
  };
}
