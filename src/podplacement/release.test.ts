import { describe, expect, it } from 'vitest';
import { ANNOTATIONS, LABELS, LABEL_VALUES, SCHEDULING_GATE } from './constants.js';
import { manualReleasePatch } from './placement-plan.js';
import { controllerState, leaseConfirmMs, leaseRenewed, renderReleaseResults } from './release.js';

const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const at = (msAgo: number): string => new Date(NOW - msAgo).toISOString();

describe('controllerState: is the controller running, by its leader Lease', () => {
  it('running while the holder renewed within the lease duration', () => {
    expect(
      controllerState({ holderIdentity: 'a', renewTime: at(14_000), leaseDurationSeconds: 15 }, NOW),
    ).toEqual({ running: true, holder: 'a', renewedAgoMs: 14_000 });
  });

  it('not running: no Lease, released on a clean stop, or not renewed for longer than its duration', () => {
    expect(controllerState(undefined, NOW)).toEqual({ running: false, why: 'no-lease' });
    expect(
      controllerState({ holderIdentity: '', renewTime: at(1_000), leaseDurationSeconds: 15 }, NOW),
    ).toEqual({
      running: false,
      why: 'released',
    });
    expect(
      controllerState({ holderIdentity: 'a', renewTime: at(16_000), leaseDurationSeconds: 15 }, NOW),
    ).toEqual({ running: false, why: 'expired', renewedAgoMs: 16_000 });
    expect(controllerState({ holderIdentity: 'a', leaseDurationSeconds: 15 }, NOW)).toEqual({
      running: false,
      why: 'expired',
    });
  });
});

describe('confirming an apparently expired Lease', () => {
  const lease = { holderIdentity: 'a', renewTime: at(60_000), leaseDurationSeconds: 15, leaseTransitions: 2 };

  it('a changed record means a live holder, whatever the timestamps say', () => {
    expect(leaseRenewed(lease, { ...lease })).toBe(false);
    expect(leaseRenewed(lease, { ...lease, renewTime: at(59_000) })).toBe(true);
    expect(leaseRenewed(lease, { ...lease, holderIdentity: 'b', leaseTransitions: 3 })).toBe(true);
    expect(leaseRenewed(lease, undefined)).toBe(true);
  });

  it('is watched for one lease duration, between 1 s and a minute', () => {
    expect(leaseConfirmMs(lease)).toBe(15_000);
    expect(leaseConfirmMs({ ...lease, leaseDurationSeconds: 0 })).toBe(1_000);
    expect(leaseConfirmMs({ ...lease, leaseDurationSeconds: 137 })).toBe(60_000);
  });
});

describe('manualReleasePatch', () => {
  const gated = {
    metadata: {
      name: 'p',
      namespace: 'n',
      resourceVersion: '42',
      labels: { app: 'x', [LABELS.schedulingGate]: LABEL_VALUES.gated },
    },
    spec: {
      schedulingGates: [{ name: 'example.com/quota' }, { name: SCHEDULING_GATE }],
      containers: [{ name: 'c', image: 'r/i:1' }],
    },
  };

  it("removes only the operator's gate, marks the pod released, and is refused if the pod changed meanwhile", () => {
    expect(manualReleasePatch(gated, new Date(NOW))).toEqual({
      metadata: {
        resourceVersion: '42',
        labels: { [LABELS.schedulingGate]: LABEL_VALUES.removed },
        annotations: { [ANNOTATIONS.releasedByHand]: '2026-12-01T12:00:00Z' },
      },
      spec: { schedulingGates: [{ name: 'example.com/quota' }] },
    });
  });

  it('leaves a pod without the gate alone', () => {
    expect(
      manualReleasePatch({ ...gated, spec: { ...gated.spec, schedulingGates: [] } }, new Date(NOW)),
    ).toBeUndefined();
  });
});

describe('renderReleaseResults', () => {
  it('one line per pod acted on, failures with their cause, then the count', () => {
    expect(
      renderReleaseResults(
        [
          { pod: 'a/1', outcome: 'released' },
          { pod: 'a/2', outcome: 'not-gated' },
          { pod: 'b/1', outcome: 'failed', error: 'HTTP 403 Forbidden' },
        ],
        false,
      ),
    ).toBe('released a/1\nfailed b/1: HTTP 403 Forbidden\n1 pod(s) released, 1 failed\n');
    expect(renderReleaseResults([], true)).toBe('0 pod(s) would be released\n');
  });
});
