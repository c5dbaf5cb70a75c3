// The credentials the kubelet would use for a pod: its imagePullSecrets, read by name from the pod's own namespace
// only, over the global pull secret. Missing or malformed secrets are skipped (the kubelet skips them too) and
// reported to `onSkipped`; credentials are never logged. The global secret comes from a caller-maintained cache.
import {
  Keyring,
  entriesOfPullSecret,
  type DockerConfigEntry,
  type PullSecretLike,
} from '../registry/index.js';
import type { Pod } from './pod-types.js';

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

  /** The pod's keyring: its own secrets in order, then the global secret. */
  async keyringFor(pod: Pod, signal: AbortSignal): Promise<Keyring> {
    const namespace = pod.metadata?.namespace ?? '';
    const names = (pod.spec?.imagePullSecrets ?? []).map((s) => s.name).filter((n): n is string => !!n);
    const podEntries: DockerConfigEntry[] = [];
    const secrets = await Promise.all(names.map((name) => this.options.getSecret(namespace, name, signal)));
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
