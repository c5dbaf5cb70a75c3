// The one raw HTTP round trip the transport needs, so the HTTP library can be chosen per process: undici
// (default; pooled connections for the long-running controller) or node:https (the CLI's lean start-up).
// An exchange sends one GET and returns status, headers and a body stream; it follows no redirects, retries
// nothing and reads no more of the body than the caller iterates. Close it to release its connections.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { addressClass, addressRefusedCode } from './redirect-policy.js';

export interface ExchangeRequest {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  /** Accept any certificate (an insecure registry). */
  readonly insecure: boolean;
  /** Aborts the whole exchange (connect, headers, body). */
  readonly signal: AbortSignal;
  /** Idle time allowed while waiting for headers or body data, in ms. */
  readonly timeoutMs: number;
}

export interface ExchangeResponse {
  readonly status: number;
  /** Lowercase names; repeated headers joined with ', '. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: AsyncIterable<Uint8Array>;
  /** Stops reading and releases the connection. */
  discard(): void;
}

export interface HttpExchange {
  send(request: ExchangeRequest): Promise<ExchangeResponse>;
  close(): Promise<void>;
}

export interface ExchangeOptions {
  /** Extra PEM CA certificates trusted on top of Node's bundled roots. */
  readonly caCertificates: readonly string[];
  /** Connect timeout in ms. */
  readonly connectTimeoutMs: number;
  /** Connections kept per origin. */
  readonly connectionsPerOrigin: number;
  /** Resolves host names (tests inject one). Default: dns.lookup. Wrapped by refusingLookup either way. */
  readonly lookup?: HostLookup;
}

/** dns.lookup's callback form, as net/tls `connect({ lookup })` calls it. */
export type HostLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/**
 * Wraps a resolver so that a host name resolving to a link-local or unspecified address (cloud metadata,
 * `0.0.0.0`) fails before any connection: the address policy judges literals before the request, this catches
 * names (`metadata.google.internal`, DNS rebinding) at connect time, for every connection the HTTP library opens.
 */
export function refusingLookup(base: HostLookup = dnsLookup as unknown as HostLookup): HostLookup {
  return (hostname, options, callback) => {
    base(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const all = typeof address === 'string' ? [{ address, family: family ?? 0 }] : address;
      const refused = all.find((a) => {
        const kind = addressClass(a.address);
        return kind === 'link-local' || kind === 'unspecified';
      });
      if (refused !== undefined) {
        const error: NodeJS.ErrnoException = new Error(
          `${hostname} resolves to ${refused.address}, a ${addressClass(refused.address)} address; not connecting`,
        );
        error.code = addressRefusedCode;
        return callback(error, address, family);
      }
      callback(null, address, family);
    });
  };
}

/**
 * TLS options trusting Node's roots plus `extra`. Adding the extra CAs to a default context avoids re-parsing
 * the ~140 bundled roots from PEM (50-100 ms, most of a CLI run); a `ca` list is the fallback. The extra CAs
 * stay private to this context (the process's default trust is unchanged).
 */
export function trustOptions(
  extra: readonly string[],
): { secureContext: SecureContext } | { ca: string[] } | Record<string, never> {
  if (extra.length === 0) return {};
  const context = createSecureContext();
  const native = (context as unknown as { context?: { addCACert?: (pem: string) => void } }).context;
  if (typeof native?.addCACert !== 'function') return { ca: [...rootCertificates, ...extra] };
  for (const pem of extra) native.addCACert(pem);
  return { secureContext: context };
}

export function joinHeaders(
  raw: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string | undefined> {
  // No prototype: header names come from the registry.
  const out: Record<string, string | undefined> = Object.create(null) as Record<string, string | undefined>;
  for (const [k, v] of Object.entries(raw)) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
