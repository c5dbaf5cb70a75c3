// HttpExchange on undici: one Agent for verified TLS (Node's roots plus extra CAs) and one for insecure
// registries, each keeping `connectionsPerOrigin` pooled connections. The default for long-running processes.
import { Agent, request } from 'undici';
import {
  joinHeaders,
  refusingLookup,
  trustOptions,
  type ExchangeOptions,
  type ExchangeRequest,
  type ExchangeResponse,
  type HttpExchange,
} from './http-exchange.js';

export class UndiciExchange implements HttpExchange {
  private readonly secure: Agent;
  private readonly insecure: Agent;

  constructor(options: ExchangeOptions) {
    const connections = options.connectionsPerOrigin;
    const timeout = options.connectTimeoutMs;
    const lookup = refusingLookup(options.lookup);
    this.secure = new Agent({
      connections,
      connect: { timeout, lookup, ...trustOptions(options.caCertificates) },
    });
    this.insecure = new Agent({ connections, connect: { timeout, lookup, rejectUnauthorized: false } });
  }

  async send(req: ExchangeRequest): Promise<ExchangeResponse> {
    const response = await request(req.url, {
      method: 'GET',
      headers: req.headers,
      signal: req.signal,
      dispatcher: req.insecure ? this.insecure : this.secure,
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
    await Promise.all([this.secure.close(), this.insecure.close()]);
  }
}
