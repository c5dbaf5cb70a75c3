import { describe, expect, it } from 'vitest';
import {
  decideLease,
  microTime,
  observe,
  releasedSpec,
  type LeaseSpec,
  type ObservedLease,
} from './lease-decision.js';

const t0 = Date.UTC(2026, 0, 1);
const fresh: ObservedLease = { fingerprint: '', observedAt: 0 };

describe('decideLease', () => {
  it('creates the lease when there is none', () => {
    const d = decideLease(undefined, fresh, 'me', 15_000, t0);
    expect(d).toEqual({
      action: 'create',
      spec: {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: microTime(t0),
        renewTime: microTime(t0),
        leaseTransitions: 0,
      },
    });
  });

  it('waits while another holder has been seen for less than its lease duration (local observation time)', () => {
    const theirs: LeaseSpec = {
      holderIdentity: 'other',
      leaseDurationSeconds: 15,
      renewTime: microTime(t0 - 3_600_000),
      leaseTransitions: 2,
    };
    // The renewTime is an hour old by *their* clock, but we first saw this record at t0: it is valid for us.
    const observed = observe(fresh, theirs, t0);
    expect(decideLease(theirs, observed, 'me', 15_000, t0 + 14_000)).toEqual({
      action: 'wait',
      holder: 'other',
      expiresInMs: 1000,
    });
    const d = decideLease(theirs, observed, 'me', 15_000, t0 + 15_000);
    expect(d).toMatchObject({
      action: 'update',
      gained: true,
      spec: { holderIdentity: 'me', leaseTransitions: 3, acquireTime: microTime(t0 + 15_000) },
    });
  });

  it('restarts the expiry clock when the holder renews', () => {
    const v1: LeaseSpec = { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: 'a' };
    const v2: LeaseSpec = { ...v1, renewTime: 'b' };
    let observed = observe(fresh, v1, t0);
    observed = observe(observed, v1, t0 + 10_000);
    expect(observed.observedAt).toBe(t0);
    observed = observe(observed, v2, t0 + 12_000);
    expect(decideLease(v2, observed, 'me', 15_000, t0 + 20_000)).toMatchObject({ action: 'wait' });
  });

  it('renews its own lease keeping acquireTime and transitions', () => {
    const mine: LeaseSpec = {
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      acquireTime: 'x',
      renewTime: 'y',
      leaseTransitions: 4,
    };
    const d = decideLease(mine, observe(fresh, mine, t0), 'me', 15_000, t0 + 2000);
    expect(d).toEqual({
      action: 'update',
      gained: false,
      spec: { ...mine, renewTime: microTime(t0 + 2000) },
    });
  });

  it('takes a released lease (empty holder) at once', () => {
    const released = releasedSpec({ holderIdentity: 'other', leaseTransitions: 1 }, t0);
    expect(released.holderIdentity).toBe('');
    expect(decideLease(released, observe(fresh, released, t0), 'me', 15_000, t0)).toMatchObject({
      action: 'update',
      gained: true,
    });
  });

  it('formats MicroTime with six fractional digits', () => {
    expect(microTime(t0 + 123)).toBe('2026-01-01T00:00:00.123000Z');
  });
});
