// Read-only questions about a pod and the configs that apply to it (has*/is*/should*), shared by the admission
// webhook, the reconciler and the explain CLI so that all three decide alike. Pure: no I/O, no clock, never
// mutates its inputs.
import type {
  ClusterPodPlacementConfig,
  LabelSelector,
  NodeAffinityScoring,
  PodPlacementConfig,
} from './api/schema.js';
import { ARCH_LABEL, CONTROL_PLANE_NODE_SELECTOR_LABELS, SCHEDULING_GATE } from './constants.js';
import { labelSelectorMatchesOrFalse } from '../runtime/light.js';
import type { Pod } from './pod-types.js';

/** The platform's namespaces on OpenShift; MTO gates them, Tessera only when opted in. */
export const OPENSHIFT_NAMESPACE_PREFIX = 'openshift-';

export function hasSchedulingGate(pod: Pod): boolean {
  return (pod.spec?.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE);
}

export function hasControlPlaneNodeSelector(pod: Pod): boolean {
  const selector = pod.spec?.nodeSelector ?? {};
  return CONTROL_PLANE_NODE_SELECTOR_LABELS.some((key) =>
    Object.prototype.hasOwnProperty.call(selector, key),
  );
}

/** Only a DaemonSet that *controls* the pod counts; a plain owner reference does not. */
export function isFromDaemonSet(pod: Pod): boolean {
  return (pod.metadata?.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet' && o.controller === true);
}

/**
 * True when the user already pinned the architecture: a `kubernetes.io/arch` nodeSelector, or every required
 * nodeSelectorTerm has a `kubernetes.io/arch` match expression (terms are ORed, so one free term means not pinned).
 */
export function isArchitecturePinned(pod: Pod): boolean {
  if (Object.prototype.hasOwnProperty.call(pod.spec?.nodeSelector ?? {}, ARCH_LABEL)) return true;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return false;
  // An empty list of terms: every() is true, like the reference (the API server rejects it anyway).
  return (required.nodeSelectorTerms ?? []).every((term) =>
    (term.matchExpressions ?? []).some((e) => e.key === ARCH_LABEL),
  );
}

/** True when some preferred node affinity term already mentions `kubernetes.io/arch`. */
export function hasArchitecturePreference(pod: Pod): boolean {
  return (pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).some((t) =>
    (t.preference.matchExpressions ?? []).some((e) => e.key === ARCH_LABEL),
  );
}

/** The enabled scoring plugin of a config, or undefined. */
export function enabledScoring(
  config: ClusterPodPlacementConfig | PodPlacementConfig | undefined,
): NodeAffinityScoring | undefined {
  const scoring = config?.spec?.plugins?.nodeAffinityScoring;
  return scoring?.enabled ? scoring : undefined;
}

/**
 * The PodPlacementConfigs of the pod's namespace whose labelSelector matches the pod, by descending priority
 * (name breaks ties, so the order is deterministic). Configs with an invalid selector never match.
 */
export function matchingPodPlacementConfigs(
  pod: Pod,
  namespace: string,
  configs: readonly PodPlacementConfig[],
): PodPlacementConfig[] {
  return (
    configs
      .filter((c) => (c.metadata.namespace ?? namespace) === namespace)
      // An absent (or null) labelSelector selects every pod of the namespace, as `{}` does: the API's contract.
      .filter(
        (c) =>
          !c.spec.labelSelector || labelSelectorMatchesOrFalse(c.spec.labelSelector, pod.metadata?.labels),
      )
      .sort(
        (a, b) =>
          (b.spec.priority ?? 0) - (a.spec.priority ?? 0) ||
          (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
      )
  );
}

/** True when the cluster config or one of the matching configs would add preferred terms. */
export function scoringApplies(
  clusterConfig: ClusterPodPlacementConfig | undefined,
  matchingConfigs: readonly PodPlacementConfig[],
): boolean {
  return (
    enabledScoring(clusterConfig) !== undefined ||
    matchingConfigs.some((c) => enabledScoring(c) !== undefined)
  );
}

/** The distinct images of containers and init containers, in first-seen order, with their pull policy. */
export function podImages(pod: Pod): { image: string; pullAlways: boolean }[] {
  const byImage = new Map<string, boolean>();
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    if (!c.image) continue;
    const always = c.imagePullPolicy === 'Always';
    // Any container pulling Always makes the image bypass the cache: a fresh answer is never wrong.
    byImage.set(c.image, (byImage.get(c.image) ?? false) || always);
  }
  return [...byImage].map(([image, pullAlways]) => ({ image, pullAlways }));
}

/**
 * Whether pods of `openshift-*` namespaces may be gated under this namespaceSelector: only when it requires a label
 * to be present (a matchLabels entry, or an In or Exists expression), so that every namespace it selects carries a
 * label someone set for it. An absent or empty selector, or one of DoesNotExist and NotIn only (like the
 * recommended `multiarch.openshift.io/exclude-pod-placement DoesNotExist`), selects namespaces nobody chose, and the
 * platform's own namespaces stay out. The webhook's matchConditions follow the same rule.
 */
export function selectorOptsInOpenShiftNamespaces(selector: LabelSelector | undefined): boolean {
  if (Object.keys(selector?.matchLabels ?? {}).length > 0) return true;
  return (selector?.matchExpressions ?? []).some((e) => e.operator === 'In' || e.operator === 'Exists');
}

/** Why a pod is left alone, as shown by `tessera podplacement explain`. */
export type IgnoreReason =
  | 'operator-namespace'
  | 'kube-namespace'
  | 'openshift-namespace'
  | 'node-name-set'
  | 'control-plane-node-selector'
  | 'daemonset-pod'
  | 'architecture-already-pinned';

export interface IgnoreContext {
  /** Namespace of the pod (admission requests may carry it only outside the object). */
  readonly namespace: string;
  /** Namespace the operator runs in; its pods are never gated. */
  readonly operatorNamespace: string;
  readonly clusterConfig: ClusterPodPlacementConfig | undefined;
  /** PodPlacementConfigs matching the pod (see matchingPodPlacementConfigs). */
  readonly matchingConfigs: readonly PodPlacementConfig[];
}

/**
 * Why the operator must leave this pod alone, or undefined when it should gate and place it:
 * - the operator's own namespace or any `kube-*` namespace;
 * - an `openshift-*` namespace, unless the cluster config's namespaceSelector opts them in
 *   (selectorOptsInOpenShiftNamespaces);
 * - `spec.nodeName` set (the scheduler is bypassed);
 * - a nodeSelector for control-plane nodes;
 * - a pod controlled by a DaemonSet;
 * - architecture pinned by the user, and either an arch preference is present as well or no scoring plugin
 *   (cluster or matching namespaced config) would add one.
 */
export function ignoreReason(pod: Pod, ctx: IgnoreContext): IgnoreReason | undefined {
  if (ctx.namespace === ctx.operatorNamespace) return 'operator-namespace';
  if (ctx.namespace.startsWith('kube-')) return 'kube-namespace';
  if (
    ctx.namespace.startsWith(OPENSHIFT_NAMESPACE_PREFIX) &&
    !selectorOptsInOpenShiftNamespaces(ctx.clusterConfig?.spec?.namespaceSelector)
  )
    return 'openshift-namespace';
  if (pod.spec?.nodeName) return 'node-name-set';
  if (hasControlPlaneNodeSelector(pod)) return 'control-plane-node-selector';
  if (isFromDaemonSet(pod)) return 'daemonset-pod';
  if (
    isArchitecturePinned(pod) &&
    (hasArchitecturePreference(pod) || !scoringApplies(ctx.clusterConfig, ctx.matchingConfigs))
  ) {
    return 'architecture-already-pinned';
  }
  return undefined;
}
