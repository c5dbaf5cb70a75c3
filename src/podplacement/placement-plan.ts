// planPlacement: everything the reconciler does to one gated pod, decided without I/O. Input: the pod as last
// observed, what the registry said about each image, the configs, and the attempt number. Output: one JSON merge
// patch (guarded by the pod's resourceVersion) plus the events to record once it is applied. Guarantees:
// required terms only gain expressions (KEP-3838 rules for gated pods), nodeSelector and other affinity kinds are
// never touched, and a pod is ungated at the latest on attempt MAX_RETRY_COUNT, or at once when an inspection
// failure is permanent (retrying cannot help) or the per-pod inspection deadline passed.
import type { ClusterPodPlacementConfig, NodeAffinityScoring, PodPlacementConfig } from './api/schema.js';
import {
  ANNOTATIONS,
  ARCH_LABEL,
  CLUSTER_CONFIG_KIND,
  EVENT_MESSAGES,
  EVENT_REASONS,
  LABELS,
  LABEL_VALUES,
  MAX_ERROR_ANNOTATION_RUNES,
  MAX_RETRY_COUNT,
  POD_CONFIG_KIND,
  SCHEDULING_GATE,
  SUPPORTED_ARCHITECTURES,
  archLabel,
} from './constants.js';
import {
  enabledScoring,
  hasArchitecturePreference,
  hasSchedulingGate,
  ignoreReason,
  isArchitecturePinned,
  matchingPodPlacementConfigs,
  podImages,
  type IgnoreReason,
} from './pod-model.js';
import { isOlmBundleUnpackPod } from './olm-bundle-unpack.js';
import type { NodeSelectorRequirement, NodeSelectorTerm, Pod, PreferredSchedulingTerm } from './pod-types.js';
import { metaTime } from '../runtime/light.js';

/**
 * Why an inspection failed, for the retry decision: `transient` (timeouts, 429, 5xx, connection failures; retried
 * with backoff), `permanent` (not found, unauthorized, invalid reference, unsupported media type: retrying cannot
 * help), `deadline` (the registry did not answer within the per-pod inspection deadline), `uninspected` (not
 * inspected at all: a controller process died while inspecting this pod's images; see inspection-breaker.ts),
 * `refused` (not inspected: the nodes' image policy would refuse to pull it; registry/image-admission.ts).
 */
export type InspectionFailure = 'transient' | 'permanent' | 'deadline' | 'uninspected' | 'refused';

/** What the registry answered for one image reference (as written in the pod spec). */
export type ImageArchitectures =
  { readonly archs: readonly string[] } | { readonly error: string; readonly failure?: InspectionFailure };

/** Warning event texts when the operator stops before MAX_RETRY_COUNT attempts (Tessera only). */
export const GIVE_UP_MESSAGES = {
  permanent:
    'The operator stopped inspecting the image: the registry (or the egress proxy) gave an answer that retrying ' +
    'cannot change (the image does not exist, the credentials are refused, the reference or manifest type is ' +
    'invalid, or the proxy refused the tunnel). ' +
    'Registry error',
  deadline:
    'The operator stopped inspecting the image: the registry did not answer within the per-pod inspection ' +
    'deadline. Registry error',
  uninspected:
    'The operator released the pod without inspecting its images: a controller process stopped while inspecting ' +
    'them, and inspecting them again could stop the next one. Reason',
  refused:
    "The operator released the pod without inspecting the image: the cluster's image policy would keep the nodes " +
    'from pulling it. Rule',
} as const;

export interface PlannedEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** A JSON merge patch (RFC 7386) for a pod; `null` deletes a key. */
export interface PodMergePatch {
  metadata: {
    resourceVersion?: string;
    labels?: Record<string, string | null>;
    annotations?: Record<string, string | null>;
  };
  spec?: {
    schedulingGates?: { name: string }[];
    affinity?: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
        preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
      };
    };
  };
}

