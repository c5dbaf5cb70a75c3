// Pod placement's update insights: what an admin sees under `= Update Health =` when placement cannot keep up,
// and the bounds of what a tenant's images can make the tracker hold.
import { describe, expect, it } from 'vitest';
import {
  FAILURE_WINDOW_MS,
  MAX_NAMESPACES_PER_INSIGHT,
  MAX_TRACKED_REGISTRIES,
  RegistryFailureWindow,
  gatedPodAges,
  podPlacementContribution,
} from './update-insights.js';
import { FakeClock } from '../runtime/testing/index.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);

describe('pod placement update insights', () => {
  it('says nothing while pods are placed within two minutes', () => {
    const gated = [{ namespace: 'a', name: 'p', createdAtMs: T0 - 60_000 }];
    expect(podPlacementContribution(gated, [], T0).controlPlane).toEqual([]);
  });

  it('reports pods gated for long: count, namespaces by how many, the oldest, Warning then Error', () => {
    const gated = [
      { namespace: 'shop', name: 'web-1', createdAtMs: T0 - 3 * 60_000 },
      { namespace: 'shop', name: 'web-2', createdAtMs: T0 - 4 * 60_000 },
      { namespace: 'batch', name: 'job-1', createdAtMs: T0 - 7 * 60_000 },
      { namespace: 'fresh', name: 'new', createdAtMs: T0 - 10_000 },
    ];
    const [entry] = podPlacementContribution(gated, [], T0).controlPlane ?? [];
    const health = entry?.insight.health;
    expect(entry?.uid).toBe('podplacement-gated-pods');
    expect(health?.impact).toMatchObject({
      level: 'Warning',
      type: 'Update Speed',
      summary: '3 pods wait for pod placement for more than 2m (oldest 7m, in 2 namespaces)',
    });
    expect(health?.impact.description).toContain('tessera podplacement explain batch/job-1');
    expect(health?.scope).toEqual({
      type: 'WorkerPool',
      resources: [
        { resource: 'namespaces', name: 'shop' },
        { resource: 'namespaces', name: 'batch' },
      ],
    });
    expect(health?.startedAt).toBe('2026-12-01T11:53:00.000Z');
    const later = podPlacementContribution(gated, [], T0 + 5 * 60_000).controlPlane?.[0]?.insight.health;
    expect(later?.impact.level).toBe('Error');
  });

  it('reports failing registries with the last error, most failures first', () => {
    const clock = new FakeClock(T0);
    const window = new RegistryFailureWindow(clock);
    window.record({ image: 'quay.io/a/b:1', namespace: 'shop', error: 'unauthorized' });
    window.record({ image: 'quay.io/a/c:1', namespace: 'batch', error: 'manifest unknown' });
    window.record({ image: 'registry.example.com:5000/x:1', namespace: 'shop', error: 'connection refused' });
    const insights = podPlacementContribution([], window.current(), T0).controlPlane ?? [];
    expect(insights.map((i) => i.insight.health?.impact.summary)).toEqual([
      'Pod placement cannot inspect images from quay.io (2 failures since 12:00 UTC)',
      'Pod placement cannot inspect images from registry.example.com:5000 (1 failure since 12:00 UTC)',
    ]);
    expect(insights[0]?.insight.health?.impact.description).toContain('Last error: manifest unknown');
    expect(insights[0]?.insight.health?.scope.resources?.map((r) => r.name)).toEqual(['batch', 'shop']);
    // Stable uids per registry, so the entry is updated in place.
    expect(insights[0]?.uid).toMatch(/^podplacement-registry-[0-9a-f]{16}$/);
  });

  it('asks for a write when a registry starts failing, not on every failure of a known one', async () => {
    const clock = new FakeClock(T0);
    const told: string[] = [];
    const window = new RegistryFailureWindow(
      clock,
      () => [],
      () => told.push(window.current()[0]?.registry ?? ''),
    );
    window.record({ image: 'quay.io/a/b:1', namespace: 'shop', error: 'unauthorized' });
    window.record({ image: 'quay.io/a/c:1', namespace: 'batch', error: 'unauthorized' });
    expect(told).toEqual(['quay.io']);
    window.record({ image: 'registry.example.com/x:1', namespace: 'shop', error: 'connection refused' });
    expect(told).toHaveLength(2);
    // Forgotten after the window, it is news again when it fails anew.
    await clock.advance(FAILURE_WINDOW_MS + 1);
    window.record({ image: 'quay.io/a/b:1', namespace: 'shop', error: 'unauthorized' });
    expect(told).toHaveLength(3);
  });

  it('forgets failures older than the window', async () => {
    const clock = new FakeClock(T0);
    const window = new RegistryFailureWindow(clock);
    window.record({ image: 'quay.io/a/b:1', namespace: 'shop', error: 'unauthorized' });
    await clock.advance(FAILURE_WINDOW_MS + 1);
    expect(window.current()).toEqual([]);
  });

  it("holds a bounded amount whatever a tenant's images name", () => {
    const window = new RegistryFailureWindow(new FakeClock(T0));
    for (let i = 0; i < 1000; i++)
      window.record({
        image: `r${i}.example.com/${'x'.repeat(200)}:1`,
        namespace: `ns-${i}`,
        error: 'e'.repeat(100_000),
      });
    for (let i = 0; i < 1000; i++) window.record({ image: 'quay.io/a:1', namespace: `t-${i}`, error: 'e' });
    // A real outage (many failures of one registry) still gets in, and keeps its place; the evicted are counted.
    const current = window.current();
    expect(current).toHaveLength(MAX_TRACKED_REGISTRIES);
    expect(window.untrackedFailures).toBe(1000 - MAX_TRACKED_REGISTRIES + 1);
    expect(current[0]?.registry).toBe('quay.io');
    const r0 = current.find((c) => c.registry === 'quay.io');
    expect(r0?.namespaces).toHaveLength(MAX_NAMESPACES_PER_INSIGHT);
    expect(r0?.moreNamespaces).toBe(true);
    expect(Math.max(...current.map((c) => c.lastError.length))).toBeLessThanOrEqual(512);
    // The insight fits the API's limits.
    const contribution = podPlacementContribution([], current, T0);
    expect(contribution.controlPlane).toHaveLength(16);
    for (const e of contribution.controlPlane ?? []) {
      expect(e.insight.health?.impact.summary.length).toBeLessThanOrEqual(256);
      expect(e.insight.health?.scope.resources?.length).toBeLessThanOrEqual(16);
    }
  });

  it('reads ages from the cached gated pods, leaving out pods without a creation time', () => {
    expect(
      gatedPodAges([
        { metadata: { namespace: 'a', name: 'p', creationTimestamp: '2026-12-01T11:00:00Z' } },
        { metadata: { namespace: 'a', name: 'q' } },
      ]),
    ).toEqual([{ namespace: 'a', name: 'p', createdAtMs: Date.UTC(2026, 11, 1, 11) }]);
  });
});
