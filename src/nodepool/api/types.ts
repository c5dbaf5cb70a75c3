// The API objects of this area, each defined once as a TypeBox schema; the TS types are derived from the schemas and
// crd.ts derives the development CRDs from the same schemas, so code and CRDs cannot drift apart.
// Guarantees: only the fields this area reads or writes are typed; everything else is preserved by the CRDs
// (x-kubernetes-preserve-unknown-fields) and round-tripped untouched by read-modify-write callers.
import { Type, type Static } from '@sinclair/typebox';

const preserveUnknown = { 'x-kubernetes-preserve-unknown-fields': true } as const;

/** "True" | "False" | "Unknown", as a structural-schema enum (TypeBox unions of literals are not structural). */
export const ConditionStatusSchema = Type.Unsafe<'True' | 'False' | 'Unknown'>({
  type: 'string',
  enum: ['True', 'False', 'Unknown'],
});

/** map[string]string as a structural schema (`additionalProperties`; TypeBox's Record emits patternProperties). */
const StringMap = Type.Unsafe<Record<string, string>>({
  type: 'object',
  additionalProperties: { type: 'string' },
});

/** RFC 3339 time, or null for Go's zero metav1.Time (sigs.k8s.io/yaml writes `null`). */
const NullableTime = Type.Unsafe<string | null>({ type: 'string', format: 'date-time', nullable: true });

/** The subset of ObjectMeta this area uses. Not part of the CRD schemas (the API server owns metadata). */
export const ObjectMetaSchema = Type.Object({
  name: Type.Optional(Type.String()),
  namespace: Type.Optional(Type.String()),
  uid: Type.Optional(Type.String()),
  resourceVersion: Type.Optional(Type.String()),
  generation: Type.Optional(Type.Integer()),
  creationTimestamp: Type.Optional(Type.String()),
  deletionTimestamp: Type.Optional(Type.String()),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
  ownerReferences: Type.Optional(
    Type.Array(
      Type.Object({
        apiVersion: Type.String(),
        kind: Type.String(),
        name: Type.String(),
        uid: Type.String(),
        controller: Type.Optional(Type.Boolean()),
        blockOwnerDeletion: Type.Optional(Type.Boolean()),
      }),
    ),
  ),
});
export type ObjectMeta = Static<typeof ObjectMetaSchema>;

// ---------------------------------------------------------------- NodePool (hypershift.openshift.io/v1beta1)

/** NodePoolCondition (HyperShift's own condition shape: metav1.Condition's reason validation would reject CAPI's). */
export const NodePoolConditionSchema = Type.Object({
  type: Type.String({ maxLength: 316 }),
  status: ConditionStatusSchema,
  severity: Type.Optional(Type.String({ maxLength: 1024 })),
  lastTransitionTime: Type.String({ format: 'date-time' }),
  reason: Type.Optional(Type.String({ maxLength: 1024 })),
  message: Type.Optional(Type.String({ maxLength: 32768 })),
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type NodePoolCondition = Static<typeof NodePoolConditionSchema>;

export const NodePoolSpecSchema = Type.Object(
  {
    clusterName: Type.String({
      minLength: 1,
      maxLength: 253,
      'x-kubernetes-validations': [
        { rule: 'self == oldSelf', message: 'ClusterName is immutable' },
        {
          rule: "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
          message:
            "clusterName must consist of lowercase alphanumeric characters or '-', start and end with an alphanumeric character, and be between 1 and 253 characters",
        },
      ],
    }),
    tuningConfig: Type.Optional(
      Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 253 }) }), { maxItems: 10 }),
    ),
  },
  preserveUnknown,
);

export const NodePoolStatusSchema = Type.Object(
  {
    conditions: Type.Optional(
      Type.Array(NodePoolConditionSchema, {
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
    ),
  },
  preserveUnknown,
);

export const NodePoolSchema = Type.Object({
  apiVersion: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  metadata: ObjectMetaSchema,
  spec: NodePoolSpecSchema,
  status: Type.Optional(NodePoolStatusSchema),
});
export type NodePool = Static<typeof NodePoolSchema>;

// ------------------------------------------------------- HostedControlPlane (hypershift.openshift.io/v1beta1)

/** Only the metadata matters here: the `hypershift.openshift.io/cluster` annotation names the HostedCluster. */
export const HostedControlPlaneSchema = Type.Object({
  apiVersion: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  metadata: ObjectMetaSchema,
  spec: Type.Optional(Type.Object({}, preserveUnknown)),
  status: Type.Optional(Type.Object({}, preserveUnknown)),
});
export type HostedControlPlane = Static<typeof HostedControlPlaneSchema>;

// ------------------------------------------------- PerformanceProfile status (performance.openshift.io/v2)

/** conditionsv1.Condition (openshift/custom-resource-status), as NTO writes it. */
export const ProfileConditionSchema = Type.Object({
  type: Type.String(),
  status: ConditionStatusSchema,
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
  lastHeartbeatTime: Type.Optional(NullableTime),
  lastTransitionTime: Type.Optional(NullableTime),
});
export type ProfileCondition = Static<typeof ProfileConditionSchema>;

export const PerformanceProfileStatusSchema = Type.Object({
  conditions: Type.Optional(Type.Array(ProfileConditionSchema)),
  tuned: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  runtimeClass: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type PerformanceProfileStatus = Static<typeof PerformanceProfileStatusSchema>;

/** The CRD keeps status.tuned/runtimeClass as plain nullable strings (a structural schema has no anyOf types). */
const PerformanceProfileStatusCrdSchema = Type.Object({
  conditions: Type.Optional(Type.Array(ProfileConditionSchema)),
  tuned: Type.Optional(Type.Unsafe<string | null>({ type: 'string', nullable: true })),
  runtimeClass: Type.Optional(Type.Unsafe<string | null>({ type: 'string', nullable: true })),
});

export const PerformanceProfileSchema = Type.Object({
  apiVersion: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  metadata: ObjectMetaSchema,
  spec: Type.Optional(Type.Object({ nodeSelector: Type.Optional(StringMap) }, preserveUnknown)),
  status: Type.Optional(PerformanceProfileStatusCrdSchema),
});

// ------------------------------------------------------------------ Tuned Profile (tuned.openshift.io/v1)

export const TunedProfileConditionSchema = Type.Object({
  type: Type.String(),
  status: ConditionStatusSchema,
  lastTransitionTime: Type.Optional(Type.String({ format: 'date-time' })),
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type TunedProfileCondition = Static<typeof TunedProfileConditionSchema>;

export const TunedProfileSchema = Type.Object({
  apiVersion: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  metadata: ObjectMetaSchema,
  spec: Type.Optional(
    Type.Object(
      { config: Type.Optional(Type.Object({ tunedProfile: Type.Optional(Type.String()) }, preserveUnknown)) },
      preserveUnknown,
    ),
  ),
  status: Type.Optional(
    Type.Object(
      {
        tunedProfile: Type.Optional(Type.String()),
        conditions: Type.Optional(Type.Array(TunedProfileConditionSchema)),
        observedGeneration: Type.Optional(Type.Integer()),
      },
      preserveUnknown,
    ),
  ),
});
export type TunedProfile = Static<typeof TunedProfileSchema>;

// --------------------------------------------------------------------------- core/v1 objects (not CRDs)

/** The part of a core/v1 ConfigMap this area reads and writes. */
export interface ConfigMap {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  data?: Record<string, string>;
}

/** The part of a core/v1 Node used to tell which NodePool a node (and its Tuned Profile) belongs to. */
export interface Node {
  metadata: ObjectMeta;
  spec?: {
    taints?: { key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }[];
  };
}
