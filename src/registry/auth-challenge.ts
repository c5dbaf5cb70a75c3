// Reads `WWW-Authenticate` challenges (RFC 7235: scheme, then token or quoted-string parameters) and decides
// whether a Bearer token realm may receive the user's credentials: only a realm on the registry's own host, a
// host of the same parent domain (`auth.docker.io` for `registry-1.docker.io`), or an explicitly trusted host.
// Pure; the caller enforces the decision.
import { RegistryError } from './errors.js';
import { registryText } from './registry-text.js';

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
    const params: Record<string, string> = {};
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

function isIpOrSingleLabel(host: string): boolean {
  return host.startsWith('[') || /^\d+\.\d+\.\d+\.\d+$/.test(host) || !host.includes('.');
}

/**
 * `a.b.example.io` -> `example.io`; under a two-letter country TLD with a short second level (`co.uk`,
 * `com.au`) three labels are kept, so `evil.co.uk` is no relative of `registry.foo.co.uk`. IPs and single
 * labels stay whole. A heuristic without the public suffix list: exotic suffixes need `trustedRealmHosts`.
 */
export function parentDomain(host: string): string {
  if (isIpOrSingleLabel(host)) return host;
  const labels = host.split('.');
  const tld = labels[labels.length - 1] ?? '';
  const second = labels[labels.length - 2] ?? '';
  const keep = labels.length >= 3 && tld.length === 2 && second.length <= 3 ? 3 : 2;
  return labels.slice(-keep).join('.');
}

/**
 * Checks that a token realm may be contacted for `registryHost` (host[:port] of the registry API) and returns its
 * URL. Throws RegistryError('TESSERA_REGISTRY_UNTRUSTED_REALM') for an unparseable realm, a realm on an unrelated
 * host, or a plain-http realm for a registry reached over https.
 */
export function checkRealm(
  realm: string,
  registryHost: string,
  options: { registryIsHttps: boolean; trustedRealmHosts?: readonly string[] },
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
  const realmHost = url.hostname.toLowerCase();
  const registryName = hostOf(registryHost).toLowerCase();
  const trusted =
    realmHost === registryName ||
    (!isIpOrSingleLabel(realmHost) && parentDomain(realmHost) === parentDomain(registryName)) ||
    (options.trustedRealmHosts ?? []).some(
      (h) => h.toLowerCase() === realmHost || h.toLowerCase() === url.host.toLowerCase(),
    );
  if (!trusted) {
    throw new RegistryError(
      'TESSERA_REGISTRY_UNTRUSTED_REALM',
      `registry ${registryHost} sent its token realm to an unrelated host (${url.host}); credentials are not sent there. ` +
        'If this is intended, add that host to the trusted token realm hosts',
    );
  }
  return url;
}
