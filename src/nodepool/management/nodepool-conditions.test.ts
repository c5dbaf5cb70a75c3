import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../../test/support/fixtures.js';
import type {
  ConfigMap,
  NodePool,
  NodePoolCondition,
  PerformanceProfileStatus,
  ProfileCondition,
} from '../api/types.js';
import {
  assessNodePoolPerformance,
  assessRejectedStatus,
  capConditionMessage,
  SUMMARY_REASONS,
  type AssessNodePoolInput,
} from './nodepool-conditions.js';
import { encodeProfileStatus } from '../status-codec.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const PREFIX = 'performance.operator.openshift.io';
const SUMMARY = 'PerformanceProfileAppliedSuccessfully';

function nodePool(conditions: NodePoolCondition[] = [], generation = 3): NodePool {
  return {
    metadata: { name: 'np1', namespace: 'clusters', generation },
    spec: { clusterName: 'hc1', tuningConfig: [{ name: 'perfprof-cm' }] },
    status: { conditions },
  };
}

function statusCM(
  status: PerformanceProfileStatus | string | undefined,
  overrides: Partial<ConfigMap['metadata']> = {},
): ConfigMap {
  const cm: ConfigMap = {
    metadata: {
      name: 'status-perfprof-cm-np1',
      namespace: 'clusters-hc1',
      labels: {
        'hypershift.openshift.io/nto-generated-performance-profile-status': 'true',
        'hypershift.openshift.io/nodePool': 'np1',
        'hypershift.openshift.io/performanceProfileName': 'perfprof',
      },
      ...overrides,
    },
  };
  if (status !== undefined)
    cm.data = { status: typeof status === 'string' ? status : encodeProfileStatus(status) };
  return cm;
}

function conditions(
  state: 'available' | 'progressing' | 'degraded',
  heartbeat = iso(T0),
): ProfileCondition[] {
  const c = (
    type: string,
    status: 'True' | 'False',
    reason?: string,
    message?: string,
  ): ProfileCondition => ({
    type,
    status,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
    lastHeartbeatTime: heartbeat,
    lastTransitionTime: heartbeat,
  });
  return [
    c('Available', state === 'available' ? 'True' : 'False'),
    c('Upgradeable', state === 'available' ? 'True' : 'False'),
    c(
      'Progressing',
      state === 'progressing' ? 'True' : 'False',
      state === 'progressing' ? 'DeploymentStarting' : undefined,
      state === 'progressing' ? 'Deployment is starting' : undefined,
    ),
    c(
      'Degraded',
      state === 'degraded' ? 'True' : 'False',
      state === 'degraded' ? 'TunedProfileDegraded' : undefined,
      state === 'degraded' ? 'Tuned n1 Degraded Reason: X.\n' : undefined,
    ),
  ];
}

function input(over: Partial<AssessNodePoolInput>): AssessNodePoolInput {
  return {
    nodePool: nodePool(),
    reference: { kind: 'profile', profileName: 'perfprof', statusConfigMapName: 'status-perfprof-cm-np1' },
    statusConfigMaps: [],
    now: T0,
    staleAfterMs: 0,
    ...over,
  };
}

const byType = (cs: NodePoolCondition[]) => new Map(cs.map((c) => [c.type, c]));

// ------------------------------------------------------------------ the reference controller's cases, in place
interface ReferenceCases {
  setup: {
    controlPlaneNamespace: string;
    nodePool: { name: string; namespace: string; spec: { clusterName: string }; generation: number };
    statusConfigMap: {
      name: string;
      namespace: string;
      labels: Record<string, string>;
      annotations: Record<string, string>;
    };
    'baseStatus (makePerformanceProfileStatusAsString, before overrides)': PerformanceProfileStatus;
  };
  cases: {
    name: string;
    overrides: ProfileCondition[] | null;
    expect: string | Record<string, { status: string; reason: string; message: string }>;
  }[];
}

const casesFile = fixturePath('specs/nodepool-performance-status.cases.json');

