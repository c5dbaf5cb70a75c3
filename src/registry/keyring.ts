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

/** Longest registry key considered, in characters; longer keys never match (no real host name is that long). */
export const maxKeyringKeyLength = 1024;

/**
 * Splits a schemeless `host[:port][/path]` the way Go's url.Parse + net.SplitHostPort would for these inputs.
 * A leading `[` must be an IPv6 literal, as in Go (so `[a-c]x.io` is not a usable key there either). Linear:
 * index scans only, no backtracking pattern on the (tenant-written) key.
 */
function parseSchemeless(location: string): ParsedKey | undefined {
  if (location.length > maxKeyringKeyLength) return undefined;
  const rest = location.startsWith('https://')
    ? location.slice(8)
    : location.startsWith('http://')
      ? location.slice(7)
      : location;
  const cut = rest.search(/[/?#]/);
  const authority = cut < 0 ? rest : rest.slice(0, cut);
  const path = cut < 0 || rest[cut] !== '/' ? '' : (rest.slice(cut).split(/[?#]/)[0] ?? '');
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0 || !/^(:\d*)?$/.test(authority.slice(close + 1))) return undefined;
    return { hostParts: [authority.slice(0, close + 1)], port: authority.slice(close + 2), path };
  }
  const colon = authority.lastIndexOf(':');
  const port = colon < 0 ? '' : authority.slice(colon + 1);
  if (colon >= 0 && !/^\d*$/.test(port)) return undefined;
  const host = colon < 0 ? authority : authority.slice(0, colon);
  if (host.includes(':')) return undefined;
  return { hostParts: host.split('.'), port, path };
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

/** One element of a host-label glob: `*`, `?`, a literal code point, or a `[...]` class. */
type GlobToken =
  | { readonly kind: 'star' }
  | { readonly kind: 'any' }
  | { readonly kind: 'literal'; readonly char: string }
  | {
      readonly kind: 'class';
      readonly negated: boolean;
      readonly ranges: readonly (readonly [number, number])[];
    };

/**
 * Compiles one host label of a key with Go's filepath.Match syntax (`*`, `?`, `[...]` with ranges and `^`,
 * `\`-escapes), by code point as Go matches runes. Undefined for a malformed pattern (Go's ErrBadPattern, which
 * the kubelet treats as no match). Linear in the pattern length.
 */
export function compileLabelGlob(pattern: string): readonly GlobToken[] | undefined {
  const chars = Array.from(pattern);
  const tokens: GlobToken[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] ?? '';
    if (c === '*') {
      if (tokens[tokens.length - 1]?.kind !== 'star') tokens.push({ kind: 'star' }); // `**` = `*`
    } else if (c === '?') tokens.push({ kind: 'any' });
    else if (c === '\\') {
      if (i + 1 >= chars.length) return undefined;
      tokens.push({ kind: 'literal', char: chars[++i] ?? '' });
    } else if (c === '[') {
      let j = i + 1;
      const negated = chars[j] === '^';
      if (negated) j++;
      const ranges: [number, number][] = [];
      // Reads one class character (escapes allowed); `-` and `]` must be escaped, as in Go.
      const readChar = (): number | undefined => {
        let ch = chars[j];
        if (ch === undefined || ch === '-' || ch === ']') return undefined;
        if (ch === '\\') {
          j++;
          ch = chars[j];
          if (ch === undefined) return undefined;
        }
        j++;
        return ch.codePointAt(0);
      };
      for (;;) {
        if (chars[j] === ']' && ranges.length > 0) break;
        const lo = readChar();
        if (lo === undefined) return undefined;
        let hi = lo;
        if (chars[j] === '-') {
          j++;
          const end = readChar();
          if (end === undefined) return undefined;
          hi = end;
        }
        ranges.push([lo, hi]);
      }
      tokens.push({ kind: 'class', negated, ranges });
      i = j; // at the closing `]`
    } else tokens.push({ kind: 'literal', char: c });
  }
  return tokens;
}

function tokenMatches(token: GlobToken, char: string): boolean {
  switch (token.kind) {
    case 'star': // matched by the caller's backtracking; as one character, a star matches any
    case 'any':
      return true;
    case 'literal':
      return token.char === char;
    case 'class': {
      const code = char.codePointAt(0) ?? -1;
      const inside = token.ranges.some(([lo, hi]) => lo <= code && code <= hi);
      return inside !== token.negated;
    }
  }
}

/** Counts comparison steps, so tests can prove the matcher's bound instead of timing it. */
export interface StepCounter {
  steps: number;
}

/**
 * Does `label` match the compiled glob? The classic two-pointer wildcard match: on a mismatch only the most recent
 * `*` absorbs one more character, so at most (label length + 1) x (tokens + 1) steps, never exponential (the
 * regular expression it replaces backtracked exponentially on `*a*a*a...*b` keys).
 */
export function labelGlobMatches(
  tokens: readonly GlobToken[],
  label: string,
  counter?: StepCounter,
): boolean {
  const chars = Array.from(label);
  let t = 0;
  let s = 0;
  let starAt = -1;
  let starResume = 0;
  let steps = 0;
  try {
    while (s < chars.length) {
      steps++;
      const token = tokens[t];
      if (token?.kind === 'star') {
        starAt = t++;
        starResume = s;
      } else if (token !== undefined && tokenMatches(token, chars[s] ?? '')) {
        t++;
        s++;
      } else if (starAt >= 0) {
        t = starAt + 1;
        s = ++starResume;
      } else return false;
    }
    while (tokens[t]?.kind === 'star') t++;
    return t === tokens.length;
  } finally {
    if (counter) counter.steps += steps;
  }
}

/** A key parsed once: its host labels compiled (undefined entries: malformed globs, which never match). */
interface CompiledKey {
  readonly parsed: ParsedKey;
  /** Per host label: a string to compare exactly (no wildcard), tokens of a glob, or undefined (malformed). */
  readonly labels: readonly (string | readonly GlobToken[] | undefined)[];
}

function compileKey(glob: string): CompiledKey | undefined {
  const parsed = parseSchemeless(glob);
  if (parsed === undefined) return undefined;
  return {
    parsed,
    labels: parsed.hostParts.map((part) => (/[*?[\\]/.test(part) ? compileLabelGlob(part) : part)),
  };
}

function compiledKeyMatches(key: CompiledKey, target: ParsedKey, counter?: StepCounter): boolean {
  const g = key.parsed;
  if (g.port !== target.port) return false;
  if (g.hostParts.length !== target.hostParts.length) return false;
  if (!target.path.startsWith(g.path)) return false;
  return key.labels.every((pattern, i) => {
    const label = target.hostParts[i] ?? '';
    if (pattern === undefined) return false;
    // Keys without wildcards (most of them) compare as strings.
    if (typeof pattern === 'string') return pattern === label;
    return labelGlobMatches(pattern, label, counter);
  });
}

/** The kubelet's URLsMatch: does the (normalised) key `glob` cover the image name `target` (`host[:port]/path`)? */
export function keyMatchesImage(glob: string, target: string, counter?: StepCounter): boolean {
  const key = compileKey(glob);
  const t = parseSchemeless(target);
  if (key === undefined || t === undefined) return false;
  return compiledKeyMatches(key, t, counter);
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
  /** Keys compiled once per keyring (no cache shared across keyrings: it would grow with every secret). */
  private readonly compiled: ReadonlyMap<string, CompiledKey | undefined>;

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
    this.compiled = new Map(this.index.map((key) => [key, compileKey(key)]));
  }

  lookup(imageName: string): RegistryCredential[] {
    const found: RegistryCredential[] = [];
    const target = parseSchemeless(imageName);
    for (const key of this.index) {
      const compiled = this.compiled.get(key);
      if (target !== undefined && compiled !== undefined && compiledKeyMatches(compiled, target))
        found.push(...(this.creds.get(key) ?? []));
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
