// The gated-pod cache keeps projectGatedPod of each pod: the plan (patch, events, outcome) and everything the
// reconciler reads must be the same from the projection as from the whole pod, over the contract's behaviour-case
// pods and pods carrying what a real API server adds (status, env, volumes, tenant annotations, managedFields...).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/fixtures.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import { clusterConfig, pod, podPlacementConfig, type PodBuilder } from './builders.js';
import { ANNOTATIONS, ARCH_LABEL, LABELS, MAX_RETRY_COUNT, SCHEDULING_GATE } from './constants.js';
import {
  imagesToInspect,
  inspectionFailures,
  manualReleasePatch,
  planPlacement,
  type ImageArchitectures,
} from './placement-plan.js';
import { projectGatedPod } from './pod-projection.js';
import type { Pod } from './pod-types.js';
import { podPullSecretNames } from './pull-secrets.js';

const OPERATOR_NS = 'tessera-podplacement';
const image = (letter: string): string => `registry.test/images/${letter.toLowerCase()}:latest`;
const ARCHS: Record<string, ImageArchitectures> = {
  A: { archs: ['amd64'] },
  R: { archs: ['arm64'] },
  M: { archs: ['amd64', 'arm64'] },
  M4: { archs: ['amd64', 'arm64', 'ppc64le', 's390x'] },
  P: { archs: ['ppc64le'] },
  B: { archs: ['amd64', 'arm64', 'ppc64le', 's390x'] },
  X: { error: 'manifest unknown', failure: 'permanent' },
  T: { error: 'registry answered 503', failure: 'transient' },
};
const inspection = new Map(Object.entries(ARCHS).map(([letter, r]) => [image(letter), r]));

interface BehaviourCase {
  id: number;
  pod?: Record<string, unknown>;
}

/** The pods of the behaviour cases (images, init images, required terms), gated. */
function behaviourCasePods(): PodBuilder[] {
  const file = JSON.parse(readFileSync(fixturePath('specs/pod-placement.behavior-cases.json'), 'utf8')) as {
    cases: BehaviourCase[];
  };
  return file.cases
    .filter((c) => c.pod !== undefined)
    .map((c) => {
      const b = pod(`case-${c.id}`);
      b.withImages(...((c.pod?.['images'] ?? c.pod?.['containers'] ?? []) as string[]).map(image));
      const init = (c.pod?.['initContainers'] ?? []) as string[];
      if (init.length > 0) b.withInitImages(...init.map(image));
      const terms = c.pod?.['required.terms'] as
        { key: string; op?: string; values?: string[] }[][] | undefined;
      if (terms)
        b.withRequiredTerms(
          ...terms.map((t) =>
            t.map((e): [string, string, string[]?] => [
              e.key === 'ARCH' ? ARCH_LABEL : e.key,
              e.op ?? (e.values ? 'In' : 'Exists'),
              e.values,
            ]),
          ),
        );
      return b;
    });
}

/** Pods exercising every field the projection keeps. */
function featurePods(): PodBuilder[] {
  return [
    pod('pinned')
      .withImages(image('M'))
      .withNodeSelector({ [ARCH_LABEL]: 'arm64', disk: 'ssd' }),
    pod('preferred').withImages(image('M4')).withPreferred(10, ARCH_LABEL, ['arm64']),
    pod('other-preference').withImages(image('A')).withPreferred(5, 'zone', ['a']),
    pod('daemonset').withImages(image('A')).withOwner('DaemonSet', 'ds', true),
    pod('owned-not-controlled')
      .withImages(image('A'))
      .withOwner('DaemonSet', 'ds', undefined)
      .withOwner('ReplicaSet', 'rs', true),
    pod('control-plane').withImages(image('A')).withNodeSelector({ 'node-role.kubernetes.io/master': '' }),
    pod('node-name').withImages(image('A')).withNodeName('worker-1'),
    pod('kube-ns', 'kube-system').withImages(image('A')),
    pod('operator-ns', OPERATOR_NS).withImages(image('A')),
    pod('pull-always').withImagePullAlways(image('R')).withImages(image('R')),
    pod('secrets').withImages(image('M')).withPullSecrets('a', 'b', 'a'),
    pod('failing').withImages(image('X'), image('A')),
    pod('transient').withImages(image('T')),
    pod('retried')
      .withImages(image('T'))
      .withLabels({ [LABELS.imageInspectErrorCount]: '2', [LABELS.imageInspectError]: '' })
      .withAnnotations({ [ANNOTATIONS.imageInspectError]: 'earlier' }),
    pod('sources')
      .withImages(image('M'))
      .withAnnotations({ [ANNOTATIONS.preferredAffinitySources]: 'arm64:50:ClusterPodPlacementConfig' }),
    pod('team-a').withImages(image('M4')).withLabels({ team: 'a', tier: 'web' }),
    pod('other-gates').withImages(image('A')).withGate('example.com/quota'),
    pod('pod-affinity')
      .withImages(image('A'))
      .withPodAffinity({ required: [{ topologyKey: 'zone' }] }),
    pod('empty'),
  ];
}

