import { describe, expect, it } from 'vitest';
import { clusterConfig, pod } from './builders.js';
import {
  ANNOTATIONS,
  ARCH_LABEL,
  EVENT_RECORDER_COMPONENT,
  EVENT_REASONS,
  LABELS,
  SCHEDULING_GATE,
} from './constants.js';
import {
  assessExplanation,
  observePlacement,
  podAsNew,
  renderExplanation,
  renderObservation,
  type ObservedPod,
  type PodEvent,
} from './explain.js';
import type { ImageArchitectures } from './placement-plan.js';

const inspection = new Map<string, ImageArchitectures>([
  ['r/m:1', { archs: ['amd64', 'arm64'] }],
  ['r/x:1', { error: 'unauthorized: authentication required' }],
]);
const base = { namespace: 'apps', operatorNamespace: 'op', podPlacementConfigs: [], inspection };

describe('explain', () => {
  it('shows the required terms the operator would write', () => {
    const e = assessExplanation({
      ...base,
      pod: pod('web', 'apps').withImages('r/m:1').build(),
      clusterConfig: clusterConfig(),
    });
    expect(e.gated).toBe(true);
    expect(e.outcome).toBe('placed');
    const text = renderExplanation(e);
    expect(text).toContain('r/m:1: amd64, arm64');
    expect(text).toContain('kubernetes.io/arch In [amd64, arm64]');
  });

  it('shows where retries end for an image that cannot be inspected', () => {
    const e = assessExplanation({
      ...base,
      pod: pod('web', 'apps').withImages('r/x:1').build(),
      clusterConfig: clusterConfig({ fallbackArchitecture: 'arm64' }),
    });
    expect(e.outcome).toBe('fallback');
    const text = renderExplanation(e);
    expect(text).toContain('ERROR unauthorized');
    expect(text).toContain('kubernetes.io/arch In [arm64]');
    expect(text).toMatch(/retries 5 times/);
  });

  it("says an image the cluster's policy refuses is not inspected and the pod is released at once", () => {
    const rule =
      'registry evil.example.com is not in image.config.openshift.io/cluster allowedRegistries: the nodes would refuse to pull image evil.example.com/app:1, so it was not inspected';
    const e = assessExplanation({
      ...base,
      inspection: new Map<string, ImageArchitectures>([
        ['evil.example.com/app:1', { error: rule, failure: 'refused' }],
      ]),
      pod: pod('web', 'apps').withImages('evil.example.com/app:1').build(),
      clusterConfig: clusterConfig(),
    });
    expect(e.outcome).toBe('gave-up');
    expect(e.images[0]?.refused).toBe(true);
    const text = renderExplanation(e);
    expect(text).toContain(`evil.example.com/app:1: REFUSED BY POLICY ${rule}`);
    expect(text).toContain(
      "Note: the cluster's image policy would keep the nodes from pulling evil.example.com/app:1: the operator does not inspect it and releases the pod at once",
    );
    expect(text).not.toMatch(/retries 5 times/);
    expect(text).toContain('Required node affinity: unchanged');
  });

  it('says which signature policy covers an image it inspected without verifying signatures', () => {
    const signature = 'signatures required by ClusterImagePolicy p (policyType PublicKey) (scope r): …';
    const e = assessExplanation({
      ...base,
      signatures: new Map([['r/m:1', signature]]),
      pod: pod('web', 'apps').withImages('r/m:1').build(),
      clusterConfig: clusterConfig(),
    });
    expect(renderExplanation(e)).toContain(`r/m:1: amd64, arm64\n    ${signature}`);
  });

  it('says where a short name was found and why there', () => {
    const how =
      'short name team/m:1: the search registries are tried in order, as CRI-O does, and the first that has it is used: a.io/team/m:1 not there, r.io/team/m:1 chosen';
    const e = assessExplanation({
      ...base,
      inspection: new Map([['team/m:1', { archs: ['arm64'] }]]),
      shortNames: new Map([['team/m:1', how]]),
      pod: pod('web', 'apps').withImages('team/m:1').build(),
      clusterConfig: clusterConfig(),
    });
    const text = renderExplanation(e);
    expect(text).toContain(`  team/m:1: arm64\n    ${how}\n`);
    expect(text).toContain("CRI-O prefers a short-name alias from the nodes'");
    // A qualified image has neither.
    const plain = renderExplanation(
      assessExplanation({
        ...base,
        pod: pod('web', 'apps').withImages('r/m:1').build(),
        clusterConfig: clusterConfig(),
      }),
    );
    expect(plain).not.toContain('short name');
  });

  it('says why a pod is not gated', () => {
    const e = assessExplanation({
      ...base,
      pod: pod('web', 'apps').withImages('r/m:1').withNodeName('n1').build(),
      clusterConfig: clusterConfig(),
    });
    expect(e.gated).toBe(false);
    expect(renderExplanation(e)).toContain('spec.nodeName is set');
    const off = assessExplanation({
      ...base,
      pod: pod('web', 'apps').withImages('r/m:1').build(),
      clusterConfig: undefined,
    });
    expect(off.notes.join()).toContain('no ClusterPodPlacementConfig');
  });
});

