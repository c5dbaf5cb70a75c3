import { describe, expect, it } from 'vitest';
import type { ConfigMap, NodePool } from '../api/types.js';
import { SUMMARY_REASONS } from './nodepool-conditions.js';
import { resolveProfileReference } from './profile-reference.js';

const nodePool: NodePool = {
  metadata: { namespace: 'clusters', name: 'np1' },
  spec: { clusterName: 'hc1', tuningConfig: [{ name: 'perf' }] },
};

function tuning(name: string, text: string): ConfigMap {
  return { metadata: { namespace: 'clusters', name }, data: { tuning: text } };
}
const profile = (name: string): string =>
  `apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\nmetadata:\n  name: ${name}\n`;

describe('resolveProfileReference', () => {
  it('names the profile, its status ConfigMap and the mirror to make in the HCP namespace', () => {
    const resolved = resolveProfileReference({
      nodePool,
      tuningConfigMaps: [{ name: 'perf', configMap: tuning('perf', profile('pp')) }],
      controlPlaneExists: true,
    });
    expect(resolved.reference).toEqual({
      kind: 'profile',
      profileName: 'pp',
      statusConfigMapName: 'status-perf-np1',
    });
    expect(resolved.mirror).toEqual({
      namespace: 'clusters-hc1',
      name: 'perf-np1',
      nodePoolName: 'np1',
      nodePoolKey: 'clusters/np1',
      tuning: profile('pp'),
    });
  });

  it('is none when the tuning ConfigMaps hold no PerformanceProfile (its mirrors then go)', () => {
    const tunedOnly = tuning('t', 'kind: Tuned\nmetadata:\n  name: t1\n');
    expect(
      resolveProfileReference({
        nodePool,
        tuningConfigMaps: [{ name: 't', configMap: tunedOnly }],
        controlPlaneExists: true,
      }),
    ).toEqual({ reference: { kind: 'none' } });
  });

  it('says which ConfigMap is missing, and what to do', () => {
    const resolved = resolveProfileReference({
      nodePool,
      tuningConfigMaps: [{ name: 'perf' }],
      controlPlaneExists: true,
    });
    expect(resolved.reference).toEqual({
      kind: 'unresolved',
      message:
        'ConfigMap clusters/perf named in spec.tuningConfig does not exist; create it or remove the reference',
    });
    expect(resolved.mirror).toBeUndefined();
  });

  it('refuses two PerformanceProfiles, naming both ConfigMaps', () => {
    const resolved = resolveProfileReference({
      nodePool,
      tuningConfigMaps: [
        { name: 'a', configMap: tuning('a', profile('pa')) },
        { name: 'b', configMap: tuning('b', profile('pb')) },
      ],
      controlPlaneExists: true,
    });
    expect(resolved.reference).toMatchObject({
      kind: 'unresolved',
      message: expect.stringContaining('(ConfigMaps a, b)'),
    });
  });

  it('waits for the HostedControlPlane before naming a mirror', () => {
    const resolved = resolveProfileReference({
      nodePool,
      tuningConfigMaps: [{ name: 'perf', configMap: tuning('perf', profile('pp')) }],
      controlPlaneExists: false,
    });
    expect(resolved.reference).toMatchObject({
      kind: 'unresolved',
      reason: SUMMARY_REASONS.controlPlaneMissing,
    });
    expect(resolved.mirror).toBeUndefined();
  });

  it('reports an undecodable manifest the same way every time it is asked', () => {
    const broken = tuning('perf', 'kind: PerformanceProfile\nmetadata: [\n');
    const ask = () =>
      resolveProfileReference({
        nodePool,
        tuningConfigMaps: [{ name: 'perf', configMap: broken }],
        controlPlaneExists: true,
      });
    const first = ask();
    expect(first.reference.kind).toBe('unresolved');
    expect(ask()).toEqual(first);
  });
});
