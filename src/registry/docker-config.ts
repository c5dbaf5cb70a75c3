// Reads registry credentials from Kubernetes pull secrets: `kubernetes.io/dockerconfigjson` (`{"auths": {...}}`
// under `.dockerconfigjson`) and `kubernetes.io/dockercfg` (the bare map under `.dockercfg`), as the kubelet does:
// an `auth` field (base64 `user:password`, decoded as strictly as Go's base64.StdEncoding) overrides
// `username`/`password`, and an entry with neither is kept (it matches, and is then tried anonymously). Pure; a
// malformed secret throws InvalidPullSecretError naming the secret and the entry, never the credentials.
import { InvalidPullSecretError } from './errors.js';
import { isRecord, JsonTooLargeError, parseBudgetedJson } from '../runtime/light.js';

export const dockerConfigJsonSecretType = 'kubernetes.io/dockerconfigjson';
export const dockerCfgSecretType = 'kubernetes.io/dockercfg';
export const dockerConfigJsonKey = '.dockerconfigjson';
export const dockerCfgKey = '.dockercfg';

/**
 * Budgets for one pull secret, enforced before the document is parsed (bytes) and before its entries are read
 * (entries): a tenant's Secret must not make the controller parse or match without limit. Real pull secrets,
 * OpenShift's global one included, hold a few KiB and a few dozen registries.
 */
export const pullSecretBudget = {
  /** Largest decoded `.dockerconfigjson` / `.dockercfg` document, in bytes. */
  maxBytes: 256 * 1024,
  /** Most registry entries (`auths` keys) in one secret. */
  maxEntries: 200,
  /**
   * JSON shape, scanned before parsing: a real secret is 3 levels deep with a handful of values per entry, so this
   * fits 200 entries with room to spare, while 256 KiB of nested or tiny arrays is refused unparsed.
   */
  maxDepth: 8,
  maxValues: 10_000,
} as const;

/** One user name and password for a registry. */
export interface RegistryCredential {
  readonly username: string;
  readonly password: string;
}

/** A credential and the registry key it was filed under (`quay.io`, `*.example.io`, `host:5000/path`). */
export interface DockerConfigEntry {
  /** The key exactly as written in the secret (scheme and `/v1/` included). */
  readonly key: string;
  readonly credential: RegistryCredential;
}

/** The fields of a core/v1 Secret this module reads; `data` values are base64 as in the API. */
export interface PullSecretLike {
  readonly type?: string;
  readonly data?: Readonly<Record<string, string>>;
}

/** True for an entry without user name and password: it counts as a match but authenticates as nobody. */
export function isAnonymousCredential(credential: RegistryCredential): boolean {
  return credential.username === '' && credential.password === '';
}

/**
 * Decodes standard padded base64 the way Go's base64.StdEncoding.DecodeString does (which the kubelet uses for
 * `auth`): CR and LF are ignored, any other character outside the alphabet, a missing or misplaced `=`, or a
 * truncated final group makes the input invalid (undefined). Node's decoder would silently skip such input.
 */
export function decodeStdBase64(text: string): Buffer | undefined {
  const compact = text.replace(/[\r\n]/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

function entriesOfAuthMap(auths: Record<string, unknown>, source: string): DockerConfigEntry[] {
  const entries: DockerConfigEntry[] = [];
  const keys = Object.keys(auths);
  if (keys.length > pullSecretBudget.maxEntries) {
    throw new InvalidPullSecretError(
      source,
      `${keys.length} registry entries, more than the ${pullSecretBudget.maxEntries} allowed; split the secret or remove unused registries`,
    );
  }
  for (const key of keys) {
    const value = auths[key];
    if (!isRecord(value))
      throw new InvalidPullSecretError(source, `entry ${JSON.stringify(key)} is not an object`);
    let username = typeof value.username === 'string' ? value.username : '';
    let password = typeof value.password === 'string' ? value.password : '';
    if (typeof value.auth === 'string' && value.auth !== '') {
      const bytes = decodeStdBase64(value.auth);
      if (bytes === undefined) {
        throw new InvalidPullSecretError(
          source,
          `entry ${JSON.stringify(key)}: "auth" is not valid base64 (standard alphabet, with = padding); the kubelet cannot use this secret either`,
        );
      }
      const decoded = bytes.toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) {
        throw new InvalidPullSecretError(
          source,
          `entry ${JSON.stringify(key)}: "auth" is not base64 of user:password`,
        );
      }
      username = decoded.slice(0, colon);
      password = decoded.slice(colon + 1);
    }
    // Kept even when both are empty: the kubelet counts it as a match (tried anonymously, in order).
    entries.push({ key, credential: { username, password } });
  }
  return entries;
}

function parseJson(text: string, source: string): unknown {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > pullSecretBudget.maxBytes) throw tooLarge(source, bytes);
  try {
    return parseBudgetedJson(text, pullSecretBudget, 'the content');
  } catch (err) {
    if (err instanceof JsonTooLargeError)
      throw new InvalidPullSecretError(source, `${err.message}; remove unused registries`, { cause: err });
    throw new InvalidPullSecretError(source, 'the content is not valid JSON', { cause: err });
  }
}

function tooLarge(source: string, bytes: number): InvalidPullSecretError {
  return new InvalidPullSecretError(
    source,
    `${bytes} bytes or more, larger than the ${pullSecretBudget.maxBytes}-byte limit for a pull secret; remove unused registries`,
  );
}

/** Parses a docker `config.json` document (`{"auths": {...}}`). */
export function parseDockerConfigJson(text: string, source: string): DockerConfigEntry[] {
  const doc = parseJson(text, source);
  if (!isRecord(doc)) throw new InvalidPullSecretError(source, 'expected a JSON object with "auths"');
  if (doc.auths === undefined) return [];
  if (!isRecord(doc.auths)) throw new InvalidPullSecretError(source, '"auths" is not an object');
  return entriesOfAuthMap(doc.auths, source);
}

/** Parses a legacy `.dockercfg` document (the bare map of registry keys). */
export function parseDockerCfg(text: string, source: string): DockerConfigEntry[] {
  const doc = parseJson(text, source);
  if (!isRecord(doc)) throw new InvalidPullSecretError(source, 'expected a JSON object of registry entries');
  return entriesOfAuthMap(doc, source);
}

/**
 * Entries of a pull secret of either type. Other secret types, and secrets missing their key, yield an error:
 * the kubelet would ignore them, so the caller decides whether to skip (and report) or fail.
 */
export function entriesOfPullSecret(secret: PullSecretLike, source: string): DockerConfigEntry[] {
  const decode = (key: string): string => {
    const value = secret.data?.[key];
    if (value === undefined)
      throw new InvalidPullSecretError(source, `type ${secret.type ?? '(none)'} but no data key ${key}`);
    // Checked on the base64 text, before decoding: 4 characters carry 3 bytes.
    if (value.length > Math.ceil(pullSecretBudget.maxBytes / 3) * 4 + 4)
      throw tooLarge(source, Math.floor((value.length * 3) / 4));
    return Buffer.from(value, 'base64').toString('utf8');
  };
  switch (secret.type) {
    case dockerConfigJsonSecretType:
      return parseDockerConfigJson(decode(dockerConfigJsonKey), source);
    case dockerCfgSecretType:
      return parseDockerCfg(decode(dockerCfgKey), source);
    case undefined:
    default:
      throw new InvalidPullSecretError(
        source,
        `type ${JSON.stringify(secret.type ?? '')} is not ${dockerConfigJsonSecretType} or ${dockerCfgSecretType}`,
      );
  }
}