/** A pod the operator has placed: gate removed, its labels and required term set, scheduled to a node. */
function placedPod(): ObservedPod {
  const built = pod('web-1', 'apps')
    .withImages('r/m:1')
    .withLabels({
      app: 'web',
      [LABELS.schedulingGate]: 'removed',
      [LABELS.nodeAffinity]: 'set',
      [LABELS.multiArch]: '',
      'multiarch.openshift.io/amd64': '',
      'multiarch.openshift.io/arm64': '',
    })
    .withRequiredTerms([[ARCH_LABEL, 'In', ['amd64', 'arm64']]])
    .withNodeName('node-a')
    .withOwner('ReplicaSet', 'web-6d4', true)
    .build();
  return {
    ...built,
    metadata: { ...built.metadata, creationTimestamp: '2026-01-01T10:00:00Z', uid: 'u1' },
    status: {
      phase: 'Running',
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-01-01T10:00:02Z' }],
    },
  };
}

const operatorEvent = (reason: string, time: string, message = 'm'): PodEvent => ({
  type: 'Normal',
  reason,
  message,
  eventTime: time,
  reportingComponent: EVENT_RECORDER_COMPONENT,
});

describe('explain on a pod the operator has placed', () => {
  const events = [
    operatorEvent(EVENT_REASONS.schedGateRemovalSuccess, '2026-01-01T10:00:01.500000Z'),
    operatorEvent(EVENT_REASONS.schedGateAdded, '2026-01-01T10:00:00.100000Z'),
    operatorEvent(
      EVENT_REASONS.predicateSet,
      '2026-01-01T10:00:01.400000Z',
      'Set the supported architectures to {amd64, arm64}',
    ),
    {
      type: 'Normal',
      reason: 'Scheduled',
      message: 'assigned apps/web-1 to node-a',
      source: { component: 'default-scheduler' },
      lastTimestamp: '2026-01-01T10:00:02Z',
    },
  ];

  it("shows the pod's real labels, affinity, events and timings", () => {
    const o = observePlacement(placedPod(), events);
    expect(o.gated).toBe(false);
    expect(o.labels[LABELS.nodeAffinity]).toBe('set');
    expect(o.labels).not.toHaveProperty('app');
    expect(o.events.map((e) => e.reason)).toEqual([
      EVENT_REASONS.schedGateAdded,
      EVENT_REASONS.predicateSet,
      EVENT_REASONS.schedGateRemovalSuccess,
      'Scheduled',
    ]);
    expect(o.timings).toEqual({
      created: '2026-01-01T10:00:00Z',
      gated: '2026-01-01T10:00:00.100000Z',
      ungated: '2026-01-01T10:00:01.500000Z',
      scheduled: '2026-01-01T10:00:02Z',
    });
    const text = renderObservation(o);
    expect(text).toContain(`${LABELS.nodeAffinity}=set`);
    expect(text).toContain('kubernetes.io/arch In [amd64, arm64]');
    expect(text).toContain(`ungated    2026-01-01T10:00:01.500000Z (+1.4 s after gating)`);
    expect(text).toContain(
      `${EVENT_REASONS.predicateSet}  [${EVENT_RECORDER_COMPONENT}]  Set the supported architectures`,
    );
    expect(text).toContain('Node: node-a');
  });

  it('judges a new pod like it, not the placed one: nodeName, gate, labels and arch terms of the operator removed', () => {
    const fresh = podAsNew(placedPod());
    expect(fresh.spec?.nodeName).toBeUndefined();
    expect(fresh.spec?.affinity).toBeUndefined();
    expect(fresh.metadata?.labels).toEqual({ app: 'web' });
    const e = assessExplanation({ ...base, pod: fresh, clusterConfig: clusterConfig() });
    expect(e.gated).toBe(true);
    expect(e.outcome).toBe('placed');
    expect(renderExplanation(e)).not.toContain('spec.nodeName is set');
  });

  it("keeps the user's own terms and prefers the controller's pod template", () => {
    const placed = placedPod();
    const withUserTerm: ObservedPod = {
      ...placed,
      spec: {
        ...placed.spec,
        schedulingGates: [{ name: SCHEDULING_GATE }, { name: 'other/gate' }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [
                    { key: 'zone', operator: 'In', values: ['a'] },
                    { key: ARCH_LABEL, operator: 'In', values: ['amd64'] },
                  ],
                },
              ],
            },
          },
        },
      },
    };
    const fresh = podAsNew(withUserTerm);
    expect(fresh.spec?.schedulingGates).toEqual([{ name: 'other/gate' }]);
    expect(
      fresh.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    ).toEqual([{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }]);
    const fromTemplate = podAsNew(placed, {
      metadata: { labels: { app: 'web', tier: 'front' } },
      spec: { containers: [{ name: 'c', image: 'r/x:1' }] },
    });
    expect(fromTemplate.metadata?.name).toBe('web-1');
    expect(fromTemplate.metadata?.labels).toEqual({ app: 'web', tier: 'front' });
    expect(fromTemplate.spec?.containers?.[0]?.image).toBe('r/x:1');
  });

  it('orders events by instant across timestamp precisions', () => {
    const o = observePlacement(placedPod(), [
      { reason: 'Scheduled', eventTime: '2026-01-01T10:00:08.426910Z' },
      { reason: EVENT_REASONS.schedGateAdded, firstTimestamp: '2026-01-01T10:00:08Z' },
    ]);
    expect(o.events.map((e) => e.reason)).toEqual([EVENT_REASONS.schedGateAdded, 'Scheduled']);
  });

  it('tells a pod released by hand (tessera podplacement release) from one the operator released', () => {
    // Gated by the webhook, never processed (controller down), then released by the command: no affinity written.
    const built = pod('web-2', 'apps')
      .withImages('r/m:1')
      .withLabels({ app: 'web', [LABELS.schedulingGate]: 'removed' })
      .withAnnotations({ [ANNOTATIONS.releasedByHand]: '2026-01-01T10:05:00Z' })
      .withNodeName('node-a')
      .build();
    const text = renderObservation(
      observePlacement(built, [
        { reason: EVENT_REASONS.schedGateAdded, type: 'Normal', firstTimestamp: '2026-01-01T10:00:01Z' },
      ]),
    );
    expect(text).toContain(
      'Scheduling gate: removed by hand at 2026-01-01T10:05:00Z (tessera podplacement release): not placed by the operator',
    );
    expect(text).toContain('Required node affinity now: none');
    expect(renderObservation(observePlacement(placedPod(), []))).toContain('Scheduling gate: not on the pod');
  });

  it('says when the pod has no events left', () => {
    expect(renderObservation(observePlacement(placedPod(), []))).toContain('Events: none');
  });
});
