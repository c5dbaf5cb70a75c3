// HttpExchange on undici: Agents for verified TLS (Node's roots plus the process-wide CAs, and one more per host
// with its own CA bundle: TrustedAgents) and one for insecure registries, each keeping `connectionsPerOrigin` pooled
// connections per origin. The default for long-running processes.
// With an egress proxy (ExchangeOptions.proxy), each request picks its route by URL (proxyFor: scheme, NO_PROXY):
// direct, or the same set of agents whose connections are CONNECT tunnels through that proxy (proxy-tunnel.ts), so
// per-host CAs and insecure registries work the same through the proxy (TLS to the registry is end to end).
import { Agent, request } from 'undici';
import {
  joinHeaders,
  refusingLookup,
  trustOptions,
  TrustedAgents,
  type ExchangeOptions,
  type ExchangeRequest,
  type ExchangeResponse,
  type HttpExchange,
} from './http-exchange.js';
import { proxyFor, type ProxyEndpoint } from './proxy-config.js';
import { tunnelConnector } from './proxy-tunnel.js';

/** The agents of one route (direct, or through one proxy). */
interface Route {
  readonly secure: TrustedAgents<Agent>;
  readonly insecure: Agent;
}

export class UndiciExchange implements HttpExchange {
  private readonly direct: Route;
  /** Routes through a proxy, made on first use: at most one per proxy of the configuration (http and https). */
  private readonly tunnels = new Map<ProxyEndpoint, Route>();

  constructor(private readonly options: ExchangeOptions) {
    const connections = options.connectionsPerOrigin;
    const timeout = options.connectTimeoutMs;
    const lookup = refusingLookup(options.lookup, options.addressPolicy);
    this.direct = {
      secure: new TrustedAgents(
        options,
        (trust) => new Agent({ connections, connect: { timeout, lookup, ...trust } }),
      ),
      insecure: new Agent({ connections, connect: { timeout, lookup, rejectUnauthorized: false } }),
    };
  }

  private routeThrough(proxy: ProxyEndpoint): Route {
    let route = this.tunnels.get(proxy);
    if (route !== undefined) return route;
    const { connectionsPerOrigin: connections, connectTimeoutMs } = this.options;
    const tunnel = {
      proxy,
      // An https:// proxy is verified like any host without a CA bundle of its own.
      proxyTls: trustOptions(this.options.caCertificates),
      connectTimeoutMs,
      lookup: refusingLookup(this.options.lookup, this.options.addressPolicy),
    };
    route = {
      secure: new TrustedAgents(
        this.options,
        (trust) => new Agent({ connections, connect: tunnelConnector({ ...tunnel, targetTls: trust }) }),
      ),
      insecure: new Agent({
        connections,
        connect: tunnelConnector({ ...tunnel, targetTls: { rejectUnauthorized: false } }),
      }),
    };
    this.tunnels.set(proxy, route);
    return route;
  }

  async send(req: ExchangeRequest): Promise<ExchangeResponse> {
    const proxy = this.options.proxy === undefined ? undefined : proxyFor(this.options.proxy, req.url);
    const route = proxy === undefined ? this.direct : this.routeThrough(proxy);
    const response = await request(req.url, {
      method: 'GET',
      headers: req.headers,
      signal: req.signal,
      dispatcher: req.insecure ? route.insecure : route.secure.for(req.url.host),
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    });
    return {
      status: response.statusCode,
      headers: joinHeaders(response.headers),
      body: response.body,
      discard: () => response.body.destroy(),
    };
  }

  async close(): Promise<void> {
    const routes = [this.direct, ...this.tunnels.values()];
    await Promise.all(routes.flatMap((r) => [...r.secure.all(), r.insecure]).map((agent) => agent.close()));
  }
}
