import { describe, expect, it } from 'vitest';
import type { ConfigMap } from '../api/types.js';
import { ANNOTATIONS, DATA_KEYS, LABELS } from '../constants.js';
import { planMirrors, type WantedMirror } from './mirror-plan.js';

const wanted: WantedMirror = {
  namespace: 'clusters-hc',
  name: 'perf-np1',
  nodePoolName: 'np1',
  nodePoolKey: 'clusters/np1',
  tuning: 'kind: PerformanceProfile\n',
};

function mirror(name: string, tuning = wanted.tuning, extra: Partial<ConfigMap['metadata']> = {}): ConfigMap {
  return {
    metadata: {
      name,
      namespace: wanted.namespace,
      resourceVersion: '7',
      labels: { [LABELS.ppConfigMap]: 'true', [LABELS.nodePool]: 'np1', ...extra.labels },
      annotations: { [ANNOTATIONS.nodePool]: 'clusters/np1', ...extra.annotations },
    },
    data: { [DATA_KEYS.tuning]: tuning, other: 'kept' },
  };
}

describe('planMirrors', () => {
  it('creates the wanted mirror with the contract labels, annotation and tuning text when it is missing', () => {
    expect(planMirrors([], wanted)).toEqual({
      create: {
        metadata: {
          name: 'perf-np1',
          namespace: 'clusters-hc',
          labels: { [LABELS.ppConfigMap]: 'true', [LABELS.nodePool]: 'np1' },
          annotations: { [ANNOTATIONS.nodePool]: 'clusters/np1' },
        },
        data: { [DATA_KEYS.tuning]: wanted.tuning },
      },
      delete: [],
    });
  });

  it('plans nothing when the mirror is up to date', () => {
    expect(planMirrors([mirror('perf-np1')], wanted)).toEqual({ delete: [] });
  });

  it('updates a mirror whose tuning text changed, keeping its other data, labels and resourceVersion', () => {
    const existing = mirror('perf-np1', 'old', { labels: { team: 'a' } });
    const plan = planMirrors([existing], wanted);
    expect(plan.create).toBeUndefined();
    expect(plan.update?.data).toEqual({ [DATA_KEYS.tuning]: wanted.tuning, other: 'kept' });
    expect(plan.update?.metadata.labels?.team).toBe('a');
    expect(plan.update?.metadata.resourceVersion).toBe('7');
    expect(existing.data?.[DATA_KEYS.tuning]).toBe('old'); // the cached object is not modified
  });

  it('restores a contract label or annotation someone changed', () => {
    const relabelled = mirror('perf-np1', wanted.tuning, { annotations: { [ANNOTATIONS.nodePool]: 'x/y' } });
    expect(planMirrors([relabelled], wanted).update?.metadata.annotations?.[ANNOTATIONS.nodePool]).toBe(
      'clusters/np1',
    );
  });

  it('deletes the NodePool’s other mirrors (e.g. after spec.tuningConfig names another ConfigMap)', () => {
    const plan = planMirrors([mirror('old-np1'), mirror('perf-np1')], wanted);
    expect(plan.delete.map((cm) => cm.metadata.name)).toEqual(['old-np1']);
    expect(plan.create).toBeUndefined();
    expect(plan.update).toBeUndefined();
  });

  it('deletes every mirror when none is wanted', () => {
    expect(planMirrors([mirror('a'), mirror('b')], undefined).delete.map((cm) => cm.metadata.name)).toEqual([
      'a',
      'b',
    ]);
  });
});
