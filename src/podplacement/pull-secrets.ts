// The credentials the kubelet would use for a pod: its imagePullSecrets (which already include its service
// account's: the ServiceAccount admission plugin copies them into the pod), read by name from the pod's own
// namespace only, over the global pull secret. A pod can never make the operator use a Secret of another
// namespace: the namespace is always the pod's, and a name that is not a valid Secret name (`other-ns/x`,
// `../x`, anything with `/` or `%`) is skipped before any request. At most MAX_PULL_SECRETS_PER_POD distinct
// names are read per pod (the pod spec is tenant input). Missing or malformed secrets are skipped (the kubelet
// skips them too) and reported to `onSkipped`; credentials are never logged. The global secret comes from a
// caller-maintained cache. Each Secret object is parsed once (its keys indexed and compiled): a later reconcile
// that gets the same object (from that cache, or the brief by-name cache) reuses it, and every lookup in the pod's
// keyring is capped at `maxKeyringLookupSteps` comparisons, reported to `onLookupBudgetExceeded` when reached.
import {
  DEFAULT_MAX_KEYRING_LOOKUP_STEPS,
  Keyring,
  RegistryError,
  SecretKeys,
  entriesOfPullSecret,
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
  /**
   * Most comparison steps one credential lookup for an image spends over all of a pod's registry keys (the
   * keys are tenant input: wildcard keys can be built to cost quadratic time). Default:
   * DEFAULT_MAX_KEYRING_LOOKUP_STEPS (200,000, a few milliseconds).
   */
  maxKeyringLookupSteps?: number;
  /**
   * Told when a lookup for `image` of `pod` (namespace/name) ran out of steps: it got only the credentials matched
   * before that. Default: nothing is told.
   */
  onLookupBudgetExceeded?: (pod: string, image: string, maxSteps: number) => void;
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
  /**
   * Each Secret object's parsed keys (or why it cannot be used), held only as long as whoever handed out the object
   * (the informer, the byte-bounded brief cache) keeps it: no entry outlives its Secret.
   */
  private readonly parsed = new WeakMap<PullSecretLike, SecretKeys | RegistryError>();

  constructor(private readonly options: PullSecretResolverOptions) {}

  /** The secret's keys, parsed on first sight of this object; an unusable secret is reported and yields none. */
  private keysOf(secret: PullSecretLike, source: string): SecretKeys {
    let keys = this.parsed.get(secret);
    if (keys === undefined) {
      try {
        keys = SecretKeys.of(entriesOfPullSecret(secret, source));
      } catch (err) {
        if (!(err instanceof RegistryError)) throw err; // entriesOfPullSecret throws only InvalidPullSecretError
        keys = err;
      }
      this.parsed.set(secret, keys);
    }
    if (keys instanceof SecretKeys) return keys;
    // The message names the source it was first read under: the same Secret object, so the same name.
    this.options.onSkipped?.(source, keys.message);
    return SecretKeys.empty;
  }

  /** Keys of the global pull secret (none when absent or malformed). */
  globalKeys(): SecretKeys {
    const secret = this.options.globalSecret();
    return secret ? this.keysOf(secret, 'global pull secret') : SecretKeys.empty;
  }

  /** The pod's keyring: its own secrets (from its own namespace) in order, then the global secret. */
  async keyringFor(pod: Pod, signal: AbortSignal): Promise<Keyring> {
    const namespace = pod.metadata?.namespace ?? '';
    const { names, skipped } = podPullSecretNames(pod);
    for (const s of skipped) this.options.onSkipped?.(`secret ${namespace}/${s.name}`, s.reason);
    const podKeys: SecretKeys[] = [];
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
      podKeys.push(this.keysOf(secret, source));
    });
    const podName = `${namespace}/${pod.metadata?.name ?? ''}`;
    const report = this.options.onLookupBudgetExceeded;
    return Keyring.fromSecrets(podKeys, this.globalKeys(), {
      maxLookupSteps: this.options.maxKeyringLookupSteps ?? DEFAULT_MAX_KEYRING_LOOKUP_STEPS,
      ...(report ? { onLookupBudgetExceeded: (image, max) => report(podName, image, max) } : {}),
    });
  }
}
