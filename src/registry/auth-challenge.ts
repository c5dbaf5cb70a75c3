// Reads `WWW-Authenticate` challenges (RFC 7235: scheme, then token or quoted-string parameters) and decides
// whether a Bearer token realm may receive the user's credentials: the registry's own origin, a host of the same
// registrable domain per the Public Suffix List (`auth.docker.io` for `registry-1.docker.io`; never across a
// public suffix such as `azurecr.io` tenants), or an explicitly trusted host. An IP address or a name without a
// listed suffix counts only as its own origin: another port on the same address is another service.
// Pure; the caller enforces the decision.
import { createRequire } from 'node:module';
import type * as Tldts from 'tldts';
import { RegistryError } from './errors.js';
import { registryText } from './registry-text.js';

// tldts carries the Public Suffix List (~200 KB of code): required on the first realm check, not by every command
// that loads the registry client (`tessera image inspect` of an anonymous registry never needs it).
let tldts: typeof Tldts | undefined;
function parseDomain(...args: Parameters<typeof Tldts.parse>): ReturnType<typeof Tldts.parse> {
  tldts ??= createRequire(import.meta.url)('tldts') as typeof Tldts;
  return tldts.parse(...args);
}

export interface AuthChallenge {
  /** Lowercase scheme: `basic` or `bearer` (others are returned but unusable). */
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/** Parses every challenge in a header value; unparseable trailing text is ignored. */
export function parseAuthChallenges(header: string): AuthChallenge[] {
  const challenges: AuthChallenge[] = [];
  let i = 0;
  const n = header.length;
  const skipSpace = (): void => {
    while (i < n && /[\s,]/.test(header[i] ?? '')) i++;
  };
  const readToken = (): string => {
    const start = i;
    while (i < n && /[!#$%&'*+\-.^_`|~0-9A-Za-z]/.test(header[i] ?? '')) i++;
    return header.slice(start, i);
  };
  while (i < n) {
    skipSpace();
    const scheme = readToken();
    if (scheme === '') break;
    // No prototype: parameter names come from the registry (`__proto__` must stay a plain entry).
    const params: Record<string, string> = Object.create(null) as Record<string, string>;
    for (;;) {
      while (i < n && /\s/.test(header[i] ?? '')) i++;
      const save = i;
      const name = readToken();
      while (i < n && /\s/.test(header[i] ?? '')) i++;
      if (name === '' || header[i] !== '=') {
        i = save; // the next scheme (or the end)
        break;
      }
      i++;
      while (i < n && /\s/.test(header[i] ?? '')) i++;
      let value = '';
      if (header[i] === '"') {
        i++;
        while (i < n && header[i] !== '"') {
          if (header[i] === '\\' && i + 1 < n) i++;
          value += header[i];
          i++;
        }
        i++;
      } else {
        value = readToken();
      }
      params[name.toLowerCase()] = value;
      while (i < n && /\s/.test(header[i] ?? '')) i++;
      if (header[i] === ',') i++;
      else break;
    }
    challenges.push({ scheme: scheme.toLowerCase(), params });
  }
  return challenges;
}

/** The first Bearer challenge, else the first Basic one; undefined when the header offers neither. */
export function preferredChallenge(header: string | undefined): AuthChallenge | undefined {
  if (header === undefined) return undefined;
  const all = parseAuthChallenges(header);
  return all.find((c) => c.scheme === 'bearer') ?? all.find((c) => c.scheme === 'basic');
}

function hostOf(hostPort: string): string {
  if (hostPort.startsWith('[')) return hostPort.slice(0, hostPort.indexOf(']') + 1);
  const colon = hostPort.lastIndexOf(':');
  return colon < 0 ? hostPort : hostPort.slice(0, colon);
}

function portOf(hostPort: string): string {
  const host = hostOf(hostPort);
  return hostPort.length > host.length ? hostPort.slice(host.length + 1) : '';
}

/**
 * Multi-tenant registry domains the Public Suffix List does not split per tenant: every tenant gets a subdomain,
 * so sharing the domain says nothing about trust. (Suffixes the list does know, such as `s3.amazonaws.com`, are
 * handled by the list itself.)
 */
export const sharedRegistryDomains: readonly string[] = [
  'amazonaws.com',
  'amazonaws.com.cn',
  'azurecr.io',
  'azurecr.cn',
  'azurecr.us',
];

/**
 * The registrable domain of `host` (`docker.io` for `auth.docker.io`) per the Public Suffix List, ICANN and
 * private sections; undefined for IP addresses, names under a suffix the list does not know (`.local`, `.svc`,
 * `.internal`), and names under a shared multi-tenant registry domain: those are trusted only as their own origin.
 */
export function registrableDomain(host: string): string | undefined {
  const parsed = parseDomain(host, { allowPrivateDomains: true });
  if (parsed.isIp === true || parsed.domain === null) return undefined;
  if (parsed.isIcann !== true && parsed.isPrivate !== true) return undefined;
  const domain = parsed.domain.toLowerCase();
  if (sharedRegistryDomains.some((shared) => domain === shared || domain.endsWith(`.${shared}`)))
    return undefined;
  return domain;
}

/**
 * Checks that a token realm may be contacted for `registryHost` (host[:port] of the registry API) and returns its
 * URL. Throws RegistryError('TESSERA_REGISTRY_UNTRUSTED_REALM') for an unparseable realm, or a plain-http realm for
 * a registry reached over https; and, when the request would carry credentials (`sendsCredentials`, default
 * true), for a realm that is not the registry's origin, not on its registrable domain, and not trusted. Without
 * credentials any realm may issue an anonymous token (the transport's address policy still applies to it).
 */
export function checkRealm(
  realm: string,
  registryHost: string,
  options: { registryIsHttps: boolean; trustedRealmHosts?: readonly string[]; sendsCredentials?: boolean },
): URL {
  let url: URL;
  try {
    url = new URL(realm);
  } catch {
    throw new RegistryError(
      'TESSERA_REGISTRY_UNTRUSTED_REALM',
      `registry ${registryHost} sent a token realm that is not a URL: ${JSON.stringify(registryText(realm, 100))}`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new RegistryError(
      'TESSERA_REGISTRY_UNTRUSTED_REALM',
      `registry ${registryHost} sent a token realm with scheme ${url.protocol}`,
    );
  }
  if (options.registryIsHttps && url.protocol === 'http:') {
    throw new RegistryError(
      'TESSERA_REGISTRY_UNTRUSTED_REALM',
      `registry ${registryHost} asked for credentials over plain http (${url.origin}); refusing to send them unencrypted`,
    );
  }
  if (options.sendsCredentials === false) return url;
  const realmHost = url.hostname.toLowerCase();
  const registryName = hostOf(registryHost).toLowerCase();
  const defaultPort = (protocol: string): string => (protocol === 'http:' ? '80' : '443');
  const realmPort = url.port || defaultPort(url.protocol);
  const registryPort = portOf(registryHost) || defaultPort(options.registryIsHttps ? 'https:' : 'http:');
  const sameOrigin = realmHost === registryName && realmPort === registryPort;
  const realmDomain = registrableDomain(realmHost);
  const trusted =
    sameOrigin ||
    (realmDomain !== undefined && realmDomain === registrableDomain(registryName)) ||
    (options.trustedRealmHosts ?? []).some(
      (h) => h.toLowerCase() === realmHost || h.toLowerCase() === url.host.toLowerCase(),
    );
  if (!trusted) {
    const why =
      realmHost === registryName
        ? `the same address on another port (${url.host}), which may be another service`
        : `an unrelated host (${url.host})`;
    throw new RegistryError(
      'TESSERA_REGISTRY_UNTRUSTED_REALM',
      `registry ${registryHost} sent its token realm to ${why}; credentials are not sent there. ` +
        'If this is intended, add that host to the trusted token realm hosts',
    );
  }
  return url;
}
