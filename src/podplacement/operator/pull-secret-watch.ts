// Pull secrets for image inspection: the global pull secret (watched, one object by name) and the pods' own
// imagePullSecrets (read by name in the pod's namespace, briefly cached). Registry answers cached under the old
// global credentials may be wrong under the new ones, so a change of its data purges the inspection cache.
import {
  ResourceClient,
  Secrets,
  ignoreNotFound,
  type KubeClient,
  type KubeObject,
  type Logger,
  type SharedInformer,
  type SharedInformerFactory,
} from '../../runtime/index.js';
import type { PullSecretLike } from '../../registry/index.js';
import { briefSecretCache } from '../pull-secret-cache.js';
import { PullSecretResolver } from '../pull-secrets.js';

/** What is compared to tell a change of the global pull secret: its data (null when the Secret is absent). */
export function pullSecretFingerprint(secret: PullSecretLike | undefined): string {
  return JSON.stringify(secret?.data ?? null);
}

/**
 * Whether `secret` changes the global pull secret last seen as `previous` (a fingerprint; undefined before the
 * first observation, which is no change). Pure.
 */
export function globalPullSecretChange(
  previous: string | undefined,
  secret: PullSecretLike | undefined,
): { fingerprint: string; changed: boolean } {
  const fingerprint = pullSecretFingerprint(secret);
  return { fingerprint, changed: previous !== undefined && fingerprint !== previous };
}

export interface GlobalPullSecretWatchOptions {
  informers: SharedInformerFactory;
  /** Default in the operator: openshift-config/pull-secret. */
  ref: { namespace: string; name: string };
  /** Called when the secret's data changes (not on the first observation). */
  purgeInspectionCache: () => void;
  logger: Logger;
}

export class GlobalPullSecretWatch {
  private readonly informer: SharedInformer<PullSecretLike & KubeObject>;
  private fingerprint: string | undefined;

  constructor(private readonly o: GlobalPullSecretWatchOptions) {
    this.informer = o.informers.informerFor<PullSecretLike & KubeObject>({
      type: Secrets,
      namespace: o.ref.namespace,
      fieldSelector: `metadata.name=${o.ref.name}`,
    });
    this.informer.addEventHandler({
      onAdd: (s) => this.observe(s),
      onUpdate: (_old, s) => this.observe(s),
      onDelete: () => this.observe(undefined),
    });
  }

  /** The cached global pull secret, or undefined. */
  current(): PullSecretLike | undefined {
    return this.informer.getIndexer().get(`${this.o.ref.namespace}/${this.o.ref.name}`);
  }

  private observe(secret: PullSecretLike | undefined): void {
    const { fingerprint, changed } = globalPullSecretChange(this.fingerprint, secret);
    this.fingerprint = fingerprint;
    if (!changed) return;
    this.o.purgeInspectionCache();
    this.o.logger.info(
      { secret: `${this.o.ref.namespace}/${this.o.ref.name}` },
      'global pull secret changed; image inspection cache purged',
    );
  }
}

/** The resolver of a pod's credentials: its imagePullSecrets (GET by name, briefly cached) over the global one. */
export function createPullSecretResolver(
  client: KubeClient,
  global: GlobalPullSecretWatch,
  logger: Logger,
): PullSecretResolver {
  const secrets = new ResourceClient<PullSecretLike & KubeObject>(client, Secrets);
  return new PullSecretResolver({
    getSecret: briefSecretCache((namespace, name, signal) =>
      ignoreNotFound(secrets.get({ namespace, name }, signal)),
    ),
    globalSecret: () => global.current(),
    onSkipped: (secret, reason) => logger.debug({ secret, reason }, 'pull secret skipped'),
    onLookupBudgetExceeded: (pod, image, maxSteps) =>
      logger.warn(
        { pod, image, maxSteps },
        "matching the image against the pod's pull secret registry keys took more than the lookup budget; only the credentials matched before it are tried: simplify the secrets' wildcard keys",
      ),
  });
}
