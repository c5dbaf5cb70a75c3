// `podplacement explain`: what the operator did to a pod already in the cluster (observePlacement: its labels,
// annotations, affinity, gate, events and timings as the API server has them) and, apart from that, what it would do
// to a new pod like it now (assessExplanation on podAsNew(): the pod before the operator touched it). Display data
// and text (renderExplanation). Pure: the caller fetches the pod, its events, its owner's template, the configs and
// the image inspections.
import { decideAdmission } from './admission.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import {
  API_GROUP,
  ANNOTATIONS,
  ARCH_LABEL,
  EVENT_REASONS,
  LABEL_VALUES,
  LABELS,
  MAX_RETRY_COUNT,
  SCHEDULING_GATE,
} from './constants.js';
import { planPlacement, type ImageArchitectures, type PlacementOutcome } from './placement-plan.js';
import { podImages, type IgnoreReason } from './pod-model.js';
import type { NodeSelectorTerm, Pod, PreferredSchedulingTerm } from './pod-types.js';

export interface Explanation {
  readonly pod: string;
  readonly images: {
    image: string;
    architectures?: readonly string[];
    error?: string;
    /** For a short name: which registry it was found in, and why there. */
    shortName?: string;
    /** A signature policy covers the image (Tessera cannot verify it): which, and what that means. */
    signature?: string;
    /** The cluster's image policy refuses the image: it is not inspected. */
    refused?: boolean;
  }[];
  readonly gated: boolean;
  readonly ignoreReason?: IgnoreReason;
  readonly outcome?: PlacementOutcome;
  readonly architectures?: readonly string[];
  /** Required terms after the operator's change (undefined: unchanged). */
  readonly required?: NodeSelectorTerm[];
  readonly preferred?: PreferredSchedulingTerm[];
  readonly labels: Record<string, string | null>;
  readonly notes: string[];
}

const IGNORE_TEXT: Record<IgnoreReason, string> = {
  'operator-namespace': "the pod is in the operator's namespace",
  'kube-namespace': 'the pod is in a kube-* namespace',
  'openshift-namespace':
    "the pod is in an openshift-* namespace: these are gated only when the ClusterPodPlacementConfig's namespaceSelector requires a label (matchLabels, In or Exists) and the namespace carries it",
  'node-name-set': 'spec.nodeName is set, the scheduler is bypassed',
  'control-plane-node-selector': 'the pod selects control-plane nodes',
  'daemonset-pod': 'the pod is controlled by a DaemonSet',
  'architecture-already-pinned': 'the architecture is already pinned and no scoring plugin applies',
};

