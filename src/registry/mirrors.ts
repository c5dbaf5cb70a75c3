// Where to pull a reference from, per the cluster's registry policy: ImageDigestMirrorSet and (legacy)
// ImageContentSourcePolicy mirrors apply to digest references, ImageTagMirrorSet mirrors to tag references;
// the most specific matching source wins, its mirrors are tried in order, then the source itself unless a rule
// says NeverContactSource. Blocked registries refuse the reference (a blocked mirror is skipped); insecure
// registries are reached without TLS verification. Pure: the caller reads the policy objects from the cluster.
import { RegistryError } from './errors.js';
import type { ImageAdmissionPolicy } from './image-admission.js';
import type { RepositoryLocation } from './distribution-client.js';
import { referenceName, type ImageReference } from './reference.js';

/** One source -> mirrors rule. `source`/`mirrors` are `host[:port][/path]`, or `*.domain` for a source. */
export interface MirrorRule {
  readonly source: string;
  readonly mirrors: readonly string[];
  /** Do not fall back to the source when every mirror fails. Default: false. */
  readonly neverContactSource?: boolean;
}

export interface RegistryPolicy {
  /** From ImageDigestMirrorSet.spec.imageDigestMirrors and ImageContentSourcePolicy.spec.repositoryDigestMirrors. */
  readonly digestMirrors: readonly MirrorRule[];
  /** From ImageTagMirrorSet.spec.imageTagMirrors. */
  readonly tagMirrors: readonly MirrorRule[];
  /** `host[:port][/path]` or `*.domain` patterns reached without TLS verification (or over http). */
  readonly insecureRegistries: readonly string[];
  /** Patterns nothing is pulled from. */
  readonly blockedRegistries: readonly string[];
  /**
   * Where the nodes' runtime looks for a short name (`nginx`), in order: `host[:port]` (registries.conf
   * `unqualified-search-registries`). Absent or empty: Docker Hub, by Docker's normalisation (short-names.ts).
   */
  readonly searchRegistries?: readonly string[];
  /**
   * What the nodes' policy.json would refuse (allowedRegistries, blockedRegistries, image signature policies;
   * image-admission.ts): a refused image is not inspected. Absent: the nodes accept anything.
   */
  readonly imageAdmission?: ImageAdmissionPolicy;
}

export const emptyRegistryPolicy: RegistryPolicy = {
  digestMirrors: [],
  tagMirrors: [],
  insecureRegistries: [],
  blockedRegistries: [],
};

/** One place to try, in order. */
export interface PullSource extends RepositoryLocation {
  /** True for a mirror, false for the reference's own registry. */
  readonly mirror: boolean;
}

/**
 * How strongly `pattern` matches `name` (`registry/repository`): the pattern length for an exact or
 * path-prefix match, 0 for a `*.domain` wildcard (less specific than any literal), -1 when
 * it does not match.
 */
export function patternMatch(pattern: string, name: string): number {
  if (pattern.startsWith('*.')) {
    const host = name.split('/')[0] ?? '';
    const hostname = host.replace(/:\d+$/, '');
    return hostname.endsWith(pattern.slice(1)) && hostname.length > pattern.length - 1 ? 0 : -1;
  }
  if (name === pattern || name.startsWith(`${pattern}/`)) return pattern.length;
  return -1;
}

function matchesAny(patterns: readonly string[], name: string): boolean {
  return patterns.some((p) => patternMatch(p, name) >= 0);
}

/** True when `host[:port]` as a whole (not only some path under it) is an insecure registry of `policy`. */
export function isInsecureHost(policy: RegistryPolicy, host: string): boolean {
  return matchesAny(policy.insecureRegistries, host);
}

/** Rules of the most specific matching source, merged (mirrors concatenated in order, without duplicates). */
function bestRules(
  rules: readonly MirrorRule[],
  name: string,
): { source: string; mirrors: string[]; neverContactSource: boolean } | undefined {
  let best = -1;
  let chosen: MirrorRule[] = [];
  for (const rule of rules) {
    const score = patternMatch(rule.source, name);
    if (score < 0) continue;
    if (score > best) {
      best = score;
      chosen = [rule];
    } else if (score === best && rule.source === chosen[0]?.source) chosen.push(rule);
  }
  const first = chosen[0];
  if (first === undefined) return undefined;
  return {
    source: first.source,
    mirrors: [...new Set(chosen.flatMap((r) => r.mirrors))],
    neverContactSource: chosen.some((r) => r.neverContactSource === true),
  };
}

