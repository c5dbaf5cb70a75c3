// The UpdateStatus API (update.openshift.io/v1alpha1, cluster-scoped singleton `cluster`), defined once: the
// TypeScript types below are derived from these TypeBox schemas, and crd.ts builds the CRD from them.
// Field layout, limits, enums and CEL rules follow the reference CRD (the wire contract); descriptions are ours.
// Changing a schema here changes the CRD: regenerate it with `npm run generate`.
import { Kind, type Static, type TSchema, Type, TypeRegistry } from '@sinclair/typebox';

import { VERSION_PATTERN } from './names.js';

// The names live in names.ts so commands that only need them do not load TypeBox.
export { GROUP, KIND, PLURAL, SINGLETON_NAME, VERSION, VERSION_PATTERN } from './names.js';

interface CelRule {
  readonly rule: string;
  readonly message: string;
}

const cel = (...rules: CelRule[]) => ({ 'x-kubernetes-validations': rules });

// String enums as CRDs spell them (`type: string` + `enum`), checkable with TypeBox's Value functions.
TypeRegistry.Set<{ enum: readonly string[] }>(
  'StringEnum',
  (schema, value) => typeof value === 'string' && schema.enum.includes(value),
);
const stringEnum = <const T extends readonly string[]>(values: T, description: string) =>
  Type.Unsafe<T[number]>({ [Kind]: 'StringEnum', type: 'string', enum: [...values], description });

const DNS1123_SUBDOMAIN: CelRule = {
  rule: '!format.dns1123Subdomain().validate(self).hasValue()',
  message:
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character.",
};

const dateTime = (description: string) => Type.String({ format: 'date-time', description });

const listMap = (key: string, maxItems: number) => ({
  maxItems,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': [key],
});

/** metav1.Condition. */
export const ConditionSchema = Type.Object(
  {
    type: Type.String({
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      description: 'Condition type in CamelCase (or a domain-prefixed name).',
    }),
    status: stringEnum(['True', 'False', 'Unknown'] as const, 'Status of the condition.'),
    observedGeneration: Type.Optional(
      Type.Integer({
        format: 'int64',
        minimum: 0,
        description: 'Generation the condition was computed for.',
      }),
    ),
    lastTransitionTime: dateTime('When the status last changed.'),
    reason: Type.String({
      maxLength: 1024,
      minLength: 1,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      description: 'Machine-readable CamelCase reason for the last transition.',
    }),
    message: Type.String({ maxLength: 32768, description: 'Human-readable details; may be empty.' }),
  },
  { description: 'A condition in the standard Kubernetes form.' },
);
export type Condition = Static<typeof ConditionSchema>;

const conditions = (description: string) =>
  Type.Optional(Type.Array(ConditionSchema, { ...listMap('type', 10), description }));

/**
 * How a DNS-1123 subdomain is checked. The reference uses a CEL rule everywhere, but inside insights (up to
 * 32 pools x 16 informers x 1024 insights x 16 resources) those rules exceed the API server's CEL cost budget
 * and the CRD is refused; there an equivalent OpenAPI pattern (no CEL cost) does the same check.
 */
type SubdomainCheck = 'cel' | 'pattern';

const DNS1123_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

const subdomain = (check: SubdomainCheck, description: string) =>
  Type.String({
    maxLength: 253,
    description,
    ...(check === 'cel' ? cel(DNS1123_SUBDOMAIN) : { pattern: DNS1123_SUBDOMAIN_PATTERN }),
  });

/** A reference to a resource: group ('' or absent for core), resource (plural), name, optional namespace. */
const resourceRef = (check: SubdomainCheck, description: string, ...rules: CelRule[]) =>
  Type.Object(
    {
      group: Type.Optional(subdomain(check, 'API group; empty for the core group.')),
      resource: subdomain(check, 'Resource (plural, lower case).'),
      name: subdomain(check, 'Name of the object.'),
      namespace: Type.Optional(
        Type.String({
          maxLength: 253,
          pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
          description: 'Namespace of a namespaced object.',
        }),
      ),
    },
    { description, ...(rules.length > 0 ? cel(...rules) : {}) },
  );