describe(`reference cases (nodepool-performance-status.cases.json)`, () => {
  const spec = JSON.parse(readFileSync(casesFile, 'utf8')) as ReferenceCases;
  const setup = spec.setup;
  const base = setup['baseStatus (makePerformanceProfileStatusAsString, before overrides)'];
  const np: NodePool = {
    metadata: {
      name: setup.nodePool.name,
      namespace: setup.nodePool.namespace,
      generation: setup.nodePool.generation,
    },
    spec: setup.nodePool.spec,
    status: { conditions: [] },
  };
  const profileName = setup.statusConfigMap.labels['hypershift.openshift.io/performanceProfileName'] ?? '';

  for (const testCase of spec.cases) {
    it(testCase.name, () => {
      const statusConfigMaps: ConfigMap[] = [];
      if (testCase.overrides) {
        const status: PerformanceProfileStatus = {
          ...base,
          conditions: (base.conditions ?? []).map(
            (c) => testCase.overrides?.find((o) => o.type === c.type) ?? c,
          ),
        };
        statusConfigMaps.push({
          metadata: { ...setup.statusConfigMap },
          data: { status: encodeProfileStatus(status) },
        });
      }
      const result = assessNodePoolPerformance({
        nodePool: np,
        reference: { kind: 'profile', profileName },
        statusConfigMaps,
        now: T0,
        staleAfterMs: 0,
      });
      const got = byType(result.conditions);
      if (typeof testCase.expect === 'string') {
        for (const t of ['Available', 'Progressing', 'Upgradeable', 'Degraded'])
          expect(got.has(`${PREFIX}/${t}`)).toBe(false);
        expect(got.get(SUMMARY)?.status).toBe('Unknown');
        return;
      }
      for (const [type, want] of Object.entries(testCase.expect)) {
        const c = got.get(type);
        expect({ status: c?.status, reason: c?.reason ?? '', message: c?.message ?? '' }).toEqual(want);
      }
      // The summary the seed design describes follows from the same status.
      const available = testCase.expect[`${PREFIX}/Available`]?.status === 'True';
      const trueOne = Object.entries(testCase.expect).find(
        ([t, v]) => t !== `${PREFIX}/Upgradeable` && v.status === 'True',
      );
      expect(got.get(SUMMARY)?.status).toBe(available ? 'True' : 'False');
      if (!available) expect(got.get(SUMMARY)?.reason).toBe(trueOne?.[1].reason);
    });
  }
});

// ------------------------------------------------------------------------------------ our behaviour
describe('summary condition', () => {
  it('is True (AsExpected) when Available', () => {
    const r = assessNodePoolPerformance(
      input({ statusConfigMaps: [statusCM({ conditions: conditions('available') })] }),
    );
    expect(byType(r.conditions).get(SUMMARY)).toMatchObject({
      status: 'True',
      reason: 'AsExpected',
      observedGeneration: 3,
    });
    expect(r.source).toBe('clusters-hc1/status-perfprof-cm-np1');
  });

  it('is False with Progressing reason and message while tuning is in progress', () => {
    const r = assessNodePoolPerformance(
      input({ statusConfigMaps: [statusCM({ conditions: conditions('progressing') })] }),
    );
    expect(byType(r.conditions).get(SUMMARY)).toMatchObject({
      status: 'False',
      reason: 'DeploymentStarting',
      message: 'Deployment is starting',
    });
  });

  it('is False with Degraded reason and message on failure', () => {
    const r = assessNodePoolPerformance(
      input({ statusConfigMaps: [statusCM({ conditions: conditions('degraded') })] }),
    );
    expect(byType(r.conditions).get(SUMMARY)).toMatchObject({
      status: 'False',
      reason: 'TunedProfileDegraded',
    });
    expect(byType(r.conditions).get(`${PREFIX}/Degraded`)?.message).toBe('Tuned n1 Degraded Reason: X.\n');
  });

  it('is Unknown until a status has been reported', () => {
    const r = assessNodePoolPerformance(input({}));
    expect(byType(r.conditions).get(SUMMARY)).toMatchObject({
      status: 'Unknown',
      reason: SUMMARY_REASONS.notReported,
    });
    expect(byType(r.conditions).get(SUMMARY)?.message).toContain('status-perfprof-cm-np1');
  });
});

