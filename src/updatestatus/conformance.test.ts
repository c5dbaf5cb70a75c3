// Conformance with `oc adm upgrade status`: every snapshot case in test/fixtures/oc-upgrade-status renders
// byte for byte like oc's recorded outputs, default details (`C.output`) and `--details=all`
// (`C.detailed-output`), with "now" = latest ClusterVersion/ClusterOperator condition transition + 368975ns.
// Node unavailability age is judged long after the snapshot, as oc's harness (which reads the wall clock) did.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/fixtures.js';
import { assessUpdateStatus, snapshotNow } from './assess.js';
import { HOUR } from './gotime.js';
import { renderUpdateStatus } from './render.js';
import { loadSnapshot } from './snapshot.js';

const fixtures = fixturePath('oc-upgrade-status');
const YEAR = 365n * 24n * HOUR;
const cases = readdirSync(fixtures)
  .filter((f) => f.endsWith('-cv.yaml'))
  .map((f) => f.slice(0, -'-cv.yaml'.length))
  .sort();

/** A line diff that points at the first differences, readable in a terminal. */
function lineDiff(expected: string, actual: string): string {
  const e = expected.split('\n');
  const a = actual.split('\n');
  const out: string[] = [];
  for (let i = 0; i < Math.max(e.length, a.length) && out.length < 40; i++) {
    if (e[i] === a[i]) continue;
    out.push(
      `line ${i + 1}:`,
      `  - ${JSON.stringify(e[i] ?? '<missing>')}`,
      `  + ${JSON.stringify(a[i] ?? '<missing>')}`,
    );
  }
  return out.join('\n');
}

describe(`oc adm upgrade status conformance`, () => {
  it('finds snapshot cases', () => {
    expect(cases.length).toBeGreaterThan(0);
  });

  for (const name of cases) {
    for (const [details, suffix] of [
      ['none', '.output'],
      ['all', '.detailed-output'],
    ] as const) {
      it(`${name} --details=${details}`, async () => {
        const dir = fixtures;
        const { snapshot } = await loadSnapshot(path.join(dir, `${name}-cv.yaml`));
        const now = snapshotNow(snapshot);
        // oc's harness judged node unavailability by the wall clock, long after the snapshot was taken.
        const report = assessUpdateStatus(snapshot, now, { unavailableAgeReference: now + YEAR });
        const actual = renderUpdateStatus(report, details);
        const expected = readFileSync(path.join(dir, `${name}${suffix}`), 'utf8');
        if (actual !== expected) {
          expect.fail(`${name}${suffix} differs (- expected, + actual):\n${lineDiff(expected, actual)}`);
        }
      });
    }
  }
});
