// The gating decision of the mutating webhook, as a pure function of the incoming pod and the configs.
// Guarantees: every admitted pod gets the tracking labels (`scheduling-gate`, `node-affinity`, and
// `preferred-node-affinity` when a scoring plugin applies), also when it is not gated; a gated pod gets exactly one
// `multiarch.openshift.io/scheduling-gate` entry. The result is an RFC 6902 patch against the pod as received.
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import { LABELS, LABEL_VALUES, SCHEDULING_GATE } from './constants.js';
import {
  hasSchedulingGate,
  ignoreReason,
  matchingPodPlacementConfigs,
  scoringApplies,
  type IgnoreReason,
} from './pod-model.js';
import type { Pod } from './pod-types.js';

export interface AdmissionInput {
  /** Namespace of the admission request (the pod object may lack it). */
  readonly namespace: string;
  /** The operator's namespace: its pods are never gated. */
  readonly operatorNamespace: string;
  /** The ClusterPodPlacementConfig `cluster`, when it exists. */
  readonly clusterConfig: ClusterPodPlacementConfig | undefined;
  /** PodPlacementConfigs of the request's namespace (all of them; matching is done here). */
  readonly podPlacementConfigs: readonly PodPlacementConfig[];
  /**
   * True while the controller's Lease is not renewed (controller-liveness.ts): a pod that would be gated is admitted
   * without the gate (and labelled as not gated), since nobody would come to release it. Default: false.
   */
  readonly gatingSuspended?: boolean;
}

export interface JsonPatchOperation {
  readonly op: 'add' | 'replace' | 'remove';
  readonly path: string;
  readonly value?: unknown;
}

export interface AdmissionDecision {
  readonly gate: boolean;
  /** True when the pod would have been gated but gating is suspended (`gate` is then false). */
  readonly suspended: boolean;
  /** Why the pod is not gated; undefined when gated. */
  readonly ignoreReason: IgnoreReason | undefined;
  /** Labels the webhook sets, in the order written. */
  readonly labels: Readonly<Record<string, string>>;
  /** JSON patch to return in the AdmissionReview response (possibly empty). */
  readonly patch: readonly JsonPatchOperation[];
}

/** JSON pointer escaping of one path segment (RFC 6901). */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Whether to gate the pod, and why not. */
export function shouldGate(
  pod: Pod,
  input: AdmissionInput,
): { gate: boolean; reason: IgnoreReason | undefined } {
  const matching = matchingPodPlacementConfigs(pod, input.namespace, input.podPlacementConfigs);
  const reason = ignoreReason(pod, {
    namespace: input.namespace,
    operatorNamespace: input.operatorNamespace,
    clusterConfig: input.clusterConfig,
    matchingConfigs: matching,
  });
  return { gate: reason === undefined, reason };
}

/** The webhook's full decision: gate or not, the labels, and the patch to return. */
export function decideAdmission(pod: Pod, input: AdmissionInput): AdmissionDecision {
  const matching = matchingPodPlacementConfigs(pod, input.namespace, input.podPlacementConfigs);
  const eligible = shouldGate(pod, input);
  const suspended = eligible.gate && input.gatingSuspended === true;
  const gate = eligible.gate && !suspended;
  const reason = eligible.reason;
  const labels: Record<string, string> = {};
  if (scoringApplies(input.clusterConfig, matching))
    labels[LABELS.preferredNodeAffinity] = LABEL_VALUES.notSet;
  labels[LABELS.nodeAffinity] = LABEL_VALUES.notSet;
  labels[LABELS.schedulingGate] = gate ? LABEL_VALUES.gated : LABEL_VALUES.notSet;

  const patch: JsonPatchOperation[] = [];
  const existing = pod.metadata?.labels;
  if (!pod.metadata) patch.push({ op: 'add', path: '/metadata', value: {} });
  if (!existing) {
    patch.push({ op: 'add', path: '/metadata/labels', value: labels });
  } else {
    for (const [k, v] of Object.entries(labels)) {
      if (existing[k] === v) continue;
      patch.push({
        op: Object.prototype.hasOwnProperty.call(existing, k) ? 'replace' : 'add',
        path: `/metadata/labels/${escapePointer(k)}`,
        value: v,
      });
    }
  }
  if (gate && !hasSchedulingGate(pod)) {
    if (!pod.spec?.schedulingGates) {
      patch.push({ op: 'add', path: '/spec/schedulingGates', value: [{ name: SCHEDULING_GATE }] });
    } else {
      patch.push({ op: 'add', path: '/spec/schedulingGates/-', value: { name: SCHEDULING_GATE } });
    }
  }
  return { gate, suspended, ignoreReason: reason, labels, patch };
}
