// The one converter from a TypeBox (JSON Schema) definition to the structural OpenAPI v3 schema a
// CustomResourceDefinition carries. Guarantees: the output is plain JSON (TypeBox's symbol-keyed bookkeeping gone),
// unions of string literals become `enum`, records become `additionalProperties`, `Type.Unknown()` becomes
// `x-kubernetes-preserve-unknown-fields`, and every keyword a CRD cannot carry is refused with the path that holds
// it, rather than silently dropped. Key order is deterministic (see CrdKeyOrder), so generated YAML diffs cleanly.
// Pure: nothing here touches the file system or the network, and it loads no third-party module.
import { TesseraError } from './errors.js';
import { isRecord } from './json.js';
import type { ResourceType } from './resources.js';

/** A JSON value as written into a CRD. */
export type CrdJson = string | number | boolean | null | CrdJson[] | { [key: string]: CrdJson };
export type CrdJsonObject = { [key: string]: CrdJson };

/** A schema could not be expressed in a CRD; the message names the path (`$.spec.mode`) and the construct. */
export class CrdSchemaError extends TesseraError<'TESSERA_CRD_SCHEMA'> {
  constructor(message: string) {
    super('TESSERA_CRD_SCHEMA', message);
  }
}

/**
 * How the keys of each schema node are ordered in the output.
 * - `declared`: as the TypeBox definition lists them (options first, as TypeBox builds them).
 * - `alphabetical`: sorted by name, and `required` sorted too.
 * - `type-first`: `type` and `enum`, then the value keywords in a fixed order, then `properties`, `required`,
 *   `additionalProperties`, `items` (the order `controller-gen` readers expect: what a field is before its rules).
 */
export type CrdKeyOrder = 'declared' | 'alphabetical' | 'type-first';

export interface StructuralSchemaOptions {
  /** Default `type-first`. */
  readonly keyOrder?: CrdKeyOrder;
  /**
   * Leave out `properties: {}` of an object without declared fields (an empty spec, a free-form object). The API
   * server reads both forms alike. Default false: written as declared.
   */
  readonly omitEmptyProperties?: boolean;
}

