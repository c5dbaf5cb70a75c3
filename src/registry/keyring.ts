// Which credentials the kubelet would try for an image: registry keys matched with the kubelet's credential-
// provider keyring rules (same number of host labels, each label a glob, equal ports, key path a string prefix of
// the image path, keys tried longest/most specific first; Docker Hub keys `index.docker.io`, `docker.io` and
// `https://index.docker.io/v1/` serve Hub images), with the pod's own pull secrets before the global one.
// Immutable once built; `fingerprint` identifies the credentials for cache keys without revealing them.
import { createHash } from 'node:crypto';
import type { DockerConfigEntry, RegistryCredential } from './docker-config.js';

const defaultRegistryHost = 'index.docker.io';

interface ParsedKey {
  readonly hostParts: readonly string[];
  readonly port: string;
  readonly path: string;
}

/**
 * Splits a schemeless `host[:port][/path]` the way Go's url.Parse + net.SplitHostPort would for these inputs.
 * A leading `[` must be an IPv6 literal, as in Go (so `[a-c]x.io` is not a usable key there either).
 */
function parseSchemeless(location: string): ParsedKey | undefined {
  const rest = location.replace(/^https?:\/\//, '');
  const cut = rest.search(/[/?#]/);
  const authority = cut < 0 ? rest : rest.slice(0, cut);
  const path = cut < 0 || rest[cut] !== '/' ? '' : (rest.slice(cut).split(/[?#]/)[0] ?? '');
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0 || !/^(:\d*)?$/.test(authority.slice(close + 1))) return undefined;
    return { hostParts: [authority.slice(0, close + 1)], port: authority.slice(close + 2), path };
  }
  const portMatch = /^(.*):(\d*)$/.exec(authority);
  const host = portMatch?.[1] ?? authority;
  if (host.includes(':')) return undefined;
  return { hostParts: host.split('.'), port: portMatch?.[2] ?? '', path };
}

/** Normalises a secret key as the kubelet does when adding it: no scheme, `/v1/` and `/v2/` prefixes dropped. */
export function normalizeKeyringKey(key: string): string | undefined {
  const parsed = parseSchemeless(key);
  if (parsed === undefined) return undefined;
  let path = parsed.path;
  if (path.startsWith('/v2/') || path.startsWith('/v1/')) path = path.slice(3);
  const host = parsed.hostParts.join('.') + (parsed.port === '' ? '' : `:${parsed.port}`);
  return path.length > 0 && path !== '/' ? host + path : host;
}

const globCache = new Map<string, RegExp>();

/** Go's filepath.Match for one host label (no separators inside a label): `*`, `?`, `[...]`, `\`-escapes. */
function labelMatches(pattern: string, label: string): boolean {
  if (!/[*?[\\]/.test(pattern)) return pattern === label;
  let regex = globCache.get(pattern);
  if (regex === undefined) {
    let source = '^';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i] ?? '';
      if (c === '*') source += '[^.]*';
      else if (c === '?') source += '[^.]';
      else if (c === '\\' && i + 1 < pattern.length) source += `\\${pattern[++i] ?? ''}`;
      else if (c === '[') {
        const end = pattern.indexOf(']', i + 1);
        if (end < 0) return false; // Go reports ErrBadPattern, which the kubelet treats as no match.
        source += `[${pattern.slice(i + 1, end)}]`; // Go's `[^...]` and ranges read the same in JS.
        i = end;
      } else source += c.replace(/[.+^${}()|\]\\/]/g, '\\$&');
    }
    regex = new RegExp(`${source}$`);
    globCache.set(pattern, regex);
  }
  return regex.test(label);
}

/** The kubelet's URLsMatch: does the (normalised) key `glob` cover the image name `target` (`host[:port]/path`)? */
export function keyMatchesImage(glob: string, target: string): boolean {
  const g = parseSchemeless(glob);
  const t = parseSchemeless(target);
  if (g === undefined || t === undefined) return false;
  if (g.port !== t.port) return false;
  if (g.hostParts.length !== t.hostParts.length) return false;
  if (!t.path.startsWith(g.path)) return false;
  return g.hostParts.every((part, i) => labelMatches(part, t.hostParts[i] ?? ''));
}

/** Docker's rule for "this image name is served by Docker Hub". */
function isDefaultRegistryMatch(imageName: string): boolean {
  const slash = imageName.indexOf('/');
  if (imageName === '' || slash === 0) return false;
  if (slash < 0) return true;
  const first = imageName.slice(0, slash);
  if (first === 'docker.io' || first === defaultRegistryHost) return true;
  return !/[.:]/.test(first);
}

/** One secret's (or one set of secrets') keys, kubelet-ordered. */
class BasicKeyring {
  /** Normalised keys, sorted in reverse byte order (longer and non-wildcard keys first), unique. */
  private readonly index: readonly string[];
  private readonly creds: ReadonlyMap<string, readonly RegistryCredential[]>;

  constructor(entries: readonly DockerConfigEntry[]) {
    const creds = new Map<string, RegistryCredential[]>();
    for (const entry of entries) {
      const key = normalizeKeyringKey(entry.key);
      if (key === undefined) continue;
      const list = creds.get(key) ?? [];
      list.push(entry.credential);
      creds.set(key, list);
    }
    this.creds = creds;
    this.index = [...creds.keys()].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  }

  lookup(imageName: string): RegistryCredential[] {
    const found: RegistryCredential[] = [];
    for (const key of this.index) {
      if (keyMatchesImage(key, imageName)) found.push(...(this.creds.get(key) ?? []));
    }
    if (found.length > 0) return found;
    if (isDefaultRegistryMatch(imageName)) return [...(this.creds.get(defaultRegistryHost) ?? [])];
    return [];
  }
}

/** Pull credentials of one pod: its own secrets first, then the global pull secret. */
export class Keyring {
  /** sha256 over every entry (keys and credentials) in order; equal fingerprints mean equal credentials. */
  readonly fingerprint: string;
  /** Number of entries across all parts. */
  readonly size: number;
  private readonly parts: readonly BasicKeyring[];

  private constructor(parts: readonly (readonly DockerConfigEntry[])[]) {
    this.parts = parts.map((entries) => new BasicKeyring(entries));
    const hash = createHash('sha256');
    let size = 0;
    for (const [i, entries] of parts.entries()) {
      for (const e of entries) {
        hash.update(`${i}\0${e.key}\0${e.credential.username}\0${e.credential.password}\0`);
        size++;
      }
    }
    this.fingerprint = size === 0 ? 'anonymous' : hash.digest('hex');
    this.size = size;
  }

  /** A keyring without credentials: every pull is anonymous. */
  static readonly empty: Keyring = new Keyring([]);

  /**
   * Builds the keyring the kubelet would use: `podEntries` (from the pod's imagePullSecrets, in order) win over
   * `globalEntries` (the cluster's global pull secret).
   */
  static of(
    podEntries: readonly DockerConfigEntry[],
    globalEntries: readonly DockerConfigEntry[] = [],
  ): Keyring {
    return new Keyring([podEntries, globalEntries]);
  }

  /**
   * Credentials to try, in order, for `imageName` (`registry/repository`, no tag). Empty means anonymous; the
   * kubelet does not fall back to anonymous once credentials match.
   */
  lookup(imageName: string): RegistryCredential[] {
    return this.parts.flatMap((part) => part.lookup(imageName));
  }
}
