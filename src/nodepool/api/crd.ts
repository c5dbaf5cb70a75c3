// Development CRDs for this area, derived from the TypeBox schemas in types.ts (the only definition).
// Guarantees: renderCrds() is deterministic, so deploy/crds/dev/<group>_<plural>.yaml can be checked for drift
// (`npm run generate:check` and crd.test.ts fail when a file is stale; `npm run generate` rewrites it).
import type { TSchema } from '@sinclair/typebox';
import { stringify } from 'yaml';
import {
  HostedControlPlaneSchema,
  NodePoolSchema,
  PerformanceProfileSchema,
  TunedProfileSchema,
} from './types.js';
import {
  APPLIED_SUCCESSFULLY_CONDITION,
  HOSTED_CONTROL_PLANE_KIND,
  HOSTED_CONTROL_PLANE_PLURAL,
  HYPERSHIFT_GROUP,
  HYPERSHIFT_VERSION,
  NODEPOOL_KIND,
  NODEPOOL_PLURAL,
  PERFORMANCE_GROUP,
  PERFORMANCE_PROFILE_KIND,
  PERFORMANCE_PROFILE_PLURAL,
  PERFORMANCE_VERSION,
  TUNED_GROUP,
  TUNED_PROFILE_KIND,
  TUNED_PROFILE_PLURAL,
  TUNED_VERSION,
} from '../constants.js';

interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'date' | 'integer';
  readonly jsonPath: string;
}

interface CrdSource {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly scope: 'Namespaced' | 'Cluster';
  readonly shortNames?: readonly string[];
  readonly schema: TSchema;
  readonly printerColumns?: readonly PrinterColumn[];
}

type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** The schema as plain JSON: drops TypeBox's symbol-keyed metadata, keeps every keyword (including x-kubernetes-*). */
function plainSchema(schema: TSchema): { [key: string]: JsonValue } {
  return JSON.parse(JSON.stringify(schema)) as { [key: string]: JsonValue };
}

/** The API server owns metadata: a CRD may only say it is an object. */
function withOpaqueMetadata(schema: TSchema): { [key: string]: JsonValue } {
  const plain = plainSchema(schema);
  const properties = plain.properties;
  if (properties && typeof properties === 'object' && !Array.isArray(properties)) {
    properties.metadata = { type: 'object' };
  }
  const required = plain.required;
  if (Array.isArray(required)) {
    const kept = required.filter((name) => name !== 'metadata');
    if (kept.length > 0) plain.required = kept;
    else delete plain.required;
  }
  return plain;
}

function crdObject(src: CrdSource): { [key: string]: JsonValue } {
  const names: { [key: string]: JsonValue } = {
    kind: src.kind,
    listKind: `${src.kind}List`,
    plural: src.plural,
    singular: src.kind.toLowerCase(),
  };
  if (src.shortNames) names.shortNames = [...src.shortNames];
  const version: { [key: string]: JsonValue } = {
    name: src.version,
    served: true,
    storage: true,
    schema: { openAPIV3Schema: withOpaqueMetadata(src.schema) },
    subresources: { status: {} },
  };
  if (src.printerColumns) version.additionalPrinterColumns = src.printerColumns.map((c) => ({ ...c }));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${src.plural}.${src.group}` },
    spec: { group: src.group, names, scope: src.scope, versions: [version] },
  };
}

const SOURCES: readonly CrdSource[] = [
  {
    group: HYPERSHIFT_GROUP,
    version: HYPERSHIFT_VERSION,
    kind: NODEPOOL_KIND,
    plural: NODEPOOL_PLURAL,
    scope: 'Namespaced',
    shortNames: ['np', 'nps'],
    schema: NodePoolSchema,
    printerColumns: [
      { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName' },
      {
        name: 'PerformanceProfile',
        type: 'string',
        jsonPath: `.status.conditions[?(@.type=="${APPLIED_SUCCESSFULLY_CONDITION}")].status`,
      },
      {
        name: 'Reason',
        type: 'string',
        jsonPath: `.status.conditions[?(@.type=="${APPLIED_SUCCESSFULLY_CONDITION}")].reason`,
      },
    ],
  },
  {
    group: HYPERSHIFT_GROUP,
    version: HYPERSHIFT_VERSION,
    kind: HOSTED_CONTROL_PLANE_KIND,
    plural: HOSTED_CONTROL_PLANE_PLURAL,
    scope: 'Namespaced',
    shortNames: ['hcp', 'hcps'],
    schema: HostedControlPlaneSchema,
  },
  {
    group: PERFORMANCE_GROUP,
    version: PERFORMANCE_VERSION,
    kind: PERFORMANCE_PROFILE_KIND,
    plural: PERFORMANCE_PROFILE_PLURAL,
    scope: 'Cluster',
    schema: PerformanceProfileSchema,
  },
  {
    group: TUNED_GROUP,
    version: TUNED_VERSION,
    kind: TUNED_PROFILE_KIND,
    plural: TUNED_PROFILE_PLURAL,
    scope: 'Namespaced',
    schema: TunedProfileSchema,
    printerColumns: [
      { name: 'Tuned', type: 'string', jsonPath: '.spec.config.tunedProfile' },
      { name: 'Applied', type: 'string', jsonPath: '.status.conditions[?(@.type=="Applied")].status' },
      { name: 'Degraded', type: 'string', jsonPath: '.status.conditions[?(@.type=="Degraded")].status' },
    ],
  },
];

export interface RenderedCrd {
  /** Path relative to the project root: `deploy/crds/dev/<group>_<plural>.yaml`. */
  readonly file: string;
  /** `<plural>.<group>` */
  readonly name: string;
  readonly object: { [key: string]: JsonValue };
  readonly yaml: string;
}

const HEADER =
  '# Generated by `npm run generate` (src/nodepool/api/crd.ts) from src/nodepool/api/types.ts. Do not edit.\n';

/** Every development CRD of this area, in a fixed order. */
export function renderCrds(): RenderedCrd[] {
  return SOURCES.map((src) => {
    const object = crdObject(src);
    return {
      file: `deploy/crds/dev/${src.group}_${src.plural}.yaml`,
      name: `${src.plural}.${src.group}`,
      object,
      yaml: HEADER + stringify(object, { lineWidth: 0, singleQuote: true }),
    };
  });
}

/** The management cluster needs NodePool and HostedControlPlane; the hosted cluster PerformanceProfile and Profile. */
export function crdsFor(cluster: 'management' | 'hosted'): RenderedCrd[] {
  const groups = cluster === 'management' ? [HYPERSHIFT_GROUP] : [PERFORMANCE_GROUP, TUNED_GROUP];
  return renderCrds().filter((crd) => groups.some((g) => crd.name.endsWith(`.${g}`)));
}
