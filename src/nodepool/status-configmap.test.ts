import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fixturePath } from '../../test/support/fixtures.js';
import type { ConfigMap } from './api/types.js';
import {
  BudgetExceededError,
  ConfigMapIncompleteError,
  NodePoolError,
  ProfileUndecodableError,
} from './errors.js';
import { decodeProfileStatus } from './status-codec.js';
import {
  desiredStatusConfigMap,
  parseTuningManifests,
  performanceProfileNameIn,
  STATUS_NOT_CACHED_ANNOTATION,
  statusConfigMapMetadataDrifted,
  trimStatusConfigMap,
} from './status-configmap.js';

const example = fixturePath('hypershift/status-configmap-example.yaml');

function ppConfigMap(overrides: Partial<ConfigMap['metadata']> = {}): ConfigMap {
  return {
    metadata: {
      name: 'perfprof-cm-nodepool1',
      namespace: 'clusters-hostedcluster01',
      uid: '00000000-0000-0000-0000-000000000000',
      labels: {
        'hypershift.openshift.io/performanceprofile-config': 'true',
        'hypershift.openshift.io/nodePool': 'nodepool1',
      },
      annotations: { 'hypershift.openshift.io/nodePool': 'clusters/nodepool1' },
      ...overrides,
    },
    data: {
      tuning:
        'apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\nmetadata:\n  name: perfprof\n',
    },
  };
}

describe(`desiredStatusConfigMap matches the contract example`, () => {
  const fixture = parse(readFileSync(example, 'utf8')) as ConfigMap;

  it('has the example name, namespace, labels, annotation, owner and status text', () => {
    const status = decodeProfileStatus(fixture.data?.status ?? '');
    const cm = desiredStatusConfigMap(ppConfigMap(), 'perfprof', status);
    expect(cm.metadata.name).toBe(fixture.metadata.name);
    expect(cm.metadata.namespace).toBe(fixture.metadata.namespace);
    expect(cm.metadata.labels).toEqual(fixture.metadata.labels);
    expect(cm.metadata.annotations).toEqual(fixture.metadata.annotations);
    expect(cm.metadata.ownerReferences).toEqual(fixture.metadata.ownerReferences);
    expect(cm.data).toEqual(fixture.data);
  });
});

describe('desiredStatusConfigMap', () => {
  it('refuses a PP ConfigMap without the nodePool annotation, naming it', () => {
    expect(() => desiredStatusConfigMap(ppConfigMap({ annotations: {} }), 'p', {})).toThrow(
      ConfigMapIncompleteError,
    );
    expect(() => desiredStatusConfigMap(ppConfigMap({ annotations: {} }), 'p', {})).toThrow(
      /clusters-hostedcluster01\/perfprof-cm-nodepool1/,
    );
  });

  it('detects label, annotation and owner drift on an existing object', () => {
    const desired = desiredStatusConfigMap(ppConfigMap(), 'perfprof', {});
    expect(statusConfigMapMetadataDrifted(structuredClone(desired), desired)).toBe(false);
    const relabelled = structuredClone(desired);
    relabelled.metadata.labels = {
      ...relabelled.metadata.labels,
      'hypershift.openshift.io/performanceProfileName': 'old',
    };
    expect(statusConfigMapMetadataDrifted(relabelled, desired)).toBe(true);
    const orphan = structuredClone(desired);
    orphan.metadata.ownerReferences = [];
    expect(statusConfigMapMetadataDrifted(orphan, desired)).toBe(true);
  });
});

