// The UpdateStatus projection: what tools read from `.status`, and the stability the controller relies on
// (same cluster -> same status, so no write; insight uids and acquiredAt survive re-assessment).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { FormatRegistry } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../../test/support/fixtures.js';
import { assessUpdateStatus, snapshotNow } from '../assess.js';
import { MINUTE, parseDuration, parseTime } from '../gotime.js';
import { loadSnapshot } from '../snapshot.js';
import { projectInformers, projectUpdateStatus, stableUid } from './project.js';
import { UpdateStatusStatusSchema } from './schema.js';

FormatRegistry.Set('date-time', (v) => parseTime(v) !== undefined && v !== '');
FormatRegistry.Set('duration', (v) => parseDuration(v) !== undefined);

const fixtures = fixturePath('oc-upgrade-status');
const cases = readdirSync(fixtures).filter((f) => f.endsWith('-cv.yaml'));

describe('stableUid', () => {
  it('keeps valid keys readable and hashes the rest into valid, distinct uids', () => {
    expect(stableUid('co', 'etcd')).toBe('co-etcd');
    const a = stableUid('node', 'ip-10-0-30-217.us-east-2.compute.internal');
    const b = stableUid('node', 'ip-10-0-30-218.us-east-2.compute.internal');
    for (const uid of [a, b]) expect(uid).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
    expect(stableUid('node', 'x'.repeat(300))).toHaveLength(63);
  });
});

describe('projection of the oc snapshot cases', () => {
  for (const file of cases) {
    it(`${file}: schema-valid, and stable when nothing changes`, async () => {
      const { snapshot } = await loadSnapshot(path.join(fixtures, file));
      const now = snapshotNow(snapshot);
      const first = projectUpdateStatus(assessUpdateStatus(snapshot, now), now);
      const errors = [...Value.Errors(UpdateStatusStatusSchema, first)]
        .slice(0, 5)
        .map((e) => `${e.path}: ${e.message}`);
      expect(errors).toEqual([]);
      // Re-assessed 10 minutes later with the stored status: same uids, same acquiredAt.
      const later = now + 10n * MINUTE;
      const second = projectUpdateStatus(assessUpdateStatus(snapshot, later), later, { previous: first });
      const acquired = (s: typeof first) =>
        (s.controlPlane?.informers ?? []).flatMap((i) =>
          (i.insights ?? []).map((x) => `${x.uid}@${x.acquiredAt}`),
        );
      const acquiredNow = acquired(second);
      for (const entry of acquired(first)) {
        if (!entry.startsWith('health-')) expect(acquiredNow).toContain(entry);
      }
      // A third pass at the same instant as the second changes nothing at all (the controller then skips the write).
      expect(projectUpdateStatus(assessUpdateStatus(snapshot, later), later, { previous: second })).toEqual(
        second,
      );
    });
  }
});

describe('where insights go', () => {
  it('puts a worker node health insight in its pool, lists troubled nodes first, and caps node insights', async () => {
    const { snapshot } = await loadSnapshot(
      path.join(fixtures, '4.16.0-ec2-control-plane-updated-pdb-prohibits-draining-cv.yaml'),
    );
    const now = snapshotNow(snapshot);
    const status = projectUpdateStatus(assessUpdateStatus(snapshot, now), now, { maxNodeInsightsPerPool: 5 });
    const worker = status.workerPools?.find((p) => p.name === 'worker');
    const insights = worker?.informers?.[0]?.insights ?? [];
    const nodes = insights.filter((i) => i.insight.type === 'Node').map((i) => i.insight.node);
    expect(nodes).toHaveLength(5);
    // The degraded (draining-stuck) nodes come first, as in oc's table.
    expect(nodes.every((n) => n?.conditions?.find((c) => c.type === 'Degraded')?.status === 'True')).toBe(
      true,
    );
    const summaries = insights.find((i) => i.insight.type === 'MachineConfigPool')?.insight.machineConfigPool
      ?.summaries;
    expect(summaries?.find((s) => s.type === 'Total')?.count).toBe(59);
    const health = insights
      .filter((i) => i.insight.type === 'Health')
      .map((i) => i.insight.health?.impact.summary);
    expect(health).toContain('Node build0-gstfj-ci-prowjobs-worker-b-9lztv is degraded');
    const cpHealth = (status.controlPlane?.informers ?? [])
      .flatMap((i) => i.insights ?? [])
      .filter((i) => i.insight.type === 'Health')
      .map((i) => i.insight.health?.impact.summary);
    expect(cpHealth.some((s) => s?.startsWith('Cluster Version version is failing'))).toBe(true);
    expect(cpHealth).not.toContain('Node build0-gstfj-ci-prowjobs-worker-b-9lztv is degraded');
  });
});

describe('a control plane whose operators are updated before the ClusterVersion records its completion', () => {
  it('stores no completion time, so re-assessing a second later changes nothing to write', async () => {
    const { snapshot } = await loadSnapshot(
      path.join(fixtures, '4.16.0-ec2-control-plane-updated-pdb-prohibits-draining-cv.yaml'),
    );
    const partial = structuredClone(snapshot) as typeof snapshot & {
      clusterVersion: { status: { history: { state?: string; completionTime?: string }[] } };
    };
    const current = partial.clusterVersion.status.history[0];
    if (current === undefined) throw new Error('the fixture has no update history');
    current.state = 'Partial';
    delete current.completionTime;
    const now = snapshotNow(snapshot);
    const first = projectUpdateStatus(assessUpdateStatus(partial, now), now);
    const cvOf = (s: typeof first) =>
      (s.controlPlane?.informers ?? []).flatMap((i) => i.insights ?? []).find((x) => x.insight.clusterVersion)
        ?.insight.clusterVersion;
    expect(cvOf(first)?.assessment).toBe('Completed');
    expect(cvOf(first)?.completedAt).toBeUndefined();
    // What each informer applies (without its heartbeat) is the same a second later: nothing to write.
    const later = now + 1_000_000_000n;
    expect(projectInformers(assessUpdateStatus(partial, later), later, { previous: first })).toEqual(
      projectInformers(assessUpdateStatus(partial, now), now, { previous: first }),
    );
    // A recorded completion is stored.
    expect(cvOf(projectUpdateStatus(assessUpdateStatus(snapshot, now), now))?.completedAt).toBe(
      snapshot.clusterVersion.status?.history?.[0]?.completionTime,
    );
  });
});
