import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fixturePath } from '../../test/support/fixtures.js';
import { BudgetExceededError, StatusInvalidError, StatusUndecodableError } from './errors.js';
import { STATUS_YAML_BUDGET } from './bounded-yaml.js';
import {
  decodeProfileStatus,
  encodeProfileStatus,
  encodeProfileStatusWithin,
  SHORTENED_MESSAGE_MARKER,
  STATUS_CONDITION_LIMITS,
} from './status-codec.js';

const example = fixturePath('hypershift/status-configmap-example.yaml');

describe(`the example status ConfigMap`, () => {
  const cm = parse(readFileSync(example, 'utf8')) as { data: { status: string } };

  it('decodes to the four NTO conditions of an Available profile', () => {
    const status = decodeProfileStatus(cm.data.status);
    expect(status.conditions?.map((c) => [c.type, c.status])).toEqual([
      ['Available', 'True'],
      ['Upgradeable', 'True'],
      ['Progressing', 'False'],
      ['Degraded', 'False'],
    ]);
    expect(status.runtimeClass).toBe('performance-perfprof');
    expect(status.conditions?.[0]?.lastHeartbeatTime).toBe('2024-07-30T10:00:00Z');
  });

  it('re-encodes byte for byte as NTO (sigs.k8s.io/yaml) writes it', () => {
    expect(encodeProfileStatus(decodeProfileStatus(cm.data.status))).toBe(cm.data.status);
  });
});

describe('decodeProfileStatus', () => {
  it('accepts JSON as well as YAML', () => {
    const status = decodeProfileStatus('{"conditions":[{"type":"Degraded","status":"True","reason":"R"}]}');
    expect(status.conditions).toEqual([{ type: 'Degraded', status: 'True', reason: 'R' }]);
  });

  it('treats an empty document as an empty status', () => {
    expect(decodeProfileStatus('')).toEqual({});
    expect(decodeProfileStatus('null')).toEqual({});
  });

  it('keeps null (zero) timestamps and ignores unknown fields', () => {
    const status = decodeProfileStatus(
      'conditions:\n- type: Available\n  status: "False"\n  lastHeartbeatTime: null\n  extra: 1\nfuture: x\n',
    );
    expect(status.conditions).toEqual([{ type: 'Available', status: 'False', lastHeartbeatTime: null }]);
  });

  it.each([
    ['broken YAML', 'conditions: [unclosed', /./],
    ['a list at the top', '- a\n- b', /top level/],
    ['conditions not a list', 'conditions: 3', /conditions: expected a list/],
    ['a condition without type', 'conditions:\n- status: "True"', /conditions\[0\]\.type/],
    ['an invalid status', 'conditions:\n- type: A\n  status: maybe', /True, False or Unknown/],
    ['a bad time', 'conditions:\n- type: A\n  status: "True"\n  lastTransitionTime: yesterday', /RFC 3339/],
  ])('rejects %s with a StatusUndecodableError', (_name, text, message) => {
    expect(() => decodeProfileStatus(text)).toThrow(StatusUndecodableError);
    expect(() => decodeProfileStatus(text)).toThrow(message);
  });
});

