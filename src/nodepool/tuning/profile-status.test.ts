import { describe, expect, it } from 'vitest';
import type { PerformanceProfileStatus, TunedProfile } from '../api/types.js';
import {
  assessProfileState,
  conditionsForState,
  nextHeartbeatInMs,
  nextProfileStatus,
  tunedProfilesMessage,
  type ComponentObservation,
} from './profile-status.js';
import { runtimeClassName, tunedStatusReference } from '../names.js';
import { decodeProfileStatus, encodeProfileStatus } from '../status-codec.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function tuned(
  node: string,
  applied: string | undefined,
  degraded?: { reason?: string; message?: string },
): TunedProfile {
  const conditions = [];
  if (applied) conditions.push({ type: 'Applied', status: applied as 'True' | 'False' });
  if (degraded) conditions.push({ type: 'Degraded', status: 'True' as const, ...degraded });
  else conditions.push({ type: 'Degraded', status: 'False' as const });
  return {
    metadata: { name: node, namespace: 'openshift-cluster-node-tuning-operator' },
    status: { conditions },
  };
}

function observe(
  nodes: string[],
  profiles: TunedProfile[],
  extra: Partial<ComponentObservation> = {},
): ComponentObservation {
  return { nodeNames: { ok: true, value: nodes }, tunedProfiles: { ok: true, value: profiles }, ...extra };
}

describe('assessProfileState', () => {
  it('is Available when every node of the NodePool has its profile applied', () => {
    expect(assessProfileState(observe(['n1', 'n2'], [tuned('n1', 'True'), tuned('n2', 'True')]))).toEqual({
      kind: 'Available',
    });
  });

  it('is Degraded with NTO reason and per-profile lines when a profile failed to apply', () => {
    const state = assessProfileState(
      observe(
        ['n1', 'n2'],
        [tuned('n1', 'True'), tuned('n2', 'False', { reason: 'TunedError', message: 'sysctl failed' })],
      ),
    );
    expect(state).toEqual({
      kind: 'Degraded',
      reason: 'TunedProfileDegraded',
      message: 'Tuned n2 Degraded Reason: TunedError.\nTuned n2 Degraded Message: sysctl failed.\n',
    });
  });

  it('does not call a profile Degraded while TuneD still reports it Applied', () => {
    const state = assessProfileState(
      observe(['n1'], [tuned('n1', 'True', { reason: 'TunedError', message: 'warn' })]),
    );
    expect(state.kind).toBe('Available');
  });

  it('ignores Tuned Profiles of nodes in other NodePools', () => {
    const other = tuned('other-pool-node', 'False', { reason: 'TunedError', message: 'boom' });
    expect(assessProfileState(observe(['n1'], [tuned('n1', 'True'), other])).kind).toBe('Available');
  });

  it('is Progressing (DeploymentStarting) while a node has no applied profile', () => {
    const state = assessProfileState(
      observe(['n1', 'n2', 'n3'], [tuned('n1', 'True'), tuned('n2', 'False')]),
    );
    expect(state).toEqual({
      kind: 'Progressing',
      reason: 'DeploymentStarting',
      message: 'Deployment is starting: Tuned profile not applied yet on 2 of 3 node(s): n2, n3',
    });
  });

  it('is Available for a NodePool without nodes, as NTO reports it', () => {
    expect(assessProfileState(observe([], [])).kind).toBe('Available');
  });

  it('reports read failures with the GettingXStatusFailed reasons', () => {
    expect(
      assessProfileState({
        nodeNames: { ok: true, value: [] },
        tunedProfiles: { ok: false, error: 'forbidden' },
      }),
    ).toEqual({ kind: 'Degraded', reason: 'GettingTunedStatusFailed', message: 'forbidden' });
    expect(
      assessProfileState(observe([], [], { kubeletConfig: { ok: false, error: 'bad config' } })),
    ).toEqual({
      kind: 'Degraded',
      reason: 'GettingKubeletStatusFailed',
      message: 'bad config',
    });
  });

  it('checks the KubeletConfig first and uses its latest condition', () => {
    const kubeletConfig = {
      ok: true as const,
      value: {
        conditions: [
          { type: 'Success', status: 'True', lastTransitionTime: '2026-01-01T10:00:00Z' },
          {
            type: 'Failure',
            status: 'False',
            message: 'invalid reserved CPUs',
            lastTransitionTime: '2026-01-01T11:00:00Z',
          },
        ],
      },
    };
    const degradedTuned = tuned('n1', 'False', { reason: 'X', message: 'Y' });
    expect(assessProfileState(observe(['n1'], [degradedTuned], { kubeletConfig }))).toEqual({
      kind: 'Degraded',
      reason: 'KubeletConfig failure',
      message: 'invalid reserved CPUs',
    });
    const recovered = {
      ok: true as const,
      value: {
        conditions: [
          ...kubeletConfig.value.conditions,
          { type: 'Success', lastTransitionTime: '2026-01-01T12:00:00Z' },
        ],
      },
    };
    expect(
      assessProfileState(observe(['n1'], [tuned('n1', 'True')], { kubeletConfig: recovered })).kind,
    ).toBe('Available');
  });

  it('reports a degraded MachineConfigPool with NTO wording', () => {
    const machineConfigPool = {
      ok: true as const,
      value: {
        name: 'worker-cnf',
        conditions: [{ type: 'NodeDegraded', status: 'True', reason: 'R', message: 'M' }],
      },
    };
    expect(assessProfileState(observe([], [], { machineConfigPool }))).toEqual({
      kind: 'Degraded',
      reason: 'MCPDegraded',
      message:
        'Machine config pool worker-cnf Degraded Reason: R.\nMachine config pool worker-cnf Degraded Message: M.\n',
    });
  });
});