/** What a real API server adds to a pod, none of which the operator reads; makes the pod large. */
function asServed(p: Pod, n: number): Pod {
  const big = 'x'.repeat(4096);
  const raw = structuredClone(p) as Record<string, unknown>;
  const meta = raw.metadata as Record<string, unknown>;
  meta['uid'] = `uid-${n}`;
  meta['creationTimestamp'] = '2025-01-01T00:00:00Z';
  meta['generateName'] = 'web-';
  meta['annotations'] = {
    ...(p.metadata?.annotations ?? {}),
    'tenant.example/blob': big,
    'a/b': '{"[":"\\""}',
  };
  meta['managedFields'] = [{ manager: 'kubectl', fieldsV1: { 'f:spec': { big } } }];
  meta['finalizers'] = ['example.com/keep'];
  const spec = raw.spec as Record<string, unknown>;
  spec['serviceAccountName'] = 'default';
  spec['tolerations'] = [{ key: 'k', operator: 'Exists' }];
  spec['volumes'] = [{ name: 'v', configMap: { name: 'cm' } }];
  spec['containers'] = ((spec['containers'] ?? []) as Record<string, unknown>[]).map((c) => ({
    ...c,
    env: [{ name: 'BLOB', value: big }],
    command: ['sh', '-c', big],
    resources: { requests: { cpu: '1' } },
  }));
  raw['status'] = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False' }] };
  return raw as Pod;
}

const configs: { name: string; cppc: ClusterPodPlacementConfig; ppcs: PodPlacementConfig[] }[] = [
  { name: 'plain', cppc: clusterConfig(), ppcs: [] },
  {
    name: 'scoring and fallback',
    cppc: clusterConfig({
      platforms: [
        { architecture: 'arm64', weight: 50 },
        { architecture: 'amd64', weight: 10 },
      ],
      fallbackArchitecture: 'amd64',
    }),
    ppcs: [
      podPlacementConfig('team-a', 'test-ns', {
        priority: 5,
        platforms: [{ architecture: 'ppc64le', weight: 30 }],
        matchLabels: { team: 'a' },
      }),
      podPlacementConfig('all', 'test-ns', { platforms: [{ architecture: 's390x', weight: 1 }] }),
    ],
  },
];

describe('projectGatedPod', () => {
  const pods = [...behaviourCasePods(), ...featurePods()].map((b, i) =>
    asServed(
      b
        .withGate()
        .withResourceVersion(String(100 + i))
        .build(),
      i,
    ),
  );

  it('gives planPlacement the same plan as the whole pod, for every case, config and attempt', () => {
    let compared = 0;
    for (const full of pods) {
      const projected = projectGatedPod(structuredClone(full));
      for (const { cppc, ppcs } of configs) {
        for (const attempt of [1, MAX_RETRY_COUNT]) {
          const input = {
            inspection,
            clusterConfig: cppc,
            podPlacementConfigs: ppcs,
            attempt,
            operatorNamespace: OPERATOR_NS,
          };
          expect(planPlacement({ ...input, pod: projected }), full.metadata?.name).toEqual(
            planPlacement({ ...input, pod: full }),
          );
          compared++;
        }
        const ctx = { clusterConfig: cppc, podPlacementConfigs: ppcs, operatorNamespace: OPERATOR_NS };
        expect(imagesToInspect(projected, ctx)).toEqual(imagesToInspect(full, ctx));
      }
      // What else the reconciler and release read.
      expect(inspectionFailures(projected)).toBe(inspectionFailures(full));
      expect(podPullSecretNames(projected)).toEqual(podPullSecretNames(full));
      const at = new Date('2025-02-03T04:05:06Z');
      expect(manualReleasePatch(projected, at)).toEqual(manualReleasePatch(full, at));
      for (const field of ['name', 'namespace', 'uid', 'resourceVersion'] as const)
        expect(projected.metadata?.[field]).toBe(full.metadata?.[field]);
      expect([projected.apiVersion, projected.kind]).toEqual([full.apiVersion, full.kind]);
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('the patch carries the resourceVersion precondition and writes back no field the projection dropped', () => {
    const full = pods.find((p) => p.metadata?.name === 'pod-affinity') as Pod;
    const plan = planPlacement({
      pod: projectGatedPod(full),
      inspection,
      clusterConfig: configs[1]?.cppc,
      podPlacementConfigs: [],
      attempt: 1,
      operatorNamespace: OPERATOR_NS,
    });
    if (plan.action !== 'ungate') throw new Error(`expected an ungate plan, got ${plan.action}`);
    expect(plan.patch.metadata.resourceVersion).toBe(full.metadata?.resourceVersion);
    expect(Object.keys(plan.patch.spec ?? {}).sort()).toEqual(['affinity', 'schedulingGates']);
    // nodeAffinity only: a merge patch leaves the pod's podAffinity (dropped from the cache) as it is.
    expect(Object.keys(plan.patch.spec?.affinity ?? {})).toEqual(['nodeAffinity']);
    expect(Object.keys(plan.patch.metadata.annotations ?? {})).toEqual([
      ANNOTATIONS.preferredAffinitySources,
    ]);
  });

  it('keeps no field the operator does not read, so a large pod is small in the cache', () => {
    const full = pods.find((p) => p.metadata?.name === 'team-a') as Pod;
    const projected = projectGatedPod(structuredClone(full));
    expect(JSON.stringify(full).length).toBeGreaterThan(16_000);
    expect(JSON.stringify(projected).length).toBeLessThan(1_000);
    expect(Object.keys(projected).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(projected.spec?.containers).toEqual([{ name: 'c0', image: image('M4') }]);
    expect(projected.spec?.schedulingGates).toEqual([{ name: SCHEDULING_GATE }]);
    expect(projected.metadata?.annotations).toBeUndefined();
    expect(projected.metadata?.labels).toEqual({ team: 'a', tier: 'web' });
  });
});
