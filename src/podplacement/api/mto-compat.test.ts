// Tessera's CRDs side by side with the Multiarch Tuning Operator's own (v1.3.3, test/fixtures/multiarch/mto-v1.3.3,
// see its PROVENANCE.md), version by version: every field MTO stores must be kept (not pruned), with the same type
// and default, and Tessera may not refuse what MTO's schema and webhooks admitted. What Tessera adds on top is
// listed below with the reason each addition accepts every object MTO could have stored. The same additions are
// what OLM v1's CRD upgrade-safety preflight would flag if Tessera's CRDs were applied over MTO's live ones.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fixturePath } from '../../../test/support/fixtures.js';
import { podPlacementCrd } from './crd.js';
import { CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG, type KindDefinition } from './schema.js';

interface SchemaNode {
  type?: string;
  format?: string;
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  required?: string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode;
  items?: SchemaNode;
  'x-kubernetes-validations'?: { rule: string }[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  [bound: string]: unknown;
}

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema: { openAPIV3Schema: SchemaNode };
}

interface CrdDoc {
  spec: { scope: string; names: Record<string, string>; versions: CrdVersion[] };
}

const LOWER_BOUNDS = ['minimum', 'minLength', 'minItems', 'minProperties'] as const;
const UPPER_BOUNDS = ['maximum', 'maxLength', 'maxItems', 'maxProperties'] as const;

function mtoCrd(plural: string): CrdDoc {
  return parse(
    readFileSync(fixturePath(`multiarch/mto-v1.3.3/multiarch.openshift.io_${plural}.yaml`), 'utf8'),
  ) as CrdDoc;
}

const tesseraCrd = (kind: KindDefinition): CrdDoc => podPlacementCrd(kind) as unknown as CrdDoc;

/** Every way Tessera's schema node differs from MTO's in what it keeps or admits, as `path: difference`. */
function differences(mto: SchemaNode, ours: SchemaNode | undefined, at: string, out: string[]): string[] {
  if (ours === undefined) {
    out.push(`${at}: not in Tessera's schema (would be pruned)`);
    return out;
  }
  if (mto.type !== ours.type) out.push(`${at}: type ${ours.type} (MTO: ${mto.type})`);
  if (mto.format !== ours.format && ours.format !== undefined)
    out.push(`${at}: format ${ours.format} (MTO: ${mto.format ?? 'none'})`);
  if (ours.enum !== undefined) {
    if (mto.enum === undefined) out.push(`${at}: new enum`);
    else
      for (const value of mto.enum)
        if (!ours.enum.includes(value)) out.push(`${at}: enum lacks ${JSON.stringify(value)}`);
  }
  if (JSON.stringify(mto.default) !== JSON.stringify(ours.default))
    out.push(`${at}: default ${JSON.stringify(ours.default)} (MTO: ${JSON.stringify(mto.default)})`);
  for (const bound of LOWER_BOUNDS) {
    const o = ours[bound] as number | undefined;
    const m = mto[bound] as number | undefined;
    if (o !== undefined && (m === undefined || o > m)) out.push(`${at}: ${bound} ${o} (MTO: ${m ?? 'none'})`);
  }
  for (const bound of UPPER_BOUNDS) {
    const o = ours[bound] as number | undefined;
    const m = mto[bound] as number | undefined;
    if (o !== undefined && (m === undefined || o < m)) out.push(`${at}: ${bound} ${o} (MTO: ${m ?? 'none'})`);
  }
  if (ours.pattern !== undefined && ours.pattern !== mto.pattern) out.push(`${at}: pattern ${ours.pattern}`);
  for (const field of ours.required ?? [])
    if (!(mto.required ?? []).includes(field)) out.push(`${at}: requires ${field}`);
  for (const v of ours['x-kubernetes-validations'] ?? []) out.push(`${at}: CEL ${v.rule}`);
  for (const key of ['x-kubernetes-list-type', 'x-kubernetes-map-type'] as const)
    if (ours[key] !== undefined && ours[key] !== mto[key])
      out.push(`${at}: ${key} ${ours[key]} (MTO: ${mto[key] ?? 'none'})`);
  for (const [name, child] of Object.entries(mto.properties ?? {}))
    differences(child, ours.properties?.[name], `${at}.${name}`, out);
  if (mto.additionalProperties)
    differences(mto.additionalProperties, ours.additionalProperties, `${at}.*`, out);
  if (mto.items) differences(mto.items, ours.items, `${at}[]`, out);
  return out;
}

