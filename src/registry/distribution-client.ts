// A read-only OCI distribution client: manifests (four media types; schema 1 refused) and blobs of one
// repository, verified against their digest, with one credential (or none; empty user and password = anonymous):
// anonymous, Basic or Bearer (tokens cached per scope, last challenge per registry remembered), re-sending at most
// once after a 401. Requests per registry share a concurrency limit (cancelled waiters leave the queue); registry
// text reaches errors only as a sanitised distribution error message. The caller decides which credential to try.
// Every JSON answer (manifest, token, error body) is parsed only after its shape passed its budget (registry-json.ts).
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { checkRealm, preferredChallenge, type AuthChallenge } from './auth-challenge.js';
import { KeyedConcurrencyLimit } from './concurrency-limit.js';
import { isAnonymousCredential, type RegistryCredential } from './docker-config.js';
import { RegistryError, RegistryResponseError } from './errors.js';
import { parseBudgetedJson } from '../runtime/light.js';
import { isSchema1, manifestAcceptHeader, manifestKind, type ManifestKind } from './media-types.js';
import { apiHost } from './reference.js';
import {
  defaultRegistryJsonBudgets,
  parseRegistryJson,
  registryJsonBudgets,
  type RegistryJsonBudgets,
} from './registry-json.js';
import { registryText } from './registry-text.js';
import { TokenCache } from './token-cache.js';
import { RegistryTransport, type HttpResponse, type TransportOptions } from './transport.js';

/** Where a repository lives and how to reach it. */
export interface RepositoryLocation {
  /** Registry as written in references (`docker.io`, `127.0.0.1:5000`). */
  readonly registry: string;
  readonly repository: string;
  /** Accept any TLS certificate, and plain http when the registry does not speak TLS. */
  readonly insecure: boolean;
  /**
   * Whether a redirect target `host[:port]` is an insecure registry too (plain http and unverified TLS allowed
   * there). Default: no other host is.
   */
  readonly isInsecureHost?: (host: string) => boolean;
}

export interface FetchedManifest {
  readonly mediaType: string;
  readonly kind: ManifestKind;
  /** Digest of the exact bytes received (verified). */
  readonly digest: string;
  readonly body: Buffer;
  readonly json: unknown;
}

/** Concurrent requests per registry host (DistributionClientOptions.concurrencyPerRegistry). */
export const DEFAULT_CONCURRENCY_PER_REGISTRY = 16;

export interface DistributionClientOptions extends TransportOptions {
  /** Largest manifest accepted, in bytes. Default: 4 MiB (the distribution registry's own limit). */
  readonly maxManifestBytes?: number;
  /** Largest token response accepted, in bytes. Default: 1 MiB. */
  readonly maxTokenBytes?: number;
  /** Concurrent requests per registry host. Default: 16. */
  readonly concurrencyPerRegistry?: number;
  /**
   * Token realm hosts (`host` or `host:port`) that may receive credentials besides the registry's own host and
   * parent domain. Default: none.
   */
  readonly trustedRealmHosts?: readonly string[];
  /** Clock in ms for token lifetimes. Default: Date.now. */
  readonly now?: () => number;
  /**
   * Estimated bytes of per-registry state kept (last accepted challenge, http/https choice of insecure
   * registries); least recently used hosts are forgotten first. Default: 1 MiB.
   */
  readonly maxRegistryStateBytes?: number;
  /** Estimated bytes of bearer tokens kept (least recently used dropped first). Default: 8 MiB. */
  readonly maxTokenCacheBytes?: number;
  /**
   * Shape budgets (depth, values) of the JSON documents received, per kind, checked before parsing; a document
   * over its budget fails with TESSERA_REGISTRY_TOO_LARGE. Default: `defaultRegistryJsonBudgets`.
   */
  readonly jsonBudgets?: Partial<RegistryJsonBudgets>;
}

/** Longest challenge parameter (realm, service) remembered, in characters; longer challenges are not cached. */
const maxRememberedParamLength = 2048;

