// The informer contract's decisions: budgets, liveness, what readers keep, what the aggregator removes and
// computes, and what `tessera upgrade status` shows of an informer that stopped.
import { describe, expect, it } from 'vitest';
import {
  EXPIRE_AFTER_MS,
  INFORMER_BUDGETS,
  STALE_AFTER_MS,
  type InformerContribution,
  applyConfiguration,
  contributionViolation,
  informerStates,
  keepAcquiredAt,
  liveInsights,
  mergeContributions,
  removalPatch,
  storedContribution,
} from './informers.js';
import { INFORMERS_REPORTING, aggregateUpdateStatus } from './aggregate.js';
import { informerHealthInsights, reportFromUpdateStatus } from './read.js';
import type { ControlPlaneInsight, UpdateStatusStatus, WorkerPoolInsight } from './schema.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const health = (summary: string, level: 'Warning' | 'Error' = 'Warning'): ControlPlaneInsight => ({
  type: 'Health',
  health: {
    startedAt: iso(T0),
    scope: { type: 'ControlPlane', resources: [] },
    impact: { level, type: 'Update Speed', summary },
    remediation: { reference: 'https://example.com/runbook' },
  },
});
const mcp = (name: string, updating: boolean): WorkerPoolInsight => ({
  type: 'MachineConfigPool',
  machineConfigPool: {
    name,
    resource: { group: 'machineconfiguration.openshift.io', resource: 'machineconfigpools', name },
    scopeType: 'WorkerPool',
    assessment: updating ? 'Progressing' : 'Completed',
    completion: updating ? 50 : 100,
    conditions: [
      {
        type: 'Updating',
        status: updating ? 'True' : 'False',
        reason: updating ? 'Progressing' : 'Completed',
        message: '',
        lastTransitionTime: iso(T0),
      },
    ],
  },
});
const poolRef = (name: string) => ({
  group: 'machineconfiguration.openshift.io',
  resource: 'machineconfigpools',
  name,
});

function external(summary = 'external finding'): InformerContribution {
  return {
    name: 'external',
    controlPlane: [{ uid: 'ext-1', acquiredAt: iso(T0), insight: health(summary) }],
  };
}
function nodes(updating = true): InformerContribution {
  return {
    name: 'nodes',
    workerPools: [
      {
        name: 'worker',
        resource: poolRef('worker'),
        insights: [{ uid: 'mcp-worker', acquiredAt: iso(T0), insight: mcp('worker', updating) }],
      },
    ],
  };
}

/** The status after each contribution was applied with its own heartbeat. */
function statusWith(...parts: [InformerContribution, number][]): UpdateStatusStatus {
  const merged = mergeContributions(
    parts.map(([c]) => c),
    '',
  );
  merged.informers = parts.map(([c, heartbeatMs]) => ({ name: c.name, heartbeatTime: iso(heartbeatMs) }));
  return merged;
}