export function assessExplanation(input: {
  pod: Pod;
  namespace: string;
  operatorNamespace: string;
  clusterConfig: ClusterPodPlacementConfig | undefined;
  podPlacementConfigs: readonly PodPlacementConfig[];
  inspection: ReadonlyMap<string, ImageArchitectures>;
  /** How each short name among the images was resolved (describeShortNameChoice), by image. Default: none. */
  shortNames?: ReadonlyMap<string, string>;
  /** Signature policies covering each image (describeSignatureRequirement), by image. Default: none. */
  signatures?: ReadonlyMap<string, string>;
}): Explanation {
  const pod: Pod = { ...input.pod, metadata: { ...input.pod.metadata, namespace: input.namespace } };
  const name = `${input.namespace}/${pod.metadata?.name ?? pod.metadata?.generateName ?? '(unnamed)'}`;
  const images: Explanation['images'] = podImages(pod).map(({ image }) => {
    const r = input.inspection.get(image);
    const shortName = input.shortNames?.get(image);
    const signature = input.signatures?.get(image);
    const how = {
      ...(shortName === undefined ? {} : { shortName }),
      ...(signature === undefined ? {} : { signature }),
    };
    if (!r) return { image, ...how };
    if (!('error' in r)) return { image, architectures: r.archs, ...how };
    return { image, error: r.error, ...(r.failure === 'refused' ? { refused: true } : {}), ...how };
  });
  const notes: string[] = [];
  if (images.some((i) => i.shortName !== undefined))
    notes.push(
      "short names: CRI-O prefers a short-name alias from the nodes' /etc/containers/registries.conf.d (e.g. RHCOS's 001-rhel-shortnames.conf) to the search registries; the API does not show those aliases",
    );
  if (!input.clusterConfig)
    notes.push('no ClusterPodPlacementConfig exists: the operator is off and would not gate this pod');
  const decision = decideAdmission(pod, {
    namespace: input.namespace,
    operatorNamespace: input.operatorNamespace,
    clusterConfig: input.clusterConfig,
    podPlacementConfigs: input.podPlacementConfigs,
  });
  if (!decision.gate) {
    if (decision.ignoreReason) notes.push(`not gated: ${IGNORE_TEXT[decision.ignoreReason]}`);
    return {
      pod: name,
      images,
      gated: false,
      ignoreReason: decision.ignoreReason,
      labels: { ...decision.labels },
      notes,
    };
  }
  const gatedPod: Pod = {
    ...pod,
    metadata: { ...pod.metadata, labels: { ...pod.metadata?.labels, ...decision.labels } },
    spec: { ...pod.spec, schedulingGates: [...(pod.spec?.schedulingGates ?? []), { name: SCHEDULING_GATE }] },
  };
  const failing = images.some((i) => i.error !== undefined);
  // With failing images, show where the retries end (fallback or no required term).
  const plan = planPlacement({
    pod: gatedPod,
    inspection: input.inspection,
    clusterConfig: input.clusterConfig,
    podPlacementConfigs: input.podPlacementConfigs,
    attempt: failing ? MAX_RETRY_COUNT : 1,
    operatorNamespace: input.operatorNamespace,
  });
  if (plan.action !== 'ungate')
    return { pod: name, images, gated: true, labels: { ...decision.labels }, notes };
  const refused = images.filter((i) => i.refused === true).map((i) => i.image);
  if (refused.length > 0)
    notes.push(
      `the cluster's image policy would keep the nodes from pulling ${refused.join(', ')}: the operator does not inspect it and releases the pod at once, as shown, with a Warning event naming the rule`,
    );
  else if (failing)
    notes.push(
      `image inspection fails: the operator retries ${MAX_RETRY_COUNT} times with backoff, then ungates as shown`,
    );
  const na = plan.patch.spec?.affinity?.nodeAffinity;
  return {
    pod: name,
    images,
    gated: true,
    outcome: plan.outcome,
    architectures: plan.architectures,
    required: na?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    preferred: na?.preferredDuringSchedulingIgnoredDuringExecution,
    labels: { ...decision.labels, ...plan.patch.metadata.labels },
    notes,
  };
}

function term(t: NodeSelectorTerm): string {
  return (t.matchExpressions ?? [])
    .map((e) =>
      e.values && e.values.length > 0
        ? `${e.key} ${e.operator} [${e.values.join(', ')}]`
        : `${e.key} ${e.operator}`,
    )
    .join(' AND ');
}

export function renderExplanation(e: Explanation): string {
  const lines: string[] = [`Pod ${e.pod}`, '', 'Images:'];
  for (const i of e.images) {
    const what = i.error
      ? `${i.refused ? 'REFUSED BY POLICY' : 'ERROR'} ${i.error}`
      : i.architectures
        ? i.architectures.join(', ')
        : '(not inspected)';
    lines.push(`  ${i.image}: ${what}`);
    if (i.shortName) lines.push(`    ${i.shortName}`);
    if (i.signature) lines.push(`    ${i.signature}`);
  }
  lines.push('', `Would be gated: ${e.gated ? 'yes' : 'no'}`);
  if (e.outcome)
    lines.push(
      `Outcome: ${e.outcome}${e.architectures ? ` (${e.architectures.join(', ') || 'none in common'})` : ''}`,
    );
  if (e.required) {
    lines.push('Required node affinity (terms are ORed):');
    for (const t of e.required) lines.push(`  - ${term(t)}`);
  } else if (e.gated) {
    lines.push('Required node affinity: unchanged');
  }
  if (e.preferred && e.preferred.length > 0) {
    lines.push('Preferred node affinity:');
    for (const p of e.preferred) lines.push(`  - weight ${p.weight}: ${term(p.preference)}`);
  }
  const labels = Object.entries(e.labels).filter(([, v]) => v !== null);
  if (labels.length > 0) {
    lines.push('Labels it would set:');
    for (const [k, v] of labels) lines.push(`  ${k}=${v ?? ''}`);
  }
  if (e.notes.length > 0) lines.push('', ...e.notes.map((n) => `Note: ${n}`));
  return `${lines.join('\n')}\n`;
}

/** The pod as read from the API server, with the status fields explain shows. */
export type ObservedPod = Pod & {
  readonly status?: {
    readonly phase?: string;
    readonly conditions?: readonly { type?: string; status?: string; lastTransitionTime?: string }[];
  };
};