/** What a challenge costs to remember, in estimated bytes (UTF-16 strings plus overhead). */
function challengeBytes(host: string, challenge: AuthChallenge): number {
  let bytes = 256 + host.length * 2;
  for (const [name, value] of Object.entries(challenge.params))
    bytes += 64 + (name.length + value.length) * 2;
  return bytes;
}

/** The part of a challenge later requests need (realm and service), or undefined when it is too large to keep. */
function rememberable(challenge: AuthChallenge): AuthChallenge | undefined {
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const name of ['realm', 'service']) {
    const value = challenge.params[name];
    if (value === undefined) continue;
    if (value.length > maxRememberedParamLength) return undefined;
    params[name] = value;
  }
  return { scheme: challenge.scheme, params };
}

const defaultMaxManifestBytes = 4 * 1024 * 1024;
/** Token lifetime when the issuer does not say (the distribution token spec's default). */
const defaultTokenLifetimeSeconds = 60;

function credentialId(credential: RegistryCredential | undefined): string {
  if (credential === undefined) return 'anonymous';
  return createHash('sha256')
    .update(`${credential.username}\0${credential.password}`)
    .digest('hex')
    .slice(0, 32);
}

function basicHeader(credential: RegistryCredential): string {
  return `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString('base64')}`;
}

/** Computes the digest of `body` with the algorithm of `expected` (sha256 or sha512). */
export function digestOf(body: Buffer, algorithm: string): string | undefined {
  if (algorithm !== 'sha256' && algorithm !== 'sha512') return undefined;
  return `${algorithm}:${createHash(algorithm).update(body).digest('hex')}`;
}

export class DistributionClient {
  private readonly transport: RegistryTransport;
  private readonly tokens: TokenCache;
  private readonly limit: KeyedConcurrencyLimit;
  /**
   * Per-registry state, under one byte budget (least recently used registries forgotten first), so neither huge
   * challenge headers nor many registries grow it: `challenge <host>` is the last accepted challenge (so later
   * requests authenticate without a 401 round trip; only one whose realm passed the realm check, since a refused
   * one must not stop later requests to the host), `scheme <registry>` the scheme that worked for an insecure
   * registry (`http:` once https failed).
   */
  private readonly registryState: LRUCache<string, AuthChallenge | 'https:' | 'http:'>;
  private readonly maxManifestBytes: number;
  private readonly maxTokenBytes: number;
  private readonly trustedRealmHosts: readonly string[];
  private readonly jsonBudgets: RegistryJsonBudgets;

  constructor(options: DistributionClientOptions = {}) {
    this.transport = new RegistryTransport(options);
    this.tokens = new TokenCache({
      ...(options.now ? { now: options.now } : {}),
      maxBytes: options.maxTokenCacheBytes ?? 8 * 1024 * 1024,
    });
    this.registryState = new LRUCache<string, AuthChallenge | 'https:' | 'http:'>({
      maxSize: options.maxRegistryStateBytes ?? 1024 * 1024,
      sizeCalculation: (value, key) =>
        typeof value === 'string' ? 64 + key.length * 2 : challengeBytes(key, value),
    });
    this.limit = new KeyedConcurrencyLimit(
      options.concurrencyPerRegistry ?? DEFAULT_CONCURRENCY_PER_REGISTRY,
    );
    this.maxManifestBytes = options.maxManifestBytes ?? defaultMaxManifestBytes;
    this.maxTokenBytes = options.maxTokenBytes ?? 1024 * 1024;
    this.trustedRealmHosts = options.trustedRealmHosts ?? [];
    this.jsonBudgets = registryJsonBudgets(options.jsonBudgets);
  }