/** Keywords copied verbatim; their position here is the `type-first` order. */
const VALUE_KEYWORDS = [
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

const TYPE_FIRST_ORDER: readonly string[] = [
  'type',
  'enum',
  ...VALUE_KEYWORDS,
  'properties',
  'required',
  'additionalProperties',
  'items',
];
const COPIED: ReadonlySet<string> = new Set<string>([...VALUE_KEYWORDS, 'enum']);

/** A JSON copy of `value`; anything JSON cannot hold (undefined, functions, bigint) is refused. */
export function toCrdJson(value: unknown, at = '$'): CrdJson {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return value;
  if (Array.isArray(value)) return value.map((x, i) => toCrdJson(x, `${at}[${i}]`));
  if (isRecord(value)) {
    const out: CrdJsonObject = {};
    for (const [k, x] of Object.entries(value)) out[k] = toCrdJson(x, `${at}.${k}`);
    return out;
  }
  throw new CrdSchemaError(`${at}: value of type ${typeof value} cannot be written to a CRD`);
}

function literalEnum(schema: Record<string, unknown>, at: string): string[] | undefined {
  const anyOf = schema['anyOf'];
  if (Array.isArray(anyOf)) {
    // Only unions of string literals are representable structurally.
    return anyOf.map((branch, i) => {
      if (!isRecord(branch) || typeof branch['const'] !== 'string') {
        throw new CrdSchemaError(
          `${at}.anyOf[${i}]: only unions of string literals can be expressed in a CRD; use Type.Union of Type.Literal strings`,
        );
      }
      return branch['const'];
    });
  }
  const literal = schema['const'];
  if (literal === undefined) return undefined;
  if (typeof literal !== 'string')
    throw new CrdSchemaError(`${at}: only string literals can be expressed in a CRD enum`);
  return [literal];
}

function isUnknownSchema(schema: Record<string, unknown>): boolean {
  return Object.keys(schema).every((k) => k === 'description');
}

/** Converts one TypeBox schema node into a structural schema node. Throws CrdSchemaError naming the path. */
export function toStructuralSchema(
  schema: unknown,
  options: StructuralSchemaOptions = {},
  at = '$',
): CrdJsonObject {
  if (!isRecord(schema)) throw new CrdSchemaError(`${at}: expected a schema object`);
  const keyOrder = options.keyOrder ?? 'type-first';
  const values = literalEnum(schema, at);
  const out: CrdJsonObject = {};
  if (values === undefined && typeof schema['type'] !== 'string') {
    if (!isUnknownSchema(schema)) throw new CrdSchemaError(`${at}: schema has no type`);
    // Type.Unknown(): any JSON value, kept as is by the API server.
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  // Object.keys skips TypeBox's symbol-keyed bookkeeping ([Kind], [OptionalKind]).
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    if (value === undefined) continue;
    if (key === 'anyOf' || key === 'const' || (key === 'type' && values !== undefined)) {
      // A literal (union) is a string enum, written where the union was declared.
      if (values !== undefined && out['enum'] === undefined) {
        out['type'] = 'string';
        out['enum'] = values;
      }
    } else if (key === 'type') {
      out['type'] = toCrdJson(value, `${at}.type`);
    } else if (key === 'properties') {
      if (!isRecord(value)) throw new CrdSchemaError(`${at}.properties: expected an object`);
      const names = Object.keys(value);
      if (names.length === 0 && options.omitEmptyProperties === true) continue;
      if (keyOrder === 'alphabetical') names.sort();
      const converted: CrdJsonObject = {};
      for (const name of names) converted[name] = toStructuralSchema(value[name], options, `${at}.${name}`);
      out['properties'] = converted;
    } else if (key === 'required') {
      if (!Array.isArray(value) || !value.every((name) => typeof name === 'string'))
        throw new CrdSchemaError(`${at}.required: expected a list of field names`);
      if (value.length === 0) continue;
      out['required'] = keyOrder === 'alphabetical' ? [...value].sort() : [...value];
    } else if (key === 'patternProperties' || key === 'additionalProperties') {
      // Type.Record(Type.String(), V) declares its values under one pattern; a CRD says additionalProperties: V.
      const valueSchemas = key === 'patternProperties' && isRecord(value) ? Object.values(value) : [value];
      if (valueSchemas.length !== 1 || !isRecord(valueSchemas[0]))
        throw new CrdSchemaError(
          `${at}: a map must declare exactly one value schema (Type.Record(Type.String(), ...))`,
        );
      out['additionalProperties'] = toStructuralSchema(valueSchemas[0], options, `${at}.*`);
    } else if (key === 'items') {
      out['items'] = toStructuralSchema(value, options, `${at}[]`);
    } else if (COPIED.has(key)) {
      const copy = toCrdJson(value, `${at}.${key}`);
      out[key] = keyOrder === 'alphabetical' ? sortedKeys(copy) : copy;
    } else {
      throw new CrdSchemaError(
        `${at}: keyword ${JSON.stringify(key)} cannot be expressed in a structural CRD schema; remove it from the TypeBox definition`,
      );
    }
  }
  return reorder(out, keyOrder);
}

/** `value` with the keys of every object in it sorted by name. */
function sortedKeys(value: CrdJson): CrdJson {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: CrdJsonObject = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedKeys(value[key] as CrdJson);
  return out;
}

function reorder(node: CrdJsonObject, keyOrder: CrdKeyOrder): CrdJsonObject {
  if (keyOrder === 'declared') return node;
  const keys = Object.keys(node);
  if (keyOrder === 'alphabetical') keys.sort();
  else keys.sort((a, b) => TYPE_FIRST_ORDER.indexOf(a) - TYPE_FIRST_ORDER.indexOf(b));
  const out: CrdJsonObject = {};
  for (const key of keys) out[key] = node[key] as CrdJson;
  return out;
}

export interface StandInCrdOptions {
  /** The version's openAPIV3Schema. */
  readonly schema: CrdJsonObject;
  /** Serve a status subresource. Default: no. */
  readonly statusSubresource?: boolean;
  readonly annotations?: Record<string, string>;
}

/**
 * A development stand-in CRD for another project's kind (OpenShift's, which a plain kube-apiserver does not serve):
 * one served and stored version, named and scoped as `type` says.
 */
export function standInCrd(type: ResourceType, options: StandInCrdOptions): CrdJsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${type.plural}.${type.group}`,
      ...(options.annotations ? { annotations: { ...options.annotations } } : {}),
    },
    spec: {
      group: type.group,
      names: {
        kind: type.kind,
        listKind: `${type.kind}List`,
        plural: type.plural,
        singular: type.kind.toLowerCase(),
      },
      scope: type.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: type.version,
          served: true,
          storage: true,
          ...(options.statusSubresource ? { subresources: { status: {} } } : {}),
          schema: { openAPIV3Schema: options.schema },
        },
      ],
    },
  };
}
