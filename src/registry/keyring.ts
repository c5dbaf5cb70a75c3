// Which credentials the kubelet would try for an image: registry keys matched with the kubelet's credential-
// provider keyring rules (same number of host labels, each label a glob, equal ports, key path a string prefix of
// the image path, keys tried longest/most specific first; Docker Hub keys `index.docker.io`, `docker.io` and
// `https://index.docker.io/v1/` serve Hub images), with the pod's own pull secrets before the global one.
// Keys are tenant input, so matching is bounded: a secret's keys are parsed once (SecretKeys, cached with the
// secret by the caller), indexed by label count and last label so most keys are rejected without a comparison, and
// one lookup spends at most `maxLookupSteps` comparisons across all secrets and keys; past that it stops, returns
// the credentials matched so far (a prefix of the kubelet's order) and says so (`onLookupBudgetExceeded`).
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

/**
 * Most comparison steps one Keyring.lookup spends, across every secret and key (both the pod's and the global
 * ones): real keyrings need a few thousand at most (a few dozen keys, mostly without wildcards), so this is ample,
 * while it caps a lookup against hostile wildcard keys at a few milliseconds.
 */
export const DEFAULT_MAX_KEYRING_LOOKUP_STEPS = 200_000;

/** Counts comparison steps, so tests can prove the matcher's bound instead of timing it. */
export interface StepCounter {
  steps: number;
}

/** What one lookup may still spend; `exhausted` once a comparison needed more than was left. */
class LookupBudget implements StepCounter {
  steps = 0;
  exhausted = false;
  constructor(readonly maxSteps: number) {}

  /** Spends `n` steps; false (and exhausted from then on) when that would go over the budget. */
  spend(n: number): boolean {
    if (this.exhausted) return false;
    if (this.steps + n > this.maxSteps) {
      this.steps = this.maxSteps;
      this.exhausted = true;
      return false;
    }
    this.steps += n;
    return true;
  }

  get remaining(): number {
    return this.maxSteps - this.steps;
  }
}

/** Token codes of an encoded glob: a code point (>= 0) is a literal; a class is CLASS_BASE - its index. */
const STAR = -1;
const ANY = -2;
const CLASS_BASE = -3;

/**
 * A compiled label glob in compact form (4 bytes a token: a hostile secret's 256 KiB of keys stay about 1 MiB
 * compiled), with what every match must have: its length in code points, its literal prefix and suffix.
 */
interface EncodedGlob {
  readonly codes: Int32Array;
  /** Flattened [lo, hi] pairs per class, `negated` alongside. */
  readonly classes: readonly { readonly negated: boolean; readonly ranges: Int32Array }[];
  readonly minLength: number;
  readonly hasStar: boolean;
  readonly prefix: string;
  readonly suffix: string;
}

function encodeGlob(tokens: readonly GlobToken[]): EncodedGlob {
  const codes = new Int32Array(tokens.length);
  const classes: { negated: boolean; ranges: Int32Array }[] = [];
  let minLength = 0;
  let hasStar = false;
  for (const [i, token] of tokens.entries()) {
    switch (token.kind) {
      case 'star':
        codes[i] = STAR;
        hasStar = true;
        break;
      case 'any':
        codes[i] = ANY;
        minLength++;
        break;
      case 'literal':
        codes[i] = token.char.codePointAt(0) ?? 0;
        minLength++;
        break;
      case 'class':
        codes[i] = CLASS_BASE - classes.length;
        classes.push({ negated: token.negated, ranges: Int32Array.from(token.ranges.flat()) });
        minLength++;
        break;
    }
  }
  const literalText = (from: number, to: number): string =>
    String.fromCodePoint(...Array.from(codes.subarray(from, to)));
  let p = 0;
  while (p < codes.length && (codes[p] ?? -1) >= 0) p++;
  let q = codes.length;
  while (q > p && (codes[q - 1] ?? -1) >= 0) q--;
  return {
    codes,
    classes,
    minLength,
    hasStar,
    prefix: literalText(0, p),
    suffix: literalText(q, codes.length),
  };
}

/**
 * The classic two-pointer wildcard match over code points: on a mismatch only the most recent `*` absorbs one more
 * character, so at most (label length + 1) x (tokens + 1) steps (a class costs one more step per range), never
 * exponential. Undefined when `budget` ran out before the answer.
 */
