// Wire strings of the pod placement operator, identical to the reference (Multiarch Tuning Operator) so that
// users can switch without touching their CRs, dashboards, alerts or scripts. Guarantees: every exported string
// here is part of the contract in shared/specs/pod-placement.constants.json; change none of them casually.

export const API_GROUP = 'multiarch.openshift.io';
export const CLUSTER_CONFIG_KIND = 'ClusterPodPlacementConfig';
export const CLUSTER_CONFIG_PLURAL = 'clusterpodplacementconfigs';
export const POD_CONFIG_KIND = 'PodPlacementConfig';
export const POD_CONFIG_PLURAL = 'podplacementconfigs';
/** The only accepted name of the cluster-scoped config. */
export const CLUSTER_CONFIG_NAME = 'cluster';

export const ARCH_LABEL = 'kubernetes.io/arch';
export const SUPPORTED_ARCHITECTURES = ['amd64', 'arm64', 'ppc64le', 's390x'] as const;

export const SCHEDULING_GATE = 'multiarch.openshift.io/scheduling-gate';

export const LABELS = {
  schedulingGate: 'multiarch.openshift.io/scheduling-gate',
  nodeAffinity: 'multiarch.openshift.io/node-affinity',
  preferredNodeAffinity: 'multiarch.openshift.io/preferred-node-affinity',
  singleArch: 'multiarch.openshift.io/single-arch',
  multiArch: 'multiarch.openshift.io/multi-arch',
  noSupportedArch: 'multiarch.openshift.io/no-supported-arch',
  fallbackArch: 'multiarch.openshift.io/fallback-arch',
  imageInspectError: 'multiarch.openshift.io/image-inspect-error',
  imageInspectErrorCount: 'multiarch.openshift.io/image-inspect-error-count',
} as const;

/** `multiarch.openshift.io/<arch>` label set on a pod for each supported architecture of its images. */
export function archLabel(arch: string): string {
  return `${API_GROUP}/${arch}`;
}

export const LABEL_VALUES = {
  notSet: 'not-set',
  set: 'set',
  gated: 'gated',
  removed: 'removed',
} as const;

export const ANNOTATIONS = {
  imageInspectError: 'multiarch.openshift.io/image-inspect-error',
  preferredAffinitySources: 'multiarch.openshift.io/preferred-affinity-sources',
  /** When a pod was released by hand (`tessera podplacement release`), unplaced: RFC 3339 time. Tessera's own. */
  releasedByHand: 'multiarch.openshift.io/released-by-hand',
} as const;

/** Label on namespaces excluded by the recommended namespaceSelector. */
export const EXCLUDE_NAMESPACE_LABEL = 'multiarch.openshift.io/exclude-pod-placement';

export const CONTROL_PLANE_NODE_SELECTOR_LABELS = [
  'node-role.kubernetes.io/master',
  'node-role.kubernetes.io/control-plane',
] as const;

/** Failed inspection attempts after which a pod is ungated anyway (fallback architecture or no required term). */
export const MAX_RETRY_COUNT = 5;
/** Longest error message stored in the image-inspect-error annotation, in runes (code points). */
export const MAX_ERROR_ANNOTATION_RUNES = 256;

export const EVENT_REASONS = {
  schedGateAdded: 'ArchAwareSchedGateAdded',
  predicateSet: 'ArchAwarePredicateSet',
  predicatesConflict: 'ArchAwarePredicatesConflict',
  inspectionError: 'ArchAwareInspectionError',
  gatedPodIgnored: 'ArchAwareGatedPodIgnored',
  schedGateRemovalSuccess: 'ArchAwareSchedGateRemovalSuccess',
  schedGateRemovalFailed: 'ArchAwareSchedGateRemovalFailed',
  noSupportedArchitecturesFound: 'NoSupportedArchitecturesFound',
  preferredAffinityDuplicates: 'ArchAwarePreferredAffinityDuplicates',
  fallbackPredicateSet: 'ArchAwareFallbackPredicateSet',
} as const;