describe('the informer contract', () => {
  it("applies only the informer's own entries and registration", () => {
    const body = applyConfiguration(nodes(), iso(T0));
    expect(body.status).toEqual({
      informers: [{ name: 'nodes', heartbeatTime: iso(T0) }],
      workerPools: [
        {
          name: 'worker',
          resource: poolRef('worker'),
          informers: [{ name: 'nodes', insights: nodes().workerPools?.[0]?.insights }],
        },
      ],
    });
    // No aggregation fields: those are the aggregator's.
    expect(body.status?.conditions).toBeUndefined();
    expect(body.status?.controlPlane).toBeUndefined();
  });

  it('refuses a contribution over its budgets before anything is written', () => {
    expect(contributionViolation(nodes())).toBeUndefined();
    expect(contributionViolation({ name: 'Not_A_Label' })).toMatch(/not a DNS-1123 label/);
    const many = Array.from({ length: INFORMER_BUDGETS.maxControlPlaneInsights + 1 }, (_, i) => ({
      uid: `h-${i}`,
      acquiredAt: iso(T0),
      insight: health(`finding ${i}`),
    }));
    expect(contributionViolation({ name: 'x', controlPlane: many })).toMatch(
      /129 control-plane insights \(at most 128\)/,
    );
    const huge = Array.from({ length: 128 }, (_, i) => ({
      uid: `h-${i}`,
      acquiredAt: iso(T0),
      insight: health('x'.repeat(250), 'Error'),
    }));
    for (const e of huge)
      (e.insight.health as { impact: { description?: string } }).impact.description = 'y'.repeat(4096);
    expect(contributionViolation({ name: 'x', controlPlane: huge })).toMatch(
      /bytes of insights \(at most 524288\)/,
    );
  });

  it('refuses a contribution that repeats an insight uid, which the atomic insight lists leave to the writer', () => {
    const entry = (uid: string, summary: string) => ({ uid, acquiredAt: iso(T0), insight: health(summary) });
    expect(
      contributionViolation({ name: 'x', controlPlane: [entry('a', 'one'), entry('a', 'two')] }),
    ).toMatch(/control-plane insight uid a appears more than once/);
    const pool = (uids: string[]) => ({
      name: 'worker',
      resource: poolRef('worker'),
      insights: uids.map((uid) => ({ uid, acquiredAt: iso(T0), insight: mcp('worker', true) })),
    });
    expect(contributionViolation({ name: 'x', workerPools: [pool(['p', 'q', 'p'])] })).toMatch(
      /insight uid p appears more than once in worker pool worker/,
    );
    // The same uid in different scopes is fine: uids are unique within one list.
    expect(
      contributionViolation({ name: 'x', controlPlane: [entry('p', 'one')], workerPools: [pool(['p'])] }),
    ).toBeUndefined();
  });

  it('keeps the time an insight was first observed however often it is recomputed', () => {
    const later = {
      ...external(),
      controlPlane: [{ uid: 'ext-1', acquiredAt: iso(T0 + 600_000), insight: health('external finding') }],
    };
    const kept = keepAcquiredAt(storedContribution(statusWith([external(), T0]), 'external'), later);
    expect(kept.controlPlane?.[0]?.acquiredAt).toBe(iso(T0));
  });

  it('judges each informer by its heartbeat: live, stale after 3 minutes, expired after an hour', () => {
    const status = statusWith([nodes(), T0], [external(), T0]);
    const at = (ms: number) => Object.fromEntries(informerStates(status, ms).map((s) => [s.name, s.state]));
    expect(at(T0 + STALE_AFTER_MS)).toEqual({ external: 'live', nodes: 'live' });
    expect(at(T0 + STALE_AFTER_MS + 1)).toEqual({ external: 'stale', nodes: 'stale' });
    expect(at(T0 + EXPIRE_AFTER_MS + 1)).toEqual({ external: 'expired', nodes: 'expired' });
  });

  it('treats entries without a registration as stale when others register, and reads a pre-contract status as it is', () => {
    const status = statusWith([nodes(), T0]);
    status.controlPlane = {
      informers: [{ name: 'ghost', insights: [{ uid: 'g', acquiredAt: iso(T0), insight: health('ghost') }] }],
    };
    const states = informerStates(status, T0 + 1000);
    expect(states.find((s) => s.name === 'ghost')?.state).toBe('stale');
    expect(informerStates(status, T0 + EXPIRE_AFTER_MS + 1).find((s) => s.name === 'ghost')?.state).toBe(
      'expired',
    );
    const legacy = { ...status, informers: undefined };
    expect(informerStates(legacy, T0 + EXPIRE_AFTER_MS * 10).every((s) => s.state === 'live')).toBe(true);
  });

  it('drops an informer over its byte budget, and the largest ones when the whole status is too big', () => {
    const big = (name: string, n: number): InformerContribution => ({
      name,
      controlPlane: Array.from({ length: n }, (_, i) => {
        const h = health(`finding ${i}`);
        (h.health as { impact: { description?: string } }).impact.description = 'd'.repeat(4000);
        return { uid: `u-${i}`, acquiredAt: iso(T0), insight: h };
      }),
    });
    // 128 insights of ~4.3 KB: over one informer's 512 KiB.
    const over = statusWith([big('greedy', 128), T0], [nodes(), T0]);
    expect(informerStates(over, T0).find((s) => s.name === 'greedy')?.state).toBe('over-budget');
    expect(informerStates(over, T0).find((s) => s.name === 'nodes')?.state).toBe('live');
    // Three informers of ~430 KB each: within their own budget, over the status's 1 MiB together.
    const crowded = statusWith([big('a', 100), T0], [big('b', 100), T0], [big('c', 90), T0], [nodes(), T0]);
    const states = Object.fromEntries(informerStates(crowded, T0).map((s) => [s.name, s.state]));
    expect(states).toEqual({ a: 'over-budget', b: 'live', c: 'live', nodes: 'live' });
  });

  it('does not take a heartbeat or an insight time far in the future as a sign of life', () => {
    const status = statusWith([external(), T0 + EXPIRE_AFTER_MS * 24 * 365]);
    expect(informerStates(status, T0).map((s) => s.state)).toEqual(['stale']);
    const skewed = statusWith([external(), T0 + STALE_AFTER_MS]);
    expect(informerStates(skewed, T0).map((s) => s.state)).toEqual(['live']);
    const unregistered = statusWith([nodes(), T0]);
    unregistered.controlPlane = {
      informers: [
        { name: 'ghost', insights: [{ uid: 'g', acquiredAt: '9999-01-01T00:00:00Z', insight: health('g') }] },
      ],
    };
    expect(informerStates(unregistered, T0).find((s) => s.name === 'ghost')?.state).toBe('expired');
  });

  it('keeps only live informers for readers', () => {
    const status = statusWith([nodes(), T0 + STALE_AFTER_MS], [external(), T0]);
    const live = liveInsights(status, informerStates(status, T0 + STALE_AFTER_MS + 1));
    expect(live.controlPlane?.informers).toEqual([]);
    expect(live.workerPools?.[0]?.informers?.map((i) => i.name)).toEqual(['nodes']);
  });

  it('removes an informer everywhere with guarded JSON patch operations, last index first', () => {
    const status = statusWith([nodes(), T0], [external(), T0]);
    status.workerPools?.[0]?.informers?.push({ name: 'external', insights: [] });
    expect(removalPatch(status, new Set(['external']))).toEqual([
      { op: 'test', path: '/status/informers/1/name', value: 'external' },
      { op: 'remove', path: '/status/informers/1' },
      { op: 'test', path: '/status/controlPlane/informers/0/name', value: 'external' },
      { op: 'remove', path: '/status/controlPlane/informers/0' },
      { op: 'test', path: '/status/workerPools/0/informers/1/name', value: 'external' },
      { op: 'remove', path: '/status/workerPools/0/informers/1' },
    ]);
    expect(removalPatch(status, new Set())).toEqual([]);
  });

  it('removes a worker pool whole when only removed informers were in it', () => {
    const status = statusWith([nodes(), T0], [external(), T0]);
    status.workerPools?.[0]?.informers?.push({ name: 'external', insights: [] });
    status.workerPools?.push({
      name: 'infra',
      resource: poolRef('infra'),
      informers: [{ name: 'external' }],
    });
    // The last pool first: removing it whole leaves the first one's index valid.
    expect(removalPatch(status, new Set(['external'])).slice(4)).toEqual([
      { op: 'test', path: '/status/workerPools/1/name', value: 'infra' },
      { op: 'remove', path: '/status/workerPools/1' },
      { op: 'test', path: '/status/workerPools/0/informers/1/name', value: 'external' },
      { op: 'remove', path: '/status/workerPools/0/informers/1' },
    ]);
  });
});

