import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/fixtures.js';
import {
  ANNOTATIONS,
  DATA_KEYS,
  HYPERSHIFT_GROUP,
  HYPERSHIFT_VERSION,
  LABELS,
  NODEPOOL_CONDITION_PREFIX,
  NODEPOOL_KIND,
  NTO_REASONS,
  REFERENCE_MESSAGES,
  mirroredConditionType,
} from './constants.js';

const constantsFile = fixturePath('specs/nodepool-performance-status.constants.json');

interface SharedConstants {
  nodePoolAPI: { group: string; version: string; kind: string };
  labels: Record<string, string>;
  annotations: Record<string, string>;
  dataKeys: Record<string, string>;
  conditionTypes: Record<string, string>;
  ntoReasons: string[];
  errors: Record<string, string>;
}

describe(`wire strings match the contract`, () => {
  const shared = JSON.parse(readFileSync(constantsFile, 'utf8')) as SharedConstants;

  it('uses the contract API group, version and kind for NodePool', () => {
    expect({ group: HYPERSHIFT_GROUP, version: HYPERSHIFT_VERSION, kind: NODEPOOL_KIND }).toEqual(
      shared.nodePoolAPI,
    );
  });

  it('uses every label, annotation and data key exactly', () => {
    expect({ ...LABELS }).toEqual(shared.labels);
    expect({ ...ANNOTATIONS }).toEqual(shared.annotations);
    expect({ ...DATA_KEYS }).toEqual(shared.dataKeys);
  });

  it('derives the NodePool condition types from the prefix', () => {
    expect(NODEPOOL_CONDITION_PREFIX).toBe(shared.conditionTypes.prefix);
    for (const type of ['Available', 'Progressing', 'Upgradeable', 'Degraded']) {
      expect(mirroredConditionType(type)).toBe(shared.conditionTypes[type]);
    }
  });

  it('knows all of NTO reasons and the reference messages', () => {
    expect(Object.values(NTO_REASONS).sort()).toEqual([...shared.ntoReasons].sort());
    expect(REFERENCE_MESSAGES.multiple).toBe(shared.errors.multiple);
    expect(REFERENCE_MESSAGES.noKey).toBe(shared.errors.noKey);
    expect(REFERENCE_MESSAGES.decode).toBe(shared.errors.decode);
    expect(REFERENCE_MESSAGES.missing).toBe(shared.errors.missingLogOnly);
  });
});
