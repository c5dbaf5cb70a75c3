// Which references a node's container runtime pulls for an image a pod names without a registry (a "short name":
// `nginx`, `team/app:1`), so inspection looks where the node will. With no search registries, Docker's
// normalisation, as containerd and the kubelet do (`nginx` -> `docker.io/library/nginx:latest`). With search
// registries (OpenShift: image.config.openshift.io/cluster spec.registrySources.containerRuntimeSearchRegistries,
// which the Machine Config Operator writes to the nodes as registries.conf `unqualified-search-registries`), CRI-O's
// rule (containers/image pkg/shortnames.Resolve): one candidate per search registry, in the listed order, each
// `<registry>/<name as written>` normalised (so only docker.io gains `library/`), tag or digest kept, `:latest`
// otherwise; the first candidate the runtime can pull is the one it runs. An ambiguous name is not an error there:
// OpenShift runs CRI-O with short_name_mode "disabled" (set by the MCO; CRI-O before 1.34 always forced it), which
// tries every candidate in order instead of refusing (CRI-O's own default, "enforcing", refuses an ambiguous name).
// Not modelled: short-name aliases in the nodes' registries.conf.d (e.g. RHCOS's 001-rhel-shortnames.conf), which
// CRI-O prefers to the search registries but the API does not show. Pure: no I/O.
import { RegistryError, type RegistryErrorCode } from './errors.js';
import { dockerHubRegistry, parseImageReference, type ImageReference } from './reference.js';

/** How a reference became the candidates to pull. */
export type ShortNameRule =
  /** It names its registry: the one candidate is itself. */
  | 'qualified'
  /** A short name and no search registries: Docker Hub, by Docker's normalisation. */
  | 'docker-hub'
  /** A short name and search registries: one candidate per registry, tried in order. */
  | 'search-registries';

export interface ShortNameResolution {
  readonly rule: ShortNameRule;
  /** The references to try, in order (never empty). */
  readonly candidates: readonly ImageReference[];
}

/**
 * True when `image` names no registry, by containers/image's rule: no `/`, or a first path component that holds
 * neither `.` nor `:` and is not `localhost` (`library/nginx` and `nginx@sha256:...` are short names).
 */
export function isShortName(image: string): boolean {
  const slash = image.indexOf('/');
  if (slash < 0) return true;
  const first = image.slice(0, slash);
  return !first.includes('.') && !first.includes(':') && first !== 'localhost';
}

/**
 * The candidates for `image`, given the runtime's search registries (`host[:port]`, in order). Throws
 * InvalidReferenceError for an invalid reference, or when a search registry makes an invalid one (as CRI-O then
 * fails the pull).
 */
export function resolveShortName(image: string, searchRegistries: readonly string[]): ShortNameResolution {
  // Validates the reference as written (the error names it), and is the answer unless it is a short name.
  const asWritten = parseImageReference(image);
  if (!isShortName(image)) return { rule: 'qualified', candidates: [asWritten] };
  // Docker reads an uppercase first component (`Team/app`) as a host; containers/image does not.
  if (searchRegistries.length === 0)
    return {
      rule: asWritten.registry === dockerHubRegistry ? 'docker-hub' : 'qualified',
      candidates: [asWritten],
    };
  return {
    rule: 'search-registries',
    candidates: searchRegistries.map((registry) => parseImageReference(`${registry}/${image}`)),
  };
}

/** Why a candidate was passed over: the image is not there for this pod, for good. */
export type CandidateAbsence = 'not-found' | 'unauthorized' | 'blocked';

/** What inspecting one candidate found. */
export type ShortNameOutcome = 'chosen' | CandidateAbsence | 'not-tried';

/** How a short name was resolved: carried by an inspection of one, so explain and inspect can say why. */
export interface ShortNameChoice {
  /** The image as the pod names it. */
  readonly name: string;
  readonly rule: Exclude<ShortNameRule, 'qualified'>;
  /** Every candidate in order, with what inspection found there. */
  readonly candidates: readonly { readonly reference: string; readonly outcome: ShortNameOutcome }[];
}

const OUTCOME_TEXT: Record<Exclude<ShortNameOutcome, 'chosen'>, string> = {
  'not-found': 'not there',
  unauthorized: 'not authorized',
  blocked: 'blocked by the cluster image policy',
  'not-tried': 'not tried',
};

/** One line for people: which candidate was chosen and why. */
export function describeShortNameChoice(choice: ShortNameChoice): string {
  const chosen = choice.candidates.find((c) => c.outcome === 'chosen')?.reference ?? '(none)';
  if (choice.rule === 'docker-hub')
    return `short name ${choice.name}: no search registries are configured, so Docker Hub: ${chosen}`;
  const tried = choice.candidates
    .map((c) =>
      c.outcome === 'chosen' ? `${c.reference} chosen` : `${c.reference} ${OUTCOME_TEXT[c.outcome]}`,
    )
    .join(', ');
  return `short name ${choice.name}: the search registries are tried in order, as CRI-O does, and the first that has it is used: ${tried}`;
}

const ABSENT_CODES: ReadonlyMap<RegistryErrorCode, CandidateAbsence> = new Map([
  ['TESSERA_REGISTRY_NOT_FOUND', 'not-found'],
  ['TESSERA_REGISTRY_UNAUTHORIZED', 'unauthorized'],
  ['TESSERA_REGISTRY_BLOCKED', 'blocked'],
]);

/**
 * Whether a failed candidate lets the search go on to the next one: the image is not there, not for these
 * credentials, or the registry is blocked, and asking again would not change that. Any other failure (a registry
 * that does not answer, a server error) ends the search, since the runtime might still pull that candidate.
 */
export function candidateAbsent(err: RegistryError): CandidateAbsence | undefined {
  return err.retryable ? undefined : ABSENT_CODES.get(err.code);
}

/** The error when no candidate has the image: NOT_FOUND unless some candidate refused the credentials or is blocked. */
export function noCandidateError(
  name: string,
  tried: readonly { reference: string; outcome: CandidateAbsence }[],
  cause: unknown,
): RegistryError {
  const code = tried.some((t) => t.outcome === 'unauthorized')
    ? 'TESSERA_REGISTRY_UNAUTHORIZED'
    : tried.every((t) => t.outcome === 'blocked')
      ? 'TESSERA_REGISTRY_BLOCKED'
      : 'TESSERA_REGISTRY_NOT_FOUND';
  const list = tried.map((t) => `${t.reference} ${OUTCOME_TEXT[t.outcome]}`).join(', ');
  return new RegistryError(
    code,
    `image ${name}: a short name that no search registry has (tried in order: ${list})`,
    { cause },
  );
}