function splitName(name: string): { registry: string; repository: string } {
  const slash = name.indexOf('/');
  return slash < 0
    ? { registry: name, repository: '' }
    : { registry: name.slice(0, slash), repository: name.slice(slash + 1) };
}

/**
 * Ordered places to pull `ref` from. Throws RegistryError('TESSERA_REGISTRY_BLOCKED') when the reference's
 * registry is blocked, or when every candidate is blocked.
 */
export function pullSources(ref: ImageReference, policy: RegistryPolicy): PullSource[] {
  const name = referenceName(ref);
  if (matchesAny(policy.blockedRegistries, name)) {
    throw new RegistryError(
      'TESSERA_REGISTRY_BLOCKED',
      `image ${name} comes from a blocked registry (cluster image policy); use an allowed registry or mirror`,
    );
  }
  const rules = bestRules(ref.digest === undefined ? policy.tagMirrors : policy.digestMirrors, name);
  const candidates: { name: string; mirror: boolean }[] = [];
  if (rules !== undefined) {
    const rest = rules.source.startsWith('*.')
      ? name.slice(name.indexOf('/'))
      : name.slice(rules.source.length);
    for (const mirror of rules.mirrors) candidates.push({ name: mirror + rest, mirror: true });
  }
  if (rules === undefined || !rules.neverContactSource) candidates.push({ name, mirror: false });
  const sources: PullSource[] = [];
  for (const candidate of candidates) {
    if (matchesAny(policy.blockedRegistries, candidate.name)) continue;
    const { registry, repository } = splitName(candidate.name);
    if (repository === '') continue;
    sources.push({
      registry,
      repository,
      insecure: matchesAny(policy.insecureRegistries, candidate.name),
      mirror: candidate.mirror,
    });
  }
  if (sources.length === 0) {
    throw new RegistryError(
      'TESSERA_REGISTRY_BLOCKED',
      `image ${name}: every mirror is blocked and the source may not be contacted`,
    );
  }
  return sources;
}

interface MirrorSpecEntry {
  readonly source?: string;
  readonly mirrors?: readonly string[];
  readonly mirrorSourcePolicy?: string;
}

function rulesOf(entries: readonly MirrorSpecEntry[] | undefined): MirrorRule[] {
  return (entries ?? [])
    .filter((e): e is MirrorSpecEntry & { source: string } => typeof e.source === 'string' && e.source !== '')
    .map((e) => ({
      source: e.source,
      mirrors: e.mirrors ?? [],
      neverContactSource: e.mirrorSourcePolicy === 'NeverContactSource',
    }));
}

/**
 * Builds a policy from the cluster objects (config.openshift.io/v1 IDMS/ITMS, operator.openshift.io/v1alpha1 ICSP)
 * and registry lists.
 */
export function registryPolicyFrom(objects: {
  readonly imageDigestMirrorSets?: readonly {
    readonly spec?: { readonly imageDigestMirrors?: readonly MirrorSpecEntry[] };
  }[];
  readonly imageTagMirrorSets?: readonly {
    readonly spec?: { readonly imageTagMirrors?: readonly MirrorSpecEntry[] };
  }[];
  readonly imageContentSourcePolicies?: readonly {
    readonly spec?: { readonly repositoryDigestMirrors?: readonly MirrorSpecEntry[] };
  }[];
  readonly insecureRegistries?: readonly string[];
  readonly blockedRegistries?: readonly string[];
  readonly searchRegistries?: readonly string[];
}): RegistryPolicy {
  const searchRegistries = objects.searchRegistries ?? [];
  return {
    digestMirrors: [
      ...(objects.imageDigestMirrorSets ?? []).flatMap((o) => rulesOf(o.spec?.imageDigestMirrors)),
      // ICSP has no mirrorSourcePolicy: the source is always a fallback.
      ...(objects.imageContentSourcePolicies ?? []).flatMap((o) =>
        rulesOf(o.spec?.repositoryDigestMirrors).map((r) => ({ ...r, neverContactSource: false })),
      ),
    ],
    tagMirrors: (objects.imageTagMirrorSets ?? []).flatMap((o) => rulesOf(o.spec?.imageTagMirrors)),
    insecureRegistries: objects.insecureRegistries ?? [],
    blockedRegistries: objects.blockedRegistries ?? [],
    ...(searchRegistries.length > 0 ? { searchRegistries } : {}),
  };
}
