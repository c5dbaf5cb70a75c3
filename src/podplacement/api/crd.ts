// Derives CustomResourceDefinition objects from the TypeBox definitions in ./schema.ts. Guarantees: the output
// is a structural schema the API server accepts (anyOf of literals become enums, records become
// additionalProperties, optional fields are left out of `required`), deterministic key order, no TypeBox-only
// keywords. Callers serialise the result (see ./generate.ts); nothing here touches the file system.
import { stringify } from 'yaml';
import { API_GROUP } from '../constants.js';
import { DEFAULT_CONVERSION_ENDPOINT, crdConversion } from '../crd-conversion.js';
import type { KindDefinition, VersionDefinition } from './schema.js';
import { TesseraError, isRecord } from '../../runtime/light.js';

/** A JSON value, as emitted into the CRD. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Schema keywords copied verbatim when present. */
const PASSTHROUGH = [
  'description',
  'default',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'nullable',
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
] as const;

export class CrdSchemaError extends TesseraError<'TESSERA_PODPLACEMENT_CRD_SCHEMA'> {
  constructor(message: string) {
    super('TESSERA_PODPLACEMENT_CRD_SCHEMA', message);
  }
}

function toJson(v: unknown, at: string): Json {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map((x, i) => toJson(x, `${at}[${i}]`));
  if (isRecord(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) out[k] = toJson(x, `${at}.${k}`);
    return out;
  }
  throw new CrdSchemaError(`${at}: value of type ${typeof v} cannot be written to a CRD`);
}

/** Converts one TypeBox (JSON Schema) node into an OpenAPI v3 structural schema node. */
export function toStructuralSchema(schema: unknown, at = '$'): JsonObject {
  if (!isRecord(schema)) throw new CrdSchemaError(`${at}: expected a schema object`);
  const out: JsonObject = {};
  const anyOf = schema['anyOf'];
  if (Array.isArray(anyOf)) {
    // Only unions of string literals are representable structurally: they become an enum.
    const values = anyOf.map((branch, i) => {
      if (!isRecord(branch) || typeof branch['const'] !== 'string') {
        throw new CrdSchemaError(
          `${at}.anyOf[${i}]: only unions of string literals can be expressed in a CRD`,
        );
      }
      return branch['const'];
    });
    out['type'] = 'string';
    out['enum'] = values;
  } else if (typeof schema['const'] === 'string') {
    out['type'] = 'string';
    out['enum'] = [schema['const']];
  } else if (typeof schema['type'] === 'string') {
    out['type'] = schema['type'];
  } else if (Object.keys(schema).every((k) => k === 'description')) {
    // Type.Unknown(): any JSON value, kept as is by the API server.
    out['x-kubernetes-preserve-unknown-fields'] = true;
  } else {
    throw new CrdSchemaError(`${at}: schema has no type`);
  }
  for (const key of PASSTHROUGH) {
    if (schema[key] !== undefined) out[key] = toJson(schema[key], `${at}.${key}`);
  }
  if (out['type'] === 'object') {
    const props = schema['properties'];
    if (isRecord(props)) {
      const converted: JsonObject = {};
      for (const name of Object.keys(props))
        converted[name] = toStructuralSchema(props[name], `${at}.${name}`);
      out['properties'] = converted;
      const required = schema['required'];
      if (Array.isArray(required) && required.length > 0)
        out['required'] = toJson(required, `${at}.required`);
    }
    const pattern = schema['patternProperties'];
    if (isRecord(pattern)) {
      const values = Object.values(pattern);
      if (values.length !== 1) throw new CrdSchemaError(`${at}: records must have exactly one value schema`);
      out['additionalProperties'] = toStructuralSchema(values[0], `${at}.*`);
    }
  }
  if (out['type'] === 'array') out['items'] = toStructuralSchema(schema['items'], `${at}[]`);
  return out;
}

function versionSchema(kind: KindDefinition, version: VersionDefinition): JsonObject {
  const root: JsonObject = {
    description: kind.description,
    type: 'object',
    properties: {
      apiVersion: { type: 'string', description: 'Versioned schema of this representation of the object.' },
      kind: { type: 'string', description: 'REST resource this object represents.' },
      metadata: { type: 'object' },
      spec: toStructuralSchema(version.spec, '$.spec'),
      status: toStructuralSchema(version.status, '$.status'),
    },
  };
  if (version.specRequired) root['required'] = ['spec'];
  if (version.rootValidations && version.rootValidations.length > 0) {
    root['x-kubernetes-validations'] = version.rootValidations.map((v) => ({
      rule: v.rule,
      message: v.message,
    }));
  }
  return root;
}

export interface BuildCrdOptions {
  /**
   * `spec.conversion` of a kind with several versions. Default: the operator's conversion webhook behind its
   * in-cluster Service (DEFAULT_CONVERSION_ENDPOINT) without caBundle; the operator patches both at run time.
   */
  readonly conversion?: Record<string, unknown>;
}

/** The CRD object for one kind of the multiarch.openshift.io group. */
export function buildCrd(kind: KindDefinition, options: BuildCrdOptions = {}): JsonObject {
  const versions: Json[] = kind.versions.map((v) => {
    const entry: JsonObject = {
      name: v.name,
      served: v.served,
      storage: v.storage,
      schema: { openAPIV3Schema: versionSchema(kind, v) },
      subresources: { status: {} },
    };
    if (v.printerColumns && v.printerColumns.length > 0) {
      entry['additionalPrinterColumns'] = v.printerColumns.map((c) => {
        const col: JsonObject = { name: c.name, type: c.type, jsonPath: c.jsonPath };
        if (c.description !== undefined) col['description'] = c.description;
        return col;
      });
    }
    return entry;
  });
  const spec: JsonObject = {
    group: API_GROUP,
    names: {
      kind: kind.kind,
      listKind: `${kind.kind}List`,
      plural: kind.plural,
      singular: kind.singular,
    },
    scope: kind.scope,
    versions,
  };
  // With strategy None a v1alpha1 write would drop the v1beta1-only fields; the webhook carries them across.
  if (kind.versions.length > 1)
    spec['conversion'] = toJson(
      options.conversion ?? crdConversion(DEFAULT_CONVERSION_ENDPOINT, {}),
      '$.spec.conversion',
    );
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${kind.plural}.${API_GROUP}` },
    spec,
  };
}

/** YAML text of a CRD, with a header saying it is generated. */
export function renderCrdYaml(kind: KindDefinition): string {
  const header = '# Generated by `npm run generate` from src/podplacement/api/schema.ts; do not edit.\n';
  return header + stringify(buildCrd(kind), { lineWidth: 0, singleQuote: true });
}

/** The file name under deploy/crds for a kind. */
export function crdFileName(kind: KindDefinition): string {
  return `${API_GROUP}_${kind.plural}.yaml`;
}
