// The contract's writer against an API server that keeps what other field managers own: it writes when its
// contribution changed or its heartbeat is due, never again and again for a difference an apply cannot remove.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../runtime/object.js';
import type { UpdateStatus } from './api/schema.js';
import { HEARTBEAT_INTERVAL_MS, type InformerContribution, InformerWriter, WriteTurn } from './informer.js';
import { FakeClock, MemoryLeases, flushAsync } from '../runtime/testing/index.js';

type Stored = UpdateStatus & KubeObject;
const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);

const finding = (uid: string, summary: string) => ({
  uid,
  acquiredAt: '2026-12-01T12:00:00Z',
  insight: {
    type: 'Health' as const,
    health: {
      startedAt: '2026-12-01T12:00:00Z',
      scope: { type: 'ControlPlane' as const, resources: [] },
      impact: { level: 'Warning' as const, type: 'Update Speed' as const, summary },
      remediation: { reference: 'https://example.com/runbook' },
    },
  },
});

/**
 * An API server where another field manager (e.g. a write from before the contract) owns insight `legacy` in
 * informer cpi's entry: every apply of cpi keeps it, as server-side apply keeps fields others own.
 */
function serverKeepingForeignInsight() {
  const applies: Stored[] = [];
  const statuses = {
    async create(obj: Stored) {
      return obj;
    },
    async get(): Promise<Stored> {
      throw new Error('not read in this test');
    },
    async apply(body: Stored): Promise<Stored> {
      applies.push(body);
      const status = structuredClone(body.status ?? {});
      status.controlPlane?.informers?.[0]?.insights?.push(finding('legacy', 'left by an earlier writer'));
      return { ...body, metadata: { name: 'cluster', resourceVersion: String(applies.length) }, status };
    },
  };
  return { statuses, applies };
}

describe('the informer writer', () => {
  it('does not write again for entries another field manager keeps, only on a change or a due heartbeat', async () => {
    const clock = new FakeClock(T0);
    const { statuses, applies } = serverKeepingForeignInsight();
    const writer = new InformerWriter(statuses, {
      name: 'cpi',
      clock,
      minWriteIntervalMs: 1_000,
      reservedName: true,
    });
    const contribution: InformerContribution = { name: 'cpi', controlPlane: [finding('own', 'own finding')] };

    const first = await writer.write(contribution, undefined);
    expect(first.kind).toBe('written');
    let stored = first.kind === 'written' ? first.stored : undefined;
    for (let i = 0; i < 10; i++) {
      await clock.advance(2_000);
      const outcome = await writer.write(contribution, stored);
      if (outcome.kind === 'written') stored = outcome.stored;
    }
    expect(applies).toHaveLength(1);

    // A changed contribution is written at once; the heartbeat, when due.
    const changed: InformerContribution = { name: 'cpi', controlPlane: [finding('own', 'changed finding')] };
    const second = await writer.write(changed, stored);
    expect(applies).toHaveLength(2);
    stored = second.kind === 'written' ? second.stored : undefined;
    await clock.advance(HEARTBEAT_INTERVAL_MS - 1_000);
    expect((await writer.write(changed, stored)).kind).toBe('unchanged');
    await clock.advance(1_000);
    expect((await writer.write(changed, stored)).kind).toBe('written');
    expect(applies).toHaveLength(3);
  });
});

describe('the informer writer on a slow API server', () => {
  it('counts the write interval from when a write started, so a slow apply does not add to the wait', async () => {
    const clock = new FakeClock(T0);
    const applies: number[] = [];
    const statuses = {
      async create(obj: Stored) {
        return obj;
      },
      async get(): Promise<Stored> {
        throw new Error('not read in this test');
      },
      // Each apply takes 600 ms, as under load.
      async apply(body: Stored): Promise<Stored> {
        applies.push(clock.now() - T0);
        await clock.advance(600);
        return { ...body, metadata: { name: 'cluster', resourceVersion: String(applies.length) } };
      },
    };
    const writer = new InformerWriter(statuses, {
      name: 'cpi',
      clock,
      minWriteIntervalMs: 1_000,
      reservedName: true,
    });
    const version = (n: number): InformerContribution => ({
      name: 'cpi',
      controlPlane: [finding('own', `finding ${n}`)],
    });
    let stored: Stored | undefined;
    const first = await writer.write(version(1), stored);
    if (first.kind === 'written') stored = first.stored;
    // 600 ms after the first write started, a change must wait 400 ms more (not 1,000 ms from its end).
    const early = await writer.write(version(2), stored);
    expect(early).toEqual({ kind: 'throttled', retryAfterMs: 400 });
    await clock.advance(400);
    expect((await writer.write(version(2), stored)).kind).toBe('written');
    expect(applies).toEqual([0, 1_000]);
  });
});

describe('the informer writer taking turns', () => {
  it('writes what it knows when its turn comes, not what it knew when it began to wait', async () => {
    const clock = new FakeClock(T0);
    const leases = new MemoryLeases(clock);
    const { statuses, applies } = serverKeepingForeignInsight();
    // Another writer holds the turn until the test lets it go.
    let letGo = () => {};
    const other = new WriteTurn({ leases, writer: 'nodes', clock });
    const othersWrite = other.run(() => new Promise<void>((resolve) => (letGo = resolve)));
    await flushAsync();
    const writer = new InformerWriter(statuses, {
      name: 'cpi',
      clock,
      reservedName: true,
      turn: new WriteTurn({ leases, writer: 'cpi', clock }),
    });
    let known = 'finding as the write began';
    const outcome = writer.write(
      { name: 'cpi', controlPlane: [finding('own', known)] },
      undefined,
      undefined,
      () => ({
        name: 'cpi',
        controlPlane: [finding('own', known)],
      }),
    );
    await clock.advance(500);
    expect(applies).toHaveLength(0);
    known = 'finding as the turn came';
    letGo();
    await othersWrite;
    await clock.advance(200);
    expect((await outcome).kind).toBe('written');
    expect(
      applies.map(
        (a) => a.status?.controlPlane?.informers?.[0]?.insights?.[0]?.insight.health?.impact.summary,
      ),
    ).toEqual(['finding as the turn came']);
  });
});
