// Drives the pure core (admission decision + placement plan) with the contract's behaviour cases
// (test/fixtures/specs/pod-placement.behavior-cases.json, a copy of the shared spec's). Every case id in the file
// must be listed in COVERAGE: either tested here, or named with the suite that observes it end to end.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/fixtures.js';
import { decideAdmission, type AdmissionInput } from './admission.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import { clusterConfig, pod, podPlacementConfig, type PodBuilder } from './builders.js';
import {
  ANNOTATIONS,
  ARCH_LABEL,
  EVENT_REASONS,
  LABELS,
  LABEL_VALUES,
  MAX_RETRY_COUNT,
} from './constants.js';
import {
  architectureLabels,
  inspectionFailures,
  planPlacement,
  type ImageArchitectures,
  type PlacementPlan,
  type PodMergePatch,
} from './placement-plan.js';
import { podImages } from './pod-model.js';
import type { NodeSelectorTerm, Pod } from './pod-types.js';

const casesFile = fixturePath('specs/pod-placement.behavior-cases.json');

interface BehaviourCase {
  id: number;
  src: string;
  pod?: Record<string, unknown>;
  cppc?: Record<string, unknown>;
  ppcs?: { name: string; priority: number; platforms: Record<string, number>[] }[];
  expect?: Record<string, unknown>;
  labels?: Record<string, string>;
  cases?: Record<string, unknown>;
}

/** Where each case is observed; 'unit' cases have a test named `case <id>` below. */
const COVERAGE: Record<number, string> = {
  1: 'unit',
  2: 'unit',
  3: 'unit',
  4: 'unit',
  5: 'unit',
  6: 'unit',
  7: 'unit',
  8: 'unit',
  9: 'unit',
  10: 'unit',
  11: 'unit',
  12: 'unit',
  13: 'unit',
  14: 'unit',
  15: 'unit',
  16: 'unit',
  17: 'unit',
  18: 'unit', // MTO's "OCI Index bundles + OCI index image" end to end: test/integration/podplacement/image-policy.test.ts
  19: 'unit',
  20: 'unit', // pull policy Always bypass flag here; cache behaviour in test/integration/podplacement/e2e.test.ts
  21: "src/registry (manifest list filtering is the inspector's job)",
  22: "src/registry (reference parsing is the inspector's job)",
  23: 'unit',
  24: 'test/integration/podplacement/e2e.test.ts (global pull secret change purges the cache)',
  25: 'unit',
};

const OPERATOR_NS = 'tessera-podplacement';
const IMAGE_ARCHS: Record<string, ImageArchitectures> = {
  A: { archs: ['amd64'] },
  R: { archs: ['arm64'] },
  M: { archs: ['amd64', 'arm64'] },
  M4: { archs: ['amd64', 'arm64', 'ppc64le', 's390x'] },
  P: { archs: ['ppc64le'] },
  // An operator bundle image counts as every architecture (the inspector reports it so).
  B: { archs: ['amd64', 'arm64', 'ppc64le', 's390x'] },
  X: {
    error:
      'GET https://registry.invalid/v2/x/manifests/latest: dial tcp: lookup registry.invalid: no such host',
  },
};

function imageRef(letter: string): string {
  return `registry.test/images/${letter.toLowerCase()}:latest`;
}

function inspection(extra: Record<string, ImageArchitectures> = {}): Map<string, ImageArchitectures> {
  const m = new Map<string, ImageArchitectures>();
  for (const [letter, archs] of Object.entries(IMAGE_ARCHS)) m.set(imageRef(letter), archs);
  for (const [ref, archs] of Object.entries(extra)) m.set(ref, archs);
  return m;
}

function expand(key: string): string {
  return key === 'ARCH' ? ARCH_LABEL : key;
}

function gatedPod(b: PodBuilder): Pod {
  return b.withGate().withResourceVersion('42').build();
}

function plan(
  p: Pod,
  opts: {
    cppc?: ClusterPodPlacementConfig;
    ppcs?: PodPlacementConfig[];
    attempt?: number;
    extra?: Record<string, ImageArchitectures>;
  } = {},
): PlacementPlan {
  return planPlacement({
    pod: p,
    inspection: inspection(opts.extra),
    clusterConfig: opts.cppc ?? clusterConfig(),
    podPlacementConfigs: opts.ppcs ?? [],
    attempt: opts.attempt ?? 1,
    operatorNamespace: OPERATOR_NS,
  });
}

