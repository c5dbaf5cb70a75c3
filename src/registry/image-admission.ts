// Would the nodes refuse to run an image? On OpenShift the Machine Config Operator writes the nodes'
// /etc/containers/policy.json from image.config.openshift.io/cluster (allowedRegistries: everything else is
// `reject`; blockedRegistries: `reject` for each) and from ClusterImagePolicy / ImagePolicy (a sigstore signature
// requirement per scope; ImagePolicy in a per-namespace policy file). CRI-O evaluates that policy against the
// reference as the pod names it (mirrors do not change it): the most specific scope that matches wins (the exact
// image, then the repository and each parent namespace up to the host[:port], then `*.domain` wildcards of the host
// from the longest), then the default. This module answers the same question from the same rules, without I/O:
// `reject` refuses, every other requirement admits, and a signature requirement is reported (Tessera cannot verify
// sigstore signatures, and reading an image's manifest is not running it). Matching is a few exact Map lookups per
// reference (one per path segment and domain label of a name the parser caps at 255 characters); no pattern from
// the cluster is ever compiled.
import { RegistryError } from './errors.js';
import { formatReference, referenceName, type ImageReference } from './reference.js';

/** What a scope requires: `accept` (insecureAcceptAnything), `reject`, or a sigstore signature. */
export type AdmissionRequirement = 'accept' | 'reject' | 'signed';

/** One scope of the nodes' policy and the object that put it there (for messages). */
export interface AdmissionScope {
  /** As policy.json spells it: `host[:port][/path][:tag|@digest]` or `*.domain`. */
  readonly scope: string;
  readonly requirement: AdmissionRequirement;
  /** The rule in words, e.g. `image.config.openshift.io/cluster blockedRegistries`, `ClusterImagePolicy openshift`. */
  readonly rule: string;
  /** Applies only to pods of this namespace (an ImagePolicy). Default: every pod. */
  readonly namespace?: string;
}

/** The nodes' image policy, as far as the cluster API says it. */
export interface ImageAdmissionPolicy {
  /** What applies when no scope matches: `reject` when allowedRegistries are set. */
  readonly defaultRequirement: 'accept' | 'reject';
  /** The rule behind a `reject` default, in words. */
  readonly defaultRule?: string;
  readonly scopes: readonly AdmissionScope[];
}

export const acceptAnythingPolicy: ImageAdmissionPolicy = { defaultRequirement: 'accept', scopes: [] };

/** The answer for one reference. */
export type AdmissionVerdict =
  | { readonly admitted: true; readonly signatureRequiredBy?: readonly AdmissionScope[] }
  | { readonly admitted: false; readonly rule: string; readonly scope?: string };

/**
 * The names policy.json looks a reference up by, most specific first: the image (`name:tag`, or `name@digest`
 * when there is a digest, as CRI-O drops the tag then), the repository and each parent namespace up to the
 * host[:port], then `*.` wildcards of the host's domain suffixes (port removed), longest first.
 */
export function policyLookupNames(ref: ImageReference): string[] {
  const name = referenceName(ref);
  const names = [formatReference(ref)];
  for (let end = name.length; end > 0; end = name.lastIndexOf('/', end - 1)) names.push(name.slice(0, end));
  const host = ref.registry;
  const colon = host.indexOf(':');
  const hostname = colon < 0 ? host : host.slice(0, colon);
  for (let dot = hostname.indexOf('.'); dot >= 0; dot = hostname.indexOf('.', dot + 1))
    names.push(`*.${hostname.slice(dot + 1)}`);
  return names;
}

/** Scopes grouped by their exact text (a scope listed twice requires both), computed once per policy. */
const scopeIndexes = new WeakMap<ImageAdmissionPolicy, Map<string, AdmissionScope[]>>();

function scopeIndex(policy: ImageAdmissionPolicy): Map<string, AdmissionScope[]> {
  let index = scopeIndexes.get(policy);
  if (index === undefined) {
    index = new Map();
    for (const s of policy.scopes) index.set(s.scope, [...(index.get(s.scope) ?? []), s]);
    scopeIndexes.set(policy, index);
  }
  return index;
}

/**
 * Whether the nodes would run `ref` for a pod of `namespace`: the requirements of the most specific matching scope
 * (the cluster's and the namespace's ImagePolicy scopes together, as the per-namespace policy file holds them), or
 * the default. Refused: a matching `reject`, or the `reject` default.
 */
export function admissionVerdict(
  ref: ImageReference,
  policy: ImageAdmissionPolicy,
  namespace?: string,
): AdmissionVerdict {
  const index = scopeIndex(policy);
  for (const name of policyLookupNames(ref)) {
    const found = index.get(name)?.filter((s) => s.namespace === undefined || s.namespace === namespace);
    if (found === undefined || found.length === 0) continue;
    const reject = found.find((s) => s.requirement === 'reject');
    if (reject !== undefined) return { admitted: false, rule: reject.rule, scope: reject.scope };
    const signed = found.filter((s) => s.requirement === 'signed');
    return signed.length > 0 ? { admitted: true, signatureRequiredBy: signed } : { admitted: true };
  }
  if (policy.defaultRequirement === 'reject')
    return { admitted: false, rule: policy.defaultRule ?? 'the cluster image policy' };
  return { admitted: true };
}

/** The nodes would refuse the image by policy: it is not inspected (no registry request). */
export class PolicyRefusalError extends RegistryError {
  /** The rule that refuses it, in words. */
  readonly rule: string;
  constructor(ref: ImageReference, verdict: Extract<AdmissionVerdict, { admitted: false }>) {
    const why =
      verdict.scope === undefined
        ? `registry ${ref.registry} is not in ${verdict.rule}`
        : `${verdict.scope === ref.registry ? `registry ${ref.registry}` : `scope ${verdict.scope}`} is in ${verdict.rule}`;
    super(
      'TESSERA_REGISTRY_BLOCKED',
      `${why}: the nodes would refuse to pull image ${formatReference(ref)}, so it was not inspected; use an allowed registry or change that rule`,
    );
    this.rule = verdict.rule;
  }
}

/** Throws PolicyRefusalError when the nodes would refuse `ref` (namespace-independent: ImagePolicy never rejects). */
export function assertAdmitted(ref: ImageReference, policy: ImageAdmissionPolicy | undefined): void {
  if (policy === undefined) return;
  const verdict = admissionVerdict(ref, policy);
  if (!verdict.admitted) throw new PolicyRefusalError(ref, verdict);
}

/** A signature requirement in words, for `explain`. */
export function describeSignatureRequirement(scopes: readonly AdmissionScope[]): string {
  const rules = [...new Set(scopes.map((s) => `${s.rule} (scope ${s.scope})`))].join(', ');
  return `signatures required by ${rules}: Tessera does not verify sigstore signatures, so it inspected the image; the nodes refuse to run it unless it is signed as that policy says`;
}
