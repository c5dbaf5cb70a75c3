// Reads registry credentials from Kubernetes pull secrets: `kubernetes.io/dockerconfigjson` (`{"auths": {...}}`
// under `.dockerconfigjson`) and `kubernetes.io/dockercfg` (the bare map under `.dockercfg`), as the kubelet does:
// an `auth` field (base64 `user:password`) overrides `username`/`password`. Pure; a malformed secret throws
// InvalidPullSecretError naming the secret and the entry, never the credentials.
import { InvalidPullSecretError } from './errors.js';

export const dockerConfigJsonSecretType = 'kubernetes.io/dockerconfigjson';
export const dockerCfgSecretType = 'kubernetes.io/dockercfg';
export const dockerConfigJsonKey = '.dockerconfigjson';
export const dockerCfgKey = '.dockercfg';

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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function entriesOfAuthMap(auths: Record<string, unknown>, source: string): DockerConfigEntry[] {
  const entries: DockerConfigEntry[] = [];
  for (const [key, value] of Object.entries(auths)) {
    if (!isRecord(value))
      throw new InvalidPullSecretError(source, `entry ${JSON.stringify(key)} is not an object`);
    let username = typeof value.username === 'string' ? value.username : '';
    let password = typeof value.password === 'string' ? value.password : '';
    if (typeof value.auth === 'string' && value.auth !== '') {
      const decoded = Buffer.from(value.auth, 'base64').toString('utf8');
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
    // An entry without any credential would only turn an anonymous pull into a failing authenticated one.
    if (username === '' && password === '') continue;
    entries.push({ key, credential: { username, password } });
  }
  return entries;
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidPullSecretError(source, 'the content is not valid JSON', { cause: err });
  }
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
    return Buffer.from(value, 'base64').toString('utf8');
  };
  switch (secret.type) {
    case dockerConfigJsonSecretType:
      return parseDockerConfigJson(decode(dockerConfigJsonKey), source);
    case dockerCfgSecretType:
      return parseDockerCfg(decode(dockerCfgKey), source);
    default:
      throw new InvalidPullSecretError(
        source,
        `type ${JSON.stringify(secret.type ?? '')} is not ${dockerConfigJsonSecretType} or ${dockerCfgSecretType}`,
      );
  }
}