export const ResourceRefSchema = resourceRef('cel', 'A reference to a resource.');
export type ResourceRef = Static<typeof ResourceRefSchema>;

const isResource = (group: string, resource: string, what: string): CelRule => ({
  rule: `self.group == '${group}' && self.resource == '${resource}'`,
  message: `resource must be a ${what} resource`,
});
const IS_CLUSTERVERSION = isResource(
  'config.openshift.io',
  'clusterversions',
  'clusterversions.config.openshift.io',
);
const IS_CLUSTEROPERATOR = isResource(
  'config.openshift.io',
  'clusteroperators',
  'clusteroperators.config.openshift.io',
);
const IS_MCP = isResource(
  'machineconfiguration.openshift.io',
  'machineconfigpools',
  'machineconfigpools.machineconfiguration.openshift.io',
);
// The reference states this rule with an unbalanced parenthesis, which the API server cannot compile; this is
// the rule as intended (same meaning as IS_MCP, plus the presence check).
const IS_MCP_POOL: CelRule = {
  rule: "has(self.resource) && (self.resource == 'machineconfigpools' && self.group == 'machineconfiguration.openshift.io')",
  message: 'a poolResource must be a machineconfigpools.machineconfiguration.openshift.io resource',
};
// Core-group references usually omit `group`; the reference's `self.group == ''` fails on an absent field.
const IS_NODE: CelRule = {
  rule: "(!has(self.group) || self.group == '') && self.resource == 'nodes'",
  message: 'resource must be a nodes.core.k8s.io resource',
};

const HAS_INSTALLATION = "has(self.metadata) && self.metadata.exists(m, m.key == 'Installation')";
const PREVIOUS_VERSION_RULE: CelRule = {
  rule: `self.version == '<none>' ? (${HAS_INSTALLATION}) : !(${HAS_INSTALLATION})`,
  message: "previous version must be '<none>' iff marked with Installation metadata",
};
const TARGET_VERSION_RULE: CelRule = {
  rule: `self.version != '<none>' && !(${HAS_INSTALLATION})`,
  message: "target version must not be '<none>' or have Installation metadata",
};

const versionWithMetadata = (description: string, rule: CelRule) =>
  Type.Object(
    {
      version: Type.String({
        maxLength: 64,
        pattern: `^(<none>)|(${VERSION_PATTERN})?$`,
        description: "Semantic version, or '<none>' for the previous version of an installation.",
      }),
      metadata: Type.Optional(
        Type.Array(
          Type.Object({
            key: stringEnum(['Installation', 'Partial', 'Architecture'] as const, 'What the metadata says.'),
            value: Type.Optional(
              Type.String({ maxLength: 32, description: 'Value, when the key needs one.' }),
            ),
          }),
          {
            ...listMap('key', 5),
            description: 'Facts about this version (installation, partial, architecture).',
          },
        ),
      ),
    },
    { description, ...cel(rule) },
  );

export const ClusterVersionInsightSchema = Type.Object(
  {
    resource: resourceRef('pattern', 'The ClusterVersion.', IS_CLUSTERVERSION),
    assessment: stringEnum(
      ['Unknown', 'Progressing', 'Completed', 'Degraded'] as const,
      'Overall assessment of the control-plane update.',
    ),
    versions: Type.Object(
      {
        previous: versionWithMetadata('Version the update started from.', PREVIOUS_VERSION_RULE),
        target: versionWithMetadata('Version the update goes to.', TARGET_VERSION_RULE),
      },
      { description: 'Versions involved in the update.' },
    ),
    completion: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 100,
      description: 'Percentage of control-plane operators updated.',
    }),
    startedAt: dateTime('When the update started.'),
    completedAt: Type.Optional(dateTime('When the update completed.')),
    estimatedCompletedAt: Type.Optional(dateTime('When the update is expected to complete.')),
    conditions: conditions('Conditions of the update (Updating).'),
  },
  { description: 'Progress of the control-plane update as the ClusterVersion shows it.' },
);

const operatorName = (description: string) =>
  Type.String({ maxLength: 64, minLength: 1, pattern: '^[a-z0-9-]+$', description });