  /**
   * Fetches the manifest `reference` (tag or digest) of `location`. When `reference` is a digest the body must
   * hash to it; otherwise a `Docker-Content-Digest` header, when sent, must match the body.
   */
  async getManifest(
    location: RepositoryLocation,
    reference: string,
    credential: RegistryCredential | undefined,
    signal?: AbortSignal,
  ): Promise<FetchedManifest> {
    const what = `manifest ${location.registry}/${location.repository}${reference.includes(':') ? '@' : ':'}${reference}`;
    const response = await this.authorizedGet(location, `manifests/${reference}`, credential, {
      accept: manifestAcceptHeader,
      maxBodyBytes: this.maxManifestBytes,
      what,
      signal,
    });
    const body = response.body;
    const byDigest = reference.includes(':');
    const expected = byDigest ? reference : response.headers['docker-content-digest'];
    const computed = expected === undefined ? undefined : digestOf(body, expected.split(':')[0] ?? '');
    if (byDigest && computed === undefined) {
      throw new RegistryError(
        'TESSERA_REGISTRY_DIGEST_MISMATCH',
        `${what}: cannot verify a ${reference.split(':')[0] ?? ''} digest (sha256 and sha512 are supported); use a sha256 reference`,
      );
    }
    if (computed !== undefined && computed !== expected) {
      throw new RegistryResponseError(
        'TESSERA_REGISTRY_DIGEST_MISMATCH',
        this.displayUrl(location, `manifests/${reference}`),
        response.status,
        `${what}: the content hashes to ${computed}, not ${expected}; the registry or something between us altered it`,
      );
    }
    // A header digest in an algorithm we cannot compute is ignored; the image digest is then our sha256.
    const digest = computed ?? digestOf(body, 'sha256') ?? '';
    const json = parseRegistryJson(
      body,
      this.jsonBudgets.manifest,
      what,
      `${what}: the manifest is not valid JSON`,
    );
    const headerType = (response.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    const bodyType =
      typeof json === 'object' && json !== null && 'mediaType' in json && typeof json.mediaType === 'string'
        ? json.mediaType
        : '';
    const schemaVersion =
      typeof json === 'object' && json !== null && 'schemaVersion' in json ? json.schemaVersion : undefined;
    if (isSchema1(headerType) || isSchema1(bodyType) || schemaVersion === 1) {
      throw new RegistryError(
        'TESSERA_REGISTRY_UNSUPPORTED_MANIFEST',
        `${what}: the image uses the deprecated Docker schema 1 format, which does not record platforms; ` +
          're-push it with a current client (for example `skopeo copy`) to convert it to schema 2 or OCI',
      );
    }
    const mediaType = manifestKind(headerType) !== undefined ? headerType : bodyType;
    const kind = manifestKind(mediaType);
    if (kind === undefined) {
      throw new RegistryError(
        'TESSERA_REGISTRY_UNSUPPORTED_MANIFEST',
        `${what}: unsupported manifest media type ${JSON.stringify(registryText(mediaType || headerType, 100))}; expected an OCI index or manifest, or a Docker v2 manifest list or manifest`,
      );
    }
    return { mediaType, kind, digest, body, json };
  }

  /** Fetches blob `digest` (at most `maxBytes`) and verifies it hashes to `digest`. */
  async getBlob(
    location: RepositoryLocation,
    digest: string,
    credential: RegistryCredential | undefined,
    maxBytes: number,
    signal?: AbortSignal,
  ): Promise<Buffer> {
    // The digest comes from a manifest the registry sent: check its grammar before it enters a URL or message.
    if (!/^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{1,256}$/.test(digest)) {
      throw new RegistryError(
        'TESSERA_REGISTRY_BAD_RESPONSE',
        `blob of ${location.registry}/${location.repository}: the manifest names an invalid digest ${JSON.stringify(registryText(digest, 100))}`,
      );
    }
    const what = `blob ${location.registry}/${location.repository}@${digest}`;
    const response = await this.authorizedGet(location, `blobs/${digest}`, credential, {
      accept: '*/*',
      maxBodyBytes: maxBytes,
      what,
      signal,
    });
    const actual = digestOf(response.body, digest.split(':')[0] ?? '');
    if (actual !== digest) {
      throw new RegistryResponseError(
        'TESSERA_REGISTRY_DIGEST_MISMATCH',
        this.displayUrl(location, `blobs/${digest}`),
        response.status,
        `${what}: the content hashes to ${actual ?? 'an unsupported algorithm'}, not ${digest}`,
      );
    }
    return response.body;
  }

  /** Estimated bytes of per-registry state kept now (remembered challenges and schemes), for tests and metrics. */
  get registryStateBytes(): number {
    return this.registryState.calculatedSize;
  }

  /** Trusts these CA certificates (process-wide, per host) from the next request on (see RegistryTransport). */
  setCaCertificates(...trust: Parameters<RegistryTransport['setCaCertificates']>): void {
    this.transport.setCaCertificates(...trust);
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  private challengeOf(host: string): AuthChallenge | undefined {
    const value = this.registryState.get(`challenge ${host}`);
    return typeof value === 'object' ? value : undefined;
  }

  private schemeOf(registry: string): 'https:' | 'http:' | undefined {
    const value = this.registryState.get(`scheme ${registry}`);
    return typeof value === 'string' ? value : undefined;
  }

  private displayUrl(location: RepositoryLocation, path: string): string {
    return `https://${apiHost(location.registry)}/v2/${location.repository}/${path}`;
  }

  private baseUrl(location: RepositoryLocation): string {
    const scheme = location.insecure ? (this.schemeOf(location.registry) ?? 'https:') : 'https:';
    return `${scheme}//${apiHost(location.registry)}`;
  }

  /** GET `/v2/<repo>/<path>` with credentials as the registry asks; 2xx or a typed error. */
  private async authorizedGet(
    location: RepositoryLocation,
    path: string,
    given: RegistryCredential | undefined,
    request: { accept: string; maxBodyBytes: number; what: string; signal: AbortSignal | undefined },
  ): Promise<HttpResponse> {
    // An entry with neither user name nor password is kept (it matched, like the kubelet) but is anonymous.
    const credential = given === undefined || isAnonymousCredential(given) ? undefined : given;
    const host = apiHost(location.registry);
    const scope = `repository:${location.repository}:pull`;
    const attempt = async (): Promise<HttpResponse> => {
      const known = this.challengeOf(host);
      let first: { header: string; fresh: boolean } | undefined;
      if (known !== undefined) {
        try {
          first = await this.authorization(known, location, scope, credential, request.signal);
        } catch (err) {
          // Whatever went wrong with the remembered challenge, the next request asks the registry afresh.
          this.registryState.delete(`challenge ${host}`);
          throw err;
        }
      }
      let response = await this.send(location, path, request, first?.header);
      if (response.status === 401) {
        const challenge = preferredChallenge(response.headers['www-authenticate']);
        if (challenge !== undefined) {
          if (challenge.scheme === 'bearer')
            this.tokens.invalidate(this.tokenKey(challenge, scope, credential));
          // Throws for a refused realm: then nothing is remembered, and the next request re-challenges.
          const retry = await this.authorization(challenge, location, scope, credential, request.signal);
          const kept = rememberable(challenge);
          if (kept !== undefined) this.registryState.set(`challenge ${host}`, kept);
          else this.registryState.delete(`challenge ${host}`);
          // One retry, when it can change the outcome: a freshly issued token (even one equal to the refused
          // token: some issuers hand out the same one), or a header different from what was refused.
          if (retry !== undefined && (retry.fresh || retry.header !== first?.header))
            response = await this.send(location, path, request, retry.header);
        }
      }
      if (response.status >= 200 && response.status < 300) return response;
      throw this.statusError(location, path, response, request.what, credential);
    };
    try {
      return await this.limit.run(host, attempt, request.signal);
    } catch (err) {
      if (err instanceof RegistryError || request.signal?.aborted !== true) throw err;
      // Cancelled while waiting for a slot.
      throw new RegistryResponseError(
        'TESSERA_REGISTRY_ABORTED',
        this.displayUrl(location, path),
        undefined,
        `${request.what}: cancelled`,
        { cause: err },
      );
    }
  }

  private async send(
    location: RepositoryLocation,
    path: string,
    request: { accept: string; maxBodyBytes: number; what: string; signal: AbortSignal | undefined },
    authorization: string | undefined,
  ): Promise<HttpResponse> {
    const headers: Record<string, string> = {
      accept: request.accept,
      'user-agent': 'tessera-image-inspector',
    };
    if (authorization !== undefined) headers.authorization = authorization;
    const get = (base: string): Promise<HttpResponse> =>
      this.transport.get(new URL(`${base}/v2/${location.repository}/${path}`), {
        headers,
        maxBodyBytes: request.maxBodyBytes,
        insecure: location.insecure,
        ...(location.isInsecureHost ? { isInsecureHost: location.isInsecureHost } : {}),
        signal: request.signal,
        what: request.what,
      });
    if (!location.insecure || this.schemeOf(location.registry) !== undefined)
      return get(this.baseUrl(location));
    try {
      const response = await get(`https://${apiHost(location.registry)}`);
      this.registryState.set(`scheme ${location.registry}`, 'https:');
      return response;
    } catch (err) {
      // An insecure registry may speak plain http only; TLS then fails before any HTTP status.
      if (
        !(err instanceof RegistryResponseError) ||
        err.code !== 'TESSERA_REGISTRY_UNAVAILABLE' ||
        err.statusCode !== undefined
      )
        throw err;
      const response = await get(`http://${apiHost(location.registry)}`);
      this.registryState.set(`scheme ${location.registry}`, 'http:');
      return response;
    }
  }

  private tokenKey(
    challenge: AuthChallenge,
    scope: string,
    credential: RegistryCredential | undefined,
  ): string {
    return `${challenge.params.realm ?? ''}\0${challenge.params.service ?? ''}\0${scope}\0${credentialId(credential)}`;
  }

  /**
   * The Authorization header for `challenge`, fetching a token if needed; undefined when we have nothing to offer.
   * `fresh` is true when a token request was made for it (by this call or a concurrent one it joined).
   */
  private async authorization(
    challenge: AuthChallenge,
    location: RepositoryLocation,
    scope: string,
    credential: RegistryCredential | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ header: string; fresh: boolean } | undefined> {
    if (challenge.scheme === 'basic')
      return credential === undefined ? undefined : { header: basicHeader(credential), fresh: false };
    if (challenge.scheme !== 'bearer') return undefined;
    const key = this.tokenKey(challenge, scope, credential);
    const host = apiHost(location.registry);
    const realm = checkRealm(challenge.params.realm ?? '', host, {
      registryIsHttps: !location.insecure || this.baseUrl(location).startsWith('https:'),
      trustedRealmHosts: this.trustedRealmHosts,
      sendsCredentials: credential !== undefined,
    });
    const { token, fresh } = await this.tokens.obtain(key, () =>
      this.fetchToken(realm, challenge, scope, credential, location, signal),
    );
    return { header: `Bearer ${token}`, fresh };
  }

  private async fetchToken(
    realm: URL,
    challenge: AuthChallenge,
    scope: string,
    credential: RegistryCredential | undefined,
    location: RepositoryLocation,
    signal: AbortSignal | undefined,
  ): Promise<{ token: string; expiresInSeconds: number }> {
    const url = new URL(realm);
    if (challenge.params.service !== undefined) url.searchParams.set('service', challenge.params.service);
    url.searchParams.set('scope', scope);
    const what = `token for ${location.registry}/${location.repository} from ${realm.host}`;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': 'tessera-image-inspector',
    };
    if (credential !== undefined) headers.authorization = basicHeader(credential);
    const response = await this.transport.get(url, {
      headers,
      // The realm was named by the registry: its address is judged as a redirect from the registry would be.
      origin: new URL(this.baseUrl(location)),
      maxBodyBytes: this.maxTokenBytes,
      insecure: location.insecure,
      ...(location.isInsecureHost ? { isInsecureHost: location.isInsecureHost } : {}),
      signal,
      what,
    });
    if (response.status === 401 || response.status === 403) {
      throw new RegistryResponseError(
        'TESSERA_REGISTRY_UNAUTHORIZED',
        `${realm.origin}${realm.pathname}`,
        response.status,
        // Never the user name: pod annotations and events are readable by every tenant of the namespace.
        `${what}: the token service refused ${credential === undefined ? 'anonymous access' : 'the pull-secret credentials'} (HTTP ${response.status}); check the pull secret`,
      );
    }
    if (response.status < 200 || response.status >= 300) {
      throw new RegistryResponseError(
        'TESSERA_REGISTRY_BAD_RESPONSE',
        `${realm.origin}${realm.pathname}`,
        response.status,
        `${what}: HTTP ${response.status}`,
      );
    }
    const doc = parseRegistryJson(
      response.body,
      this.jsonBudgets.token,
      `${what}: the answer`,
      `${what}: the answer is not JSON`,
    );
    const record = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>) : {};
    const token =
      typeof record.token === 'string'
        ? record.token
        : typeof record.access_token === 'string'
          ? record.access_token
          : undefined;
    if (token === undefined || token === '')
      throw new RegistryError('TESSERA_REGISTRY_BAD_RESPONSE', `${what}: the answer has no token`);
    const expiresIn =
      typeof record.expires_in === 'number' && record.expires_in > 0
        ? record.expires_in
        : defaultTokenLifetimeSeconds;
    return { token, expiresInSeconds: expiresIn };
  }