/** The differences of one kind, every version MTO serves; the root `metadata` is the API server's own. */
function kindDifferences(plural: string, kind: KindDefinition): string[] {
  const mto = mtoCrd(plural);
  const ours = tesseraCrd(kind);
  const out: string[] = [];
  for (const version of mto.spec.versions) {
    const match = ours.spec.versions.find((v) => v.name === version.name);
    if (!match) {
      out.push(`${version.name}: not served by Tessera`);
      continue;
    }
    const { metadata: _mtoMetadata, ...mtoRoot } = version.schema.openAPIV3Schema.properties ?? {};
    const { metadata: _ourMetadata, ...ourRoot } = match.schema.openAPIV3Schema.properties ?? {};
    differences(
      { ...version.schema.openAPIV3Schema, properties: mtoRoot },
      { ...match.schema.openAPIV3Schema, properties: ourRoot },
      version.name,
      out,
    );
  }
  return out;
}

// Tessera's conditions list is a map keyed by type: MTO writes them with meta.SetStatusCondition, one per type.
const CONDITIONS_AS_MAP = 'x-kubernetes-list-type map (MTO: none)';
// MTO's validating webhook refuses a repeated architecture (ValidateArchitecturesSet); the enum has four values, so
// at most four distinct entries: the same objects pass Tessera's schema rules.
const platformRules = (at: string): string[] => [
  `${at}.platforms: maxItems 4 (MTO: none)`,
  ...['amd64', 'arm64', 'ppc64le', 's390x'].map(
    (arch) => `${at}.platforms: CEL self.filter(p, p.architecture == '${arch}').size() <= 1`,
  ),
  // Bounds the CEL cost estimate; the longest enum value has 7 characters.
  `${at}.platforms[].architecture: maxLength 16 (MTO: none)`,
];

describe('Tessera keeps and admits what MTO v1.3.3 stored', () => {
  it('serves the same kinds, scopes and versions, with v1beta1 stored', () => {
    for (const [plural, kind] of [
      ['clusterpodplacementconfigs', CLUSTER_POD_PLACEMENT_CONFIG],
      ['podplacementconfigs', POD_PLACEMENT_CONFIG],
    ] as const) {
      const mto = mtoCrd(plural).spec;
      const ours = tesseraCrd(kind).spec;
      expect(ours.scope).toBe(mto.scope);
      expect(ours.names).toEqual(mto.names);
      const versions = (s: CrdDoc['spec']) => s.versions.map((v) => [v.name, v.served, v.storage]);
      expect(versions(ours)).toEqual(versions(mto));
    }
  });

  it('ClusterPodPlacementConfig: no field pruned or retyped; only additions MTO objects satisfy', () => {
    const singleton = `CEL self.metadata.name == 'cluster'`; // MTO: metadata.name enum [cluster]
    expect(kindDifferences('clusterpodplacementconfigs', CLUSTER_POD_PLACEMENT_CONFIG)).toEqual([
      `v1alpha1: ${singleton}`,
      `v1alpha1.status.conditions: ${CONDITIONS_AS_MAP}`,
      `v1beta1: ${singleton}`,
      ...platformRules('v1beta1.spec.plugins.nodeAffinityScoring'),
      `v1beta1.status.conditions: ${CONDITIONS_AS_MAP}`,
    ]);
  });

  it('PodPlacementConfig: no field pruned or retyped; only additions MTO objects satisfy', () => {
    expect(kindDifferences('podplacementconfigs', POD_PLACEMENT_CONFIG)).toEqual(
      platformRules('v1beta1.spec.plugins.nodeAffinityScoring'),
    );
  });

  it('the comparison itself notices a dropped field, a new requirement and a tighter bound', () => {
    const mto: SchemaNode = {
      type: 'object',
      properties: {
        priority: { type: 'integer', maximum: 255 },
        fallbackArchitecture: { type: 'string', default: '' },
      },
    };
    const ours: SchemaNode = {
      type: 'object',
      required: ['priority'],
      properties: { priority: { type: 'integer', maximum: 100 } },
    };
    expect(differences(mto, ours, 'spec', [])).toEqual([
      'spec: requires priority',
      'spec.priority: maximum 100 (MTO: 255)',
      "spec.fallbackArchitecture: not in Tessera's schema (would be pruned)",
    ]);
  });
});