describe('bad states become conditions naming the object', () => {
  it('several status ConfigMaps', () => {
    const r = assessNodePoolPerformance(
      input({
        statusConfigMaps: [
          statusCM({ conditions: conditions('available') }),
          statusCM({ conditions: conditions('degraded') }, { name: 'status-old-np1' }),
        ],
      }),
    );
    const summary = byType(r.conditions).get(SUMMARY);
    expect(summary).toMatchObject({ status: 'Unknown', reason: SUMMARY_REASONS.multiple });
    expect(summary?.message).toContain(
      'there cannot be more than one PerformanceProfile ConfigMap status per NodePool. found: 2 NodePool: np1',
    );
    expect(summary?.message).toContain('clusters-hc1/status-old-np1');
    expect(byType(r.conditions).has(`${PREFIX}/Available`)).toBe(false);
  });

  it('a missing status key', () => {
    const r = assessNodePoolPerformance(input({ statusConfigMaps: [statusCM(undefined)] }));
    expect(byType(r.conditions).get(SUMMARY)).toMatchObject({
      status: 'Unknown',
      reason: SUMMARY_REASONS.missingKey,
      message: 'status not found in performance profile status configmap clusters-hc1/status-perfprof-cm-np1',
    });
  });

  it('undecodable data', () => {
    const r = assessNodePoolPerformance(input({ statusConfigMaps: [statusCM('conditions: {{{')] }));
    const summary = byType(r.conditions).get(SUMMARY);
    expect(summary).toMatchObject({ status: 'Unknown', reason: SUMMARY_REASONS.undecodable });
    expect(summary?.message).toMatch(
      /^failed to decode the performance profile status: .+\(ConfigMap clusters-hc1\/status-perfprof-cm-np1\)$/,
    );
  });

  it('a status over the byte budget: Unknown, naming the ConfigMap and the limit, old mirrors removed', () => {
    const before = assessNodePoolPerformance(
      input({ statusConfigMaps: [statusCM({ conditions: conditions('available') })] }),
    );
    const r = assessNodePoolPerformance(
      input({
        nodePool: nodePool(before.conditions),
        statusConfigMaps: [statusCM(`conditions: []\npad: "${'x'.repeat(70_000)}"`)],
      }),
    );
    expect(r.conditions.map((c) => c.type)).toEqual([SUMMARY]);
    const summary = byType(r.conditions).get(SUMMARY);
    expect(summary).toMatchObject({ status: 'Unknown', reason: SUMMARY_REASONS.tooLarge });
    expect(summary?.message).toMatch(
      /^status ConfigMap clusters-hc1\/status-perfprof-cm-np1: key "status" is at least 70\d{3} bytes, over the limit of 65536 bytes/,
    );
    expect(r.refused).toEqual({ reason: SUMMARY_REASONS.tooLarge, message: summary?.message });
    expect(r.changed).toBe(true);
  });

  it('a status the cache did not keep for its length: the same refusal, from the annotation', () => {
    const cm = statusCM(undefined, {
      annotations: { 'tessera.openshift.io/status-not-cached-length': '1000000' },
    });
    const r = assessNodePoolPerformance(input({ statusConfigMaps: [cm] }));
    expect(byType(r.conditions).get(SUMMARY)).toMatchObject({
      status: 'Unknown',
      reason: SUMMARY_REASONS.tooLarge,
    });
    expect(byType(r.conditions).get(SUMMARY)?.message).toContain(
      'status ConfigMap clusters-hc1/status-perfprof-cm-np1: key "status" is at least 1000000 bytes, over the limit of 65536 bytes',
    );
  });

  it.each([
    ['aliases', 'a: &x 1\nb: *x\n', SUMMARY_REASONS.invalid, /uses a YAML alias/],
    [
      'deep nesting',
      `x: ${'['.repeat(40)}${']'.repeat(40)}`,
      SUMMARY_REASONS.tooLarge,
      /nests deeper than 16 levels/,
    ],
    [
      'too many conditions',
      JSON.stringify({
        conditions: Array.from({ length: 20 }, (_, i) => ({ type: `T${i}`, status: 'True' })),
      }),
      SUMMARY_REASONS.tooLarge,
      /20 conditions, over the limit of 8/,
    ],
    [
      'a long condition type',
      JSON.stringify({ conditions: [{ type: 'T'.repeat(2034), status: 'True' }] }),
      SUMMARY_REASONS.invalid,
      /type is 2034 characters, over the NodePool condition limit of 63/,
    ],
    [
      'a long message',
      JSON.stringify({ conditions: [{ type: 'Degraded', status: 'True', message: 'm'.repeat(40_000) }] }),
      SUMMARY_REASONS.invalid,
      /message is 40000 characters, over the NodePool condition limit of 32768/,
    ],
  ])('a status with %s: Unknown with reason %s, naming the ConfigMap', (_name, text, reason, detail) => {
    const r = assessNodePoolPerformance(input({ statusConfigMaps: [statusCM(text)] }));
    const summary = byType(r.conditions).get(SUMMARY);
    expect(summary).toMatchObject({ status: 'Unknown', reason });
    expect(summary?.message).toContain('status ConfigMap clusters-hc1/status-perfprof-cm-np1: ');
    expect(summary?.message).toMatch(detail);
    expect(r.conditions.filter((c) => c.type.startsWith(PREFIX))).toEqual([]);
  });

  it('decodes through the decoder it is given (the controller passes a cache)', () => {
    const texts: string[] = [];
    const r = assessNodePoolPerformance(
      input({
        statusConfigMaps: [statusCM('anything')],
        decodeStatus: (text) => {
          texts.push(text);
          return { conditions: conditions('available') };
        },
      }),
    );
    expect(texts).toEqual(['anything']);
    expect(byType(r.conditions).get(SUMMARY)?.status).toBe('True');
  });

  it('never writes a message over the CRD limit, even one of its own making', () => {
    const r = assessNodePoolPerformance(
      input({ reference: { kind: 'unresolved', message: 'u'.repeat(50_000) } }),
    );
    const message = byType(r.conditions).get(SUMMARY)?.message ?? '';
    expect(message.length).toBe(32768);
    expect(message.endsWith(' ... (truncated)')).toBe(true);
    expect(capConditionMessage('short')).toBe('short');
    // A surrogate pair straddling the cut is not split.
    const emoji = capConditionMessage(`${'a'.repeat(32768 - 17)}😀${'b'.repeat(100)}`);
    expect(emoji.endsWith(`${'a'} ... (truncated)`)).toBe(true);
  });

  it('a status the API server refused: mirrors replaced by one Unknown summary naming the ConfigMap', () => {
    const before = assessNodePoolPerformance(
      input({ statusConfigMaps: [statusCM({ conditions: conditions('available') })] }),
    );
    const other: NodePoolCondition = { type: 'Ready', status: 'True', lastTransitionTime: iso(T0) };
    const r = assessRejectedStatus(
      nodePool([other, ...before.conditions]),
      'clusters-hc1/status-perfprof-cm-np1',
      'NodePool.hypershift.openshift.io "np1" is invalid: status.conditions: Too many',
      T0,
    );
    expect(r.conditions.map((c) => c.type)).toEqual(['Ready', SUMMARY]);
    expect(byType(r.conditions).get(SUMMARY)).toMatchObject({
      status: 'Unknown',
      reason: SUMMARY_REASONS.rejected,
    });
    expect(byType(r.conditions).get(SUMMARY)?.message).toContain(
      'refused the NodePool conditions built from status ConfigMap clusters-hc1/status-perfprof-cm-np1: NodePool.hypershift.openshift.io "np1" is invalid',
    );
    expect(r.refused?.reason).toBe(SUMMARY_REASONS.rejected);
  });

  it('a missing hosted control plane, with its own reason', () => {
    const r = assessNodePoolPerformance(
      input({
        reference: {
          kind: 'unresolved',
          reason: SUMMARY_REASONS.controlPlaneMissing,
          message: 'no HostedControlPlane',
        },
      }),
    );
    expect(byType(r.conditions).get(SUMMARY)).toMatchObject({
      status: 'Unknown',
      reason: 'HostedControlPlaneNotFound',
    });
  });

  it('an unresolvable tuning reference', () => {
    const r = assessNodePoolPerformance(
      input({ reference: { kind: 'unresolved', message: 'ConfigMap clusters/x not found' } }),
    );
    expect(byType(r.conditions).get(SUMMARY)).toMatchObject({
      status: 'Unknown',
      reason: SUMMARY_REASONS.unresolved,
    });
  });
});