/** A core/v1 Event as far as explain reads it (events.k8s.io/v1 events are served through core/v1 too). */
export interface PodEvent {
  readonly type?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly count?: number;
  readonly eventTime?: string | null;
  readonly firstTimestamp?: string | null;
  readonly lastTimestamp?: string | null;
  readonly series?: { readonly count?: number; readonly lastObservedTime?: string } | null;
  readonly reportingComponent?: string;
  readonly source?: { readonly component?: string };
  readonly metadata?: { readonly creationTimestamp?: string };
}

/** What the operator has done to a pod, as the API server has it now. */
export interface Observation {
  /** The operator's scheduling gate is still on the pod. */
  readonly gated: boolean;
  readonly nodeName?: string;
  /** Labels and annotations under multiarch.openshift.io/ (the operator's). */
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  /** The pod's node affinity now (the user's terms and the operator's additions together). */
  readonly required?: readonly NodeSelectorTerm[];
  readonly preferred?: readonly PreferredSchedulingTerm[];
  /** Events of the pod, oldest first (at most the caller's budget). */
  readonly events: {
    time?: string;
    type: string;
    reason: string;
    source: string;
    message: string;
    count: number;
  }[];
  /** Milestones as ISO times; gated/ungated from the operator's events, scheduled from the PodScheduled condition. */
  readonly timings: { created?: string; gated?: string; ungated?: string; scheduled?: string };
}

const OPERATOR_PREFIX = `${API_GROUP}/`;

function eventTime(e: PodEvent): string | undefined {
  // The first occurrence; eventTime (events.k8s.io) has microseconds, the core/v1 timestamps whole seconds.
  return e.eventTime ?? e.firstTimestamp ?? e.lastTimestamp ?? e.metadata?.creationTimestamp ?? undefined;
}

function instant(time: string | undefined): number {
  const ms = time ? Date.parse(time) : Number.NaN;
  return Number.isFinite(ms) ? ms : 0;
}

function ofOperator(record: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(record ?? {})) if (k.startsWith(OPERATOR_PREFIX)) out[k] = v;
  return out;
}

/** What the operator did to `pod`, from the pod and its events. */
export function observePlacement(pod: ObservedPod, events: readonly PodEvent[]): Observation {
  const sorted = events
    .map((e) => ({
      time: eventTime(e),
      type: e.type ?? 'Normal',
      reason: e.reason ?? '',
      source: e.reportingComponent || e.source?.component || '',
      message: e.message ?? '',
      count: e.series?.count ?? e.count ?? 1,
    }))
    // By instant (the timestamps differ in precision); equal instants keep the API's order (creation order).
    .sort((a, b) => instant(a.time) - instant(b.time));
  const firstOf = (reason: string): string | undefined => sorted.find((e) => e.reason === reason)?.time;
  const na = pod.spec?.affinity?.nodeAffinity;
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'True');
  return {
    gated: (pod.spec?.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE),
    nodeName: pod.spec?.nodeName,
    labels: ofOperator(pod.metadata?.labels),
    annotations: ofOperator(pod.metadata?.annotations),
    required: na?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    preferred: na?.preferredDuringSchedulingIgnoredDuringExecution,
    events: sorted,
    timings: {
      created: pod.metadata?.creationTimestamp,
      gated: firstOf(EVENT_REASONS.schedGateAdded),
      ungated: firstOf(EVENT_REASONS.schedGateRemovalSuccess),
      scheduled: scheduled?.lastTransitionTime,
    },
  };
}

/**
 * The pod a controller would create now, before the webhook and the operator touch it: the owner's pod template
 * when the caller could read it; else this pod without what the scheduler and the operator added (nodeName, the
 * gate, multiarch.openshift.io/ labels and annotations, and the architecture terms the operator wrote, which its
 * node-affinity / preferred-node-affinity labels say are its own).
 */