  private statusError(
    location: RepositoryLocation,
    path: string,
    response: HttpResponse,
    what: string,
    credential: RegistryCredential | undefined,
  ): RegistryError {
    const url = this.displayUrl(location, path);
    const detail = registryErrorDetail(response.body, this.jsonBudgets.errorBody);
    switch (response.status) {
      case 401:
      case 403:
        return new RegistryResponseError(
          'TESSERA_REGISTRY_UNAUTHORIZED',
          url,
          response.status,
          credential === undefined
            ? `${what}: the registry requires credentials (HTTP ${response.status}${detail}); add a pull secret for ${location.registry}`
            : `${what}: the registry refused the pull-secret credentials (HTTP ${response.status}${detail}); check the pull secret`,
        );
      case 404:
        return new RegistryResponseError(
          'TESSERA_REGISTRY_NOT_FOUND',
          url,
          404,
          `${what}: not found (HTTP 404${detail}); check the repository name and tag`,
        );
      default:
        return new RegistryResponseError(
          'TESSERA_REGISTRY_BAD_RESPONSE',
          url,
          response.status,
          `${what}: unexpected HTTP ${response.status}${detail}`,
        );
    }
  }
}

/**
 * `: CODE message` from the first entry of a distribution error body (`{"errors": [...]}`), or ''. Only those
 * two fields are shown, sanitised and capped: any other body text never reaches a message. A body over `budget`
 * is not parsed (no detail).
 */
export function registryErrorDetail(body: Buffer, budget = defaultRegistryJsonBudgets.errorBody): string {
  let doc: unknown;
  try {
    doc = parseBudgetedJson(body, budget, 'a registry error body');
  } catch {
    return ''; // not JSON, or over budget: no detail
  }
  if (typeof doc !== 'object' || doc === null || !('errors' in doc) || !Array.isArray(doc.errors)) return '';
  const first: unknown = doc.errors[0];
  if (typeof first !== 'object' || first === null) return '';
  const rawCode = 'code' in first && typeof first.code === 'string' ? first.code : '';
  // Distribution codes are upper-case identifiers (MANIFEST_UNKNOWN); anything else is dropped.
  const code = /^[A-Z][A-Z0-9_]{0,63}$/.test(rawCode) ? rawCode : '';
  const message = 'message' in first && typeof first.message === 'string' ? registryText(first.message) : '';
  return code || message ? `: ${[code, message].filter(Boolean).join(' ')}` : '';
}
