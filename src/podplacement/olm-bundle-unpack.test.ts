import { describe, expect, it } from 'vitest';
import { clusterConfig } from './builders.js';
import { SCHEDULING_GATE } from './constants.js';
import { BUNDLE_UNPACK_REF_LABEL, isOlmBundleUnpackPod } from './olm-bundle-unpack.js';
import { imagesToInspect } from './placement-plan.js';
import type { Container, Pod } from './pod-types.js';

const jobOwner = [
  { apiVersion: 'batch/v1', kind: 'Job', name: 'abc123', uid: 'u', controller: true },
] as const;

/** A pod shaped like OLM's unpack Job pods (bundle_unpacker.go), with overrides. */
function unpackPod(o: {
  labels?: Record<string, string>;
  owners?: NonNullable<Pod['metadata']>['ownerReferences'];
  init?: string[];
  main?: string[];
}): Pod {
  const containers = (names: string[]): Container[] =>
    names.map((name) => ({ name, image: `registry.example/${name}:1` }));
  return {
    metadata: {
      name: 'abc123-x',
      namespace: 'openshift-marketplace',
      labels: o.labels ?? { 'olm.managed': 'true' },
      ownerReferences: o.owners ?? jobOwner,
    },
    spec: {
      initContainers: containers(o.init ?? ['util', 'pull']),
      containers: containers(o.main ?? ['extract']),
    },
  };
}

describe('isOlmBundleUnpackPod', () => {
  it.each<[string, Pod, boolean]>([
    [
      'OLM 2025+: the bundle-unpack-ref label',
      unpackPod({ labels: { [BUNDLE_UNPACK_REF_LABEL]: 'abc123' } }),
      true,
    ],
    [
      'the label alone is enough (whatever the containers)',
      unpackPod({ labels: { [BUNDLE_UNPACK_REF_LABEL]: '' }, owners: [], init: [], main: ['app'] }),
      true,
    ],
    ['older OLM: a Job pod with util, pull and extract', unpackPod({}), true],
    ['not controlled by a Job', unpackPod({ owners: [] }), false],
    [
      'a Job that is only an owner, not the controller',
      unpackPod({ owners: [{ ...jobOwner[0], controller: false }] }),
      false,
    ],
    ['init containers in another order', unpackPod({ init: ['pull', 'util'] }), false],
    ['an extra container', unpackPod({ main: ['extract', 'sidecar'] }), false],
    ['other container names', unpackPod({ init: ['setup'], main: ['app'] }), false],
    [
      'an ordinary pod',
      { metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'x' }] } },
      false,
    ],
    ['an empty pod', {}, false],
  ])('%s', (_name, pod, expected) => {
    expect(isOlmBundleUnpackPod(pod)).toBe(expected);
  });
});

describe('imagesToInspect marks the images of an unpack pod for the bundle probe', () => {
  const ctx = { clusterConfig: clusterConfig(), podPlacementConfigs: [], operatorNamespace: 'op' };
  const gated = (p: Pod): Pod => ({
    ...p,
    metadata: { ...p.metadata, namespace: 'olm-catalogs' },
    spec: { ...p.spec, schedulingGates: [{ name: SCHEDULING_GATE }] },
  });

  it('every image of an unpack pod, none of an ordinary pod', () => {
    const unpack = imagesToInspect(gated(unpackPod({})), ctx);
    expect(unpack.map((i) => [i.image, i.probeOperatorBundle])).toEqual([
      ['registry.example/extract:1', true],
      ['registry.example/util:1', true],
      ['registry.example/pull:1', true],
    ]);
    const ordinary = imagesToInspect(
      gated({
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'app', image: 'registry.example/a:1' }] },
      }),
      ctx,
    );
    expect(ordinary).toEqual([
      { image: 'registry.example/a:1', pullAlways: false, probeOperatorBundle: false },
    ]);
  });
});