describe('decodeProfileStatus keeps to what a NodePool condition can carry (issue #10 item 11)', () => {
  const condition = (fields: Record<string, string>): string =>
    JSON.stringify({ conditions: [{ type: 'Degraded', status: 'True', ...fields }] });

  it(`rejects more than ${STATUS_CONDITION_LIMITS.maxConditions} conditions with a BudgetExceededError`, () => {
    const many = JSON.stringify({
      conditions: Array.from({ length: 9 }, (_, i) => ({ type: `T${i}`, status: 'True' })),
    });
    expect(() => decodeProfileStatus(many)).toThrow(BudgetExceededError);
    expect(() => decodeProfileStatus(many)).toThrow('key "status" has 9 conditions, over the limit of 8');
    // 20,001 conditions do not even reach the parser: the node budget stops them first.
    const flood = JSON.stringify({ conditions: Array.from({ length: 20_001 }, () => ({ type: 'A' })) });
    expect(() => decodeProfileStatus(flood)).toThrow(BudgetExceededError);
  });

  it.each([
    [
      'a 2,034-character type',
      { type: 'T'.repeat(2034) },
      'conditions[0].type is 2034 characters, over the NodePool condition limit of 63',
    ],
    [
      'a type with a slash',
      { type: 'evil.example.com/Degraded' },
      /cannot follow performance\.operator\.openshift\.io\//,
    ],
    ['a type with spaces', { type: 'Not A Type' }, /cannot follow/],
    [
      'a 1,025-character reason',
      { reason: 'R'.repeat(1025) },
      'conditions[0].reason is 1025 characters, over the NodePool condition limit of 1024',
    ],
    ['a reason with a newline', { reason: 'Bad\nReason' }, /is not a condition reason/],
    [
      'a 40,000-character message (100,000 exceed the byte budget first)',
      { message: 'm'.repeat(40_000) },
      'conditions[0].message is 40000 characters, over the NodePool condition limit of 32768',
    ],
  ])('rejects %s with a StatusInvalidError', (_name, fields, message) => {
    expect(() => decodeProfileStatus(condition(fields))).toThrow(StatusInvalidError);
    expect(() => decodeProfileStatus(condition(fields))).toThrow(message);
  });

  it('rejects a condition type given twice (the NodePool keys its conditions by type)', () => {
    const twice = JSON.stringify({
      conditions: [
        { type: 'Degraded', status: 'True' },
        { type: 'Degraded', status: 'False' },
      ],
    });
    expect(() => decodeProfileStatus(twice)).toThrow('condition type "Degraded" appears twice');
  });

  it('accepts NTO\'s own reasons, including "KubeletConfig failure", and messages up to the limit', () => {
    const status = decodeProfileStatus(
      condition({
        reason: 'KubeletConfig failure',
        message: 'm'.repeat(STATUS_CONDITION_LIMITS.maxMessageLength),
      }),
    );
    expect(status.conditions?.[0]?.reason).toBe('KubeletConfig failure');
  });

  it('quotes at most 64 characters of hostile text in its messages', () => {
    const text = condition({ lastTransitionTime: 'x'.repeat(50_000) });
    expect(() => decodeProfileStatus(text)).toThrow(StatusUndecodableError);
    try {
      decodeProfileStatus(text);
    } catch (err) {
      expect((err as Error).message.length).toBeLessThan(200);
    }
  });
});

describe('encodeProfileStatus', () => {
  it('sorts keys, writes zero times as null and omits empty reason/message', () => {
    const text = encodeProfileStatus({
      conditions: [
        {
          type: 'Progressing',
          status: 'True',
          reason: 'DeploymentStarting',
          message: 'Deployment is starting',
        },
      ],
      tuned: 't',
      runtimeClass: 'r',
    });
    expect(text).toBe(
      'conditions:\n- lastHeartbeatTime: null\n  lastTransitionTime: null\n  message: Deployment is starting\n' +
        '  reason: DeploymentStarting\n  status: "True"\n  type: Progressing\nruntimeClass: r\ntuned: t\n',
    );
  });
});

describe('encodeProfileStatusWithin: what the writer stores always fits what the NodePool side reads', () => {
  const degraded = (message: string) => ({
    conditions: [
      { type: 'Available', status: 'False' as const, lastHeartbeatTime: null, lastTransitionTime: null },
      {
        type: 'Degraded',
        status: 'True' as const,
        reason: 'TunedProfileDegraded',
        message,
        lastHeartbeatTime: null,
        lastTransitionTime: null,
      },
    ],
    tuned: 'openshift-cluster-node-tuning-operator/pp-np1',
  });

  it('leaves a status that fits exactly as encodeProfileStatus writes it', () => {
    const status = degraded('Tuned node-1 Degraded Reason: TunedError.\n');
    expect(encodeProfileStatusWithin(status)).toBe(encodeProfileStatus(status));
  });

  it.each([
    ['non-ASCII (3 bytes a character)', '\u8a9e'],
    ['control characters YAML escapes (6 bytes each)', '\u0001'],
    ['emoji (surrogate pairs)', '\u{1F600}'],
  ])(
    'shortens a message of %s at the condition limit until the status fits, and it still decodes',
    (_, unit) => {
      const message = unit.repeat(STATUS_CONDITION_LIMITS.maxMessageLength / unit.length);
      const full = encodeProfileStatus(degraded(message));
      expect(Buffer.byteLength(full, 'utf8')).toBeGreaterThan(STATUS_YAML_BUDGET.maxBytes);
      const text = encodeProfileStatusWithin(degraded(message));
      expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(STATUS_YAML_BUDGET.maxBytes);
      const kept = decodeProfileStatus(text).conditions?.find((c) => c.type === 'Degraded')?.message ?? '';
      expect(kept.endsWith(SHORTENED_MESSAGE_MARKER)).toBe(true);
      expect(message.startsWith(kept.slice(0, -SHORTENED_MESSAGE_MARKER.length))).toBe(true);
      expect(kept.length).toBeGreaterThan(1000);
    },
  );
});