describe('the aggregation over informers', () => {
  it('follows the pool insight of whichever informer wrote it, keeping the transition time while it holds', () => {
    const status = statusWith([nodes(true), T0]);
    const first = aggregateUpdateStatus(status, T0 + 1000);
    expect(first.apply.status?.workerPools).toEqual([
      {
        name: 'worker',
        resource: poolRef('worker'),
        conditions: [
          {
            type: 'Updating',
            status: 'True',
            reason: 'Progressing',
            message: '',
            lastTransitionTime: iso(T0),
          },
        ],
      },
    ]);
    // Stored with that aggregate: the pool insight, re-stamped later but still updating, keeps the time.
    const withAggregate = (c: InformerContribution, heartbeatMs: number): UpdateStatusStatus => {
      const next = statusWith([c, heartbeatMs]);
      return {
        ...next,
        workerPools: (next.workerPools ?? []).map((p) => ({
          ...p,
          conditions: first.apply.status?.workerPools?.[0]?.conditions,
        })),
      };
    };
    const restamped = nodes(true);
    const condition = restamped.workerPools?.[0]?.insights[0]?.insight.machineConfigPool?.conditions?.[0];
    if (condition) condition.lastTransitionTime = iso(T0 + 4000);
    const still = aggregateUpdateStatus(withAggregate(restamped, T0 + 4000), T0 + 5000);
    expect(still.apply.status?.workerPools?.[0]?.conditions?.[0]).toMatchObject({
      status: 'True',
      lastTransitionTime: iso(T0),
    });
    // The pool finished: the condition turns, with the insight's time.
    const done = aggregateUpdateStatus(withAggregate(nodes(false), T0 + 6000), T0 + 6000);
    expect(done.apply.status?.workerPools?.[0]?.conditions?.[0]).toMatchObject({
      status: 'False',
      reason: 'Completed',
    });
  });

  it("reads Tessera's own pool insight first, whatever order the API server merged informers in", () => {
    const other: InformerContribution = {
      name: 'aaa-other',
      workerPools: [
        {
          name: 'worker',
          resource: poolRef('worker'),
          insights: [{ uid: 'mcp-worker', acquiredAt: iso(T0), insight: mcp('worker', false) }],
        },
      ],
    };
    const status = statusWith([other, T0], [nodes(true), T0]);
    expect(status.workerPools?.[0]?.informers?.map((i) => i.name)).toEqual(['aaa-other', 'nodes']);
    const aggregate = aggregateUpdateStatus(status, T0 + 1000);
    expect(aggregate.apply.status?.workerPools?.[0]?.conditions?.[0]?.status).toBe('True');
  });

  it('names the informers not reporting, and removes the expired ones', () => {
    // nodes renews its heartbeat as it should; external stopped at T0.
    const status = statusWith([nodes(), T0 + STALE_AFTER_MS + 60_000], [external(), T0]);
    const stale = aggregateUpdateStatus(status, T0 + STALE_AFTER_MS + 60_000);
    const reporting = stale.apply.status?.conditions?.find((c) => c.type === INFORMERS_REPORTING);
    expect(reporting).toMatchObject({ status: 'False', reason: 'InformerStopped' });
    expect(reporting?.message).toBe(
      'Informers not reporting: external (last heartbeat 2026-12-01T12:00:00Z; 1 insights left out)',
    );
    expect([...stale.removals]).toEqual([]);
    const expired = aggregateUpdateStatus(status, T0 + EXPIRE_AFTER_MS + 1);
    expect([...expired.removals]).toEqual(['external']);
  });
});

describe('what readers show of an informer that stopped', () => {
  it('a Warning health insight naming it, instead of its insights', () => {
    const status = statusWith([external('the finding'), T0]);
    const [insight, ...rest] = informerHealthInsights(
      informerStates(status, T0 + 10 * 60_000),
      BigInt(T0 + 10 * 60_000) * 1_000_000n,
    );
    expect(rest).toEqual([]);
    expect(insight?.impact.summary).toBe(
      'Informer external has not reported for 10m; its insights are not shown',
    );
    expect(insight?.remediation.reference).toMatch(/README\.md#update-status-informers$/);
  });

  it('leaves a stopped informer out of the report while a live one counts', () => {
    // No ClusterVersion insight from a live informer: nothing to build the report on, so the CLI computes it.
    const status = statusWith([external(), T0]);
    expect(reportFromUpdateStatus(status, BigInt(T0) * 1_000_000n)).toBeUndefined();
  });
});
