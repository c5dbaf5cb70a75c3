import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { CrdSchemaError, toCrdJson, toStructuralSchema } from './crd-schema.js';

const Profile = Type.Object(
  {
    tier: Type.Union([Type.Literal('gold'), Type.Literal('silver')], { default: 'silver' }),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
    cpus: Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 4 }),
    anything: Type.Optional(Type.Unknown({ description: 'Kept as written.' })),
    name: Type.String({ maxLength: 63 }),
  },
  {
    description: 'A profile.',
    'x-kubernetes-validations': [{ rule: 'self.name != ""', message: 'name is required' }],
  },
);

describe('toStructuralSchema', () => {
  it('turns literal unions into enums, records into maps, unknown into preserved fields, optional fields out of required', () => {
    expect(toStructuralSchema(Profile)).toEqual({
      type: 'object',
      description: 'A profile.',
      'x-kubernetes-validations': [{ rule: 'self.name != ""', message: 'name is required' }],
      properties: {
        tier: { type: 'string', enum: ['gold', 'silver'], default: 'silver' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        cpus: { type: 'array', maxItems: 4, items: { type: 'integer', minimum: 1 } },
        anything: { description: 'Kept as written.', 'x-kubernetes-preserve-unknown-fields': true },
        name: { type: 'string', maxLength: 63 },
      },
      required: ['tier', 'cpus', 'name'],
    });
  });

  it('writes plain JSON: TypeBox bookkeeping does not reach the CRD', () => {
    const schema = toStructuralSchema(Profile);
    expect(JSON.parse(JSON.stringify(schema))).toStrictEqual(schema);
    expect(Object.getOwnPropertySymbols(schema['properties'])).toEqual([]);
  });

  it('orders keys type-first by default, as declared, or alphabetically', () => {
    const field = Type.String({ maxLength: 8, description: 'A name.' });
    expect(Object.keys(toStructuralSchema(field))).toEqual(['type', 'description', 'maxLength']);
    expect(Object.keys(toStructuralSchema(field, { keyOrder: 'declared' }))).toEqual([
      'maxLength',
      'description',
      'type',
    ]);
    expect(Object.keys(toStructuralSchema(field, { keyOrder: 'alphabetical' }))).toEqual([
      'description',
      'maxLength',
      'type',
    ]);
    const literal = Type.Literal('on');
    expect(toStructuralSchema(literal, { keyOrder: 'declared' })).toEqual({ type: 'string', enum: ['on'] });
  });

  it('sorts nested keys and required field names when alphabetical, so the YAML diffs cleanly', () => {
    const schema = toStructuralSchema(Profile, { keyOrder: 'alphabetical' });
    expect(Object.keys(schema['properties'] as object)).toEqual([
      'anything',
      'cpus',
      'labels',
      'name',
      'tier',
    ]);
    expect(schema['required']).toEqual(['cpus', 'name', 'tier']);
    expect(Object.keys((schema['x-kubernetes-validations'] as object[])[0] as object)).toEqual([
      'message',
      'rule',
    ]);
  });

  it('leaves out empty properties only when asked', () => {
    const empty = Type.Object({}, { description: 'Takes no input.' });
    expect(toStructuralSchema(empty)).toEqual({
      type: 'object',
      description: 'Takes no input.',
      properties: {},
    });
    expect(toStructuralSchema(empty, { omitEmptyProperties: true })).toEqual({
      type: 'object',
      description: 'Takes no input.',
    });
  });

  it('refuses a union a structural schema cannot express, naming where it is', () => {
    const schema = Type.Object({ size: Type.Union([Type.String(), Type.Number()]) });
    expect(() => toStructuralSchema(schema)).toThrow(CrdSchemaError);
    expect(() => toStructuralSchema(schema)).toThrow(/^\$\.size\.anyOf\[0\]: only unions of string literals/);
  });

  it('refuses a keyword a CRD cannot carry instead of dropping it silently', () => {
    const closed = Type.Object({ a: Type.String() }, { additionalProperties: false });
    expect(() => toStructuralSchema(closed)).toThrow(/a map must declare exactly one value schema/);
    const withId = Type.String({ $id: 'Name' });
    expect(() => toStructuralSchema(withId)).toThrow(/keyword "\$id" cannot be expressed/);
    expect(() => toStructuralSchema({ description: 'no type', minimum: 1 })).toThrow(
      /\$: schema has no type/,
    );
    expect(() => toStructuralSchema(Type.Literal(3))).toThrow(
      /only string literals can be expressed in a CRD enum/,
    );
  });
});

describe('toCrdJson', () => {
  it('copies JSON values and refuses what JSON cannot hold', () => {
    expect(toCrdJson({ a: [1, 'b', null, true] })).toEqual({ a: [1, 'b', null, true] });
    expect(() => toCrdJson({ service: { port: undefined } })).toThrow(
      /\$\.service\.port: value of type undefined cannot be written to a CRD/,
    );
  });
});
