// The one definition of the pod placement API (group multiarch.openshift.io): TypeBox schemas from which both
// the TypeScript types (via Static) and the CRD YAML (via ./crd.ts) are derived. Guarantees: what the API server
// validates is exactly what the code types say. Callers must not hand-edit deploy/crds; run the generator.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { SUPPORTED_ARCHITECTURES, CLUSTER_CONFIG_NAME } from '../constants.js';

const ArchitectureSchema = Type.Union(
  SUPPORTED_ARCHITECTURES.map((a) => Type.Literal(a)),
  // maxLength bounds the estimated cost of the CEL rules that read it (the enum alone does not).
  { description: 'A CPU architecture as reported by the kubernetes.io/arch node label.', maxLength: 16 },
);

const LabelSelectorRequirementSchema = Type.Object({
  key: Type.String({ description: 'The label key the selector applies to.' }),
  operator: Type.String({ description: 'One of In, NotIn, Exists, DoesNotExist.' }),
  values: Type.Optional(
    Type.Array(Type.String(), { description: 'Values for In/NotIn; must be empty for Exists/DoesNotExist.' }),
  ),
});

/** A standard Kubernetes label selector (metav1.LabelSelector). */
export const LabelSelectorSchema = Type.Object(
  {
    matchLabels: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: 'Labels that must all be present with these values.',
      }),
    ),
    matchExpressions: Type.Optional(
      Type.Array(LabelSelectorRequirementSchema, { description: 'Requirements that must all hold.' }),
    ),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type LabelSelector = Static<typeof LabelSelectorSchema>;

const PlatformTermSchema = Type.Object({
  architecture: ArchitectureSchema,
  weight: Type.Integer({
    minimum: 1,
    maximum: 100,
    format: 'int32',
    description: 'How much the scheduler favours nodes of this architecture, 1 to 100.',
  }),
});
export type PlatformTerm = Static<typeof PlatformTermSchema>;

const NodeAffinityScoringSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether preferred node affinity terms are added to pods.' }),
    platforms: Type.Array(PlatformTermSchema, {
      minItems: 1,
      // Four architectures exist, each may appear once; the bound also keeps the CEL rule's cost small.
      maxItems: SUPPORTED_ARCHITECTURES.length,
      description: 'Preferred architectures with their weights; each architecture at most once.',
      // One rule per architecture, so the refusal names the duplicate with a static (cheap) message.
      'x-kubernetes-validations': SUPPORTED_ARCHITECTURES.map((arch) => ({
        rule: `self.filter(p, p.architecture == '${arch}').size() <= 1`,
        message: `duplicate architecture ${arch} in nodeAffinityScoring.platforms: list each architecture at most once`,
      })),
    }),
  },
  { description: 'The NodeAffinityScoring plugin: adds weighted preferred node affinity per architecture.' },
);
export type NodeAffinityScoring = Static<typeof NodeAffinityScoringSchema>;

const ExecFormatErrorMonitorSchema = Type.Object(
  {
    enabled: Type.Boolean({
      description:
        'true: containers that fail with "exec format error", as the kubelet reports it, get a Warning event ' +
        'ExecFormatError and count in mto_enoexecevents_total. Without an eBPF DaemonSet: a failed exec in a ' +
        'container that keeps running is not seen (the ExecFormatErrorMonitorUnsupported condition says so).',
    }),
  },
  {
    description:
      'The ExecFormatErrorMonitor plugin, detected from what the kubelet reports (no ENoExecEvent objects).',
  },
);

const ClusterPluginsSchema = Type.Object(
  {
    nodeAffinityScoring: Type.Optional(NodeAffinityScoringSchema),
    execFormatErrorMonitor: Type.Optional(ExecFormatErrorMonitorSchema),
  },
  { description: 'Optional plugins of the pod placement operand.' },
);

const LocalPluginsSchema = Type.Object(
  { nodeAffinityScoring: Type.Optional(NodeAffinityScoringSchema) },
  { description: 'Plugins applied to the pods this PodPlacementConfig selects.' },
);

const LogVerbositySchema = Type.Union(
  (['Normal', 'Debug', 'Trace', 'TraceAll'] as const).map((v) => Type.Literal(v)),
  { default: 'Normal', description: 'Log level of the pod placement components, applied at run time.' },
);
export type LogVerbosity = Static<typeof LogVerbositySchema>;

const FallbackArchitectureSchema = Type.Union(
  [Type.Literal(''), ...SUPPORTED_ARCHITECTURES.map((a) => Type.Literal(a))],
  {
    default: '',
    description:
      'Architecture required for a pod whose images could not be inspected after all retries; empty means none.',
  },
);

const NamespaceSelectorSchema = Type.Unsafe<LabelSelector>({
  ...LabelSelectorSchema,
  description:
    'Namespaces whose pods are gated and placed; empty selects all. The recommended value excludes namespaces ' +
    'labelled multiarch.openshift.io/exclude-pod-placement.',
});

/** metav1.Condition as stored in status.conditions. */
export const ConditionSchema = Type.Object({
  type: Type.String({ maxLength: 316, description: 'Condition type, e.g. Available.' }),
  status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
  reason: Type.String({ maxLength: 1024, minLength: 1, description: 'Machine-readable CamelCase reason.' }),
  message: Type.String({ maxLength: 32768, description: 'Human-readable details.' }),
  lastTransitionTime: Type.String({ format: 'date-time', description: 'When the status last changed.' }),
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0, format: 'int64' })),
});
export type Condition = Static<typeof ConditionSchema>;