export const EVENT_MESSAGES = {
  schedGateAdded: `Successfully gated with the ${SCHEDULING_GATE} scheduling gate`,
  schedGateRemovalSuccess: `Successfully removed the ${SCHEDULING_GATE} scheduling gate`,
  schedGateRemovalFailed: `Failed to remove the scheduling gate "${SCHEDULING_GATE}"`,
  predicatesConflict: 'All the scheduling predicates already include architecture-specific constraints',
  predicateSetPrefix: 'Set the supported architectures to ',
  preferredAllApplied: 'Applied all architecture preferences from configuration',
  preferredSomeApplied: 'Applied some architecture preferences from configuration; others were already set',
  preferredAllDuplicates: 'Skipped all architecture preferences from configuration; all were already set',
  preferredSkipped: 'Skipped configuration; no architecture preferences were provided',
  inspectionErrorPrefix:
    'The operator encountered an error while inspecting the container image to determine its supported architectures. ' +
    'This is typically caused by the image registry being unreachable, returning an error, or a misconfiguration. ' +
    'Registry error: ',
  noSupportedArchitectures:
    'Pod cannot be scheduled due to incompatible image architectures; container images have no supported architectures in common',
  gatedPodIgnored:
    'The gated pod has been modified and is no longer eligible for architecture-aware scheduling',
  maxRetriesPrefix:
    'The operator was unable to determine the supported architectures after multiple retries. ' +
    "This is typically caused by the image registry being unreachable, returning an error, or a misconfiguration in the cluster's pull secrets or network. " +
    'Registry error',
  fallbackPrefix: 'Image inspection failed; setting the nodeAffinity to the fallback architecture: ',
} as const;

export const EVENT_RECORDER_COMPONENT = 'multiarch-tuning-operator';

export const MUTATING_WEBHOOK = {
  configurationName: 'pod-placement-mutating-webhook-configuration',
  webhookName: 'pod-placement-scheduling-gate.multiarch.openshift.io',
  path: '/add-pod-scheduling-gate',
  serviceName: 'pod-placement-web-hook',
} as const;

export const VALIDATING_WEBHOOK = {
  configurationName: 'pod-placement-validating-webhook-configuration',
  clusterConfigPath: '/validate-multiarch-openshift-io-v1beta1-clusterpodplacementconfig',
  clusterConfigWebhookName: 'validate-clusterpodplacementconfig.multiarch.openshift.io',
  podConfigPath: '/validate-multiarch-openshift-io-v1beta1-podplacementconfig',
  podConfigWebhookName: 'validate-podplacementconfig.multiarch.openshift.io',
} as const;

export const SERVICE_CA_INJECT_ANNOTATION = 'service.beta.openshift.io/inject-cabundle';

/**
 * The ClusterPodPlacementConfig's finalizers the cluster-config reconciler owns. `execFormatErrorEvents` is MTO's: its
 * operator holds the config until its ENoExecEvent objects are gone. Tessera creates none, so after a move from MTO
 * the reconciler releases it (it is never wanted) instead of leaving a config that can never be deleted.
 */
export const FINALIZERS = {
  podPlacement: 'finalizers.multiarch.openshift.io/pod-placement',
  noPodPlacementConfig: 'finalizers.multiarch.openshift.io/no-pod-placement-config',
  execFormatErrorEvents: 'finalizers.multiarch.openshift.io/enoexec-events',
} as const;

export const CONDITION_TYPES = {
  available: 'Available',
  progressing: 'Progressing',
  degraded: 'Degraded',
  deprovisioning: 'Deprovisioning',
  controllerNotRolledOut: 'PodPlacementControllerNotRolledOut',
  webhookNotRolledOut: 'PodPlacementWebhookNotRolledOut',
  mutatingWebhookConfigurationNotAvailable: 'MutatingWebhookConfigurationNotAvailable',
} as const;

export const ALL_COMPONENTS_READY = 'AllComponentsReady';

export const DEFAULT_OPERATOR_NAMESPACE = 'openshift-multiarch-tuning-operator';
export const GLOBAL_PULL_SECRET = { namespace: 'openshift-config', name: 'pull-secret' } as const;

export const LEADER_ELECTION_ID = 'ppc-controllers-208d7abd.multiarch.openshift.io';