function ungated(p: PlacementPlan): Extract<PlacementPlan, { action: 'ungate' }> {
  if (p.action !== 'ungate') throw new Error(`expected an ungate plan, got ${p.action}`);
  return p;
}

function requiredTerms(patch: PodMergePatch): NodeSelectorTerm[] | undefined {
  return patch.spec?.affinity?.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
}

/** Compares terms on the fields the case states (key always; operator/values when given). */
function expectTerms(actual: NodeSelectorTerm[] | undefined, expected: unknown): void {
  const want = expected as { key: string; op?: string; values?: string[] }[][];
  expect(actual).toBeDefined();
  expect(actual?.length).toBe(want.length);
  want.forEach((term, i) => {
    const got = actual?.[i]?.matchExpressions ?? [];
    expect(got.map((e) => e.key)).toEqual(term.map((e) => expand(e.key)));
    term.forEach((e, j) => {
      if (e.op) expect(got[j]?.operator).toBe(e.op);
      if (e.values) expect(got[j]?.values).toEqual(e.values);
    });
  });
}

function admission(p: Pod, cppc?: ClusterPodPlacementConfig, ppcs: PodPlacementConfig[] = [], ns?: string) {
  const input: AdmissionInput = {
    namespace: ns ?? p.metadata?.namespace ?? 'test-ns',
    operatorNamespace: OPERATOR_NS,
    clusterConfig: cppc ?? clusterConfig(),
    podPlacementConfigs: ppcs,
  };
  return decideAdmission(p, input);
}

function builderFromCase(c: BehaviourCase): PodBuilder {
  const b = pod(`case-${c.id}`);
  const images = (c.pod?.['images'] ?? c.pod?.['containers'] ?? []) as string[];
  b.withImages(...images.map(imageRef));
  const init = (c.pod?.['initContainers'] ?? []) as string[];
  if (init.length > 0) b.withInitImages(...init.map(imageRef));
  const terms = c.pod?.['required.terms'] as { key: string; op?: string; values?: string[] }[][] | undefined;
  if (terms) {
    b.withRequiredTerms(
      ...terms.map((t) =>
        t.map((e): [string, string, string[]?] => [
          expand(e.key),
          e.op ?? (e.values ? 'In' : 'Exists'),
          e.values,
        ]),
      ),
    );
  }
  return b;
}

