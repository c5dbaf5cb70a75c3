// The one raw HTTP round trip the transport needs, so the HTTP library can be chosen per process: undici
// (default; pooled connections for the long-running controller) or node:https (the CLI's lean start-up).
// An exchange sends one GET and returns status, headers and a body stream; it follows no redirects, retries
// nothing and reads no more of the body than the caller iterates. Close it to release its connections.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { defaultAddressPolicy, type AddressPolicy } from './address-policy.js';
import { ExchangeSocketError } from './errors.js';
import type { ProxyConfig } from './proxy-config.js';
import { addressRefusedCode } from './redirect-policy.js';
import { caCertificatesForHost, registryHostKey, type HostCaCertificates } from './registry-cas.js';

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
  /** Extra PEM CA certificates trusted on top of Node's bundled roots, for every host. */
  readonly caCertificates: readonly string[];
  /** PEM CA bundles trusted only for connections to their host (see registry-cas.ts). */
  readonly hostCaCertificates: HostCaCertificates;
  /** Which addresses may be dialed; judged on every resolved address. Default: defaultAddressPolicy. */
  readonly addressPolicy?: AddressPolicy;
  /** Connect timeout in ms. */
  readonly connectTimeoutMs: number;
  /** Connections kept per origin. */
  readonly connectionsPerOrigin: number;
  /** Resolves host names (tests inject one). Default: dns.lookup. Wrapped by refusingLookup either way. */
  readonly lookup?: HostLookup;
  /**
   * Egress proxy (HTTPS_PROXY / HTTP_PROXY / NO_PROXY): requests it applies to are tunnelled through it with
   * CONNECT (proxy-tunnel.ts). Default: none, every connection is direct. Only the undici exchange supports it.
   */
  readonly proxy?: ProxyConfig;
}

/** dns.lookup's callback form, as net/tls `connect({ lookup })` calls it. */
export type HostLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/**
 * Wraps a resolver so that a host name resolving to an address the policy refuses (link-local or unspecified: cloud
 * metadata, `0.0.0.0`; or an admin-denied range) fails before any connection: the transport judges literals before
 * the request, this catches names (`metadata.google.internal`, DNS rebinding) at connect time, for every connection
 * the HTTP library opens. One refused address refuses the name (the library may try any of them).
 */
export function refusingLookup(
  base: HostLookup = dnsLookup as unknown as HostLookup,
  policy: AddressPolicy = defaultAddressPolicy,
): HostLookup {
  return (hostname, options, callback) => {
    base(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const all = typeof address === 'string' ? [{ address, family: family ?? 0 }] : address;
      for (const a of all) {
        const verdict = policy.judge(a.address);
        if (verdict.allow) continue;
        // node:net wants an errno-style error here; the transport turns it into TESSERA_REGISTRY_BLOCKED by its code.
        const error = new ExchangeSocketError(
          addressRefusedCode,
          `${hostname} resolves to an address the operator does not reach: ${verdict.reason}; not connecting`,
        );
        return callback(error, address, family);
      }
      callback(null, address, family);
    });
  };
}

/**
 * The verified-TLS agents of an exchange: one shared by every host that has no CA bundle of its own (Node's roots
 * and the process-wide CAs), one per host that has one, made on first use (so at most one per listed host). An agent
 * only ever dials its own host, so a host-scoped CA never verifies another host's certificate.
 */
export class TrustedAgents<A> {
  private readonly shared: A;
  private readonly perHost = new Map<string, A>();

  constructor(
    private readonly options: Pick<ExchangeOptions, 'caCertificates' | 'hostCaCertificates'>,
    private readonly create: (trust: ReturnType<typeof trustOptions>) => A,
  ) {
    this.shared = create(trustOptions(options.caCertificates));
  }

  /** The agent for a connection to `host` (URL.host). */
  for(host: string): A {
    const key = registryHostKey(host) ?? '';
    if (!this.options.hostCaCertificates.has(key)) return this.shared;
    let agent = this.perHost.get(key);
    if (agent === undefined) {
      const cas = caCertificatesForHost(this.options.caCertificates, this.options.hostCaCertificates, key);
      agent = this.create(trustOptions(cas));
      this.perHost.set(key, agent);
    }
    return agent;
  }

  all(): A[] {
    return [this.shared, ...this.perHost.values()];
  }
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
