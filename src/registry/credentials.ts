// Builds a pod's Keyring from Secret objects the way the kubelet treats them: the pod's imagePullSecrets in
// order, then the global pull secret; a secret that cannot be used (wrong type, malformed) is skipped and
// reported, never fatal, since the kubelet would pull without it. The caller reads the Secrets (by name, in the
// pod's namespace) and decides how to surface `problems` (event, log) — their messages hold no credentials.
import { entriesOfPullSecret, type DockerConfigEntry, type PullSecretLike } from './docker-config.js';
import { InvalidPullSecretError } from './errors.js';
import { Keyring } from './keyring.js';

export interface NamedPullSecret {
  /** `namespace/name`, for messages. */
  readonly source: string;
  readonly secret: PullSecretLike;
}

export interface PodKeyring {
  readonly keyring: Keyring;
  /** Secrets that were skipped, with why. */
  readonly problems: readonly InvalidPullSecretError[];
}

function usableEntries(
  secrets: readonly NamedPullSecret[],
  problems: InvalidPullSecretError[],
): DockerConfigEntry[] {
  return secrets.flatMap(({ source, secret }) => {
    try {
      return entriesOfPullSecret(secret, source);
    } catch (err) {
      if (err instanceof InvalidPullSecretError) {
        problems.push(err);
        return [];
      }
      throw err;
    }
  });
}

/** The keyring for a pod: `podSecrets` (imagePullSecrets order) win over `globalSecret`. */
export function keyringFromSecrets(
  podSecrets: readonly NamedPullSecret[],
  globalSecret?: NamedPullSecret,
): PodKeyring {
  const problems: InvalidPullSecretError[] = [];
  const pod = usableEntries(podSecrets, problems);
  const global = globalSecret === undefined ? [] : usableEntries([globalSecret], problems);
  return { keyring: Keyring.of(pod, global), problems };
}
