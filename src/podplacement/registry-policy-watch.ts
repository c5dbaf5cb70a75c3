// Keeps the registry policy current: recomputes it (clusterRegistryPolicy) from the informers of the policy kinds the
// cluster serves on every add/update/delete, and calls onChange only when the result differs, so the caller purges
// its inspection cache exactly when inspections could now answer differently. current() is always the latest
// policy (empty until the informers deliver). discoverPolicyKinds() asks the API server once which kinds exist.
import type { KubeClient, KubeObject, KubeList, Logger, ResourceType } from '../runtime/index.js';
import { ConfigMaps, isNotFound, resourcePath } from '../runtime/index.js';
import type { RegistryPolicy } from '../registry/index.js';
import {
  ADDITIONAL_TRUSTED_CA_NAMESPACE,
  IMAGE_CONFIG_NAME,
  additionalTrustedCAs,
  additionalTrustedCaName,
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

/**
 * The CA certificates of the cluster's `image.config.openshift.io/cluster` spec.additionalTrustedCA ConfigMap (in
 * openshift-config), which registries are trusted with on OpenShift. Empty when the kind is not served (`kinds`, from
 * discoverPolicyKinds), the image config or its ConfigMap is missing (logged).
 */
export async function readAdditionalTrustedCAs(
  client: Pick<KubeClient, 'request'>,
  kinds: readonly ResourceType[],
  logger: Logger,
  signal?: AbortSignal,
): Promise<string[]> {
  if (!kinds.includes(ImageConfigs)) return [];
  const get = async <T>(path: string): Promise<T | undefined> => {
    try {
      return await client.request<T>({ method: 'GET', path, signal });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const imageConfig = await get<ImageConfig>(resourcePath(ImageConfigs, undefined, IMAGE_CONFIG_NAME));
  const name = additionalTrustedCaName(imageConfig ? [imageConfig] : []);
  if (!name) return [];
  const configMap = await get<{ data?: Record<string, string> }>(
    resourcePath(ConfigMaps, ADDITIONAL_TRUSTED_CA_NAMESPACE, name),
  );
  if (!configMap) {
    logger.warn(
      { configMap: `${ADDITIONAL_TRUSTED_CA_NAMESPACE}/${name}` },
      'image.config.openshift.io/cluster names an additionalTrustedCA ConfigMap that does not exist; its registries are not trusted',
    );
    return [];
  }
  const { certificates, ignoredKeys } = additionalTrustedCAs(configMap.data);
  if (ignoredKeys.length > 0)
    logger.warn(
      { configMap: `${ADDITIONAL_TRUSTED_CA_NAMESPACE}/${name}`, keys: ignoredKeys },
      'additionalTrustedCA entries without a PEM certificate are ignored',
    );
  return certificates;
}

/**
 * What a one-shot command trusts, read the way the operator reads it: the registry policy of the served policy
 * kinds (clusterRegistryPolicy, as RegistryPolicyWatch computes it) and the additionalTrustedCA certificates.
 */
export async function readRegistryTrust(
  client: Pick<KubeClient, 'request'>,
  logger: Logger,
  signal?: AbortSignal,
): Promise<{ policy: RegistryPolicy; caCertificates: string[] }> {
  const kinds = await discoverPolicyKinds(client, logger, signal);
  const list = async (type: ResourceType): Promise<KubeObject[]> =>
    kinds.includes(type)
      ? ((await client.request<KubeList<KubeObject>>({ method: 'GET', path: resourcePath(type), signal }))
          .items ?? [])
      : [];
  const objects: RegistryPolicyObjects = {
    imageDigestMirrorSets: await list(ImageDigestMirrorSets),
    imageTagMirrorSets: await list(ImageTagMirrorSets),
    imageContentSourcePolicies: await list(ImageContentSourcePolicies),
    imageConfigs: (await list(ImageConfigs)) as ImageConfig[],
  };
  return {
    policy: clusterRegistryPolicy(objects),
    caCertificates: await readAdditionalTrustedCAs(client, kinds, logger, signal),
  };
}
