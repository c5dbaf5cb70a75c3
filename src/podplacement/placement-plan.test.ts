import { describe, expect, it } from 'vitest';
import { clusterConfig, pod } from './builders.js';
import { ANNOTATIONS, EVENT_MESSAGES, LABELS } from './constants.js';
import {
  GIVE_UP_MESSAGES,
  intersectArchitectures,
  planPlacement,
  type ImageArchitectures,
  type PlacementPlan,
} from './placement-plan.js';

const messagesOf = (plan: PlacementPlan): string[] =>
  plan.action === 'none' ? [] : plan.events.map((e) => e.message);

const gated = pod('web', 'ns').withImages('r/a:1', 'r/b:1').withGate().build();

function planWith(inspection: Record<string, ImageArchitectures>, attempt = 1) {
  return planPlacement({
    pod: gated,
    inspection: new Map(Object.entries(inspection)),
    clusterConfig: clusterConfig({ fallbackArchitecture: 's390x' }),
    podPlacementConfigs: [],
    attempt,
    operatorNamespace: 'op',
  });
}

describe('planPlacement on failed inspections', () => {
  it('retries a transient failure before the last attempt', () => {
    const plan = planWith({
      'r/a:1': { archs: ['amd64'] },
      'r/b:1': { error: 'HTTP 503', failure: 'transient' },
    });
    expect(plan.action).toBe('retry');
  });

  it('releases at once on a permanent failure, with the fallback and a message saying retrying cannot help', () => {
    const plan = planWith({
      'r/a:1': { archs: ['amd64'] },
      'r/b:1': { error: 'not found', failure: 'permanent' },
    });
    if (plan.action !== 'ungate') throw new Error(`expected ungate, got ${plan.action}`);
    expect(plan.outcome).toBe('fallback');
    expect(plan.patch.metadata.labels?.[LABELS.imageInspectErrorCount]).toBe('1');
    expect(plan.patch.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toBe('not found');
    const messages = plan.events.map((e) => e.message);
    expect(messages).toContain(`${GIVE_UP_MESSAGES.permanent}: not found`);
    expect(messages.some((m) => m.startsWith(EVENT_MESSAGES.maxRetriesPrefix))).toBe(false);
  });

  it.each<[string, Record<string, ImageArchitectures>, string]>([
    [
      'a refusal by policy ends the retries at once, before a transient failure of another image',
      {
        'r/a:1': { error: 'HTTP 503', failure: 'transient' },
        'r/b:1': { error: 'registry r is blocked', failure: 'refused' },
      },
      'registry r is blocked',
    ],
    [
      'a refusal by policy is named before a deadline or permanent failure',
      {
        'r/a:1': { error: 'r did not answer', failure: 'deadline' },
        'r/b:1': { error: 'refused rule', failure: 'refused' },
      },
      'refused rule',
    ],
  ])('%s', (_name, inspection, decisive) => {
    const plan = planWith(inspection);
    expect(plan.action).toBe('ungate');
    if (plan.action !== 'ungate') return;
    expect(plan.outcome).toBe('fallback');
    expect(plan.patch.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toBe(decisive);
    expect(plan.patch.metadata.labels?.[LABELS.imageInspectError]).toBe('');
    expect(messagesOf(plan)).toContain(`${GIVE_UP_MESSAGES.refused}: ${decisive}`);
  });

  it('names the deadline before a permanent or transient failure of another image', () => {
    const result = intersectArchitectures(
      ['r/a:1', 'r/b:1', 'r/c:1'],
      new Map<string, ImageArchitectures>([
        ['r/a:1', { error: 'HTTP 503', failure: 'transient' }],
        ['r/b:1', { error: 'not found', failure: 'permanent' }],
        ['r/c:1', { error: 'registry r did not answer within 15 s', failure: 'deadline' }],
      ]),
    );
    expect(result).toEqual({ error: 'registry r did not answer within 15 s', failure: 'deadline' });
    const plan = planWith({
      'r/a:1': { error: 'registry r did not answer within 15 s', failure: 'deadline' },
      'r/b:1': { archs: ['amd64'] },
    });
    expect(plan.action).toBe('ungate');
    expect(messagesOf(plan)).toContain(`${GIVE_UP_MESSAGES.deadline}: registry r did not answer within 15 s`);
  });

  it('treats an unclassified error as transient (the shared behaviour cases) and gives up at the last attempt', () => {
    expect(planWith({ 'r/a:1': { archs: ['amd64'] }, 'r/b:1': { error: 'x' } }, 4).action).toBe('retry');
    const last = planWith({ 'r/a:1': { archs: ['amd64'] }, 'r/b:1': { error: 'x' } }, 5);
    expect(last.action).toBe('ungate');
    expect(messagesOf(last)).toContain(`${EVENT_MESSAGES.maxRetriesPrefix}: x`);
  });
});
