import { describe, expect, it } from 'vitest';
import { type LeaseSpec } from '../runtime/index.js';
import {
  NO_LEASE_VIEW,
  gatingVerdict,
  leasePollIntervalMs,
  observeControllerLease,
  type ControllerLeaseView,
} from './controller-liveness.js';
import { FakeClock } from '../runtime/testing/index.js';

const STALE_MS = 300_000;
const lease = (renewTime: string, holder = 'controller-0'): LeaseSpec => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  renewTime,
  leaseTransitions: 1,
});

/** Reads `spec` every 10 s for `ms` on `clock`, folding each read into the view. */
function watchFor(
  view: ControllerLeaseView,
  clock: FakeClock,
  ms: number,
  spec: (i: number) => LeaseSpec | undefined,
): ControllerLeaseView {
  let v = view;
  for (let t = 0, i = 0; t <= ms; t += 10_000, i++) {
    v = observeControllerLease(v, spec(i), clock.now());
    if (t < ms) clock.step(10_000);
  }
  return v;
}

describe('gatingVerdict: does the webhook keep gating, by how long it has seen the Lease unchanged', () => {
  it('gates before the Lease was ever read (nothing is known yet)', () => {
    expect(gatingVerdict(NO_LEASE_VIEW, 0, STALE_MS)).toEqual({ gate: true, why: 'unknown' });
  });

  it('keeps gating while the record changes at every read, however long that goes on', () => {
    const clock = new FakeClock();
    const view = watchFor(NO_LEASE_VIEW, clock, 2 * STALE_MS, (i) => lease(`renew-${i}`));
    expect(gatingVerdict(view, clock.now(), STALE_MS)).toMatchObject({ gate: true, why: 'renewed' });
  });

  it('stops gating once the record has been unchanged for the threshold, naming the holder', () => {
    const clock = new FakeClock();
    const frozen = lease('2026-01-01T00:00:00.000000Z', 'controller-7');
    let view = watchFor(NO_LEASE_VIEW, clock, STALE_MS - 10_000, () => frozen);
    expect(gatingVerdict(view, clock.now(), STALE_MS).gate).toBe(true);
    clock.step(10_000);
    view = observeControllerLease(view, frozen, clock.now());
    expect(gatingVerdict(view, clock.now(), STALE_MS)).toEqual({
      gate: false,
      why: 'stale',
      unchangedForMs: STALE_MS,
      holder: 'controller-7',
    });
  });

  it('gates again at the first read after the Lease is renewed', () => {
    const clock = new FakeClock();
    let view = watchFor(NO_LEASE_VIEW, clock, STALE_MS, () => lease('old'));
    expect(gatingVerdict(view, clock.now(), STALE_MS).gate).toBe(false);
    clock.step(10_000);
    view = observeControllerLease(view, lease('new'), clock.now());
    expect(gatingVerdict(view, clock.now(), STALE_MS)).toEqual({
      gate: true,
      why: 'renewed',
      unchangedForMs: 0,
    });
  });

  it('never compares renewTime with the local clock: an old-looking but changing Lease gates, a future one can be stale', () => {
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const skewedBehind = watchFor(NO_LEASE_VIEW, clock, STALE_MS, (i) =>
      lease(`2001-01-01T00:00:${String(i % 60).padStart(2, '0')}.000000Z`),
    );
    expect(gatingVerdict(skewedBehind, clock.now(), STALE_MS).gate).toBe(true);
    const future = watchFor(NO_LEASE_VIEW, clock, STALE_MS, () => lease('2099-01-01T00:00:00.000000Z'));
    expect(gatingVerdict(future, clock.now(), STALE_MS).gate).toBe(false);
  });

  it('takes a released Lease, unchanged for the threshold, as not renewed', () => {
    const clock = new FakeClock();
    const released = watchFor(NO_LEASE_VIEW, clock, STALE_MS, () => lease('t', ''));
    expect(gatingVerdict(released, clock.now(), STALE_MS)).toMatchObject({ gate: false, holder: '' });
  });

  it('keeps gating while there is no Lease at all: a controller without leader election never creates one', () => {
    const clock = new FakeClock();
    const missing = watchFor(NO_LEASE_VIEW, clock, STALE_MS * 10, () => undefined);
    expect(gatingVerdict(missing, clock.now(), STALE_MS)).toEqual({ gate: true, why: 'unknown' });
    // Once a leader-elected controller creates it, the threshold counts from then.
    const created = observeControllerLease(missing, lease('c'), clock.now());
    expect(gatingVerdict(created, clock.now(), STALE_MS).gate).toBe(true);
    const stale = watchFor(created, clock, STALE_MS, () => lease('c'));
    expect(gatingVerdict(stale, clock.now(), STALE_MS).gate).toBe(false);
  });

  it('a restarted webhook watches for the whole threshold itself before it stops gating', () => {
    const clock = new FakeClock();
    const first = observeControllerLease(NO_LEASE_VIEW, lease('frozen for an hour already'), clock.now());
    expect(gatingVerdict(first, clock.now(), STALE_MS)).toMatchObject({ gate: true, why: 'renewed' });
  });

  it('goes back to gating ("unknown") when the Lease could not be read for the threshold', () => {
    const clock = new FakeClock();
    const view = watchFor(NO_LEASE_VIEW, clock, STALE_MS, () => lease('frozen'));
    expect(gatingVerdict(view, clock.now(), STALE_MS).gate).toBe(false);
    // No successful read since: an RBAC or API problem, not evidence about the controller.
    clock.step(STALE_MS);
    expect(gatingVerdict(view, clock.now(), STALE_MS)).toEqual({ gate: true, why: 'unknown' });
  });

  it('reads often enough that the verdict lags by at most a fifth of the threshold, at most every 10 s', () => {
    expect(leasePollIntervalMs(STALE_MS)).toBe(10_000);
    expect(leasePollIntervalMs(5_000)).toBe(1_000);
    expect(leasePollIntervalMs(1_000)).toBe(200);
  });
});
