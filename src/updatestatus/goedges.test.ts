// Go's edge semantics as they show in oc's output, checked against oc's own status code (openshift/oc
// pkg/cli/admin/upgrade/status at 6b8e30c, Go 1.26, linux/amd64) on inputs built from the example cases:
// a snapshot whose conditions carry no timestamps (so "now" is Go's zero time and durations saturate and wrap),
// node names whose UTF-8 length differs from their UTF-16 length, and alerts files Go cannot decode.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/fixtures.js';
import { decodeAlerts } from './alerts.js';
import { assessUpdateStatus, snapshotNow } from './assess.js';
import { goAggregateText, goFileErrorText } from './goerrors.js';
import {
  GO_ZERO_TIME,
  HOUR,
  SECOND,
  durationFromFloat,
  formatDuration,
  mulDuration,
  negateDuration,
  roundDuration,
  sub,
  truncateDuration,
} from './gotime.js';
import type { ClusterSnapshot, Condition } from './inputs.js';
import { renderUpdateStatus } from './render.js';
import { loadSnapshot } from './snapshot.js';
import { replaceNodeName } from './workerpool.js';

const MIN_INT64 = -(1n << 63n);
const MAX_INT64 = (1n << 63n) - 1n;
const YEAR = 365n * 24n * HOUR;

function withoutTransitionTimes(conditions: readonly Condition[] | undefined): Condition[] | undefined {
  return conditions?.map((c) => ({ ...c, lastTransitionTime: undefined }));
}

describe('Go int64 duration edges', () => {
  it('Time.Sub saturates; Round at the bound stays there (Go: the overflowing d-m+r wraps)', () => {
    const d = sub(GO_ZERO_TIME, 1_722_500_000n * SECOND);
    expect(d).toBe(MIN_INT64);
    expect(roundDuration(d, SECOND)).toBe(MIN_INT64);
    expect(formatDuration(roundDuration(d, SECOND))).toBe('-2562047h47m16.854775808s');
    expect(roundDuration(MAX_INT64, SECOND)).toBe(MAX_INT64);
    expect(truncateDuration(MAX_INT64, SECOND)).toBe(9_223_372_036n * SECOND);
  });
  it('arithmetic wraps like int64, and out-of-range float conversions give MinInt64 (amd64)', () => {
    expect(negateDuration(MIN_INT64)).toBe(MIN_INT64);
    expect(mulDuration(MIN_INT64, SECOND)).toBe(0n);
    expect(mulDuration(11_068_046_444n, SECOND)).toBe(BigInt.asIntN(64, 11_068_046_444n * SECOND));
    expect(durationFromFloat(1e19)).toBe(MIN_INT64);
    expect(durationFromFloat(Number.NaN)).toBe(MIN_INT64);
    expect(durationFromFloat(-1e19)).toBe(MIN_INT64);
  });
});

describe('a snapshot without condition times ("now" is the zero time)', () => {
  it('renders exactly as oc does: Stalled, saturated durations, the wrapped estimate, the Health SINCE', async () => {
    const { snapshot } = await loadSnapshot(
      path.join(fixturePath('oc-upgrade-status'), '4.16.0-compact-cv.yaml'),
    );
    const cv = snapshot.clusterVersion;
    const zeroed: ClusterSnapshot = {
      ...snapshot,
      clusterVersion: {
        ...cv,
        status: { ...cv.status, conditions: withoutTransitionTimes(cv.status?.conditions) },
      },
      clusterOperators: snapshot.clusterOperators.map((co) => ({
        ...co,
        status: { ...co.status, conditions: withoutTransitionTimes(co.status?.conditions) },
      })),
    };
    const now = snapshotNow(zeroed);
    expect(now).toBe(GO_ZERO_TIME);
    const report = assessUpdateStatus(zeroed, now, { unavailableAgeReference: 2026n * YEAR });
    // oc's output for the same input (its first line, about the missing alerts file, left out).
    const oc = [
      '= Control Plane =',
      'Assessment:      Stalled',
      'Target Version:  4.17.0-ec.0 (from 4.16.0-0.nightly-2024-08-01-082745)',
      'Completion:      91% (30 operators updated, 0 updating, 3 waiting)',
      'Duration:        -2562047h47m16s (Est. Time Remaining: N/A; estimate duration was 512410h45m)',
      'Operator Health: 33 Healthy',
      '',
      'Control Plane Nodes',
      'NAME                                        ASSESSMENT   PHASE     VERSION                              EST   MESSAGE',
      'ip-10-0-27-170.us-west-1.compute.internal   Outdated     Pending   4.16.0-0.nightly-2024-08-01-082745   ?     ',
      'ip-10-0-60-117.us-west-1.compute.internal   Outdated     Pending   4.16.0-0.nightly-2024-08-01-082745   ?     ',
      'ip-10-0-96-173.us-west-1.compute.internal   Outdated     Pending   4.16.0-0.nightly-2024-08-01-082745   ?     ',
      '',
      '= Update Health =',
      'SINCE            LEVEL   IMPACT   MESSAGE',
      '2562047h47m16s   Info    None     Update is proceeding well',
      '',
    ].join('\n');
    expect(renderUpdateStatus(report, 'all')).toBe(oc);
  });
});