export type PlacementOutcome =
  | 'placed' // required term from the images' architectures
  | 'no-supported-arch' // images share no architecture: unschedulable term
  | 'pinned' // user pinned the architecture; only preferences added
  | 'fallback' // inspection failed MAX_RETRY_COUNT times; fallback architecture required
  | 'gave-up' // inspection failed MAX_RETRY_COUNT times; ungated without a required term
  | 'ignored'; // no longer eligible (e.g. modified by another admission plugin): ungated untouched

export type PlacementPlan =
  | { readonly action: 'none'; readonly why: 'not-gated' }
  | {
      readonly action: 'ungate';
      readonly outcome: PlacementOutcome;
      /** Intersection of the images' architectures, sorted; undefined when not inspected or failed. */
      readonly architectures: readonly string[] | undefined;
      readonly ignoreReason?: IgnoreReason;
      readonly patch: PodMergePatch;
      /** Record after the patch succeeded (the last one reports the gate removal). */
      readonly events: readonly PlannedEvent[];
    }
  | {
      readonly action: 'retry';
      readonly error: string;
      /** Records the failure on the pod (labels, annotation); the gate stays. */
      readonly patch: PodMergePatch;
      readonly events: readonly PlannedEvent[];
    };

export interface PlacementInput {
  readonly pod: Pod;
  /** What the registry said, keyed by image reference as written in the spec. Missing images count as errors. */
  readonly inspection: ReadonlyMap<string, ImageArchitectures>;
  readonly clusterConfig: ClusterPodPlacementConfig | undefined;
  /** PodPlacementConfigs of the pod's namespace (matching is done here). */
  readonly podPlacementConfigs: readonly PodPlacementConfig[];
  /** 1-based number of this attempt: previous failures (see inspectionFailures) + 1. */
  readonly attempt: number;
  readonly operatorNamespace: string;
}