export const ClusterOperatorInsightSchema = Type.Object(
  {
    conditions: conditions('Updating and Healthy conditions of the operator.'),
    name: operatorName('Name of the ClusterOperator.'),
    resource: resourceRef('pattern', 'The ClusterOperator.', IS_CLUSTEROPERATOR),
  },
  { description: 'Update progress and health of one ClusterOperator.' },
);

const scopeType = stringEnum(
  ['ControlPlane', 'WorkerPool'] as const,
  'Whether this is about the control plane or workers.',
);

export const MachineConfigPoolInsightSchema = Type.Object(
  {
    conditions: conditions('Updating condition of the pool.'),
    name: operatorName('Name of the pool.'),
    resource: resourceRef('pattern', 'The MachineConfigPool.', IS_MCP, IS_MCP_POOL),
    scopeType,
    assessment: stringEnum(
      ['Pending', 'Completed', 'Degraded', 'Excluded', 'Progressing'] as const,
      'Assessment of the pool update.',
    ),
    completion: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 100,
      description: 'Percentage of nodes updated.',
    }),
    summaries: Type.Optional(
      Type.Array(
        Type.Object({
          type: stringEnum(
            ['Total', 'Available', 'Progressing', 'Outdated', 'Draining', 'Excluded', 'Degraded'] as const,
            'What is counted.',
          ),
          count: Type.Integer({ format: 'int32', minimum: 0, maximum: 4096, description: 'How many nodes.' }),
        }),
        { ...listMap('type', 16), description: 'Node counts of the pool.' },
      ),
    ),
  },
  { description: 'Update progress of one MachineConfigPool.' },
);

export const NodeInsightSchema = Type.Object(
  {
    conditions: conditions('Updating, Available and Degraded conditions of the node.'),
    name: Type.String({ maxLength: 253, minLength: 1, description: 'Name of the node.' }),
    resource: resourceRef('pattern', 'The Node.', IS_NODE),
    poolResource: resourceRef('pattern', 'The pool the node belongs to.', IS_MCP, IS_MCP_POOL),
    scopeType,
    version: Type.Optional(
      Type.String({
        maxLength: 64,
        pattern: `^(${VERSION_PATTERN})?$`,
        description: 'Version the node runs.',
      }),
    ),
    estimatedToComplete: Type.Optional(
      Type.String({ format: 'duration', description: 'Estimated time until the node is updated.' }),
    ),
    message: Type.Optional(
      Type.String({ maxLength: 100, description: 'Short human-readable state of the node.' }),
    ),
  },
  { description: 'Update progress of one node.' },
);

export const HealthInsightSchema = Type.Object(
  {
    startedAt: dateTime('When the problem began.'),
    scope: Type.Object(
      {
        type: scopeType,
        resources: Type.Optional(
          Type.Array(resourceRef('pattern', 'A resource involved.'), {
            maxItems: 16,
            'x-kubernetes-list-type': 'atomic',
            description: 'Resources involved.',
          }),
        ),
      },
      { description: 'Where the problem is.' },
    ),
    impact: Type.Object(
      {
        level: stringEnum(['Unknown', 'Info', 'Warning', 'Error', 'Critical'] as const, 'How bad it is.'),
        type: stringEnum(
          [
            'None',
            'Unknown',
            'API Availability',
            'Cluster Capacity',
            'Application Availability',
            'Application Outage',
            'Data Loss',
            'Update Speed',
            'Update Stalled',
          ] as const,
          'What it affects.',
        ),
        summary: Type.String({ maxLength: 256, minLength: 1, description: 'One-line summary.' }),
        description: Type.Optional(Type.String({ maxLength: 4096, description: 'Longer explanation.' })),
      },
      { description: 'What the problem does.' },
    ),
    remediation: Type.Object(
      {
        reference: Type.String({
          maxLength: 512,
          description: 'URL of documentation on the problem.',
          ...cel({ rule: 'isURL(self)', message: 'reference must a valid URL' }),
        }),
        estimatedFinish: Type.Optional(dateTime('When the problem is expected to resolve.')),
      },
      { description: 'What to do about it.' },
    ),
  },
  { description: 'A state of the cluster that affects or is affected by the update.' },
);

