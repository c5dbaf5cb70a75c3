// Typed errors of image inspection. Every error carries a stable `code` and says whether retrying can help
// (`retryable`); callers branch on `code`, never on the message. Messages name the image or registry, what
// happened, and what the user can do. Credentials never appear in messages. A malformed option or flag is the
// runtime's InvalidArgumentError (one for every area).
import { TesseraError } from '../runtime/light.js';

export type RegistryErrorCode =
  | 'TESSERA_REGISTRY_INVALID_REFERENCE'
  | 'TESSERA_REGISTRY_INVALID_PULL_SECRET'
  | 'TESSERA_REGISTRY_UNAUTHORIZED'
  | 'TESSERA_REGISTRY_NOT_FOUND'
  | 'TESSERA_REGISTRY_UNSUPPORTED_MANIFEST'
  | 'TESSERA_REGISTRY_BAD_RESPONSE'
  | 'TESSERA_REGISTRY_DIGEST_MISMATCH'
  | 'TESSERA_REGISTRY_TOO_LARGE'
  | 'TESSERA_REGISTRY_TIMEOUT'
  | 'TESSERA_REGISTRY_TOO_MANY_REDIRECTS'
  | 'TESSERA_REGISTRY_REDIRECT_REFUSED'
  | 'TESSERA_REGISTRY_UNTRUSTED_REALM'
  | 'TESSERA_REGISTRY_UNAVAILABLE'
  | 'TESSERA_REGISTRY_BLOCKED'
  | 'TESSERA_REGISTRY_ABORTED'
  | 'TESSERA_REGISTRY_PROXY_UNAVAILABLE'
  | 'TESSERA_REGISTRY_PROXY_REFUSED';

/** Root of all image-inspection errors. */
export class RegistryError extends TesseraError<RegistryErrorCode> {
  /** True when the same request may succeed later (5xx, 429, timeouts, transport failures). */
  readonly retryable: boolean;
  constructor(code: RegistryErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(code, message, options);
    this.retryable = options?.retryable ?? false;
  }
}

/** The image reference does not follow the distribution reference grammar. */
export class InvalidReferenceError extends RegistryError {
  readonly reference: string;
  constructor(reference: string, reason: string) {
    super(
      'TESSERA_REGISTRY_INVALID_REFERENCE',
      `invalid image reference ${JSON.stringify(reference)}: ${reason}`,
    );
    this.reference = reference;
  }
}

/** A pull secret could not be parsed; `source` names it (namespace/name or file). */
export class InvalidPullSecretError extends RegistryError {
  readonly source: string;
  constructor(source: string, reason: string, options?: { cause?: unknown }) {
    super('TESSERA_REGISTRY_INVALID_PULL_SECRET', `pull secret ${source}: ${reason}`, options);
    this.source = source;
  }
}

/** Any registry failure tied to one HTTP exchange; `url` never contains credentials. */
export class RegistryResponseError extends RegistryError {
  /** HTTP status when the registry answered; undefined for transport-level failures. */
  readonly statusCode: number | undefined;
  readonly url: string;
  constructor(
    code: RegistryErrorCode,
    url: string,
    statusCode: number | undefined,
    message: string,
    options?: { cause?: unknown; retryable?: boolean },
  ) {
    super(code, message, options);
    this.url = url;
    this.statusCode = statusCode;
  }
}

/** True for errors an inspection cache must not remember (the caller gave up, not the registry). */
export function isAbort(err: unknown): boolean {
  return err instanceof RegistryError && err.code === 'TESSERA_REGISTRY_ABORTED';
}

/**
 * A socket-level failure raised inside the HTTP exchanges where Node expects an errno-style error (a DNS lookup
 * callback's, the reason a request is destroyed with). `code` is the errno-style code the transport classifies it
 * by: ETIMEDOUT, ETESSERA_ADDRESS_REFUSED (redirect-policy.ts), or ETESSERA_PROXY_UPSTREAM (the egress proxy could
 * not reach the registry, proxy-tunnel.ts); the transport turns it into a RegistryError.
 */
export class ExchangeSocketError extends TesseraError<
  'ETIMEDOUT' | 'ETESSERA_ADDRESS_REFUSED' | 'ETESSERA_PROXY_UPSTREAM'
> {}

/**
 * The egress proxy (HTTPS_PROXY / HTTP_PROXY) did not open a tunnel to a registry: PROXY_UNAVAILABLE when it could
 * not be reached or did not answer in time (retryable), its certificate is not trusted, or it does not do CONNECT;
 * PROXY_REFUSED when it refused the tunnel (403, 407 Proxy Authentication Required, other 4xx; not retryable: its
 * configuration must change). A proxy that could not reach the registry (404/5xx) is the registry's failure.
 * The message names the proxy (never its credentials) and the tunnel's target, not the registry's own failure.
 */
export class ProxyError extends RegistryError {
  /** The proxy, as `http://host:port` (no credentials). */
  readonly proxy: string;
  /** `host:port` the tunnel was asked for. */
  readonly target: string;
  /** The proxy's answer to CONNECT; undefined when it gave none. */
  readonly statusCode: number | undefined;
  constructor(
    code: 'TESSERA_REGISTRY_PROXY_UNAVAILABLE' | 'TESSERA_REGISTRY_PROXY_REFUSED',
    details: { proxy: string; target: string; statusCode?: number | undefined },
    message: string,
    options?: { cause?: unknown; retryable?: boolean },
  ) {
    super(code, message, options);
    this.proxy = details.proxy;
    this.target = details.target;
    this.statusCode = details.statusCode;
  }

  /** The same failure, its message prefixed with the request it failed (`manifest of quay.io/x:y`). */
  during(what: string): ProxyError {
    return new ProxyError(
      this.code as 'TESSERA_REGISTRY_PROXY_UNAVAILABLE' | 'TESSERA_REGISTRY_PROXY_REFUSED',
      { proxy: this.proxy, target: this.target, statusCode: this.statusCode },
      `${what}: ${this.message}`,
      { cause: this.cause, retryable: this.retryable },
    );
  }
}