describe('tunedProfilesMessage', () => {
  it('skips a degraded profile that has neither reason nor message, as NTO does', () => {
    expect(tunedProfilesMessage([tuned('n1', 'False', {})])).toBe('');
  });
});

describe('conditionsForState', () => {
  it('sets the four conditions in NTO order, reason and message only on the true one', () => {
    expect(conditionsForState({ kind: 'Degraded', reason: 'R', message: 'M' })).toEqual([
      { type: 'Available', status: 'False' },
      { type: 'Upgradeable', status: 'False' },
      { type: 'Progressing', status: 'False' },
      { type: 'Degraded', status: 'True', reason: 'R', message: 'M' },
    ]);
    expect(conditionsForState({ kind: 'Available' }).map((c) => c.status)).toEqual([
      'True',
      'True',
      'False',
      'False',
    ]);
  });
});

describe('nextProfileStatus', () => {
  const base = { profileName: 'perfprof', nodePoolName: 'np1', heartbeatIntervalMs: 0 };

  it('writes the first status with tuned, runtimeClass and timestamps at now', () => {
    const next = nextProfileStatus({ ...base, previous: undefined, state: { kind: 'Available' }, now: T0 });
    expect(next.write).toBe('change');
    expect(next.status.tuned).toBe(tunedStatusReference('perfprof', 'np1'));
    expect(next.status.runtimeClass).toBe(runtimeClassName('perfprof'));
    expect(next.status.conditions?.every((c) => c.lastTransitionTime === '2026-01-01T12:00:00Z')).toBe(true);
    expect(next.status.conditions?.every((c) => c.lastHeartbeatTime === '2026-01-01T12:00:00Z')).toBe(true);
  });

  it('does not write when only time has passed', () => {
    const first = nextProfileStatus({ ...base, previous: undefined, state: { kind: 'Available' }, now: T0 });
    const again = nextProfileStatus({
      ...base,
      previous: first.status,
      state: { kind: 'Available' },
      now: T0 + 3_600_000,
    });
    expect(again.write).toBe('none');
    expect(again.status).toBe(first.status);
  });

  it('writes a change and moves lastTransitionTime only for conditions whose status changed', () => {
    const first = nextProfileStatus({ ...base, previous: undefined, state: { kind: 'Available' }, now: T0 });
    const degraded = nextProfileStatus({
      ...base,
      previous: first.status,
      state: { kind: 'Degraded', reason: 'TunedProfileDegraded', message: 'x' },
      now: T0 + 60_000,
    });
    expect(degraded.write).toBe('change');
    const byType = new Map(degraded.status.conditions?.map((c) => [c.type, c]));
    expect(byType.get('Available')?.lastTransitionTime).toBe('2026-01-01T12:01:00Z');
    expect(byType.get('Progressing')?.lastTransitionTime).toBe('2026-01-01T12:00:00Z');
    expect(byType.get('Degraded')?.lastHeartbeatTime).toBe('2026-01-01T12:01:00Z');
  });

  it('treats a new message on the same status as a meaningful change', () => {
    const s1 = nextProfileStatus({
      ...base,
      previous: undefined,
      state: { kind: 'Degraded', reason: 'R', message: 'a' },
      now: T0,
    });
    const s2 = nextProfileStatus({
      ...base,
      previous: s1.status,
      state: { kind: 'Degraded', reason: 'R', message: 'b' },
      now: T0 + 1,
    });
    expect(s2.write).toBe('change');
  });

  it('rewrites a status whose tuned reference names another NodePool', () => {
    const foreign: PerformanceProfileStatus = {
      ...nextProfileStatus({ ...base, previous: undefined, state: { kind: 'Available' }, now: T0 }).status,
      tuned: tunedStatusReference('perfprof', 'other'),
    };
    expect(
      nextProfileStatus({ ...base, previous: foreign, state: { kind: 'Available' }, now: T0 }).write,
    ).toBe('change');
  });

  it('refreshes only the heartbeat once the interval has passed', () => {
    const withHb = { ...base, heartbeatIntervalMs: 300_000 };
    const first = nextProfileStatus({
      ...withHb,
      previous: undefined,
      state: { kind: 'Available' },
      now: T0,
    });
    expect(
      nextProfileStatus({
        ...withHb,
        previous: first.status,
        state: { kind: 'Available' },
        now: T0 + 299_999,
      }).write,
    ).toBe('none');
    const beat = nextProfileStatus({
      ...withHb,
      previous: first.status,
      state: { kind: 'Available' },
      now: T0 + 300_000,
    });
    expect(beat.write).toBe('heartbeat');
    expect(beat.status.conditions?.[0]?.lastHeartbeatTime).toBe('2026-01-01T12:05:00Z');
    expect(beat.status.conditions?.[0]?.lastTransitionTime).toBe('2026-01-01T12:00:00Z');
    expect(nextHeartbeatInMs(first.status, T0 + 100_000, 300_000)).toBe(200_000);
  });
});