function globMatch(glob: EncodedGlob, label: Int32Array, budget: LookupBudget): boolean | undefined {
  const { codes, classes } = glob;
  const limit = budget.remaining;
  let t = 0;
  let s = 0;
  let starAt = -1;
  let starResume = 0;
  let steps = 0;
  while (s < label.length) {
    if (++steps > limit) {
      budget.spend(steps);
      return undefined;
    }
    const code = t < codes.length ? (codes[t] ?? 0) : undefined;
    if (code === STAR) {
      starAt = t++;
      starResume = s;
      continue;
    }
    let matches = false;
    if (code !== undefined) {
      const char = label[s] ?? -1;
      if (code >= 0) matches = code === char;
      else if (code === ANY) matches = true;
      else {
        const cls = classes[CLASS_BASE - code];
        if (cls !== undefined) {
          const { ranges } = cls;
          steps += ranges.length >> 1;
          let inside = false;
          for (let r = 0; r < ranges.length && !inside; r += 2)
            inside = (ranges[r] ?? 0) <= char && char <= (ranges[r + 1] ?? -1);
          matches = inside !== cls.negated;
        }
      }
    }
    if (matches) {
      t++;
      s++;
    } else if (starAt >= 0) {
      t = starAt + 1;
      s = ++starResume;
    } else {
      budget.spend(Math.min(steps, limit));
      return false;
    }
  }
  while (codes[t] === STAR) t++;
  if (!budget.spend(steps)) return undefined;
  return t === codes.length;
}

/** Code points of `text`, for the matcher. */
function codePoints(text: string): Int32Array {
  return Int32Array.from(Array.from(text, (c) => c.codePointAt(0) ?? 0));
}

/** Does `label` match the compiled glob (Go's filepath.Match on one host label)? See globMatch for the bound. */
export function labelGlobMatches(
  tokens: readonly GlobToken[],
  label: string,
  counter?: StepCounter,
): boolean {
  const budget = new LookupBudget(Number.POSITIVE_INFINITY);
  const result = globMatch(encodeGlob(tokens), codePoints(label), budget) ?? false;
  if (counter) counter.steps += budget.steps;
  return result;
}

/**
 * A key parsed once: its port and path, and per host label a string to compare exactly, a compiled glob, or null
 * for a malformed glob (Go's ErrBadPattern, which the kubelet treats as no match). Linear in the key's length.
 */
interface CompiledKey {
  readonly parsed: ParsedKey;
  readonly labels: readonly (string | EncodedGlob | null)[];
}

function compileKey(key: string): CompiledKey | undefined {
  const parsed = parseSchemeless(key);
  if (parsed === undefined) return undefined;
  return {
    parsed,
    labels: parsed.hostParts.map((part) => {
      if (!/[*?[\\]/.test(part)) return part;
      const tokens = compileLabelGlob(part);
      return tokens === undefined ? null : encodeGlob(tokens);
    }),
  };
}

/** The image being looked up, parsed once per lookup; label code points are split on first need. */
class LookupTarget {
  private readonly chars: (Int32Array | undefined)[] = [];
  constructor(readonly parsed: ParsedKey) {}

  codePointsOf(i: number): Int32Array {
    let chars = this.chars[i];
    if (chars === undefined) {
      chars = codePoints(this.parsed.hostParts[i] ?? '');
      this.chars[i] = chars;
    }
    return chars;
  }
}

/**
 * The kubelet's URLsMatch for a compiled key, cheapest checks first: port, path prefix, literal labels, then each
 * glob's length and literal ends, and only then the matcher. Undefined when `budget` ran out before the answer.
 */
function compiledKeyMatches(
  key: CompiledKey,
  target: LookupTarget,
  budget: LookupBudget,
): boolean | undefined {
  const g = key.parsed;
  const t = target.parsed;
  if (!budget.spend(1 + g.path.length)) return undefined;
  if (g.port !== t.port || g.hostParts.length !== t.hostParts.length || !t.path.startsWith(g.path))
    return false;
  for (const [i, pattern] of key.labels.entries()) {
    if (typeof pattern !== 'string') continue;
    if (!budget.spend(pattern.length)) return undefined;
    if (pattern !== t.hostParts[i]) return false;
  }
  const globs: [EncodedGlob, number][] = [];
  for (const [i, glob] of key.labels.entries()) {
    if (typeof glob === 'string') continue;
    if (glob === null) return false;
    const label = t.hostParts[i] ?? '';
    if (!budget.spend(1 + glob.prefix.length + glob.suffix.length)) return undefined;
    // Code points are at most UTF-16 units, so this length check holds before splitting the label.
    if (label.length < glob.minLength || !label.startsWith(glob.prefix) || !label.endsWith(glob.suffix))
      return false;
    globs.push([glob, i]);
  }
  for (const [glob, i] of globs) {
    const chars = target.codePointsOf(i);
    if (!budget.spend(chars.length)) return undefined;
    if (chars.length < glob.minLength || (!glob.hasStar && chars.length !== glob.minLength)) return false;
    const matched = globMatch(glob, chars, budget);
    if (matched !== true) return matched;
  }
  return true;
}

/** The kubelet's URLsMatch: does the (normalised) key `glob` cover the image name `target` (`host[:port]/path`)? */
export function keyMatchesImage(glob: string, target: string, counter?: StepCounter): boolean {
  const key = compileKey(glob);
  const t = parseSchemeless(target);
  if (key === undefined || t === undefined) return false;
  const budget = new LookupBudget(Number.POSITIVE_INFINITY);
  const result = compiledKeyMatches(key, new LookupTarget(t), budget) ?? false;
  if (counter) counter.steps += budget.steps;
  return result;
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

/**
 * The registry keys of one pull secret, normalised, parsed and compiled once (linear in the secret's size; about
 * 4 bytes a glob character). Build it when the secret is read and keep it as long as the secret object, so lookups
 * never parse keys again.
 */
export class SecretKeys {
  /** Per entry, its normalised key (undefined: a key the kubelet could not use either). */
  readonly normalized: readonly (string | undefined)[];
  /** Normalised key -> its parsed form. */
  readonly compiled: ReadonlyMap<string, CompiledKey>;

  private constructor(readonly entries: readonly DockerConfigEntry[]) {
    const compiled = new Map<string, CompiledKey>();
    this.normalized = entries.map((entry) => normalizeKeyringKey(entry.key));
    for (const key of this.normalized) {
      if (key === undefined || compiled.has(key)) continue;
      const parsed = compileKey(key);
      if (parsed !== undefined) compiled.set(key, parsed);
    }
    this.compiled = compiled;
  }

  static of(entries: readonly DockerConfigEntry[]): SecretKeys {
    return new SecretKeys(entries);
  }

  static readonly empty: SecretKeys = new SecretKeys([]);
}

/** A key of a BasicKeyring: its rank in the kubelet's order, its parsed form and credentials. */
interface IndexedKey {
  readonly rank: number;
  readonly key: CompiledKey;
  readonly creds: readonly RegistryCredential[];
}

/** Keys of one label count, by their last label when it is literal (the common `*.example.io`), else in `globLast`. */
interface LabelCountBucket {
  readonly byLastLabel: Map<string, IndexedKey[]>;
  readonly globLast: IndexedKey[];
}

/** Merges two rank-sorted lists, preserving rank order. */
function* mergedByRank(a: readonly IndexedKey[], b: readonly IndexedKey[]): Generator<IndexedKey> {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && x.rank < y.rank)) {
      i++;
      if (x) yield x;
    } else {
      j++;
      yield y;
    }
  }
}

