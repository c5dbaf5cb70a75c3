// ClusterPodPlacementConfig v1alpha1 <-> v1beta1: what a v1alpha1 client sees, and that nothing a v1beta1 client
// wrote is lost when the object makes a round trip through v1alpha1 (and the other way round).
import { describe, expect, it } from 'vitest';
import {
  FALLBACK_ARCHITECTURE_ANNOTATION,
  SPEC_ANNOTATION,
  V1ALPHA1,
  V1BETA1,
  convertClusterPodPlacementConfig as convert,
} from './conversion.js';

const conditions = [
  {
    type: 'Available',
    status: 'True',
    reason: 'AllComponentsReady',
    message: 'the pod placement operand is ready',
    lastTransitionTime: '2026-01-02T03:04:05Z',
    observedGeneration: 3,
  },
  {
    type: 'Degraded',
    status: 'False',
    reason: 'AsExpected',
    message: '',
    lastTransitionTime: '2026-01-02T03:04:05Z',
  },
];

const metadata = {
  name: 'cluster',
  uid: '6f1c6e8e-1111-4222-8333-444455556666',
  resourceVersion: '42',
  generation: 3,
  labels: { team: 'infra' },
  annotations: { note: 'keep me' },
};

const beta = {
  apiVersion: V1BETA1,
  kind: 'ClusterPodPlacementConfig',
  metadata,
  spec: {
    logVerbosity: 'Debug',
    namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['system'] }] },
    plugins: {
      nodeAffinityScoring: {
        enabled: true,
        platforms: [
          { architecture: 'arm64', weight: 50 },
          { architecture: 'amd64', weight: 10 },
        ],
      },
      execFormatErrorMonitor: { enabled: false },
    },
    fallbackArchitecture: 'arm64',
  },
  status: { conditions },
};

describe('v1beta1 -> v1alpha1', () => {
  const alpha = convert(beta, V1ALPHA1);

  it('keeps only v1alpha1 spec fields in spec and carries the rest in the annotation', () => {
    expect(alpha.apiVersion).toBe(V1ALPHA1);
    expect(alpha.spec).toEqual({ logVerbosity: 'Debug', namespaceSelector: beta.spec.namespaceSelector });
    const annotations = (alpha.metadata as { annotations: Record<string, string> }).annotations;
    expect(annotations.note).toBe('keep me');
    expect(JSON.parse(annotations[SPEC_ANNOTATION] ?? '')).toEqual({
      plugins: beta.spec.plugins,
      fallbackArchitecture: 'arm64',
    });
  });

  it('copies status conditions and identity metadata unchanged', () => {
    expect(alpha.status).toEqual({ conditions });
    expect(alpha.metadata).toMatchObject({
      name: 'cluster',
      uid: metadata.uid,
      resourceVersion: '42',
      generation: 3,
      labels: { team: 'infra' },
    });
  });

  it('adds no annotation when the object uses only what v1alpha1 can express', () => {
    const plain = convert(
      { ...beta, metadata: { name: 'cluster' }, spec: { logVerbosity: 'Normal', fallbackArchitecture: '' } },
      V1ALPHA1,
    );
    expect(plain.metadata).toEqual({ name: 'cluster' });
    expect(plain.spec).toEqual({ logVerbosity: 'Normal' });
  });

  it('does not modify its input', () => {
    const before = structuredClone(beta);
    convert(beta, V1ALPHA1);
    expect(beta).toEqual(before);
  });
});

describe('round trips', () => {
  it('v1beta1 -> v1alpha1 -> v1beta1 is the identity', () => {
    expect(convert(convert(beta, V1ALPHA1), V1BETA1)).toEqual(beta);
  });

  it('v1alpha1 -> v1beta1 -> v1alpha1 is the identity, carried annotation included', () => {
    const alpha = convert(beta, V1ALPHA1);
    expect(convert(convert(alpha, V1BETA1), V1ALPHA1)).toEqual(alpha);
  });

  it('a plain v1alpha1 object round-trips without gaining fields', () => {
    const alpha = {
      apiVersion: V1ALPHA1,
      kind: 'ClusterPodPlacementConfig',
      metadata: { name: 'cluster' },
      spec: { logVerbosity: 'Trace' },
      status: { conditions },
    };
    const hub = convert(alpha, V1BETA1);
    expect(hub).toEqual({ ...alpha, apiVersion: V1BETA1 });
    expect(convert(hub, V1ALPHA1)).toEqual(alpha);
  });

  it('preserves v1beta1 spec fields unknown to this code (a newer hub) through v1alpha1', () => {
    const newer = { ...beta, spec: { ...beta.spec, futureField: { mode: 'strict' } } };
    const alpha = convert(newer, V1ALPHA1);
    expect(alpha.spec).not.toHaveProperty('futureField');
    expect(convert(alpha, V1BETA1)).toEqual(newer);
  });

  it('keeps objects without spec or status as they are', () => {
    const bare = { apiVersion: V1BETA1, kind: 'ClusterPodPlacementConfig', metadata: { name: 'cluster' } };
    expect(convert(convert(bare, V1ALPHA1), V1BETA1)).toEqual(bare);
  });
});

describe('v1alpha1 -> v1beta1', () => {
  it('lets a field changed through v1alpha1 win while restoring the carried fields', () => {
    const alpha = convert(beta, V1ALPHA1);
    const edited = { ...alpha, spec: { ...(alpha.spec as object), logVerbosity: 'TraceAll' } };
    const hub = convert(edited, V1BETA1);
    expect(hub.spec).toEqual({ ...beta.spec, logVerbosity: 'TraceAll' });
    expect(hub.metadata).toEqual(metadata);
  });

  it("restores fallbackArchitecture from the reference operator's annotation", () => {
    const alpha = {
      apiVersion: V1ALPHA1,
      kind: 'ClusterPodPlacementConfig',
      metadata: { name: 'cluster', annotations: { [FALLBACK_ARCHITECTURE_ANNOTATION]: 's390x' } },
      spec: {},
    };
    expect(convert(alpha, V1BETA1)).toEqual({
      apiVersion: V1BETA1,
      kind: 'ClusterPodPlacementConfig',
      metadata: { name: 'cluster' },
      spec: { fallbackArchitecture: 's390x' },
    });
  });

  it('refuses a carried annotation that is not a JSON object, naming the annotation', () => {
    const alpha = {
      apiVersion: V1ALPHA1,
      metadata: { name: 'cluster', annotations: { [SPEC_ANNOTATION]: '[' } },
    };
    expect(() => convert(alpha, V1BETA1)).toThrow(
      expect.objectContaining({
        code: 'TESSERA_PODPLACEMENT_CONVERSION',
        message: expect.stringContaining(SPEC_ANNOTATION),
      }),
    );
    const list = {
      apiVersion: V1ALPHA1,
      metadata: { name: 'cluster', annotations: { [SPEC_ANNOTATION]: '[1]' } },
    };
    expect(() => convert(list, V1BETA1)).toThrow(/JSON object/);
  });
});

describe('versions', () => {
  it('returns an object already at the desired version unchanged', () => {
    expect(convert(beta, V1BETA1)).toBe(beta);
  });

  it('refuses unknown versions and kinds', () => {
    expect(() => convert(beta, 'multiarch.openshift.io/v2')).toThrow(/cannot convert to/);
    expect(() => convert({ ...beta, apiVersion: 'v1' }, V1ALPHA1)).toThrow(/apiVersion v1/);
    expect(() => convert({ ...beta, kind: 'PodPlacementConfig' }, V1ALPHA1)).toThrow(
      /kind PodPlacementConfig/,
    );
  });
});