describe('node names in messages (oc ellipsizeNames)', () => {
  it('replaces names of 8 UTF-8 bytes or more, however many UTF-16 units they have', () => {
    // "nöde-01": 7 UTF-16 units, 8 bytes: oc replaces it.
    expect(replaceNodeName('failed to drain node: nöde-01 after 1 hour', 'nöde-01')).toBe(
      'failed to drain node: <node> after 1 hour',
    );
    // "nöd-01": 7 bytes: kept.
    expect(replaceNodeName('drain nöd-01', 'nöd-01')).toBe('drain nöd-01');
    // 4 UTF-16 units, 9 bytes.
    expect(replaceNodeName('x ñ€😀 y ñ€😀', 'ñ€😀')).toBe('x <node> y <node>');
  });
});

describe("Go's error texts", () => {
  it("decodes alerts like json.Unmarshal into oc's AlertData, naming the first mismatch as Go does", () => {
    const notice = (text: string) => decodeAlerts(text).notice;
    const prefix = "Ignoring alerts in 'Update Health'. Error unmarshaling alerts: %w ";
    expect(notice('{"data":{"alerts":"x"}}')).toBe(
      `${prefix}json: cannot unmarshal string into Go struct field Data.data.alerts of type []status.Alert\n`,
    );
    expect(notice('{"Data":{"ALERTS":[{"labels":{"severity":3}}]}}')).toBe(
      `${prefix}json: cannot unmarshal number into Go struct field AlertLabels.data.alerts.labels.severity of type string\n`,
    );
    expect(notice('{"data":{"alerts":[{"activeAt":"2024-02-30T00:00:00Z"}]}}')).toBe(
      `${prefix}parsing time "2024-02-30T00:00:00Z": day out of range\n`,
    );
    expect(notice('{"data":{"alerts":[{"activeAt":"2024-02-03 00:00:00Z"}]}}')).toBe(
      `${prefix}parsing time "2024-02-03 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T"\n`,
    );
    expect(notice('null')).toBe('');
    // Like Go, a type mismatch keeps what decoded.
    const partial = decodeAlerts(
      '{"status":1,"data":{"alerts":[{"labels":{"alertname":"A"},"state":"firing"}]}}',
    );
    expect(partial.alerts?.data?.alerts?.[0]?.labels?.alertname).toBe('A');
  });
  it('words file errors and aggregates as Go and apimachinery do', () => {
    expect(
      goFileErrorText(
        '/x/c-alerts.json',
        Object.assign(new Error('ENOENT'), { code: 'ENOENT', syscall: 'open' }),
      ),
    ).toBe('open /x/c-alerts.json: no such file or directory');
    expect(goAggregateText([])).toBe('%!s(<nil>)');
    expect(goAggregateText(['a'])).toBe('a');
    expect(goAggregateText(['a', 'b', 'a'])).toBe('[a, b]');
  });
});

describe('where oc panics, Tessera reports', () => {
  it('renders without the master or worker pool, and with a Completed history entry lacking completionTime', async () => {
    const { snapshot } = await loadSnapshot(
      path.join(fixturePath('oc-upgrade-status'), '4.16.0-compact-cv.yaml'),
    );
    const now = snapshotNow(snapshot);
    for (const missing of ['master', 'worker']) {
      const pools = snapshot.machineConfigPools.filter((p) => p.metadata?.name !== missing);
      const text = renderUpdateStatus(
        assessUpdateStatus({ ...snapshot, machineConfigPools: pools }, now),
        'all',
      );
      expect(text).toMatch(/^= Control Plane =\n/);
    }
    const cv = snapshot.clusterVersion;
    const history = (cv.status?.history ?? []).map((h) => ({
      ...h,
      state: 'Completed',
      completionTime: undefined,
    }));
    const text = renderUpdateStatus(
      assessUpdateStatus({ ...snapshot, clusterVersion: { ...cv, status: { ...cv.status, history } } }, now),
      'all',
    );
    expect(text).toContain('= Update Health =');
  });
});
