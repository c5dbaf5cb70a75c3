import { describe, expect, it } from 'vitest';
import { ANNOTATIONS, ARCH_LABEL, LABELS, SCHEDULING_GATE } from '../podplacement/constants.js';
import { renderObservation, observePlacement } from '../podplacement/explain.js';
import {
  buildPlacementView,
  explainPod,
  MAX_IMAGE_CHARS,
  projectPodForDashboard,
  type PlacementPod,
} from './placement-view.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');

function pod(
  namespace: string,
  name: string,
  opts: { gated?: boolean; node?: string; images?: string[]; ageSeconds?: number; failed?: string } = {},
): PlacementPod {
  return {
    metadata: {
      namespace,
      name,
      creationTimestamp: new Date(NOW - (opts.ageSeconds ?? 0) * 1000).toISOString(),
      labels: opts.failed !== undefined ? { [LABELS.imageInspectError]: '' } : {},
      annotations: opts.failed !== undefined ? { [ANNOTATIONS.imageInspectError]: opts.failed } : {},
    },
    spec: {
      nodeName: opts.node,
      schedulingGates: opts.gated ? [{ name: SCHEDULING_GATE }] : [],
      containers: (opts.images ?? ['quay.io/app/web:1']).map((image) => ({ image })),
    },
  };
}

const nodes = [
  { metadata: { name: 'n-amd', labels: { [ARCH_LABEL]: 'amd64' } } },
  { metadata: { name: 'n-arm', labels: { [ARCH_LABEL]: 'arm64' } } },
];

describe('the Pod placement view', () => {
  it('counts the pods gated now and names the oldest with its age', () => {
    const view = buildPlacementView(
      {
        pods: [
          pod('a', 'young', { gated: true, ageSeconds: 5 }),
          pod('b', 'old', { gated: true, ageSeconds: 300 }),
          pod('a', 'placed', { node: 'n-amd' }),
        ],
        nodes,
        operatorConfigured: true,
      },
      NOW,
    );
    expect(view.gated.count).toBe(2);
    expect(view.gated.oldest).toMatchObject({ namespace: 'b', name: 'old', ageSeconds: 300 });
    expect(view.gated.pods.items.map((p) => p.name)).toEqual(['old', 'young']);
    expect(view.note).toBe('');
  });

  it('says the operator is not enabled when there is no ClusterPodPlacementConfig', () => {
    const view = buildPlacementView({ pods: [], nodes, operatorConfigured: false }, NOW);
    expect(view.note).toContain('ClusterPodPlacementConfig');
  });

  it('shows where pods run by architecture and which images went there', () => {
    const view = buildPlacementView(
      {
        pods: [
          pod('a', 'p1', { node: 'n-amd', images: ['quay.io/app/web:1'] }),
          pod('a', 'p2', { node: 'n-amd', images: ['quay.io/app/web:1', 'quay.io/app/side:2'] }),
          pod('a', 'p3', { node: 'n-arm', images: ['quay.io/app/web:1'] }),
          pod('a', 'p4', { node: 'gone-node' }),
        ],
        nodes,
        operatorConfigured: true,
      },
      NOW,
    );
    expect(view.architectures).toEqual([
      {
        architecture: 'amd64',
        pods: 2,
        images: [
          { image: 'quay.io/app/web:1', pods: 2 },
          { image: 'quay.io/app/side:2', pods: 1 },
        ],
      },
      { architecture: 'arm64', pods: 1, images: [{ image: 'quay.io/app/web:1', pods: 1 }] },
      { architecture: 'unknown', pods: 1, images: [{ image: 'quay.io/app/web:1', pods: 1 }] },
    ]);
  });

  it('groups inspection failures by registry and by namespace, most first', () => {
    const view = buildPlacementView(
      {
        pods: [
          pod('ns1', 'a', {
            failed: 'unauthorized',
            images: ['registry.example:5000/x/y:1', 'quay.io/a/b:1'],
          }),
          pod('ns1', 'b', { failed: 'timeout', images: ['registry.example:5000/x/z:1'] }),
          pod('ns2', 'c', { failed: 'manifest unknown', images: ['nginx'] }),
          pod('ns2', 'd', {}),
        ],
        nodes,
        operatorConfigured: true,
      },
      NOW,
    );
    expect(view.failuresByRegistry.items).toEqual([
      { key: 'registry.example:5000', pods: 2, example: 'unauthorized' },
      { key: 'docker.io', pods: 1, example: 'manifest unknown' },
      { key: 'quay.io', pods: 1, example: 'unauthorized' },
    ]);
    expect(view.failuresByNamespace.items).toEqual([
      { key: 'ns1', pods: 2, example: 'unauthorized' },
      { key: 'ns2', pods: 1, example: 'manifest unknown' },
    ]);
  });

  it('sends at most a page of rows however many pods are gated (10,000 here)', () => {
    const pods = Array.from({ length: 10_000 }, (_, i) =>
      pod(`ns-${i % 50}`, `p-${i}`, {
        gated: true,
        ageSeconds: i,
        failed: 'x',
        images: [`r${i % 700}.example/a:1`],
      }),
    );
    const view = buildPlacementView({ pods, nodes, operatorConfigured: true }, NOW, {
      gated: { offset: 9_950, limit: 10_000 },
    });
    expect(view.gated.count).toBe(10_000);
    expect(view.gated.pods.items).toHaveLength(50);
    expect(view.gated.pods.limit).toBe(500);
    expect(view.failuresByRegistry.total).toBe(700);
    expect(view.failuresByRegistry.items).toHaveLength(100);
    expect(JSON.stringify(view).length).toBeLessThan(200_000);
  });

  it('cuts hostile image references and error messages to their budget before using them', () => {
    const long = `quay.io/${'a'.repeat(100_000)}:1`;
    const view = buildPlacementView(
      {
        pods: [pod('ns', 'x', { node: 'n-amd', images: [long], failed: 'e'.repeat(100_000) })],
        nodes,
        operatorConfigured: true,
      },
      NOW,
    );
    expect(view.architectures[0]?.images[0]?.image.length).toBe(MAX_IMAGE_CHARS);
    expect(view.failuresByNamespace.items[0]?.example.length).toBeLessThanOrEqual(300);
    // Names that look like object keys are only counted, never used as keys of an object.
    const proto = buildPlacementView(
      { pods: [pod('__proto__', 'constructor', { failed: 'x' })], nodes, operatorConfigured: true },
      NOW,
    );
    expect(proto.failuresByNamespace.items).toEqual([{ key: '__proto__', pods: 1, example: 'x' }]);
  });

  it("explains one pod with the explain command's own observation text", () => {
    const p = {
      ...pod('ns', 'web', { gated: true }),
      spec: {
        containers: [{ name: 'c', image: 'quay.io/a/b:1' }],
        schedulingGates: [{ name: SCHEDULING_GATE }],
      },
    };
    const events = [
      { type: 'Normal', reason: 'ArchAwareSchedGateAdded', message: '<img src=x onerror=alert(1)>' },
    ];
    const explanation = explainPod(p, events);
    expect(explanation).toMatchObject({ namespace: 'ns', name: 'web' });
    expect(explanation.text).toBe(renderObservation(observePlacement(p, events)));
    expect(explanation.text).toContain('still on');
  });
});