/** The keys of one or more secrets combined, kubelet-ordered, as the kubelet's BasicDockerKeyring. */
class BasicKeyring {
  /** Keys by label count; within a list, in rank order (reverse byte order: longer and non-wildcard keys first). */
  private readonly buckets = new Map<number, LabelCountBucket>();
  /** Credentials filed under `index.docker.io`, the Docker Hub fallback. */
  private readonly hubCreds: readonly RegistryCredential[];

  constructor(secrets: readonly SecretKeys[]) {
    const creds = new Map<string, RegistryCredential[]>();
    const compiled = new Map<string, CompiledKey>();
    for (const secret of secrets) {
      for (const [i, entry] of secret.entries.entries()) {
        const key = secret.normalized[i];
        if (key === undefined) continue;
        const list = creds.get(key) ?? [];
        list.push(entry.credential);
        creds.set(key, list);
        const parsed = secret.compiled.get(key);
        if (parsed !== undefined && !compiled.has(key)) compiled.set(key, parsed);
      }
    }
    this.hubCreds = creds.get(defaultRegistryHost) ?? [];
    const index = [...compiled.keys()].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
    for (const [rank, name] of index.entries()) {
      const key = compiled.get(name);
      if (key === undefined) continue;
      const count = key.labels.length;
      let bucket = this.buckets.get(count);
      if (bucket === undefined) {
        bucket = { byLastLabel: new Map(), globLast: [] };
        this.buckets.set(count, bucket);
      }
      const last = key.labels[count - 1];
      const entry: IndexedKey = { rank, key, creds: creds.get(name) ?? [] };
      if (typeof last === 'string') {
        const list = bucket.byLastLabel.get(last) ?? [];
        list.push(entry);
        bucket.byLastLabel.set(last, list);
      } else bucket.globLast.push(entry);
    }
  }