describe('tuning manifests', () => {
  it('finds the PerformanceProfile among several documents', () => {
    const cm = ppConfigMap();
    cm.data = {
      tuning:
        'kind: Tuned\nmetadata:\n  name: t1\n---\n{"kind":"PerformanceProfile","metadata":{"name":"pp"}}\n',
    };
    expect(performanceProfileNameIn(cm)).toBe('pp');
  });

  it('returns undefined for a ConfigMap holding only Tuneds', () => {
    const cm = ppConfigMap();
    cm.data = { tuning: 'kind: Tuned\nmetadata:\n  name: t1\n' };
    expect(performanceProfileNameIn(cm)).toBeUndefined();
  });

  it('rejects manifests without kind or name, and a missing tuning key', () => {
    expect(() => parseTuningManifests('metadata: {}\n', 'ns/cm')).toThrow(ProfileUndecodableError);
    expect(() => parseTuningManifests('kind: [', 'ns/cm')).toThrow(ProfileUndecodableError);
    const cm = ppConfigMap();
    cm.data = {};
    expect(() => performanceProfileNameIn(cm)).toThrow(ConfigMapIncompleteError);
  });
});

describe('hostile tuning ConfigMaps (issue #10 item 11) give NodePoolErrors the controllers report', () => {
  const profile =
    'apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\nmetadata:\n  name: pp\n';

  it('an alias bomb: refused before it expands', () => {
    const bomb = [
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      ...'bcdefghi'.split('').map(
        (n, i) =>
          `${n}: &${n} [${Array(9)
            .fill(`*${'abcdefghi'[i] ?? 'a'}`)
            .join(',')}]`,
      ),
    ].join('\n');
    expect(() => parseTuningManifests(`${profile}---\n${bomb}`, 'clusters/t')).toThrow(BudgetExceededError);
  });

  it('alias expansion past the parser limit within the alias count: a ProfileUndecodableError', () => {
    const text = [
      'a: &a [x, x, x, x]',
      'b: &b [*a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b]',
      'd: [*c, *c, *c, *c]',
    ].join('\n');
    expect(() => parseTuningManifests(text, 'clusters/t')).toThrow(ProfileUndecodableError);
  });

  it('oversize and deep text: BudgetExceededError naming the ConfigMap', () => {
    expect(() => parseTuningManifests(`${profile}x: "${'y'.repeat(300_000)}"`, 'clusters/t')).toThrow(
      /^key "tuning" of ConfigMap clusters\/t is at least \d+ bytes, over the limit of 262144 bytes$/,
    );
    expect(() => parseTuningManifests('['.repeat(100) + ']'.repeat(100), 'clusters/t')).toThrow(
      'key "tuning" of ConfigMap clusters/t nests deeper than 64 levels',
    );
  });

  it("garbage: always a NodePoolError, never the parser's own error type", () => {
    for (const text of ['{[:,', ': : :', '- a\n b: c\n- {', '"unterminated', '\t- x', '%YAML 9\n---\na']) {
      let thrown: unknown;
      try {
        parseTuningManifests(text, 'clusters/t');
      } catch (err) {
        thrown = err;
      }
      if (thrown !== undefined) expect(thrown).toBeInstanceOf(NodePoolError);
    }
  });
});

describe('trimStatusConfigMap (the NodePool controller cache form)', () => {
  const cm = (status: string | undefined): ConfigMap => ({
    metadata: {
      name: 'status-x',
      namespace: 'clusters-hc',
      annotations: { a: 'b' },
      managedFields: [{ manager: 'nto' }],
    } as ConfigMap['metadata'],
    data: { ...(status === undefined ? {} : { status }), other: 'o'.repeat(1000) },
  });

  it('keeps only the status key and drops managedFields', () => {
    const trimmed = trimStatusConfigMap(cm('conditions: []'));
    expect(trimmed.data).toEqual({ status: 'conditions: []' });
    expect(trimmed.metadata).toEqual({ name: 'status-x', namespace: 'clusters-hc', annotations: { a: 'b' } });
    expect(trimStatusConfigMap(cm(undefined)).data).toBeUndefined();
  });

  it('keeps no over-long status at all, only its length', () => {
    const trimmed = trimStatusConfigMap(cm('x'.repeat(1_000_000)));
    expect(trimmed.data).toBeUndefined();
    expect(trimmed.metadata.annotations).toEqual({ a: 'b', [STATUS_NOT_CACHED_ANNOTATION]: '1000000' });
  });
});
