// The credentials the kubelet would use for a pod: its imagePullSecrets (which already include its service
// account's: the ServiceAccount admission plugin copies them into the pod), read by name from the pod's own
// namespace only, over the global pull secret. A pod can never make the operator use a Secret of another
// namespace: the namespace is always the pod's, and a name that is not a valid Secret name (`other-ns/x`,
// `../x`, anything with `/` or `%`) is skipped before any request. At most MAX_PULL_SECRETS_PER_POD distinct
// names are read per pod (the pod spec is tenant input). Missing or malformed secrets are skipped (the kubelet
// skips them too) and reported to `onSkipped`; credentials are never logged. The global secret comes from a
// caller-maintained cache.
import {
  Keyring,
  entriesOfPullSecret,
  type DockerConfigEntry,
  type PullSecretLike,
} from '../registry/index.js';
import { isDnsSubdomain } from '../runtime/index.js';
import type { Pod } from './pod-types.js';

/** Distinct imagePullSecrets names read for one pod; the rest are skipped (and reported). */
export const MAX_PULL_SECRETS_PER_POD = 32;

/** Reads one Secret by namespace and name; resolves undefined when it does not exist. Consumer-owned. */
export type SecretGetter = (
  namespace: string,
  name: string,
  signal: AbortSignal,
) => Promise<PullSecretLike | undefined>;

export interface PullSecretResolverOptions {
  getSecret: SecretGetter;
  /** The current global pull secret, or undefined when absent. */
  globalSecret: () => PullSecretLike | undefined;
  /** Told about each secret that was skipped and why (no credentials in the text). */
  onSkipped?: (secret: string, reason: string) => void;
}

/**
 * The Secret names a pod may use, in order, each once: valid Secret names (DNS-1123 subdomains) only, at most
 * MAX_PULL_SECRETS_PER_POD. Pure; `skipped` lists the refused entries with the reason.
 */
export function podPullSecretNames(pod: Pod): {
  names: string[];
  skipped: { name: string; reason: string }[];
} {
  const names: string[] = [];
  const skipped: { name: string; reason: string }[] = [];
  const seen = new Set<string>();
  for (const ref of pod.spec?.imagePullSecrets ?? []) {
    const name = typeof ref?.name === 'string' ? ref.name : '';
    if (name === '' || seen.has(name)) continue;
    seen.add(name);
    if (!isDnsSubdomain(name)) {
      skipped.push({
        name: name.length > 64 ? `${name.slice(0, 64)}...` : name,
        reason:
          "not a valid Secret name; imagePullSecrets name Secrets of the pod's own namespace only, so it is not used",
      });
    } else if (names.length >= MAX_PULL_SECRETS_PER_POD) {
      skipped.push({ name, reason: `more than ${MAX_PULL_SECRETS_PER_POD} imagePullSecrets; not used` });
    } else {
      names.push(name);
    }
  }
  return { names, skipped };
}

export class PullSecretResolver {
  constructor(private readonly options: PullSecretResolverOptions) {}

  /** Entries of the global pull secret (empty when absent or malformed). */
  globalEntries(): DockerConfigEntry[] {
    const secret = this.options.globalSecret();
    if (!secret) return [];
    try {
      return entriesOfPullSecret(secret, 'global pull secret');
    } catch (err) {
      this.options.onSkipped?.('global pull secret', err instanceof Error ? err.message : String(err));
      return [];
    }
  }

  /** The pod's keyring: its own secrets (from its own namespace) in order, then the global secret. */
  async keyringFor(pod: Pod, signal: AbortSignal): Promise<Keyring> {
    const namespace = pod.metadata?.namespace ?? '';
    const { names, skipped } = podPullSecretNames(pod);
    for (const s of skipped) this.options.onSkipped?.(`secret ${namespace}/${s.name}`, s.reason);
    const podEntries: DockerConfigEntry[] = [];
    // No namespace, no secrets: an empty namespace must never turn into a cluster-wide read.
    const secrets =
      namespace === ''
        ? []
        : await Promise.all(names.map((name) => this.options.getSecret(namespace, name, signal)));
    secrets.forEach((secret, i) => {
      const source = `secret ${namespace}/${names[i] ?? ''}`;
      if (!secret) {
        this.options.onSkipped?.(source, 'not found');
        return;
      }
      try {
        podEntries.push(...entriesOfPullSecret(secret, source));
      } catch (err) {
        this.options.onSkipped?.(source, err instanceof Error ? err.message : String(err));
      }
    });
    return Keyring.of(podEntries, this.globalEntries());
  }
}