  lookup(imageName: string, budget: LookupBudget): RegistryCredential[] {
    const found: RegistryCredential[] = [];
    const parsed = parseSchemeless(imageName);
    const bucket = parsed && this.buckets.get(parsed.hostParts.length);
    if (parsed !== undefined && bucket !== undefined) {
      const target = new LookupTarget(parsed);
      const literalLast = bucket.byLastLabel.get(parsed.hostParts.at(-1) ?? '') ?? [];
      for (const { key, creds } of mergedByRank(literalLast, bucket.globLast)) {
        const matched = compiledKeyMatches(key, target, budget);
        if (matched === undefined) return found; // out of budget: what matched so far, in order
        if (matched) found.push(...creds);
      }
    }
    if (found.length > 0) return found;
    if (isDefaultRegistryMatch(imageName)) return [...this.hubCreds];
    return [];
  }
}

export interface KeyringOptions {
  /** Most comparison steps one lookup spends across all keys. Default: DEFAULT_MAX_KEYRING_LOOKUP_STEPS. */
  maxLookupSteps?: number;
  /**
   * Told when a lookup ran out of steps: `image` got only the credentials matched before that (possibly none).
   * Default: nothing is told.
   */
  onLookupBudgetExceeded?: (image: string, maxSteps: number) => void;
}

/** What one lookup found and spent. */
export interface KeyringMatch {
  /** Credentials to try, in the kubelet's order; empty means anonymous. */
  readonly credentials: RegistryCredential[];
  /** Comparison steps spent (at most the budget). */
  readonly steps: number;
  /** False when the budget ran out: later keys were not looked at, so credentials may be missing. */
  readonly complete: boolean;
}

/** Pull credentials of one pod: its own secrets first, then the global pull secret. */
export class Keyring {
  /** sha256 over every entry (keys and credentials) in order; equal fingerprints mean equal credentials. */
  readonly fingerprint: string;
  /** Number of entries across all parts. */
  readonly size: number;
  private readonly pod: BasicKeyring;
  private readonly global: BasicKeyring;
  private readonly maxLookupSteps: number;
  private readonly onLookupBudgetExceeded: KeyringOptions['onLookupBudgetExceeded'];

  private constructor(
    pod: readonly SecretKeys[],
    global: readonly SecretKeys[],
    options: KeyringOptions = {},
  ) {
    this.pod = new BasicKeyring(pod);
    this.global = new BasicKeyring(global);
    this.maxLookupSteps = options.maxLookupSteps ?? DEFAULT_MAX_KEYRING_LOOKUP_STEPS;
    this.onLookupBudgetExceeded = options.onLookupBudgetExceeded;
    const hash = createHash('sha256');
    let size = 0;
    for (const [i, part] of [pod, global].entries()) {
      for (const secret of part) {
        for (const e of secret.entries) {
          hash.update(`${i}\0${e.key}\0${e.credential.username}\0${e.credential.password}\0`);
          size++;
        }
      }
    }
    this.fingerprint = size === 0 ? 'anonymous' : hash.digest('hex');
    this.size = size;
  }

  /** A keyring without credentials: every pull is anonymous. */
  static readonly empty: Keyring = new Keyring([], []);

  /**
   * Builds the keyring the kubelet would use: `podEntries` (from the pod's imagePullSecrets, in order) win over
   * `globalEntries` (the cluster's global pull secret).
   */
  static of(
    podEntries: readonly DockerConfigEntry[],
    globalEntries: readonly DockerConfigEntry[] = [],
    options?: KeyringOptions,
  ): Keyring {
    return new Keyring([SecretKeys.of(podEntries)], [SecretKeys.of(globalEntries)], options);
  }

  /** As `of`, from secrets parsed once (SecretKeys), the pod's in imagePullSecrets order. */
  static fromSecrets(
    podSecrets: readonly SecretKeys[],
    globalSecret: SecretKeys = SecretKeys.empty,
    options?: KeyringOptions,
  ): Keyring {
    return new Keyring(podSecrets, [globalSecret], options);
  }

  /**
   * Credentials for `imageName` (`registry/repository`, no tag) within the step budget. The global secret (the
   * administrator's) is searched first, so a tenant's keys can use up the budget only for their own pods' part.
   */
  match(imageName: string): KeyringMatch {
    const budget = new LookupBudget(this.maxLookupSteps);
    const global = this.global.lookup(imageName, budget);
    const pod = budget.exhausted ? [] : this.pod.lookup(imageName, budget);
    return { credentials: [...pod, ...global], steps: budget.steps, complete: !budget.exhausted };
  }

  /**
   * Credentials to try, in order, for `imageName`. Empty means anonymous; the kubelet does not fall back to
   * anonymous once credentials match. A lookup over budget is reported to `onLookupBudgetExceeded`.
   */
  lookup(imageName: string): RegistryCredential[] {
    const result = this.match(imageName);
    if (!result.complete) this.onLookupBudgetExceeded?.(imageName, this.maxLookupSteps);
    return result.credentials;
  }
}
