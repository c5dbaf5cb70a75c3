// The cluster's registry policy for image inspection, from the objects OpenShift uses for it: ImageDigestMirrorSet,
// ImageTagMirrorSet (config.openshift.io/v1), the legacy ImageContentSourcePolicy (operator.openshift.io/v1alpha1)
// and `images.config.openshift.io/cluster` (spec.registrySources, whose containerRuntimeSearchRegistries say where
// short names are looked for). Pure: the caller lists the objects; kinds the cluster does not serve are simply
// absent. allowedRegistries is reported, not enforced (RegistryPolicy cannot say it).
import type { KubeObject, ResourceType } from '../runtime/index.js';
import {
  registryHostKey,
  registryPolicyFrom,
  type HostCaCertificates,
  type RegistryPolicy,
} from '../registry/index.js';

export const ImageDigestMirrorSets: ResourceType = {
  group: 'config.openshift.io',
  version: 'v1',
  plural: 'imagedigestmirrorsets',
  kind: 'ImageDigestMirrorSet',
  namespaced: false,
};
export const ImageTagMirrorSets: ResourceType = {
  group: 'config.openshift.io',
  version: 'v1',
  plural: 'imagetagmirrorsets',
  kind: 'ImageTagMirrorSet',
  namespaced: false,
};
export const ImageContentSourcePolicies: ResourceType = {
  group: 'operator.openshift.io',
  version: 'v1alpha1',
  plural: 'imagecontentsourcepolicies',
  kind: 'ImageContentSourcePolicy',
  namespaced: false,
};
/** `image.config.openshift.io`; only the object named IMAGE_CONFIG_NAME counts. */
export const ImageConfigs: ResourceType = {
  group: 'config.openshift.io',
  version: 'v1',
  plural: 'images',
  kind: 'Image',
  namespaced: false,
};
export const IMAGE_CONFIG_NAME = 'cluster';

/** Every kind the policy is read from, in a fixed order. */
export const REGISTRY_POLICY_KINDS: readonly ResourceType[] = [
  ImageDigestMirrorSets,
  ImageTagMirrorSets,
  ImageContentSourcePolicies,
  ImageConfigs,
];

interface MirrorEntry {
  source?: string;
  mirrors?: string[];
  mirrorSourcePolicy?: string;
}
export interface ImageDigestMirrorSet extends KubeObject {
  spec?: { imageDigestMirrors?: MirrorEntry[] };
}
export interface ImageTagMirrorSet extends KubeObject {
  spec?: { imageTagMirrors?: MirrorEntry[] };
}
export interface ImageContentSourcePolicy extends KubeObject {
  spec?: { repositoryDigestMirrors?: MirrorEntry[] };
}
export interface ImageConfig extends KubeObject {
  spec?: {
    registrySources?: {
      insecureRegistries?: string[];
      blockedRegistries?: string[];
      allowedRegistries?: string[];
      /** Where CRI-O looks for a short name, in order (the MCO writes them to the nodes' registries.conf.d). */
      containerRuntimeSearchRegistries?: string[];
    };
    /** A ConfigMap in ADDITIONAL_TRUSTED_CA_NAMESPACE: key = registry host (`host..port`), value = PEM CA bundle. */
    additionalTrustedCA?: { name?: string };
  };
}

/** Where OpenShift looks for the ConfigMap named by `spec.additionalTrustedCA` of image.config.openshift.io/cluster. */
export const ADDITIONAL_TRUSTED_CA_NAMESPACE = 'openshift-config';

/** What the cluster holds; a kind it does not serve is an empty list. */
export interface RegistryPolicyObjects {
  readonly imageDigestMirrorSets: readonly ImageDigestMirrorSet[];
  readonly imageTagMirrorSets: readonly ImageTagMirrorSet[];
  readonly imageContentSourcePolicies: readonly ImageContentSourcePolicy[];
  /** Objects of ImageConfigs; all but `cluster` are ignored, as OpenShift does. */
  readonly imageConfigs: readonly ImageConfig[];
}

/**
 * The policy for RegistryInspector. `extraInsecureRegistries` (operator flags) are added to the cluster's.
 * Objects are taken in name order so the result does not depend on cache order.
 */
