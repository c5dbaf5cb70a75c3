// HttpExchange on undici: Agents for verified TLS (Node's roots plus the process-wide CAs, and one more per host
// with its own CA bundle: TrustedAgents) and one for insecure registries, each keeping `connectionsPerOrigin` pooled
// connections per origin. The default for long-running processes.
import { Agent, request } from 'undici';
import {
  joinHeaders,
  refusingLookup,
  TrustedAgents,
  type ExchangeOptions,
  type ExchangeRequest,
  type ExchangeResponse,
  type HttpExchange,
} from './http-exchange.js';

export class UndiciExchange implements HttpExchange {
  private readonly secure: TrustedAgents<Agent>;
  private readonly insecure: Agent;

  constructor(options: ExchangeOptions) {
    const connections = options.connectionsPerOrigin;
    const timeout = options.connectTimeoutMs;
    const lookup = refusingLookup(options.lookup, options.addressPolicy);
    this.secure = new TrustedAgents(
      options,
      (trust) => new Agent({ connections, connect: { timeout, lookup, ...trust } }),
    );
    this.insecure = new Agent({ connections, connect: { timeout, lookup, rejectUnauthorized: false } });
  }

  async send(req: ExchangeRequest): Promise<ExchangeResponse> {
    const response = await request(req.url, {
      method: 'GET',
      headers: req.headers,
      signal: req.signal,
      dispatcher: req.insecure ? this.insecure : this.secure.for(req.url.host),
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
    await Promise.all([...this.secure.all(), this.insecure].map((agent) => agent.close()));
  }
}