describe('tunedProfilesMessage on a hosted cluster of many failing nodes (issue #20)', () => {
  const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

  it('caps 5,000 degraded Profiles (5 MB of text) at the NodePool condition limit and says how many were left out', () => {
    const nodes = Array.from({ length: 5_000 }, (_, i) => `node-${String(i).padStart(4, '0')}`);
    const profiles = nodes.map((n) =>
      tuned(n, 'False', { reason: 'TunedError', message: 'x'.repeat(1_000) }),
    );
    const message = tunedProfilesMessage(profiles);
    expect(message.length).toBeLessThanOrEqual(32_768);
    // Whole profiles first, exactly as NTO words them...
    expect(
      message.startsWith(`Tuned node-0000 Degraded Reason: TunedError.\nTuned node-0000 Degraded Message: x`),
    ).toBe(true);
    // ...then the line in progress is cut, and the note counts the profiles not shown at all.
    const shown = new Set(message.match(/Tuned node-\d{4}/g)).size;
    expect(
      message.endsWith(` ... (truncated)\n... and ${5_000 - shown} more degraded Tuned Profile(s)\n`),
    ).toBe(true);
    expect(shown).toBeGreaterThan(20);
    // The NodePool side accepts the status it ends up in (it refuses messages over its limit).
    const state = assessProfileState(observe(nodes, profiles));
    expect(state).toMatchObject({ kind: 'Degraded', reason: 'TunedProfileDegraded', message });
    const status = nextProfileStatus({
      previous: undefined,
      state,
      profileName: 'pp',
      nodePoolName: 'np',
      now: T0,
      heartbeatIntervalMs: 0,
    }).status;
    expect(decodeProfileStatus(encodeProfileStatus(status)).conditions?.at(-1)?.message).toBe(message);
  });

  it('cuts one huge message on a code point boundary, never inside a surrogate pair', () => {
    for (const shift of [0, 1]) {
      const message = tunedProfilesMessage([
        tuned('n1', 'False', { message: `${'a'.repeat(shift)}${'😀'.repeat(40_000)}` }),
        tuned('n2', 'False', { message: 'm' }),
      ]);
      expect(message.length).toBeLessThanOrEqual(32_768);
      expect(message).not.toMatch(loneSurrogate);
      expect(message.endsWith(' ... (truncated)\n... and 1 more degraded Tuned Profile(s)\n')).toBe(true);
    }
  });

  it("is exactly NTO's text when it fits, up to the limit itself", () => {
    const line = (n: string, m: string): string => `Tuned ${n} Degraded Message: ${m}.\n`;
    const exact = 32_768 - line('n1', '').length;
    const fits = [tuned('n1', 'False', { message: 'm'.repeat(exact) })];
    expect(tunedProfilesMessage(fits)).toBe(line('n1', 'm'.repeat(exact)));
    expect(tunedProfilesMessage([tuned('n1', 'False', { message: 'm'.repeat(exact + 1) })]).length).toBe(
      32_768,
    );
  });
});
