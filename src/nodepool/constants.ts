// Wire strings of the NodePool performance-profile status contract (HyperShift <-> Node Tuning Operator).
// Guarantees: every value equals the one in the shared contract (nodepool-performance-status.constants.json);
// constants.test.ts checks that. Callers must use these names instead of spelling the strings again.

/** hypershift.openshift.io/v1beta1 NodePool and HostedControlPlane. */
export const HYPERSHIFT_GROUP = 'hypershift.openshift.io';
export const HYPERSHIFT_VERSION = 'v1beta1';
export const NODEPOOL_KIND = 'NodePool';
export const NODEPOOL_PLURAL = 'nodepools';
export const HOSTED_CONTROL_PLANE_KIND = 'HostedControlPlane';
export const HOSTED_CONTROL_PLANE_PLURAL = 'hostedcontrolplanes';

/** performance.openshift.io/v2 PerformanceProfile (cluster-scoped, in the hosted cluster). */
export const PERFORMANCE_GROUP = 'performance.openshift.io';
export const PERFORMANCE_VERSION = 'v2';
export const PERFORMANCE_PROFILE_KIND = 'PerformanceProfile';
export const PERFORMANCE_PROFILE_PLURAL = 'performanceprofiles';

/** tuned.openshift.io/v1 Profile: one per Node, same name as the Node, in the NTO namespace of the hosted cluster. */
export const TUNED_GROUP = 'tuned.openshift.io';
export const TUNED_VERSION = 'v1';
export const TUNED_PROFILE_KIND = 'Profile';
export const TUNED_PROFILE_PLURAL = 'profiles';
/** Namespace of Tuned objects and their per-node Profiles in the hosted cluster. */
export const NTO_NAMESPACE = 'openshift-cluster-node-tuning-operator';
/** Tuned Profile condition types. */
export const TUNED_CONDITION_APPLIED = 'Applied';
export const TUNED_CONDITION_DEGRADED = 'Degraded';

export const LABELS = {
  statusConfigMap: 'hypershift.openshift.io/nto-generated-performance-profile-status',
  nodePool: 'hypershift.openshift.io/nodePool',
  performanceProfileName: 'hypershift.openshift.io/performanceProfileName',
  ppConfigMap: 'hypershift.openshift.io/performanceprofile-config',
  tunedConfigMap: 'hypershift.openshift.io/tuned-config',
  ntoGeneratedMachineConfig: 'hypershift.openshift.io/nto-generated-machine-config',
  kubeletConfigConfigMap: 'hypershift.openshift.io/kubeletconfig-config',
  mirroredConfig: 'hypershift.openshift.io/mirrored-config',
} as const;

export const ANNOTATIONS = {
  /** On NTO ConfigMaps in the HCP namespace: "<nodepool namespace>/<nodepool name>". */
  nodePool: 'hypershift.openshift.io/nodePool',
  /** On the HostedControlPlane: "<hostedcluster namespace>/<hostedcluster name>". */
  hostedClusterOnHCP: 'hypershift.openshift.io/cluster',
} as const;

export const DATA_KEYS = { status: 'status', tuning: 'tuning', config: 'config' } as const;

/** Prefix of the status ConfigMap name: `status-<PP ConfigMap name in the HCP namespace>`. */
export const STATUS_CONFIGMAP_PREFIX = 'status';
/** Longest name of the mirrored PerformanceProfile ConfigMap before it is hash-shortened. */
export const PP_CONFIGMAP_NAME_MAX = 63;

/** PerformanceProfile condition types, in the order NTO writes them. */
export const PROFILE_CONDITION_TYPES = ['Available', 'Upgradeable', 'Progressing', 'Degraded'] as const;
export type ProfileConditionType = (typeof PROFILE_CONDITION_TYPES)[number];

export const NODEPOOL_CONDITION_PREFIX = 'performance.operator.openshift.io';
/** NodePool mirror of a profile condition type: `performance.operator.openshift.io/<Type>`. */
export function mirroredConditionType(type: string): string {
  return `${NODEPOOL_CONDITION_PREFIX}/${type}`;
}
/** The summary condition of the seed design. */
export const APPLIED_SUCCESSFULLY_CONDITION = 'PerformanceProfileAppliedSuccessfully';

/** NTO's condition reasons (status.go in cluster-node-tuning-operator). */
export const NTO_REASONS = {
  failedToFindMachineConfigPool: 'GettingMachineConfigPoolFailed',
  badMachineConfigLabels: 'BadMachineConfigLabels',
  componentsCreationFailed: 'ComponentCreationFailed',
  mcpDegraded: 'MCPDegraded',
  failedGettingMCPStatus: 'GettingMCPStatusFailed',
  kubeletFailed: 'KubeletConfig failure',
  failedGettingKubeletStatus: 'GettingKubeletStatusFailed',
  tunedDegraded: 'TunedProfileDegraded',
  failedGettingTunedProfileStatus: 'GettingTunedStatusFailed',
  ovsDpdkCPUsPrerequisiteNotMet: 'OvsDpdkCPUsPrerequisiteNotMet',
  deploymentStarting: 'DeploymentStarting',
} as const;
/** Message NTO pairs with DeploymentStarting. */
export const DEPLOYMENT_STARTING_MESSAGE = 'Deployment is starting';

/** NTO naming of the per-profile components (components/consts.go). */
export const TUNED_PROFILE_NAME_PREFIX = 'openshift-node-performance';
export const RUNTIME_CLASS_PREFIX = 'performance';

/** Reference error texts (hypershift nto.go), reused in our conditions' messages so users can search for them. */
export const REFERENCE_MESSAGES = {
  multiple:
    'there cannot be more than one PerformanceProfile ConfigMap status per NodePool. found: %d NodePool: %s',
  noKey: 'status not found in performance profile status configmap',
  decode: 'failed to decode the performance profile status: %w',
  missing: 'no PerformanceProfile ConfigMap status found',
} as const;