const unionMember = (type: string, field: string): CelRule => ({
  rule: `has(self.type) && self.type == '${type}' ?  has(self.${field}) : !has(self.${field})`,
  message: `${field} is required when type is ${type}, and forbidden otherwise`,
});

export const ControlPlaneInsightSchema = Type.Object(
  {
    type: stringEnum(
      ['ClusterVersion', 'ClusterOperator', 'MachineConfigPool', 'Node', 'Health'] as const,
      'Which member holds the insight.',
    ),
    clusterVersion: Type.Optional(ClusterVersionInsightSchema),
    clusterOperator: Type.Optional(ClusterOperatorInsightSchema),
    machineConfigPool: Type.Optional(MachineConfigPoolInsightSchema),
    node: Type.Optional(NodeInsightSchema),
    health: Type.Optional(HealthInsightSchema),
  },
  {
    description: 'One control-plane insight: exactly the member named by type is set.',
    ...cel(
      unionMember('ClusterVersion', 'clusterVersion'),
      unionMember('ClusterOperator', 'clusterOperator'),
      unionMember('MachineConfigPool', 'machineConfigPool'),
      unionMember('Node', 'node'),
      unionMember('Health', 'health'),
    ),
  },
);
export type ControlPlaneInsight = Static<typeof ControlPlaneInsightSchema>;

export const WorkerPoolInsightSchema = Type.Object(
  {
    type: stringEnum(['MachineConfigPool', 'Node', 'Health'] as const, 'Which member holds the insight.'),
    machineConfigPool: Type.Optional(MachineConfigPoolInsightSchema),
    node: Type.Optional(NodeInsightSchema),
    health: Type.Optional(HealthInsightSchema),
  },
  {
    description: 'One worker-pool insight: exactly the member named by type is set.',
    ...cel(
      unionMember('MachineConfigPool', 'machineConfigPool'),
      unionMember('Node', 'node'),
      unionMember('Health', 'health'),
    ),
  },
);
export type WorkerPoolInsight = Static<typeof WorkerPoolInsightSchema>;

const UID = Type.String({
  maxLength: 63,
  minLength: 1,
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
  description: 'Stable identifier of the insight within its informer.',
});

const informer = <T extends TSchema>(insight: T, maxInsights: number) =>
  Type.Object(
    {
      name: Type.String({ maxLength: 253, description: 'Name of the informer.', ...cel(DNS1123_SUBDOMAIN) }),
      insights: Type.Optional(
        Type.Array(
          Type.Object(
            {
              uid: UID,
              acquiredAt: dateTime('When the informer first observed this insight.'),
              insight,
            },
            { description: 'An insight with its identity.' },
          ),
          // Atomic, where the reference declares a map keyed by uid: each informer's list has exactly one writer
          // (its own field manager, README "Update status informers"), so per-item ownership merges nothing, while
          // it made every apply record and merge one managedFields entry per field of every insight (most of the
          // object's size and of the API server's time per write). The informers still merge: `informers[]` stays
          // a map keyed by name. uids stay unique by the contract (contributionViolation refuses duplicates).
          {
            maxItems: maxInsights,
            'x-kubernetes-list-type': 'atomic',
            description: 'Insights of this informer, each with a uid unique within the list.',
          },
        ),
      ),
    },
    { description: 'A producer of insights and what it currently reports.' },
  );

export const ControlPlaneInformerSchema = informer(ControlPlaneInsightSchema, 128);
export type ControlPlaneInformer = Static<typeof ControlPlaneInformerSchema>;
export const WorkerPoolInformerSchema = informer(WorkerPoolInsightSchema, 1024);
export type WorkerPoolInformer = Static<typeof WorkerPoolInformerSchema>;

