// decodeAlerts under its budgets: an answer within them decodes as oc decodes it; one over them (shape, or alert
// count) leaves alerts out with oc's "Unable to fetch alerts" notice naming the budget, instead of being parsed.
import { describe, expect, it } from 'vitest';
import { checkJsonShape } from '../runtime/light.js';
import { DEFAULT_ALERTS_BUDGET, decodeAlerts } from './alerts.js';
import { DEFAULT_ALERTS_MAX_BYTES } from './alertsource.js';

const answer = (alerts: unknown[]) => JSON.stringify({ status: 'success', data: { alerts } });
const firing = (name: string) => ({ labels: { alertname: name, severity: 'warning' }, state: 'firing' });
const prefix = "Unable to fetch alerts, ignoring alerts in 'Update Health':  ";

describe('decodeAlerts budgets', () => {
  const small = { maxDepth: 6, maxValues: 100, maxAlerts: 3 };

  it('decodes an answer within budget, from text or bytes', () => {
    const text = answer([firing('A'), firing('B'), firing('C')]);
    for (const input of [text, Buffer.from(text)]) {
      const reading = decodeAlerts(input, { budget: small });
      expect(reading.notice).toBe('');
      expect(reading.alerts?.data?.alerts?.map((a) => a.labels?.alertname)).toEqual(['A', 'B', 'C']);
    }
  });

  it('refuses an answer listing more alerts than maxAlerts, whole', () => {
    const reading = decodeAlerts(answer([firing('A'), firing('B'), firing('C'), firing('D')]), {
      budget: small,
      what: 'the alerts answer of https://thanos/api/v1/alerts',
    });
    expect(reading.alerts).toBeUndefined();
    expect(reading.notice).toBe(
      `${prefix}the alerts answer of https://thanos/api/v1/alerts lists 4 alerts, more than the 3 accepted; it was not read\n`,
    );
  });

  it('refuses an answer nested too deep or with too many values before parsing it', () => {
    const deep = `{"status":"success","data":{"alerts":${'['.repeat(50)}${']'.repeat(50)}}}`;
    expect(decodeAlerts(deep, { budget: small })).toEqual({
      alerts: undefined,
      notice: `${prefix}the alerts answer nests arrays and objects deeper than 6 levels, the most accepted; it was not parsed\n`,
    });
    const wide = answer(Array.from({ length: 200 }, () => ({})));
    expect(decodeAlerts(wide, { budget: small }).notice).toBe(
      `${prefix}the alerts answer has more than 100 JSON values (arrays, objects and their items), the most accepted; it was not parsed\n`,
    );
  });

  it('keeps oc’s own notice for malformed JSON', () => {
    expect(decodeAlerts('{"status":', { budget: small }).notice).toMatch(
      /^Ignoring alerts in 'Update Health'\. Error unmarshaling alerts: %w unexpected end of JSON input\n$/,
    );
  });

  it('by default admits a 5,000-node cluster with ten real alerts firing on each node', () => {
    const real = {
      labels: {
        alertname: 'KubeNodeNotReady',
        namespace: 'openshift-monitoring',
        severity: 'warning',
        node: 'worker-1234.example.com',
        container: 'kube-rbac-proxy-main',
        job: 'kube-state-metrics',
        pod: 'kube-state-metrics-6b9f8c7d5-x2x4z',
        service: 'kube-state-metrics',
      },
      annotations: {
        description: 'worker-1234.example.com has been unready for more than 15 minutes.',
        summary: 'Node is not ready.',
        runbook_url: 'https://github.com/openshift/runbooks/blob/master/alerts/KubeNodeNotReady.md',
      },
      state: 'firing',
      activeAt: '2024-05-01T10:00:00.123456789Z',
      value: '0e+00',
    };
    const count = 5_000 * 10;
    expect(DEFAULT_ALERTS_BUDGET.maxAlerts).toBeGreaterThanOrEqual(count);
    // Shape and bytes only: decoding 50,000 alerts is the same code as decoding three.
    const bytes = Buffer.from(answer(Array.from({ length: count }, () => real)));
    expect(bytes.length).toBeLessThanOrEqual(DEFAULT_ALERTS_MAX_BYTES);
    expect(checkJsonShape(bytes, DEFAULT_ALERTS_BUDGET)).toBeUndefined();
  });
});