describe('pod placement behaviour cases', () => {
  const file = JSON.parse(readFileSync(casesFile, 'utf8')) as { cases: BehaviourCase[] };
  const byId = new Map(file.cases.map((c) => [c.id, c]));
  const get = (id: number): BehaviourCase => {
    const c = byId.get(id);
    if (!c) throw new Error(`case ${id} missing from the shared file`);
    return c;
  };

  it('every case of the shared file is covered somewhere', () => {
    expect(file.cases.length).toBeGreaterThan(0);
    for (const c of file.cases)
      expect(COVERAGE[c.id], `case ${c.id} (${c.src}) has no coverage entry`).toBeDefined();
  });

  for (const id of [1, 4, 5, 6]) {
    it(`case ${id}: required terms get the images' architectures`, () => {
      const c = get(id);
      const result = ungated(plan(gatedPod(builderFromCase(c))));
      const exp = c.expect ?? {};
      if (exp['required.terms']) expectTerms(requiredTerms(result.patch), exp['required.terms']);
      if (exp['values']) expect(result.architectures).toEqual(exp['values']);
      const labels = exp['labels'] as Record<string, string> | undefined;
      for (const [k, v] of Object.entries(labels ?? {})) expect(result.patch.metadata.labels?.[k]).toBe(v);
      expect(result.patch.spec?.schedulingGates).toEqual([]);
      expect(result.patch.metadata.labels?.[LABELS.schedulingGate]).toBe(LABEL_VALUES.removed);
      expect(result.patch.metadata.resourceVersion).toBe('42');
    });
  }

  it('case 2: intersection over images, single-arch labels', () => {
    const c = get(2);
    const result = ungated(plan(gatedPod(builderFromCase(c))));
    expect(result.architectures).toEqual(c.expect?.['archs']);
    for (const [k, v] of Object.entries(c.expect?.['labels'] as Record<string, string>)) {
      expect(result.patch.metadata.labels?.[k]).toBe(v);
    }
    expect(result.patch.metadata.labels?.[LABELS.multiArch]).toBeUndefined();
  });

  it('case 3: no common architecture -> unschedulable term, event, gate removed', () => {
    const c = get(3);
    const result = ungated(plan(gatedPod(builderFromCase(c))));
    expectTerms(requiredTerms(result.patch), c.expect?.['required.terms']);
    expect(result.events.map((e) => e.reason)).toContain(c.expect?.['event']);
    expect(result.outcome).toBe('no-supported-arch');
    expect(result.patch.spec?.schedulingGates).toEqual([]);
    for (const [k, v] of Object.entries(c.labels ?? {})) expect(result.patch.metadata.labels?.[k]).toBe(v);
    // Like the reference flow: the Exists requirement has no values, so no architecture labels.
    expect(result.patch.metadata.labels?.[LABELS.noSupportedArch]).toBeUndefined();
  });

  it('case 7: nodeSelector without arch is left alone', () => {
    const c = get(7);
    const b = builderFromCase(c).withNodeSelector(c.pod?.['nodeSelector'] as Record<string, string>);
    const result = ungated(plan(gatedPod(b)));
    expect(result.patch.spec).not.toHaveProperty('nodeSelector');
    expectTerms(requiredTerms(result.patch), c.expect?.['required.terms']);
  });

  it('case 8: other affinity kinds and non-arch preferences are not modified', () => {
    const c = get(8);
    const pref = (c.pod?.['preferred'] as { w: number; key: string }[])[0];
    if (!pref) throw new Error('case 8 has no preferred term');
    const b = builderFromCase(c).withPodAffinity({ marker: 'keep' }).withPreferred(pref.w, pref.key, ['bar']);
    const result = ungated(plan(gatedPod(b), { cppc: clusterConfig() }));
    expect(result.patch.spec?.affinity).not.toHaveProperty('podAffinity');
    // Scoring is off: the preferred list is not rewritten at all.
    expect(result.patch.spec?.affinity?.nodeAffinity).not.toHaveProperty(
      'preferredDuringSchedulingIgnoredDuringExecution',
    );
    expectTerms(requiredTerms(result.patch), c.expect?.['required.terms']);
  });

  it('case 9: never-gated pods still get the tracking labels', () => {
    const c = get(9);
    const shapes: Record<string, () => { p: Pod; ns: string }> = {
      'namespace == operator ns': () => ({
        p: pod('a', OPERATOR_NS).withImages(imageRef('M')).build(),
        ns: OPERATOR_NS,
      }),
      'namespace startsWith kube-': () => ({
        p: pod('a', 'kube-system').withImages(imageRef('M')).build(),
        ns: 'kube-system',
      }),
      'spec.nodeName set': () => ({
        p: pod().withImages(imageRef('M')).withNodeName('node-1').build(),
        ns: 'test-ns',
      }),
      'nodeSelector has node-role.kubernetes.io/master or node-role.kubernetes.io/control-plane key': () => ({
        p: pod()
          .withImages(imageRef('M'))
          .withNodeSelector({ 'node-role.kubernetes.io/control-plane': '' })
          .build(),
        ns: 'test-ns',
      }),
      'ownerRef kind=DaemonSet with controller=true': () => ({
        p: pod().withImages(imageRef('M')).withOwner('DaemonSet', 'ds', true).build(),
        ns: 'test-ns',
      }),
    };
    const anyOf = c.pod?.['any_of'] as string[];
    expect(anyOf.length).toBeGreaterThan(0);
    for (const shape of anyOf) {
      const build = shapes[shape];
      expect(build, `no pod shape for "${shape}"`).toBeDefined();
      if (!build) continue;
      const { p, ns } = build();
      const d = admission(p, undefined, [], ns);
      expect(d.gate, shape).toBe(c.expect?.['gated']);
      for (const [k, v] of Object.entries(c.expect?.['labels'] as Record<string, string>))
        expect(d.labels[k], shape).toBe(v);
      expect(
        d.patch.some((op) => op.path.startsWith('/spec/schedulingGates')),
        shape,
      ).toBe(false);
    }
    // The master label counts as well as control-plane.
    const master = pod()
      .withImages(imageRef('M'))
      .withNodeSelector({ 'node-role.kubernetes.io/master': '' })
      .build();
    expect(admission(master).gate).toBe(false);
  });

  it('case 10: a DaemonSet owner that is not the controller does not prevent gating', () => {
    const c = get(10);
    for (const controller of [false, undefined]) {
      const d = admission(pod().withImages(imageRef('M')).withOwner('DaemonSet', 'ds', controller).build());
      expect(d.gate).toBe(c.expect?.['gated']);
      expect(d.patch).toContainEqual({
        op: 'add',
        path: '/spec/schedulingGates',
        value: [{ name: 'multiarch.openshift.io/scheduling-gate' }],
      });
      expect(d.labels[LABELS.schedulingGate]).toBe(LABEL_VALUES.gated);
    }
  });

  it('case 11: pinned architecture without any scoring plugin is not gated', () => {
    const c = get(11);
    const pinned = [
      pod()
        .withImages(imageRef('M'))
        .withNodeSelector({ [ARCH_LABEL]: 'amd64' })
        .build(),
      pod()
        .withImages(imageRef('M'))
        .withRequiredTerms(
          [[ARCH_LABEL, 'In', ['arm64']]],
          [
            ['foo', 'Exists'],
            [ARCH_LABEL, 'In', ['amd64']],
          ],
        )
        .build(),
    ];
    const configs = [
      clusterConfig(),
      clusterConfig({ platforms: [{ architecture: 'arm64', weight: 50 }], scoringEnabled: false }),
    ];
    // A PPC that matches nothing or has scoring disabled does not count either.
    const ppcs = [
      podPlacementConfig('off', 'test-ns', {
        platforms: [{ architecture: 'amd64', weight: 1 }],
        enabled: false,
      }),
    ];
    for (const p of pinned) {
      for (const cppc of configs) {
        const d = admission(p, cppc, ppcs);
        expect(d.gate).toBe(c.expect?.['gated']);
        expect(d.ignoreReason).toBe('architecture-already-pinned');
      }
    }
    // With a matching PPC that scores, the same pod is gated.
    const scoringPpc = podPlacementConfig('on', 'test-ns', {
      platforms: [{ architecture: 'amd64', weight: 1 }],
    });
    expect(admission(pinned[0] as Pod, clusterConfig(), [scoringPpc]).gate).toBe(true);
  });

  it('case 12: pinned pod with scoring enabled: gated, preferences added, required unchanged', () => {
    const c = get(12);
    const cppc = clusterConfig({
      platforms: [
        { architecture: 'arm64', weight: 50 },
        { architecture: 'amd64', weight: 10 },
      ],
    });
    const p = builderFromCase(c);
    expect(admission(p.build(), cppc).gate).toBe(c.expect?.['gated']);
    const result = ungated(plan(gatedPod(p), { cppc }));
    expect(requiredTerms(result.patch)).toBeUndefined();
    const preferred =
      result.patch.spec?.affinity?.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    expect(preferred.map((t) => [t.weight, t.preference.matchExpressions?.[0]?.values])).toEqual([
      [50, ['arm64']],
      [10, ['amd64']],
    ]);
    for (const [k, v] of Object.entries(c.expect?.['labels'] as Record<string, string>))
      expect(result.patch.metadata.labels?.[k]).toBe(v);
    expect(result.events.map((e) => e.reason)).toContain(c.expect?.['event']);
  });

  it('case 13: required and preferred both pinned -> not gated even with scoring', () => {
    const c = get(13);
    const cppc = clusterConfig({ platforms: [{ architecture: 'arm64', weight: 50 }] });
    const p = pod()
      .withImages(imageRef('M'))
      .withRequiredTerms([[ARCH_LABEL, 'In', ['amd64']]])
      .withPreferred(10, ARCH_LABEL, ['amd64'])
      .build();
    expect(admission(p, cppc).gate).toBe(c.expect?.['gated']);
  });

  it("case 14: cluster preferences are appended after the user's own terms", () => {
    const c = get(14);
    const userPref = (c.pod?.['preferred'] as { w: number; key: string; values: string[] }[])[0];
    const platforms = c.cppc?.['platforms'] as { architecture: 'amd64'; weight: number }[];
    if (!userPref) throw new Error('case 14 without preferred');
    const cppc = clusterConfig({ platforms });
    const result = ungated(
      plan(
        gatedPod(pod().withImages(imageRef('M')).withPreferred(userPref.w, userPref.key, userPref.values)),
        { cppc },
      ),
    );
    const preferred =
      result.patch.spec?.affinity?.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    const want = c.expect?.['preferred'] as { w: number; key: string; op?: string; values?: string[] }[];
    expect(preferred.length).toBe(want.length);
    want.forEach((w, i) => {
      expect(preferred[i]?.weight).toBe(w.w);
      expect(preferred[i]?.preference.matchExpressions?.[0]?.key).toBe(expand(w.key));
      if (w.values) expect(preferred[i]?.preference.matchExpressions?.[0]?.values).toEqual(w.values);
    });
  });

  it('case 15: PodPlacementConfigs by priority, then the cluster config, with the sources annotation', () => {
    const c = get(15);
    const toPlatforms = (list: Record<string, number>[]) =>
      list.flatMap((m) =>
        Object.entries(m).map(([architecture, weight]) => ({
          architecture: architecture as 'amd64',
          weight,
        })),
      );
    // Listed lowest priority first on purpose: the plan must sort them.
    const ppcs = (c.ppcs ?? []).map((x) =>
      podPlacementConfig(x.name, 'test-ns', { priority: x.priority, platforms: toPlatforms(x.platforms) }),
    );
    const cppc = clusterConfig({ platforms: toPlatforms(c.cppc?.['platforms'] as Record<string, number>[]) });
    const result = ungated(plan(gatedPod(pod().withImages(imageRef('M'))), { cppc, ppcs }));
    const preferred =
      result.patch.spec?.affinity?.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    const want = (c.expect?.['preferred'] as Record<string, number>[]).flatMap((m) => Object.entries(m));
    expect(preferred.map((t) => [t.preference.matchExpressions?.[0]?.values?.[0], t.weight])).toEqual(want);
    const annotation = result.patch.metadata.annotations?.[ANNOTATIONS.preferredAffinitySources] ?? '';
    const entries = annotation.split(',');
    for (const e of c.expect?.[
      'annotation(multiarch.openshift.io/preferred-affinity-sources) contains'
    ] as string[]) {
      expect(entries).toContain(e);
    }
  });

  it('case 16: uninspectable image: retried, then ungated without a required term after the last attempt', () => {
    const c = get(16);
    const cppc = clusterConfig({
      platforms: [{ architecture: 'arm64', weight: 50 }],
      fallbackArchitecture: '',
    });
    let current = pod()
      .withImages(imageRef('X'))
      .withGate()
      .withResourceVersion('1')
      .withLabels({
        [LABELS.schedulingGate]: LABEL_VALUES.gated,
        [LABELS.nodeAffinity]: LABEL_VALUES.notSet,
        [LABELS.preferredNodeAffinity]: LABEL_VALUES.notSet,
      })
      .build();
    let last: PlacementPlan | undefined;
    for (let attempt = 1; attempt <= MAX_RETRY_COUNT; attempt++) {
      expect(inspectionFailures(current)).toBe(attempt - 1);
      last = plan(current, { cppc, attempt: inspectionFailures(current) + 1 });
      if (attempt < MAX_RETRY_COUNT) {
        expect(last.action).toBe('retry');
        if (last.action !== 'retry') break;
        expect(last.patch.spec).toBeUndefined();
        expect(last.events.map((e) => [e.type, e.reason])).toEqual([
          ['Warning', EVENT_REASONS.inspectionError],
        ]);
        current = applyLabels(current, last.patch);
      }
    }
    const result = ungated(last ?? { action: 'none', why: 'not-gated' });
    expect(result.outcome).toBe('gave-up');
    expect(requiredTerms(result.patch)).toBeUndefined();
    const labels = { ...current.metadata?.labels, ...result.patch.metadata.labels };
    for (const [k, v] of Object.entries(c.expect?.['labels'] as Record<string, string>))
      expect(labels[k], k).toBe(v);
    expect(result.patch.spec?.schedulingGates).toEqual([]);
    expect(
      result.patch.metadata.annotations?.[ANNOTATIONS.imageInspectError] ??
        current.metadata?.annotations?.[ANNOTATIONS.imageInspectError],
    ).toContain('no such host');
  });

  it('case 17: uninspectable image with a fallback architecture', () => {
    const c = get(17);
    const cppc = clusterConfig({ fallbackArchitecture: c.cppc?.['fallbackArchitecture'] as 'amd64' });
    const p = pod()
      .withImages(imageRef('X'))
      .withGate()
      .withLabels({ [LABELS.imageInspectErrorCount]: String(MAX_RETRY_COUNT - 1) })
      .build();
    const result = ungated(plan(p, { cppc, attempt: inspectionFailures(p) + 1 }));
    expect(result.outcome).toBe('fallback');
    expectTerms(requiredTerms(result.patch), c.expect?.['required.terms']);
    for (const [k, v] of Object.entries(c.expect?.['labels'] as Record<string, string>))
      expect(result.patch.metadata.labels?.[k], k).toBe(v);
    const fallbackEvent = result.events.find((e) => e.reason === EVENT_REASONS.fallbackPredicateSet);
    expect(fallbackEvent?.type).toBe('Warning');
  });

  it("case 18: a bundle image does not narrow the other images' architectures", () => {
    const c = get(18);
    const index = 'registry.test/images/index-ppc64le-s390x:1';
    const result = ungated(
      plan(gatedPod(pod().withImages(imageRef('B'), index)), {
        extra: { [index]: { archs: ['s390x', 'ppc64le'] } },
      }),
    );
    expect(result.architectures).toEqual(c.expect?.['values']);
  });

  it('case 19: single-container pods from an index and from a single manifest', () => {
    const c = get(19);
    const [indexArchs, singleArchs] = c.expect?.['values'] as string[][];
    const result1 = ungated(plan(gatedPod(pod().withImages(imageRef('M')))));
    expect(result1.architectures).toEqual(indexArchs);
    const result2 = ungated(plan(gatedPod(pod().withImages(imageRef('P')))));
    expect(result2.architectures).toEqual(singleArchs);
    expect(result2.patch.metadata.labels?.[LABELS.singleArch]).toBe('');
  });

  it('case 20: imagePullPolicy Always marks the image as cache-bypassing', () => {
    const p = pod()
      .withImages(imageRef('M'))
      .withImagePullAlways(imageRef('R'))
      .withImages(imageRef('R'))
      .build();
    expect(podImages(p)).toEqual([
      { image: imageRef('M'), pullAlways: false },
      { image: imageRef('R'), pullAlways: true },
    ]);
  });

  it('case 23: missing pull secret: no required affinity after the retries, preferences still applied', () => {
    const c = get(23);
    const cppc = clusterConfig({ platforms: [{ architecture: 'arm64', weight: 50 }] });
    const p = pod()
      .withImages('private.registry.test/m:1')
      .withGate()
      .withLabels({
        [LABELS.nodeAffinity]: LABEL_VALUES.notSet,
        [LABELS.preferredNodeAffinity]: LABEL_VALUES.notSet,
        [LABELS.imageInspectErrorCount]: String(MAX_RETRY_COUNT - 1),
      })
      .build();
    const result = ungated(
      plan(p, {
        cppc,
        attempt: MAX_RETRY_COUNT,
        extra: { 'private.registry.test/m:1': { error: 'unauthorized: authentication required' } },
      }),
    );
    expect(requiredTerms(result.patch)).toBeUndefined();
    const labels = { ...p.metadata?.labels, ...result.patch.metadata.labels };
    for (const [k, v] of Object.entries(c.expect?.['labels'] as Record<string, string>))
      expect(labels[k], k).toBe(v);
  });

  it('case 25: architecture labels', () => {
    const c = get(25);
    const table = c.cases as Record<string, string[]>;
    for (const [input, expected] of Object.entries(table)) {
      const archs =
        input === 'nil' ? undefined : (JSON.parse(input.replace(/([a-z0-9]+)/g, '"$1"')) as string[]);
      const got = Object.keys(architectureLabels(archs)).map((k) => k.replace('multiarch.openshift.io/', ''));
      expect(got.sort(), input).toEqual([...expected].sort());
    }
  });
});

function applyLabels(p: Pod, patch: PodMergePatch): Pod {
  const labels: Record<string, string> = { ...(p.metadata?.labels ?? {}) };
  for (const [k, v] of Object.entries(patch.metadata.labels ?? {})) {
    if (v === null) delete labels[k];
    else labels[k] = v;
  }
  const annotations: Record<string, string> = { ...(p.metadata?.annotations ?? {}) };
  for (const [k, v] of Object.entries(patch.metadata.annotations ?? {})) {
    if (v === null) delete annotations[k];
    else annotations[k] = v;
  }
  return { ...p, metadata: { ...p.metadata, labels, annotations } };
}