describe("the dashboard's pod cache projection", () => {
  it("keeps what the view and explain read and drops what a tenant's large pod is made of", () => {
    const bulk = 'x'.repeat(200_000);
    const large = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        namespace: 'tenant',
        name: 'big',
        uid: 'u-1',
        creationTimestamp: '2026-01-01T11:00:00Z',
        deletionTimestamp: '2026-01-01T11:59:00Z',
        labels: { app: 'big', [LABELS.imageInspectError]: '' },
        annotations: { [ANNOTATIONS.imageInspectError]: 'registry said no', 'tenant/blob': bulk },
      },
      spec: {
        nodeName: 'n-arm',
        schedulingGates: [{ name: SCHEDULING_GATE }],
        containers: [{ name: 'c', image: 'quay.io/app/web:1', env: [{ name: 'BLOB', value: bulk }] }],
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
        },
      },
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            lastTransitionTime: '2026-01-01T11:00:01Z',
            message: bulk,
          },
          { type: 'Ready', status: 'False', message: bulk },
        ],
      },
    };
    const kept = projectPodForDashboard(large);
    expect(JSON.stringify(kept).length).toBeLessThan(1_000);
    expect(kept.metadata?.annotations).toEqual({ [ANNOTATIONS.imageInspectError]: 'registry said no' });
    expect(kept.status).toEqual({
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', lastTransitionTime: '2026-01-01T11:00:01Z' }],
    });
    // The view and explain say the same of the projection as of the whole pod.
    const view = (p: PlacementPod) => buildPlacementView({ pods: [p], nodes, operatorConfigured: true }, NOW);
    expect(view(kept)).toEqual(view(large));
    expect(renderObservation(observePlacement(kept, []))).toBe(
      renderObservation(observePlacement(large, [])),
    );
  });
});
