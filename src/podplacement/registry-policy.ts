// The cluster's registry policy for image inspection, from the objects OpenShift uses for it: ImageDigestMirrorSet,
// ImageTagMirrorSet (config.openshift.io/v1), the legacy ImageContentSourcePolicy (operator.openshift.io/v1alpha1)
// and `images.config.openshift.io/cluster` (spec.registrySources, whose containerRuntimeSearchRegistries say where
// short names are looked for), and what the nodes' policy.json would refuse (allowedRegistries, blockedRegistries,
// ClusterImagePolicy and ImagePolicy signature scopes, as the Machine Config Operator writes them; imageAdmission).
// Pure: the caller lists the objects; kinds the cluster does not serve are simply absent.
import type { KubeObject, ResourceType } from '../runtime/index.js';
import {
  registryHostKey,
  registryPolicyFrom,
  type AdmissionScope,
  type HostCaCertificates,
  type ImageAdmissionPolicy,
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
/**
 * Sigstore signature policies (OpenShift 4.20+; the v1alpha1 of Technology Preview clusters is not read). The MCO
 * writes them to the nodes' policy.json; ImagePolicy only to the policy file of its namespace.
 */
export const ClusterImagePolicies: ResourceType = {
  group: 'config.openshift.io',
  version: 'v1',
  plural: 'clusterimagepolicies',
  kind: 'ClusterImagePolicy',
  namespaced: false,
};
export const ImagePolicies: ResourceType = {
  group: 'config.openshift.io',
  version: 'v1',
  plural: 'imagepolicies',
  kind: 'ImagePolicy',
  namespaced: true,
};

/** Every kind the policy is read from, in a fixed order. */
export const REGISTRY_POLICY_KINDS: readonly ResourceType[] = [
  ImageDigestMirrorSets,
  ImageTagMirrorSets,
  ImageContentSourcePolicies,
  ImageConfigs,
  ClusterImagePolicies,
  ImagePolicies,
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

/** ClusterImagePolicy or ImagePolicy (config.openshift.io/v1), as far as the admission decision reads it. */
export interface SignaturePolicy extends KubeObject {
  spec?: { scopes?: string[]; policy?: { rootOfTrust?: { policyType?: string } } };
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
  /** Default: none. */
  readonly clusterImagePolicies?: readonly SignaturePolicy[];
  /** Of every namespace. Default: none. */
  readonly imagePolicies?: readonly SignaturePolicy[];
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
  const imageAdmission = imageAdmissionPolicy(
    sources,
    byName(objects.clusterImagePolicies ?? []),
    byName(objects.imagePolicies ?? []),
  );
  const policy = registryPolicyFrom({
    imageDigestMirrorSets: byName(objects.imageDigestMirrorSets),
    imageTagMirrorSets: byName(objects.imageTagMirrorSets),
    imageContentSourcePolicies: byName(objects.imageContentSourcePolicies),
    insecureRegistries: [...new Set([...(sources?.insecureRegistries ?? []), ...extraInsecureRegistries])],
    blockedRegistries: sources?.blockedRegistries ?? [],
    // They replace the nodes' list (the MCO's drop-in list replaces its base registries.conf's). Unset: Docker's
    // normalisation, though that base file lists registry.access.redhat.com before docker.io.
    searchRegistries: sources?.containerRuntimeSearchRegistries ?? [],
  });
  return imageAdmission === undefined ? policy : { ...policy, imageAdmission };
}

const ALLOWED_RULE = `image.config.openshift.io/${IMAGE_CONFIG_NAME} allowedRegistries`;
const BLOCKED_RULE = `image.config.openshift.io/${IMAGE_CONFIG_NAME} blockedRegistries`;

/**
 * True when policy scope `inner` lies inside scope `outer` (equal, a repository or namespace under it, or a host
 * under a `*.domain` wildcard), as the MCO decides it (runtime-utils ScopeIsNestedInsideScope). String operations
 * only.
 */
export function scopeNestedInside(inner: string, outer: string): boolean {
  if (inner === outer) return true;
  if (inner.length > outer.length && inner.startsWith(outer) && inner[outer.length] === '/') return true;
  if (!outer.startsWith('*.')) return false;
  const colon = inner.indexOf(':');
  if (colon >= 0) {
    const host = inner.slice(0, colon);
    return host.endsWith(outer.slice(1)) && !host.includes('/');
  }
  const slash = inner.indexOf('/');
  return (slash < 0 ? inner : inner.slice(0, slash)).endsWith(outer.slice(1));
}

/**
 * The nodes' policy.json as the MCO writes it from the cluster image config and the signature policies, or
 * undefined when it accepts everything. allowedRegistries: everything else is refused; blockedRegistries: each is
 * refused (the MCO refuses to render both at once, so the nodes keep their previous policy: then only the blocked
 * ones are enforced here, as mirrors.ts always did); each ClusterImagePolicy scope needs a signature, and each
 * ImagePolicy scope in its own namespace unless it lies inside a ClusterImagePolicy scope (the MCO drops it then).
 */
export function imageAdmissionPolicy(
  sources: NonNullable<ImageConfig['spec']>['registrySources'],
  clusterImagePolicies: readonly SignaturePolicy[],
  imagePolicies: readonly SignaturePolicy[],
): ImageAdmissionPolicy | undefined {
  const allowed = sources?.allowedRegistries ?? [];
  const blocked = sources?.blockedRegistries ?? [];
  const enforceAllowed = allowed.length > 0 && blocked.length === 0;
  const scopes: AdmissionScope[] = [];
  if (enforceAllowed)
    for (const scope of allowed) scopes.push({ scope, requirement: 'accept', rule: ALLOWED_RULE });
  for (const scope of blocked) scopes.push({ scope, requirement: 'reject', rule: BLOCKED_RULE });
  const clusterScopes: string[] = [];
  const signed = (kind: string, p: SignaturePolicy): string => {
    const type = p.spec?.policy?.rootOfTrust?.policyType;
    return `${kind} ${p.metadata?.name ?? ''}${type ? ` (policyType ${type})` : ''}`;
  };
  for (const p of clusterImagePolicies)
    for (const scope of p.spec?.scopes ?? []) {
      clusterScopes.push(scope);
      scopes.push({ scope, requirement: 'signed', rule: signed('ClusterImagePolicy', p) });
    }
  for (const p of imagePolicies) {
    const namespace = p.metadata?.namespace;
    if (!namespace) continue;
    for (const scope of p.spec?.scopes ?? []) {
      if (clusterScopes.some((outer) => scopeNestedInside(scope, outer))) continue;
      scopes.push({
        scope,
        requirement: 'signed',
        rule: `${signed('ImagePolicy', p)} in namespace ${namespace}`,
        namespace,
      });
    }
  }
  if (scopes.length === 0) return undefined;
  return enforceAllowed
    ? { defaultRequirement: 'reject', defaultRule: ALLOWED_RULE, scopes }
    : { defaultRequirement: 'accept', scopes };
}

/**
 * allowedRegistries the nodes' policy may not hold (empty when unset): set together with blockedRegistries, which
 * the MCO refuses to render, so this operator enforces only the blocked ones.
 */
export function unenforcedAllowedRegistries(imageConfigs: readonly ImageConfig[]): readonly string[] {
  const sources = imageConfigs.find((c) => c.metadata?.name === IMAGE_CONFIG_NAME)?.spec?.registrySources;
  return (sources?.blockedRegistries ?? []).length > 0 ? (sources?.allowedRegistries ?? []) : [];
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
export function additionalTrustedCas(data: Readonly<Record<string, string>> | undefined): {
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