/** Failed inspections recorded on the pod by earlier attempts (0 when none or unreadable). */
export function inspectionFailures(pod: Pod): number {
  const raw = pod.metadata?.labels?.[LABELS.imageInspectErrorCount];
  const n = raw === undefined ? 0 : Number.parseInt(raw, 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/**
 * Images the reconciler must inspect before planning; none when the pod is ignored or pinned. Those of an OLM
 * bundle-unpack pod are also probed for a bundle published as a multi-platform index (olm-bundle-unpack.ts).
 */
export function imagesToInspect(
  pod: Pod,
  ctx: Pick<PlacementInput, 'clusterConfig' | 'podPlacementConfigs' | 'operatorNamespace'>,
): { image: string; pullAlways: boolean; probeOperatorBundle: boolean }[] {
  if (!hasSchedulingGate(pod)) return [];
  const namespace = pod.metadata?.namespace ?? '';
  const matching = matchingPodPlacementConfigs(pod, namespace, ctx.podPlacementConfigs);
  const ignored = ignoreReason(pod, {
    namespace,
    operatorNamespace: ctx.operatorNamespace,
    clusterConfig: ctx.clusterConfig,
    matchingConfigs: matching,
  });
  if (ignored !== undefined || isArchitecturePinned(pod)) return [];
  const probeOperatorBundle = isOlmBundleUnpackPod(pod);
  return podImages(pod).map((i) => ({ ...i, probeOperatorBundle }));
}

/**
 * Labels describing a set of architectures: `single-arch`/`multi-arch`, one `multiarch.openshift.io/<arch>` per
 * known architecture, `no-supported-arch` for an empty set; nothing for undefined (requirement without values).
 */
export function architectureLabels(archs: readonly string[] | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  if (archs === undefined) return labels;
  if (archs.length === 0) labels[LABELS.noSupportedArch] = '';
  else if (archs.length === 1) labels[LABELS.singleArch] = '';
  else labels[LABELS.multiArch] = '';
  for (const a of archs) {
    if ((SUPPORTED_ARCHITECTURES as readonly string[]).includes(a)) labels[archLabel(a)] = '';
  }
  return labels;
}

/**
 * Intersection of the images' architectures, or the error that decides the pod's fate: the first failure that
 * ends the retries (refused by policy, uninspected, deadline, then permanent), else the first error.
 */
export function intersectArchitectures(
  images: readonly string[],
  inspection: ReadonlyMap<string, ImageArchitectures>,
): { archs: string[] } | { error: string; failure: InspectionFailure } {
  const errors: { error: string; failure: InspectionFailure }[] = [];
  for (const image of images) {
    const result = inspection.get(image);
    if (result === undefined)
      errors.push({ error: `image ${image} was not inspected`, failure: 'transient' });
    else if ('error' in result) errors.push({ error: result.error, failure: result.failure ?? 'transient' });
  }
  const decisive =
    errors.find((e) => e.failure === 'refused') ??
    errors.find((e) => e.failure === 'uninspected') ??
    errors.find((e) => e.failure === 'deadline') ??
    errors.find((e) => e.failure === 'permanent') ??
    errors[0];
  if (decisive !== undefined) return decisive;
  let acc: Set<string> | undefined;
  for (const image of images) {
    const result = inspection.get(image);
    if (result === undefined || 'error' in result) continue;
    const set = new Set(result.archs);
    acc = acc === undefined ? set : new Set([...acc].filter((a) => set.has(a)));
  }
  return { archs: [...(acc ?? [])].sort() };
}

/** Appends `requirement` to every term lacking its key; creates one term when there are none. */
export function mergeRequiredTerms(
  terms: readonly NodeSelectorTerm[] | undefined,
  requirement: NodeSelectorRequirement,
): NodeSelectorTerm[] {
  const base: readonly NodeSelectorTerm[] = terms && terms.length > 0 ? terms : [{}];
  return base.map((term) => {
    const exprs = term.matchExpressions ?? [];
    if (exprs.some((e) => e.key === requirement.key)) return cloneTerm(term);
    return {
      ...cloneTerm(term),
      matchExpressions: [...exprs.map(cloneRequirement), cloneRequirement(requirement)],
    };
  });
}

function cloneRequirement(r: NodeSelectorRequirement): NodeSelectorRequirement {
  return r.values === undefined
    ? { key: r.key, operator: r.operator }
    : { key: r.key, operator: r.operator, values: [...r.values] };
}

function cloneTerm(t: NodeSelectorTerm): NodeSelectorTerm {
  const out: { matchExpressions?: NodeSelectorRequirement[]; matchFields?: NodeSelectorRequirement[] } = {};
  if (t.matchExpressions) out.matchExpressions = t.matchExpressions.map(cloneRequirement);
  if (t.matchFields) out.matchFields = t.matchFields.map(cloneRequirement);
  return out;
}

/** Truncates to `max` code points (runes), as the reference does for the error annotation. */
export function truncateRunes(s: string, max: number): string {
  const runes = [...s];
  return runes.length > max ? runes.slice(0, max).join('') : s;
}

/** Accumulates the desired pod state and derives the merge patch; pure and local to one planPlacement call. */
class PodEdit {
  readonly events: PlannedEvent[] = [];
  private readonly labels: Record<string, string>;
  private readonly annotations: Record<string, string>;
  required: NodeSelectorTerm[] | undefined;
  preferred: PreferredSchedulingTerm[];
  private requiredChanged = false;
  private preferredChanged = false;
  private ungated = false;

  constructor(private readonly pod: Pod) {
    this.labels = { ...(pod.metadata?.labels ?? {}) };
    this.annotations = { ...(pod.metadata?.annotations ?? {}) };
    const na = pod.spec?.affinity?.nodeAffinity;
    this.required = na?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.map(cloneTerm);
    this.preferred = (na?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => ({
      weight: t.weight,
      preference: cloneTerm(t.preference),
    }));
  }

  label(key: string): string | undefined {
    return this.labels[key];
  }
  setLabel(key: string, value: string): void {
    this.labels[key] = value;
  }
  deleteLabel(key: string): void {
    delete this.labels[key];
  }
  annotation(key: string): string | undefined {
    return this.annotations[key];
  }
  setAnnotation(key: string, value: string): void {
    this.annotations[key] = value;
  }
  event(type: PlannedEvent['type'], reason: string, message: string): void {
    this.events.push({ type, reason, message });
  }
  addRequired(requirement: NodeSelectorRequirement): void {
    this.required = mergeRequiredTerms(this.required, requirement);
    this.requiredChanged = true;
  }
  addPreferred(terms: PreferredSchedulingTerm[]): void {
    if (terms.length === 0) return;
    this.preferred.push(...terms);
    this.preferredChanged = true;
  }
  ungate(): void {
    this.ungated = true;
    this.setLabel(LABELS.schedulingGate, LABEL_VALUES.removed);
  }

  patch(): PodMergePatch {
    const patch: PodMergePatch = { metadata: {} };
    if (this.pod.metadata?.resourceVersion)
      patch.metadata.resourceVersion = this.pod.metadata.resourceVersion;
    const labels = diffMap(this.pod.metadata?.labels ?? {}, this.labels);
    if (labels) patch.metadata.labels = labels;
    const annotations = diffMap(this.pod.metadata?.annotations ?? {}, this.annotations);
    if (annotations) patch.metadata.annotations = annotations;
    if (this.ungated || this.requiredChanged || this.preferredChanged) patch.spec = {};
    if (patch.spec && this.ungated) {
      patch.spec.schedulingGates = (this.pod.spec?.schedulingGates ?? [])
        .filter((g) => g.name !== SCHEDULING_GATE)
        .map((g) => ({ name: g.name }));
    }
    if (patch.spec && (this.requiredChanged || this.preferredChanged)) {
      const nodeAffinity: NonNullable<NonNullable<PodMergePatch['spec']>['affinity']>['nodeAffinity'] = {};
      if (this.requiredChanged && this.required) {
        nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: this.required };
      }
      if (this.preferredChanged)
        nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution = this.preferred;
      patch.spec.affinity = { nodeAffinity };
    }
    return patch;
  }
}

function diffMap(
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>,
): Record<string, string | null> | undefined {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(after)) if (before[k] !== v) out[k] = v;
  for (const k of Object.keys(before)) if (!(k in after)) out[k] = null;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Records a preference decision in the preferred-affinity-sources annotation (no duplicate entries). */
function trackSource(edit: PodEdit, arch: string, weight: number, source: string, applied: boolean): void {
  const entry = `${arch}:${weight}:${source}${applied ? '' : ':skipped'}`;
  const existing = edit.annotation(ANNOTATIONS.preferredAffinitySources);
  if (!existing) {
    edit.setAnnotation(ANNOTATIONS.preferredAffinitySources, entry);
  } else if (!existing.split(',').includes(entry)) {
    edit.setAnnotation(ANNOTATIONS.preferredAffinitySources, `${existing},${entry}`);
  }
}

/** Adds one weighted term per architecture of `scoring` not yet preferred, with the reference's events. */
function applyPreferences(edit: PodEdit, scoring: NodeAffinityScoring, source: string): void {
  const seen = new Set<string>();
  for (const t of edit.preferred) {
    for (const e of t.preference.matchExpressions ?? [])
      if (e.key === ARCH_LABEL) for (const v of e.values ?? []) seen.add(v);
  }
  const added: PreferredSchedulingTerm[] = [];
  const skipped: string[] = [];
  for (const p of scoring.platforms) {
    if (!seen.has(p.architecture)) {
      added.push({
        weight: p.weight,
        preference: { matchExpressions: [{ key: ARCH_LABEL, operator: 'In', values: [p.architecture] }] },
      });
      seen.add(p.architecture);
      trackSource(edit, p.architecture, p.weight, source, true);
    } else {
      skipped.push(p.architecture);
      trackSource(edit, p.architecture, p.weight, source, false);
    }
  }
  if (added.length > 0) {
    edit.addPreferred(added);
    edit.setLabel(LABELS.preferredNodeAffinity, LABEL_VALUES.set);
  }
  if (added.length > 0 && skipped.length === 0) {
    edit.event(
      'Normal',
      EVENT_REASONS.predicateSet,
      `${EVENT_MESSAGES.preferredAllApplied} source: ${source}`,
    );
  } else if (added.length > 0) {
    edit.event(
      'Normal',
      EVENT_REASONS.predicateSet,
      `${EVENT_MESSAGES.preferredSomeApplied} source: ${source}, skipped: ${skipped.join(', ')}`,
    );
  } else if (skipped.length > 0) {
    edit.event(
      'Normal',
      EVENT_REASONS.preferredAffinityDuplicates,
      `${EVENT_MESSAGES.preferredAllDuplicates} source: ${source}, architectures: ${skipped.join(', ')}`,
    );
  }
}

function podConfigSource(config: PodPlacementConfig): string {
  return `${POD_CONFIG_KIND}-${config.metadata.name ?? ''}`;
}

/** Preferred terms: matching PodPlacementConfigs by descending priority, then the cluster config. */
function planPreferences(
  edit: PodEdit,
  pod: Pod,
  clusterConfig: ClusterPodPlacementConfig | undefined,
  matching: readonly PodPlacementConfig[],
): void {
  const cluster = enabledScoring(clusterConfig);
  if (!hasArchitecturePreference(pod)) {
    for (const config of matching) {
      const scoring = enabledScoring(config);
      if (scoring) applyPreferences(edit, scoring, podConfigSource(config));
    }
    if (cluster) applyPreferences(edit, cluster, CLUSTER_CONFIG_KIND);
    return;
  }
  // The user expressed an architecture preference: record every config as skipped, add nothing.
  for (const config of matching) {
    const scoring = enabledScoring(config);
    if (scoring)
      for (const p of scoring.platforms)
        trackSource(edit, p.architecture, p.weight, podConfigSource(config), false);
  }
  if (cluster)
    for (const p of cluster.platforms)
      trackSource(edit, p.architecture, p.weight, CLUSTER_CONFIG_KIND, false);
}

function finishUngate(edit: PodEdit): void {
  if (edit.label(LABELS.preferredNodeAffinity) === LABEL_VALUES.notSet) {
    edit.event('Normal', EVENT_REASONS.predicateSet, EVENT_MESSAGES.preferredSkipped);
  }
  edit.ungate();
  edit.event('Normal', EVENT_REASONS.schedGateRemovalSuccess, EVENT_MESSAGES.schedGateRemovalSuccess);
}

/**
 * The patch that releases a gated pod by hand (`tessera podplacement release`, for when the controller cannot run):
 * the operator's gate removed (other gates kept), the gate label `removed` and the time in the released-by-hand
 * annotation (so `explain` tells it from the operator's own release), nothing placed; carries the pod's
 * resourceVersion, so a pod changed meanwhile is refused (409) rather than overwritten. Undefined when not gated.
 */
export function manualReleasePatch(pod: Pod, releasedAt: Date): PodMergePatch | undefined {
  if (!hasSchedulingGate(pod)) return undefined;
  const edit = new PodEdit(pod);
  edit.ungate();
  edit.setAnnotation(ANNOTATIONS.releasedByHand, metaTime(releasedAt));
  return edit.patch();
}

/** The whole decision for one gated pod. See the module comment for the guarantees. */
export function planPlacement(input: PlacementInput): PlacementPlan {
  const { pod, clusterConfig } = input;
  if (!hasSchedulingGate(pod)) return { action: 'none', why: 'not-gated' };
  const namespace = pod.metadata?.namespace ?? '';
  const matching = matchingPodPlacementConfigs(pod, namespace, input.podPlacementConfigs);
  const edit = new PodEdit(pod);

  const ignored = ignoreReason(pod, {
    namespace,
    operatorNamespace: input.operatorNamespace,
    clusterConfig,
    matchingConfigs: matching,
  });
  if (ignored !== undefined) {
    // Gated, but something (config change, another webhook) made it ineligible: release it untouched.
    edit.ungate();
    edit.event('Warning', EVENT_REASONS.gatedPodIgnored, EVENT_MESSAGES.gatedPodIgnored);
    edit.event('Normal', EVENT_REASONS.schedGateRemovalSuccess, EVENT_MESSAGES.schedGateRemovalSuccess);
    return {
      action: 'ungate',
      outcome: 'ignored',
      architectures: undefined,
      ignoreReason: ignored,
      patch: edit.patch(),
      events: edit.events,
    };
  }

  if (isArchitecturePinned(pod)) {
    planPreferences(edit, pod, clusterConfig, matching);
    edit.setLabel(LABELS.nodeAffinity, LABEL_VALUES.notSet);
    edit.event('Normal', EVENT_REASONS.predicatesConflict, EVENT_MESSAGES.predicatesConflict);
    finishUngate(edit);
    return {
      action: 'ungate',
      outcome: 'pinned',
      architectures: undefined,
      patch: edit.patch(),
      events: edit.events,
    };
  }

  const result = intersectArchitectures(
    podImages(pod).map((i) => i.image),
    input.inspection,
  );
  if ('error' in result) {
    const message = truncateRunes(result.error, MAX_ERROR_ANNOTATION_RUNES);
    edit.setLabel(LABELS.imageInspectError, '');
    edit.setAnnotation(ANNOTATIONS.imageInspectError, message);
    edit.setLabel(LABELS.imageInspectErrorCount, String(Math.min(input.attempt, MAX_RETRY_COUNT)));
    edit.event('Warning', EVENT_REASONS.inspectionError, EVENT_MESSAGES.inspectionErrorPrefix + message);
    const final = input.attempt >= MAX_RETRY_COUNT || result.failure !== 'transient';
    if (!final) {
      return { action: 'retry', error: message, patch: edit.patch(), events: edit.events };
    }
    const prefix =
      input.attempt >= MAX_RETRY_COUNT || result.failure === 'transient'
        ? EVENT_MESSAGES.maxRetriesPrefix
        : GIVE_UP_MESSAGES[result.failure];
    edit.event('Warning', EVENT_REASONS.inspectionError, `${prefix}: ${result.error}`);
    planPreferences(edit, pod, clusterConfig, matching);
    const fallback = clusterConfig?.spec?.fallbackArchitecture;
    if (fallback) {
      edit.addRequired({ key: ARCH_LABEL, operator: 'In', values: [fallback] });
      edit.setLabel(LABELS.nodeAffinity, LABEL_VALUES.set);
      edit.setLabel(LABELS.fallbackArch, fallback);
      edit.event(
        'Warning',
        EVENT_REASONS.fallbackPredicateSet,
        `${EVENT_MESSAGES.fallbackPrefix}{${fallback}}`,
      );
    } else {
      edit.setLabel(LABELS.nodeAffinity, LABEL_VALUES.notSet);
    }
    finishUngate(edit);
    return {
      action: 'ungate',
      outcome: fallback ? 'fallback' : 'gave-up',
      architectures: undefined,
      patch: edit.patch(),
      events: edit.events,
    };
  }

  planPreferences(edit, pod, clusterConfig, matching);
  edit.deleteLabel(LABELS.imageInspectError);
  const archs = result.archs;
  if (archs.length === 0) {
    edit.event(
      'Normal',
      EVENT_REASONS.noSupportedArchitecturesFound,
      EVENT_MESSAGES.noSupportedArchitectures,
    );
    // The requirement has no values, so (like the reference) no architecture labels are written.
    edit.addRequired({ key: LABELS.noSupportedArch, operator: 'Exists' });
  } else {
    for (const [k, v] of Object.entries(architectureLabels(archs))) edit.setLabel(k, v);
    edit.addRequired({ key: ARCH_LABEL, operator: 'In', values: archs });
  }
  edit.setLabel(LABELS.nodeAffinity, LABEL_VALUES.set);
  edit.event(
    'Normal',
    EVENT_REASONS.predicateSet,
    `${EVENT_MESSAGES.predicateSetPrefix}{${archs.join(', ')}}`,
  );
  finishUngate(edit);
  return {
    action: 'ungate',
    outcome: archs.length === 0 ? 'no-supported-arch' : 'placed',
    architectures: archs,
    patch: edit.patch(),
    events: edit.events,
  };
}
