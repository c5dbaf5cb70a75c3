import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fixturePath } from '../../test/support/fixtures.js';
import { BudgetExceededError, StatusInvalidError, StatusUndecodableError } from './errors.js';
import { decodeProfileStatus, encodeProfileStatus, STATUS_CONDITION_LIMITS } from './status-codec.js';

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