describe('staleness', () => {
  it('reports a status naming another profile as stale, mirrors included', () => {
    const cm = statusCM({ conditions: conditions('available') });
    cm.metadata.labels = {
      ...cm.metadata.labels,
      'hypershift.openshift.io/performanceProfileName': 'oldprof',
    };
    const r = assessNodePoolPerformance(input({ statusConfigMaps: [cm] }));
    const summary = byType(r.conditions).get(SUMMARY);
    expect(summary).toMatchObject({ status: 'Unknown', reason: SUMMARY_REASONS.stale });
    expect(summary?.message).toContain('"oldprof"');
    // The previous profile's Available=True must not read as the current profile's state.
    for (const type of ['Available', 'Upgradeable', 'Progressing', 'Degraded']) {
      expect(byType(r.conditions).get(`${PREFIX}/${type}`)).toMatchObject({
        status: 'Unknown',
        reason: SUMMARY_REASONS.stale,
        message: summary?.message,
      });
    }
  });

  it('reports a status of an older PerformanceProfile ConfigMap as stale', () => {
    const cm = statusCM({ conditions: conditions('available') }, { name: 'status-previous-cm-np1' });
    const r = assessNodePoolPerformance(input({ statusConfigMaps: [cm] }));
    expect(byType(r.conditions).get(SUMMARY)?.reason).toBe(SUMMARY_REASONS.stale);
    expect(byType(r.conditions).get(`${PREFIX}/Available`)).toMatchObject({
      status: 'Unknown',
      reason: SUMMARY_REASONS.stale,
    });
    expect(byType(r.conditions).get(`${PREFIX}/Available`)?.message).toContain('status-previous-cm-np1');
  });

  it('turns stale when the heartbeat passes the limit, and says when to look again', () => {
    const cms = [statusCM({ conditions: conditions('available', iso(T0)) })];
    const fresh = assessNodePoolPerformance(
      input({ statusConfigMaps: cms, now: T0 + 60_000, staleAfterMs: 600_000 }),
    );
    expect(byType(fresh.conditions).get(SUMMARY)?.status).toBe('True');
    expect(fresh.recheckAfterMs).toBe(540_001);
    const old = assessNodePoolPerformance(
      input({
        nodePool: nodePool(fresh.conditions),
        statusConfigMaps: cms,
        now: T0 + 600_001,
        staleAfterMs: 600_000,
      }),
    );
    expect(byType(old.conditions).get(SUMMARY)).toMatchObject({
      status: 'Unknown',
      reason: SUMMARY_REASONS.stale,
    });
    expect(byType(old.conditions).get(SUMMARY)?.message).toMatch(/last refreshed 600s ago \(limit 600s\)/);
    expect(byType(old.conditions).get(`${PREFIX}/Available`)).toMatchObject({
      status: 'Unknown',
      reason: SUMMARY_REASONS.stale,
    });
    expect(byType(old.conditions).get(`${PREFIX}/Degraded`)?.message).toMatch(/last refreshed 600s ago/);
    expect(old.changed).toBe(true);
  });

  it('never calls a status stale by age when the check is disabled', () => {
    const cms = [statusCM({ conditions: conditions('available', iso(T0)) })];
    const r = assessNodePoolPerformance(
      input({ statusConfigMaps: cms, now: T0 + 86_400_000, staleAfterMs: 0 }),
    );
    expect(byType(r.conditions).get(SUMMARY)?.status).toBe('True');
    expect(r.recheckAfterMs).toBeUndefined();
  });
});

