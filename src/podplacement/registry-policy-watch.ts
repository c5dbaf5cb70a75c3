// Keeps the registry policy current: recomputes it (clusterRegistryPolicy) from the informers of the policy kinds the
// cluster serves on every add/update/delete, and calls onChange only when the result differs, so the caller purges
// its inspection cache exactly when inspections could now answer differently. current() is always the latest
// policy (empty until the informers deliver). discoverPolicyKinds() asks the API server once which kinds exist.
import type { KubeClient, KubeObject, Logger, ResourceType } from '../runtime/index.js';
import { isNotFound } from '../runtime/index.js';
import type { RegistryPolicy } from '../registry/index.js';
import {
  ImageConfigs,
  ImageContentSourcePolicies,
  ImageDigestMirrorSets,
  ImageTagMirrorSets,
  REGISTRY_POLICY_KINDS,
  clusterRegistryPolicy,
  samePolicy,
  servedKinds,
  unenforcedAllowedRegistries,
  type ApiResourceList,
  type ImageConfig,
  type RegistryPolicyObjects,
} from './registry-policy.js';

/** The part of a shared informer this watch uses. */
export interface PolicyInformer {
  getIndexer(): { list(): KubeObject[] };
  addEventHandler(handler: {
    onAdd?(obj: KubeObject): void;
    onUpdate?(oldObj: KubeObject, newObj: KubeObject): void;
    onDelete?(obj: KubeObject): void;
  }): unknown;
}

export interface RegistryPolicyWatchOptions {
  /** One informer per served policy kind (see discoverPolicyKinds); a kind without one counts as empty. */
  informerFor: (type: ResourceType) => PolicyInformer;
  kinds: readonly ResourceType[];
  /** Added to the cluster's insecure registries (operator flags). Default: none. */
  extraInsecureRegistries?: readonly string[];
  /** Called after the policy changed (not for the first, empty policy). */
  onChange?: (policy: RegistryPolicy) => void;
  logger: Logger;
}

export class RegistryPolicyWatch {
  private policy: RegistryPolicy;
  private readonly informers = new Map<ResourceType, PolicyInformer>();
  private warnedAllowed = '';

  constructor(private readonly o: RegistryPolicyWatchOptions) {
    this.policy = clusterRegistryPolicy(
      {
        imageDigestMirrorSets: [],
        imageTagMirrorSets: [],
        imageContentSourcePolicies: [],
        imageConfigs: [],
      },
      o.extraInsecureRegistries,
    );
    for (const kind of o.kinds) {
      const informer = o.informerFor(kind);
      this.informers.set(kind, informer);
      const recompute = (): void => this.recompute();
      informer.addEventHandler({ onAdd: recompute, onUpdate: recompute, onDelete: recompute });
    }
  }

  /** The policy to apply now; cheap, call it per inspection. */
  current(): RegistryPolicy {
    return this.policy;
  }

  private list(kind: ResourceType): KubeObject[] {
    return this.informers.get(kind)?.getIndexer().list() ?? [];
  }

  private recompute(): void {
    const objects: RegistryPolicyObjects = {
      imageDigestMirrorSets: this.list(ImageDigestMirrorSets),
      imageTagMirrorSets: this.list(ImageTagMirrorSets),
      imageContentSourcePolicies: this.list(ImageContentSourcePolicies),
      imageConfigs: this.list(ImageConfigs) as ImageConfig[],
    };
    const next = clusterRegistryPolicy(objects, this.o.extraInsecureRegistries);
    const allowed = unenforcedAllowedRegistries(objects.imageConfigs).join(',');
    if (allowed !== this.warnedAllowed) {
      this.warnedAllowed = allowed;
      if (allowed)
        this.o.logger.warn(
          { allowedRegistries: allowed },
          'image.config.openshift.io/cluster sets allowedRegistries, which image inspection does not enforce; list the others in blockedRegistries to keep the operator from contacting them',
        );
    }
    if (samePolicy(next, this.policy)) return;
    this.policy = next;
    this.o.logger.info(
      {
        digestMirrorRules: next.digestMirrors.length,
        tagMirrorRules: next.tagMirrors.length,
        insecureRegistries: next.insecureRegistries,
        blockedRegistries: next.blockedRegistries,
      },
      'registry policy changed',
    );
    this.o.onChange?.(next);
  }
}

/**
 * The policy kinds this API server serves, from one discovery request per group version. A group version that is
 * not installed (404, plain Kubernetes) is skipped and logged at info; any other failure is thrown.
 */
export async function discoverPolicyKinds(
  client: Pick<KubeClient, 'request'>,
  logger: Logger,
  signal?: AbortSignal,
): Promise<ResourceType[]> {
  const discovery = new Map<string, ApiResourceList | undefined>();
  for (const gv of new Set(REGISTRY_POLICY_KINDS.map((k) => `${k.group}/${k.version}`))) {
    try {
      discovery.set(
        gv,
        await client.request<ApiResourceList>({ method: 'GET', path: `/apis/${gv}`, signal }),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
      discovery.set(gv, undefined);
    }
  }
  const served = servedKinds(REGISTRY_POLICY_KINDS, discovery);
  const missing = REGISTRY_POLICY_KINDS.filter((k) => !served.includes(k));
  if (missing.length > 0)
    logger.info(
      { kinds: missing.map((k) => `${k.plural}.${k.group}`) },
      'registry policy kinds not served by this cluster; their mirrors and registry rules do not apply',
    );
  return served;
}
