// `podplacement explain`: what the operator would do to a pod, as display data (assessExplanation) and text
// (renderExplanation). Pure: the caller fetches the pod, the configs and the image inspections.
import { decideAdmission } from './admission.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import { MAX_RETRY_COUNT, SCHEDULING_GATE } from './constants.js';
import { planPlacement, type ImageArchitectures, type PlacementOutcome } from './placement-plan.js';
import { podImages, type IgnoreReason } from './pod-model.js';
import type { NodeSelectorTerm, Pod, PreferredSchedulingTerm } from './pod-types.js';

export interface Explanation {
  readonly pod: string;
  readonly images: { image: string; architectures?: readonly string[]; error?: string }[];
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
}): Explanation {
  const pod: Pod = { ...input.pod, metadata: { ...input.pod.metadata, namespace: input.namespace } };
  const name = `${input.namespace}/${pod.metadata?.name ?? pod.metadata?.generateName ?? '(unnamed)'}`;
  const images = podImages(pod).map(({ image }) => {
    const r = input.inspection.get(image);
    if (!r) return { image };
    return 'error' in r ? { image, error: r.error } : { image, architectures: r.archs };
  });
  const notes: string[] = [];
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
  if (failing)
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
      ? `ERROR ${i.error}`
      : i.architectures
        ? i.architectures.join(', ')
        : '(not inspected)';
    lines.push(`  ${i.image}: ${what}`);
  }
  lines.push('', `Gated: ${e.gated ? 'yes' : 'no'}`);
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
    lines.push('Labels:');
    for (const [k, v] of labels) lines.push(`  ${k}=${v ?? ''}`);
  }
  if (e.notes.length > 0) lines.push('', ...e.notes.map((n) => `Note: ${n}`));
  return `${lines.join('\n')}\n`;
}
