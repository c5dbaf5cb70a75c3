// Reading a stored UpdateStatus back: when the assessment fits the API (node messages within 100 characters,
// health references that are URLs), printing from the stored object gives the same text as printing the
// assessment itself, including for pools whose nodes were only partly listed.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../../test/support/fixtures.js';
import { type UpdateStatusReport, assessUpdateStatus, snapshotNow } from '../assess.js';
import { MINUTE } from '../gotime.js';
import { renderUpdateStatus } from '../render.js';
import { loadSnapshot } from '../snapshot.js';
import { projectUpdateStatus } from './project.js';
import { isHealthyStatus, reportFromUpdateStatus } from './read.js';

const fixtures = fixturePath('oc-upgrade-status');
const cases = readdirSync(fixtures).filter((f) => f.endsWith('-cv.yaml'));

/** What the API cannot hold: longer node messages, and non-URL references (alerts without a runbook). */
function fitsTheApi(report: UpdateStatusReport): boolean {
  const pools = [report.controlPlanePool, ...report.workerPools];
  const messagesFit = pools.every((p) => (p?.nodes ?? []).every((n) => [...n.message].length <= 100));
  const referencesFit = report.health.insights.every(
    (i) => !report.health.hasDetails || /^https?:\/\//.test(i.remediation.reference),
  );
  return messagesFit && referencesFit;
}

describe('reportFromUpdateStatus', () => {
  let compared = 0;
  for (const file of cases) {
    it(`${file}: prints from the stored status like from the assessment, when it fits the API`, async () => {
      const { snapshot } = await loadSnapshot(path.join(fixtures, file));
      const now = snapshotNow(snapshot);
      const report = assessUpdateStatus(snapshot, now, { unavailableAgeReference: now + 60n * MINUTE });
      for (const max of [1_000, 3]) {
        const stored = JSON.parse(
          JSON.stringify(projectUpdateStatus(report, now, { maxNodeInsightsPerPool: max })),
        );
        const back = reportFromUpdateStatus(stored, now);
        expect(back).toBeDefined();
        if (!back) return;
        const direct = renderUpdateStatus(report, 'none');
        const fromApi = renderUpdateStatus(back, 'none');
        if (fitsTheApi(report)) {
          expect(fromApi).toBe(direct);
          compared++;
        } else {
          // Still the same sections and control-plane summary.
          expect(fromApi.split('\n').slice(0, 6)).toEqual(direct.split('\n').slice(0, 6));
        }
      }
    });
  }
  it('compared at least one case byte for byte (the check above is not vacuous)', () => {
    expect(compared).toBeGreaterThan(0);
  });
  it("names a NodePool of another informer's health insight by its kind (nodepools.hypershift.openshift.io)", async () => {
    const { snapshot } = await loadSnapshot(path.join(fixtures, cases[0] ?? ''));
    const now = snapshotNow(snapshot);
    const report = assessUpdateStatus(snapshot, now, { unavailableAgeReference: now + 60n * MINUTE });
    const stored = projectUpdateStatus(report, now);
    const pool = {
      group: 'hypershift.openshift.io',
      resource: 'nodepools',
      name: 'np-a',
      namespace: 'clusters',
    };
    const at = new Date(Number(now / 1_000_000n)).toISOString();
    const withNodePool = {
      ...stored,
      informers: [
        ...(stored.informers ?? []),
        { name: 'nodepools', heartbeatTime: at.replace(/\.\d{3}Z$/, 'Z') },
      ],
      workerPools: [
        ...(stored.workerPools ?? []),
        {
          name: 'np-a',
          resource: pool,
          informers: [
            {
              name: 'nodepools',
              insights: [
                {
                  uid: 'np-version-failed',
                  acquiredAt: at.replace(/\.\d{3}Z$/, 'Z'),
                  insight: {
                    type: 'Health' as const,
                    health: {
                      startedAt: at,
                      scope: { type: 'WorkerPool' as const, resources: [pool] },
                      impact: {
                        level: 'Error' as const,
                        type: 'Update Stalled' as const,
                        summary: 'NodePool clusters/np-a cannot update from 4.16.1 (InplaceUpgradeFailed)',
                        description: 'HyperShift reports the release rollout of this NodePool failed.',
                      },
                      remediation: { reference: 'https://example.com/nodepools' },
                    },
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    const back = reportFromUpdateStatus(withNodePool, now);
    const text = back ? renderUpdateStatus(back, 'health') : '';
    expect(text).toContain(
      'Message: NodePool clusters/np-a cannot update from 4.16.1 (InplaceUpgradeFailed)',
    );
    expect(text).toContain('    nodepools.hypershift.openshift.io: clusters/np-a\n');
  });
  it('tells a healthy controller status from others', () => {
    expect(
      isHealthyStatus({
        conditions: [
          {
            type: 'Healthy',
            status: 'True',
            reason: 'AsExpected',
            message: '',
            lastTransitionTime: '2024-01-01T00:00:00Z',
          },
        ],
      }),
    ).toBe(true);
    expect(isHealthyStatus({})).toBe(false);
  });
});

describe('a control plane completed before the ClusterVersion records it', () => {
  it("prints the completion as of the reader's now, as oc does, from a status written earlier", async () => {
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
    const written = snapshotNow(snapshot);
    const stored = JSON.parse(
      JSON.stringify(projectUpdateStatus(assessUpdateStatus(partial, written), written)),
    );
    const read = written + 5n * MINUTE;
    const back = reportFromUpdateStatus(stored, read, { livenessAt: written });
    if (!back) throw new Error('the stored status did not read back');
    const direct = renderUpdateStatus(assessUpdateStatus(partial, read), 'none');
    expect(renderUpdateStatus(back, 'none').split('\n').slice(0, 3)).toEqual(direct.split('\n').slice(0, 3));
    expect(direct).toContain('successfully completed at');
  });
});