export function podAsNew(
  pod: ObservedPod,
  template?: { metadata?: Pod['metadata']; spec?: Pod['spec'] },
): Pod {
  const meta = pod.metadata ?? {};
  if (template?.spec)
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        ...template.metadata,
        name: meta.name,
        namespace: meta.namespace,
        ownerReferences: meta.ownerReferences,
      },
      spec: template.spec,
    };
  const labels = meta.labels ?? {};
  const strip = (r: Readonly<Record<string, string>> | undefined): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(r ?? {})) if (!k.startsWith(OPERATOR_PREFIX)) out[k] = v;
    return out;
  };
  const na = pod.spec?.affinity?.nodeAffinity;
  const notArch = (e: { key: string }): boolean => e.key !== ARCH_LABEL;
  const requiredByOperator = labels[LABELS.nodeAffinity] === LABEL_VALUES.set;
  const preferredByOperator = labels[LABELS.preferredNodeAffinity] === LABEL_VALUES.set;
  const terms = na?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const required = requiredByOperator
    ? (terms ?? [])
        .map((t) => ({ ...t, matchExpressions: (t.matchExpressions ?? []).filter(notArch) }))
        .filter((t) => t.matchExpressions.length > 0 || (t.matchFields ?? []).length > 0)
    : terms;
  const preferred = preferredByOperator
    ? (na?.preferredDuringSchedulingIgnoredDuringExecution ?? []).filter(
        (p) => !(p.preference.matchExpressions ?? []).every((e) => e.key === ARCH_LABEL),
      )
    : na?.preferredDuringSchedulingIgnoredDuringExecution;
  const nodeAffinity = {
    ...(required && required.length > 0
      ? { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: required } }
      : {}),
    ...(preferred && preferred.length > 0
      ? { preferredDuringSchedulingIgnoredDuringExecution: preferred }
      : {}),
  };
  const { nodeName: _nodeName, schedulingGates, affinity, ...spec } = pod.spec ?? {};
  const gates = (schedulingGates ?? []).filter((g) => g.name !== SCHEDULING_GATE);
  const restAffinity = { ...affinity, nodeAffinity };
  if (Object.keys(nodeAffinity).length === 0)
    delete (restAffinity as { nodeAffinity?: unknown }).nodeAffinity;
  return {
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: {
      name: meta.name,
      generateName: meta.generateName,
      namespace: meta.namespace,
      labels: strip(meta.labels),
      annotations: strip(meta.annotations),
      ownerReferences: meta.ownerReferences,
    },
    spec: {
      ...spec,
      ...(gates.length > 0 ? { schedulingGates: gates } : {}),
      ...(Object.keys(restAffinity).length > 0 ? { affinity: restAffinity } : {}),
    },
  };
}

function since(from: string | undefined, to: string | undefined, what: string): string {
  if (!from || !to) return '';
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? ` (+${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s after ${what})` : '';
}

/** The observation as text: what the operator did to the pod. */
export function renderObservation(o: Observation): string {
  const lines: string[] = ['What the operator did to this pod:'];
  const byHand = o.annotations[ANNOTATIONS.releasedByHand];
  lines.push(
    `  Scheduling gate: ${
      o.gated
        ? 'still on (waiting for image inspection)'
        : byHand
          ? `removed by hand at ${byHand} (tessera podplacement release): not placed by the operator`
          : 'not on the pod'
    }`,
  );
  if (o.nodeName) lines.push(`  Node: ${o.nodeName}`);
  const labels = Object.entries(o.labels);
  lines.push(labels.length > 0 ? '  Labels:' : "  Labels: none of the operator's");
  for (const [k, v] of labels) lines.push(`    ${k}=${v}`);
  const annotations = Object.entries(o.annotations);
  if (annotations.length > 0) {
    lines.push('  Annotations:');
    for (const [k, v] of annotations) lines.push(`    ${k}: ${v}`);
  }
  if (o.required && o.required.length > 0) {
    lines.push('  Required node affinity now (terms are ORed):');
    for (const t of o.required) lines.push(`    - ${term(t)}`);
  } else lines.push('  Required node affinity now: none');
  if (o.preferred && o.preferred.length > 0) {
    lines.push('  Preferred node affinity now:');
    for (const p of o.preferred) lines.push(`    - weight ${p.weight}: ${term(p.preference)}`);
  }
  const t = o.timings;
  lines.push('  Timings:');
  if (t.created) lines.push(`    created    ${t.created}`);
  // Creation and scheduling times have whole seconds; the operator's event times have microseconds.
  if (t.gated) lines.push(`    gated      ${t.gated}`);
  if (t.ungated) lines.push(`    ungated    ${t.ungated}${since(t.gated, t.ungated, 'gating')}`);
  if (t.scheduled) lines.push(`    scheduled  ${t.scheduled}${since(t.created, t.scheduled, 'creation')}`);
  if (o.events.length === 0) lines.push('  Events: none (events expire after an hour by default)');
  else {
    lines.push('  Events (oldest first):');
    for (const e of o.events)
      lines.push(
        `    ${e.time ?? '-'}  ${e.type}  ${e.reason}${e.count > 1 ? ` (x${e.count})` : ''}  [${e.source || '?'}]  ${e.message}`,
      );
  }
  return `${lines.join('\n')}\n`;
}
