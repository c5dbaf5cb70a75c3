// LeaderElector's renew loop on a FakeClock with an in-memory Lease store: the leader stops leading no later than
// renewDeadline after the start of its last successful renewal (so before leaseDuration, when others may take
// over), whatever the retry period and even with a renewal hanging; and timings are validated like client-go.
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from './errors.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
import { FakeClock, MemoryLeases } from './testing/index.js';

const T0 = 1_000_000;

interface Harness {
  clock: FakeClock;
  leases: MemoryLeases;
  elector: LeaderElector;
  /** Clock time at which the leading signal aborted (undefined while leading). */
  stoppedAt(): number | undefined;
  stoppedCalls(): number;
  running: Promise<void>;
  stop: AbortController;
}

async function leaderWith(
  timings: Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>,
): Promise<Harness> {
  const clock = new FakeClock(T0);
  const leases = new MemoryLeases(clock);
  let stoppedAt: number | undefined;
  let stoppedCalls = 0;
  const elector = new LeaderElector({
    leases,
    leaseName: 'test',
    leaseNamespace: 'ns',
    identity: 'me',
    ...timings,
    clock,
    callbacks: {
      onStartedLeading: (signal) =>
        signal.addEventListener('abort', () => (stoppedAt = clock.now()), { once: true }),
      onStoppedLeading: () => stoppedCalls++,
    },
  });
  const stop = new AbortController();
  const running = elector.run(stop.signal);
  await clock.advance(0);
  expect(elector.isLeader()).toBe(true);
  expect(elector.lastRenewTime()).toBe(T0);
  return {
    clock,
    leases,
    elector,
    stoppedAt: () => stoppedAt,
    stoppedCalls: () => stoppedCalls,
    running,
    stop,
  };
}

describe('LeaderElector renew deadline', () => {
  it('keeps leading while renewals succeed, renewing every retryPeriod', async () => {
    const h = await leaderWith({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    await h.clock.advance(60_000);
    expect(h.elector.isLeader()).toBe(true);
    expect(h.stoppedAt()).toBeUndefined();
    expect(h.leases.calls.filter((c) => c.op === 'update')).toHaveLength(30);
    expect(h.elector.lastRenewTime()).toBe(T0 + 60_000);
    h.stop.abort();
    await h.running;
    expect(h.stoppedCalls()).toBe(1);
    expect(h.leases.lease?.spec?.holderIdentity ?? '').toBe(''); // released on shutdown
  });

  it('stops exactly at the deadline when a renewal hangs, aborting the request in flight', async () => {
    const h = await leaderWith({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    h.leases.mode = 'hang';
    await h.clock.advance(9_999);
    expect(h.stoppedAt()).toBeUndefined();
    const inFlight = h.leases.calls.at(-1);
    expect(inFlight?.at).toBe(T0 + 2_000);
    expect(inFlight?.signal?.aborted).toBe(false);
    await h.clock.advance(1);
    expect(h.stoppedAt()).toBe(T0 + 10_000);
    expect(inFlight?.signal?.aborted).toBe(true);
    await h.running; // run() ends by itself once leadership is lost
    expect(h.elector.isLeader()).toBe(false);
    expect(h.stoppedCalls()).toBe(1);
  });

  it('retries failed renewals every retryPeriod but never sleeps past the deadline', async () => {
    const h = await leaderWith({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 3_000 });
    h.leases.mode = 'refuse';
    await h.clock.advance(20_000);
    expect(h.leases.calls.filter((c) => c.at > T0).map((c) => c.at - T0)).toEqual([3_000, 6_000, 9_000]);
    expect(h.stoppedAt()).toBe(T0 + 10_000);
    await h.running;
  });

  it('stops before leaseDuration even when retryPeriod is close to renewDeadline', async () => {
    // Valid timings under which sleeping a full retryPeriod before checking the deadline would lead until
    // lastRenew + 4,000 ms, past the 3,000 ms lease: two leaders.
    const h = await leaderWith({ leaseDurationMs: 3_000, renewDeadlineMs: 2_500, retryPeriodMs: 2_000 });
    h.leases.mode = 'refuse';
    await h.clock.advance(10_000);
    expect(h.stoppedAt()).toBe(T0 + 2_500);
    expect(h.stoppedAt()).toBeLessThan(T0 + 3_000);
    await h.running;
  });

  it('counts the deadline from the start of the last successful renewal, not its end', async () => {
    const h = await leaderWith({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    await h.clock.advance(2_000); // renewed: the attempt began at T0 + 2,000
    expect(h.elector.lastRenewTime()).toBe(T0 + 2_000);
    h.leases.mode = 'refuse';
    await h.clock.advance(20_000);
    expect(h.stoppedAt()).toBe(T0 + 12_000);
    await h.running;
  });

  it('steps down at once when another candidate holds the lease', async () => {
    const h = await leaderWith({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    h.leases.takenBy('other');
    await h.clock.advance(2_000);
    expect(h.stoppedAt()).toBe(T0 + 2_000);
    await h.running;
    expect(h.elector.getLeader()).toBe('other');
    expect(h.leases.lease?.spec?.holderIdentity).toBe('other'); // not released: it is not ours
  });
});

describe('LeaderElector option validation', () => {
  const base = {
    leases: new MemoryLeases(new FakeClock(0)),
    leaseName: 'l',
    leaseNamespace: 'ns',
    callbacks: { onStartedLeading: () => undefined },
  };
  const fieldOf = (opts: Partial<LeaderElectionOptions>): string | undefined => {
    try {
      new LeaderElector({ ...base, ...opts });
      return undefined;
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidArgumentError);
      return err instanceof InvalidArgumentError ? err.field : 'not an InvalidArgumentError';
    }
  };

  it.each([
    [{ leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }, 'leaseDurationMs'],
    [{ leaseDurationMs: 9_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }, 'leaseDurationMs'],
    [{ leaseDurationMs: 15_000, renewDeadlineMs: 2_400, retryPeriodMs: 2_000 }, 'renewDeadlineMs'],
    [{ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 0 }, 'retryPeriodMs'],
    [{ leaseDurationMs: -1, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }, 'leaseDurationMs'],
    [{ leaseDurationMs: 15_000, renewDeadlineMs: Number.NaN, retryPeriodMs: 2_000 }, 'renewDeadlineMs'],
  ])('rejects %o naming %s', (timings, field) => {
    expect(fieldOf(timings)).toBe(field);
  });

  it('accepts the defaults and the tightest valid ratios', () => {
    expect(fieldOf({})).toBeUndefined();
    expect(fieldOf({ leaseDurationMs: 2_501, renewDeadlineMs: 2_500, retryPeriodMs: 2_000 })).toBeUndefined();
  });

  it('requires a client or a lease store', () => {
    expect(fieldOf({ leases: undefined })).toBe('client');
  });
});