export function clusterRegistryPolicy(
  objects: RegistryPolicyObjects,
  extraInsecureRegistries: readonly string[] = [],
): RegistryPolicy {
  const byName = <T extends KubeObject>(list: readonly T[]): T[] =>
    [...list].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  const sources = objects.imageConfigs.find((c) => c.metadata?.name === IMAGE_CONFIG_NAME)?.spec
    ?.registrySources;
  return registryPolicyFrom({
    imageDigestMirrorSets: byName(objects.imageDigestMirrorSets),
    imageTagMirrorSets: byName(objects.imageTagMirrorSets),
    imageContentSourcePolicies: byName(objects.imageContentSourcePolicies),
    insecureRegistries: [...new Set([...(sources?.insecureRegistries ?? []), ...extraInsecureRegistries])],
    blockedRegistries: sources?.blockedRegistries ?? [],
    // They replace the nodes' list (the MCO's drop-in list replaces its base registries.conf's). Unset: Docker's
    // normalisation, though that base file lists registry.access.redhat.com before docker.io.
    searchRegistries: sources?.containerRuntimeSearchRegistries ?? [],
  });
}

/** allowedRegistries of the cluster image config, which this operator does not enforce (empty when unset). */
export function unenforcedAllowedRegistries(imageConfigs: readonly ImageConfig[]): readonly string[] {
  return (
    imageConfigs.find((c) => c.metadata?.name === IMAGE_CONFIG_NAME)?.spec?.registrySources
      ?.allowedRegistries ?? []
  );
}

/** The ConfigMap name in `spec.additionalTrustedCA` of the cluster image config (undefined when unset). */
export function additionalTrustedCaName(imageConfigs: readonly ImageConfig[]): string | undefined {
  const name = imageConfigs.find((c) => c.metadata?.name === IMAGE_CONFIG_NAME)?.spec?.additionalTrustedCA
    ?.name;
  return name ? name : undefined;
}

/** One additionalTrustedCA entry: the registry host its key names (registryHostKey form) and that key's PEM bundle. */
export interface RegistryCaBundle {
  readonly host: string;
  readonly pem: string;
}

/**
 * The registry host an additionalTrustedCA key names: `registry.example` or, for a port, `registry.example..5000`
 * (ConfigMap keys cannot hold `:`), in registryHostKey form (`registry.example:5000`; `..443` is the plain name).
 * Undefined for a key that names no host.
 */
export function additionalTrustedCaHost(key: string): string | undefined {
  const parts = key.split('..');
  if (parts.length > 2) return undefined;
  const [name = '', port] = parts;
  if (port !== undefined && !/^\d{1,5}$/.test(port)) return undefined;
  return registryHostKey(port === undefined ? name : `${name}:${port}`);
}

/**
 * The CA bundles of an additionalTrustedCA ConfigMap (`data`: registry host -> PEM), in key order, each for the
 * host its key names only (as OpenShift writes them to /etc/docker/certs.d/<host[:port]>/ for CRI-O), and the keys
 * that name no host or whose value holds no PEM certificate (reported, not trusted).
 */
export function additionalTrustedCAs(data: Readonly<Record<string, string>> | undefined): {
  bundles: RegistryCaBundle[];
  ignoredKeys: string[];
} {
  const bundles: RegistryCaBundle[] = [];
  const ignoredKeys: string[] = [];
  for (const key of Object.keys(data ?? {}).sort()) {
    const value = data?.[key];
    const host = additionalTrustedCaHost(key);
    if (host !== undefined && typeof value === 'string' && value.includes('-----BEGIN CERTIFICATE-----'))
      bundles.push({ host, pem: value });
    else ignoredKeys.push(key);
  }
  return { bundles, ignoredKeys };
}

/** The bundles by host, as the registry transport takes them (two keys naming one host: both bundles). */
export function hostCaCertificatesOf(bundles: readonly RegistryCaBundle[]): HostCaCertificates {
  const byHost = new Map<string, string[]>();
  for (const { host, pem } of bundles) byHost.set(host, [...(byHost.get(host) ?? []), pem]);
  return byHost;
}

/** True when both policies send every reference to the same places with the same trust. */
export function samePolicy(a: RegistryPolicy, b: RegistryPolicy): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** One `/apis/<group>/<version>` discovery document (APIResourceList), as far as it is read here. */
export interface ApiResourceList {
  readonly groupVersion?: string;
  readonly resources?: readonly { readonly name: string }[];
}

/**
 * The kinds the API server serves, from the discovery documents of their group versions (`undefined` for a group
 * version that answered 404). Subresources (`images/status`) never count as a kind.
 */
export function servedKinds(
  wanted: readonly ResourceType[],
  discovery: ReadonlyMap<string, ApiResourceList | undefined>,
): ResourceType[] {
  return wanted.filter((t) =>
    (discovery.get(`${t.group}/${t.version}`)?.resources ?? []).some((r) => r.name === t.plural),
  );
}