describe('NodePool condition bookkeeping', () => {
  const other: NodePoolCondition = {
    type: 'Ready',
    status: 'True',
    lastTransitionTime: '2025-01-01T00:00:00Z',
    reason: 'AsExpected',
  };

  it('reports no change for the same status later in time (no NodePool write for timestamps)', () => {
    const cms = [statusCM({ conditions: conditions('available') })];
    const first = assessNodePoolPerformance(input({ statusConfigMaps: cms }));
    expect(first.changed).toBe(true);
    const heartbeatOnly = [statusCM({ conditions: conditions('available', iso(T0 + 300_000)) })];
    const second = assessNodePoolPerformance(
      input({ nodePool: nodePool(first.conditions), statusConfigMaps: heartbeatOnly, now: T0 + 300_000 }),
    );
    expect(second.changed).toBe(false);
    expect(second.conditions).toEqual(first.conditions);
  });

  it('reflects every status change, not only NodePool generation changes', () => {
    const first = assessNodePoolPerformance(
      input({ statusConfigMaps: [statusCM({ conditions: conditions('available') })] }),
    );
    const second = assessNodePoolPerformance(
      input({
        nodePool: nodePool(first.conditions),
        statusConfigMaps: [statusCM({ conditions: conditions('degraded') })],
        now: T0 + 5_000,
      }),
    );
    expect(second.changed).toBe(true);
    const got = byType(second.conditions);
    expect(got.get(`${PREFIX}/Degraded`)).toMatchObject({
      status: 'True',
      lastTransitionTime: iso(T0 + 5_000),
    });
    expect(got.get(`${PREFIX}/Progressing`)?.lastTransitionTime).toBe(iso(T0));
  });

  it('updates observedGeneration when the NodePool generation moves', () => {
    const first = assessNodePoolPerformance(
      input({ statusConfigMaps: [statusCM({ conditions: conditions('available') })] }),
    );
    const bumped = assessNodePoolPerformance(
      input({
        nodePool: nodePool(first.conditions, 4),
        statusConfigMaps: [statusCM({ conditions: conditions('available') })],
      }),
    );
    expect(bumped.changed).toBe(true);
    expect(bumped.conditions.every((c) => c.observedGeneration === 4)).toBe(true);
  });

  it('keeps conditions of other owners in place', () => {
    const r = assessNodePoolPerformance(
      input({
        nodePool: nodePool([other]),
        statusConfigMaps: [statusCM({ conditions: conditions('available') })],
      }),
    );
    expect(r.conditions[0]).toBe(other);
    expect(r.conditions.map((c) => c.type)).toEqual([
      'Ready',
      `${PREFIX}/Available`,
      `${PREFIX}/Upgradeable`,
      `${PREFIX}/Progressing`,
      `${PREFIX}/Degraded`,
      SUMMARY,
    ]);
  });

  it('removes every performance condition when the NodePool stops referencing a profile', () => {
    const first = assessNodePoolPerformance(
      input({
        nodePool: nodePool([other]),
        statusConfigMaps: [statusCM({ conditions: conditions('available') })],
      }),
    );
    const removed = assessNodePoolPerformance(
      input({
        nodePool: nodePool(first.conditions),
        reference: { kind: 'none' },
        statusConfigMaps: [statusCM({ conditions: conditions('available') })],
      }),
    );
    expect(removed.changed).toBe(true);
    expect(removed.conditions).toEqual([other]);
    const again = assessNodePoolPerformance(
      input({ nodePool: nodePool([other]), reference: { kind: 'none' } }),
    );
    expect(again.changed).toBe(false);
  });

  it('drops mirrors of condition types the status no longer reports', () => {
    const first = assessNodePoolPerformance(
      input({ statusConfigMaps: [statusCM({ conditions: conditions('available') })] }),
    );
    const fewer = conditions('available').filter((c) => c.type !== 'Upgradeable');
    const r = assessNodePoolPerformance(
      input({ nodePool: nodePool(first.conditions), statusConfigMaps: [statusCM({ conditions: fewer })] }),
    );
    expect(r.changed).toBe(true);
    expect(byType(r.conditions).has(`${PREFIX}/Upgradeable`)).toBe(false);
  });
});