export const ControlPlaneSchema = Type.Object(
  {
    resource: Type.Optional(
      resourceRef('cel', 'The resource representing the control plane.', {
        rule: "(self.group == 'config.openshift.io' && self.resource == 'clusterversions') || (self.group == 'hypershift.openshift.io' && self.resource == 'hostedclusters')",
        message:
          'controlPlane.resource must be either a clusterversions.config.openshift.io or a hostedclusters.hypershift.openshift.io resource',
      }),
    ),
    poolResource: Type.Optional(
      resourceRef(
        'cel',
        'The pool of control-plane nodes.',
        {
          rule: "(self.group == 'machineconfiguration.openshift.io' && self.resource == 'machineconfigpools')",
          message:
            'controlPlane.poolResource must be a machineconfigpools.machineconfiguration.openshift.io resource',
        },
        IS_MCP_POOL,
      ),
    ),
    informers: Type.Optional(
      Type.Array(ControlPlaneInformerSchema, { ...listMap('name', 16), description: 'Insight producers.' }),
    ),
    conditions: conditions('Aggregated state of the control-plane update (Updating).'),
  },
  { description: 'The control plane: its update and the insights about it.' },
);

export const WorkerPoolSchema = Type.Object(
  {
    name: Type.String({ maxLength: 253, description: 'Name of the pool.', ...cel(DNS1123_SUBDOMAIN) }),
    // The reference also attaches its "a poolResource must be a machineconfigpools" rule here, which would refuse
    // NodePool-backed pools that its own validation suite accepts; we leave it out.
    resource: resourceRef('cel', 'The resource representing the pool.', {
      rule: "(self.group == 'machineconfiguration.openshift.io' && self.resource == 'machineconfigpools') || (self.group == 'hypershift.openshift.io' && self.resource == 'nodepools')",
      message:
        'workerPools[].poolResource must be a machineconfigpools.machineconfiguration.openshift.io or hostedclusters.hypershift.openshift.io resource',
    }),
    informers: Type.Optional(
      Type.Array(WorkerPoolInformerSchema, { ...listMap('name', 16), description: 'Insight producers.' }),
    ),
    conditions: conditions('Aggregated state of the pool update (Updating).'),
  },
  {
    description: 'One worker pool: its update and the insights about it.',
    ...cel({
      rule: 'self.name == self.resource.name',
      message: 'workerPools .name must match .resource.name',
    }),
  },
);
export type WorkerPool = Static<typeof WorkerPoolSchema>;

/**
 * Tessera's extension of the API (the informer contract, README "Informers"): every informer that writes insights
 * registers here and renews `heartbeatTime`, so readers can tell a live informer from one that stopped.
 */
export const InformerRegistrationSchema = Type.Object(
  {
    name: Type.String({ maxLength: 253, description: 'Name of the informer.', ...cel(DNS1123_SUBDOMAIN) }),
    heartbeatTime: dateTime(
      'When the informer last wrote its insights; renewed at least every minute while it runs.',
    ),
    description: Type.Optional(
      Type.String({ maxLength: 256, description: 'What the informer observes, for people.' }),
    ),
  },
  { description: 'An informer that contributes insights, and when it last said it is alive.' },
);
export type InformerRegistration = Static<typeof InformerRegistrationSchema>;

export const UpdateStatusStatusSchema = Type.Object(
  {
    conditions: conditions("The controller's own health: whether it can gather insights."),
    informers: Type.Optional(
      Type.Array(InformerRegistrationSchema, {
        ...listMap('name', 16),
        description: 'The informers that contribute insights, with their heartbeats.',
      }),
    ),
    controlPlane: Type.Optional(ControlPlaneSchema),
    workerPools: Type.Optional(
      Type.Array(WorkerPoolSchema, { ...listMap('name', 32), description: 'Worker pools, one per pool.' }),
    ),
  },
  { description: 'Everything the controller knows about the update.' },
);
export type UpdateStatusStatus = Static<typeof UpdateStatusStatusSchema>;

export const UpdateStatusSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String({ description: 'API version of this object.' })),
    kind: Type.Optional(Type.String({ description: 'Kind of this object.' })),
    metadata: Type.Optional(Type.Object({})),
    spec: Type.Object({}, { description: 'Empty: UpdateStatus takes no input.' }),
    status: Type.Optional(UpdateStatusStatusSchema),
  },
  {
    description:
      'Reports the progress and health of a cluster update for tools and people: insights per informer, their aggregation, and the controller health.',
  },
);

export interface UpdateStatus {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; resourceVersion?: string; uid?: string; generation?: number };
  spec: Record<string, never>;
  status?: UpdateStatusStatus;
}