const ConditionsSchema = Type.Array(ConditionSchema, {
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
  description: 'Latest observations of the operand state.',
});

export const ClusterPodPlacementConfigSpecV1beta1 = Type.Object({
  logVerbosity: Type.Optional(LogVerbositySchema),
  namespaceSelector: Type.Optional(NamespaceSelectorSchema),
  plugins: Type.Optional(ClusterPluginsSchema),
  fallbackArchitecture: Type.Optional(FallbackArchitectureSchema),
});
export type ClusterPodPlacementConfigSpec = Static<typeof ClusterPodPlacementConfigSpecV1beta1>;

export const ClusterPodPlacementConfigSpecV1alpha1 = Type.Object({
  logVerbosity: Type.Optional(LogVerbositySchema),
  namespaceSelector: Type.Optional(NamespaceSelectorSchema),
});

export const ClusterPodPlacementConfigStatusSchema = Type.Object({
  conditions: Type.Optional(ConditionsSchema),
});
export type ClusterPodPlacementConfigStatus = Static<typeof ClusterPodPlacementConfigStatusSchema>;

export const PodPlacementConfigSpecV1beta1 = Type.Object({
  labelSelector: Type.Optional(
    Type.Unsafe<LabelSelector>({
      ...LabelSelectorSchema,
      description: 'Pods of this namespace the config applies to; empty selects all.',
    }),
  ),
  plugins: LocalPluginsSchema,
  priority: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 255,
      default: 0,
      description:
        'Order among the PodPlacementConfigs of a namespace (higher first), 0 to 255, unique per namespace.',
    }),
  ),
});
export type PodPlacementConfigSpec = Static<typeof PodPlacementConfigSpecV1beta1>;

export const PodPlacementConfigStatusSchema = Type.Object({});

/** Object metadata fields the operator reads; the API server owns the schema of metadata. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
}

export interface ClusterPodPlacementConfig {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: ClusterPodPlacementConfigSpec;
  status?: ClusterPodPlacementConfigStatus;
}

export interface PodPlacementConfig {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodPlacementConfigSpec;
}

/** One served version of a kind: its spec/status schemas and the root-level CEL rules. */
export interface VersionDefinition {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly spec: TSchema;
  readonly status: TSchema;
  readonly specRequired: boolean;
  readonly rootValidations?: readonly { rule: string; message: string }[];
  readonly printerColumns?: readonly { name: string; type: string; jsonPath: string; description?: string }[];
}

export interface KindDefinition {
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly scope: 'Cluster' | 'Namespaced';
  readonly description: string;
  readonly versions: readonly VersionDefinition[];
}

const singletonRule = {
  rule: `self.metadata.name == '${CLUSTER_CONFIG_NAME}'`,
  message: `ClusterPodPlacementConfig is a singleton: its name must be '${CLUSTER_CONFIG_NAME}'`,
};

const conditionColumn = (name: string, type: string, field: 'status' | 'reason' | 'lastTransitionTime') => ({
  name: name,
  type: field === 'lastTransitionTime' ? 'date' : 'string',
  jsonPath: `.status.conditions[?(@.type=="${type}")].${field}`,
});

export const CLUSTER_POD_PLACEMENT_CONFIG: KindDefinition = {
  kind: 'ClusterPodPlacementConfig',
  plural: 'clusterpodplacementconfigs',
  singular: 'clusterpodplacementconfig',
  scope: 'Cluster',
  description:
    'Cluster-wide configuration of architecture-aware pod placement. A singleton named "cluster"; creating it ' +
    'enables the operand, deleting it removes the webhook and then ungates every pod still gated.',
  versions: [
    {
      name: 'v1alpha1',
      served: true,
      storage: false,
      spec: ClusterPodPlacementConfigSpecV1alpha1,
      status: ClusterPodPlacementConfigStatusSchema,
      specRequired: false,
      rootValidations: [singletonRule],
    },
    {
      name: 'v1beta1',
      served: true,
      storage: true,
      spec: ClusterPodPlacementConfigSpecV1beta1,
      status: ClusterPodPlacementConfigStatusSchema,
      specRequired: false,
      rootValidations: [singletonRule],
      printerColumns: [
        conditionColumn('Available', 'Available', 'status'),
        conditionColumn('Progressing', 'Progressing', 'status'),
        conditionColumn('Degraded', 'Degraded', 'status'),
        conditionColumn('Since', 'Progressing', 'lastTransitionTime'),
        conditionColumn('Status', 'Available', 'reason'),
      ],
    },
  ],
};

export const POD_PLACEMENT_CONFIG: KindDefinition = {
  kind: 'PodPlacementConfig',
  plural: 'podplacementconfigs',
  singular: 'podplacementconfig',
  scope: 'Namespaced',
  description:
    'Per-namespace preferred architectures for the pods its labelSelector matches; applied before the cluster ' +
    'config, in descending priority.',
  versions: [
    {
      name: 'v1beta1',
      served: true,
      storage: true,
      spec: PodPlacementConfigSpecV1beta1,
      status: PodPlacementConfigStatusSchema,
      specRequired: true,
      printerColumns: [
        { name: 'Priority', type: 'integer', jsonPath: '.spec.priority' },
        { name: 'Scoring', type: 'boolean', jsonPath: '.spec.plugins.nodeAffinityScoring.enabled' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  ],
};
