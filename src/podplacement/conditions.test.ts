import { describe, expect, it } from 'vitest';
import { canServeMutatingWebhook, desiredConditions, mergeConditions, sameConditions } from './conditions.js';

const ready = {
  controllerReady: true,
  webhookReady: true,
  mutatingWebhookConfigurationPresent: true,
  deprovisioning: false,
  execFormatErrorMonitorEnabled: false,
};
const byType = (list: { type: string; status: string; reason: string }[]) =>
  Object.fromEntries(list.map((c) => [c.type, [c.status, c.reason]]));

describe('ClusterPodPlacementConfig conditions', () => {
  it('all components ready: Available, not Progressing, not Degraded', () => {
    expect(byType(desiredConditions(ready))).toEqual({
      Available: ['True', 'AllComponentsReady'],
      Progressing: ['False', 'AllComponentsReady'],
      Degraded: ['False', 'NotDegraded'],
      Deprovisioning: ['False', 'NotDeprovisioning'],
      PodPlacementControllerNotRolledOut: ['False', 'PodPlacementControllerReady'],
      PodPlacementWebhookNotRolledOut: ['False', 'PodPlacementWebhookReady'],
      MutatingWebhookConfigurationNotAvailable: ['False', 'AllComponentsReady'],
      ExecFormatErrorMonitorUnsupported: ['False', 'ExecFormatErrorMonitorNotEnabled'],
    });
  });

  it('says what the exec format error monitor covers while it is enabled, and nothing else changes', () => {
    const asked = desiredConditions({ ...ready, execFormatErrorMonitorEnabled: true }, 4);
    const monitor = asked.find((c) => c.type === 'ExecFormatErrorMonitorUnsupported');
    expect(monitor).toMatchObject({
      status: 'False',
      reason: 'ExecFormatErrorMonitorFromKubeletReports',
      observedGeneration: 4,
    });
    expect(monitor?.message).toMatch(
      /^The exec format error monitor is enabled\. Tessera detects, without an eBPF/,
    );
    expect(monitor?.message).toContain('mto_enoexecevents_total and the alert ExecFormatErrorsDetected');
    expect(monitor?.message).toContain('Not covered');
    // Pods are still gated and placed: the operand stays Available and not Degraded.
    const others = (list: typeof asked) => list.filter((c) => c.type !== 'ExecFormatErrorMonitorUnsupported');
    expect(others(asked)).toEqual(others(desiredConditions(ready, 4)));
  });

  it('concatenates the reasons of what is missing, like the reference', () => {
    const c = byType(
      desiredConditions({ ...ready, controllerReady: false, mutatingWebhookConfigurationPresent: false }),
    );
    expect(c['Available']).toEqual([
      'False',
      'PodPlacementControllerNotRolledOutMutatingWebhookConfigurationNotAvailable',
    ]);
    expect(c['Degraded']).toEqual(['True', 'Degraded']);
    expect(c['Progressing']?.[0]).toBe('True');
    expect(c['PodPlacementControllerNotRolledOut']).toEqual(['True', 'PodPlacementControllerNotReady']);
  });

  it('while deprovisioning: not Degraded, not Progressing, and no webhook may be served', () => {
    const o = { ...ready, deprovisioning: true, mutatingWebhookConfigurationPresent: false };
    const c = byType(desiredConditions(o));
    expect(c['Deprovisioning']).toEqual(['True', 'Deprovisioning']);
    expect(c['Degraded']?.[0]).toBe('False');
    expect(c['Progressing']?.[0]).toBe('False');
    expect(canServeMutatingWebhook(o)).toBe(false);
    expect(desiredConditions(o).find((x) => x.type === 'Deprovisioning')?.message).toContain(
      'scheduling gate',
    );
  });

  it('keeps lastTransitionTime when the status does not change', () => {
    const t0 = new Date('2026-01-01T00:00:00.400Z');
    const first = mergeConditions(undefined, desiredConditions(ready), t0);
    expect(first.every((c) => c.lastTransitionTime === '2026-01-01T00:00:00Z')).toBe(true);
    const same = mergeConditions(first, desiredConditions(ready), new Date('2026-01-01T00:05:00Z'));
    expect(sameConditions(first, same)).toBe(true);
    const changed = mergeConditions(
      first,
      desiredConditions({ ...ready, webhookReady: false }),
      new Date('2026-01-01T00:05:00Z'),
    );
    expect(changed.find((c) => c.type === 'Available')?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
    expect(changed.find((c) => c.type === 'Deprovisioning')?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(sameConditions(first, changed)).toBe(false);
  });
});
