// The UpdateStatus write turn on an in-memory Lease and a FakeClock: writers take turns (never two writes in flight
// at once), a holder that never lets go is passed over, and a Lease that cannot be used (no RBAC, no namespace)
// costs nothing but turns: writes go ahead at once and say why once.
import { describe, expect, it } from 'vitest';
import { ApiStatusError, type Logger } from '../runtime/index.js';
import { FakeClock, MemoryLeases, flushAsync } from '../runtime/testing/index.js';
import { WRITE_TURN_HOLD_MS, WRITE_TURN_MAX_WAIT_MS, WriteTurn } from './write-turn.js';

/** A write that lasts until the test lets it finish, recording how many writes were in flight at once. */
function writes() {
  let inFlight = 0;
  let mostAtOnce = 0;
  const order: string[] = [];
  const finishers: (() => void)[] = [];
  return {
    order,
    get mostAtOnce() {
      return mostAtOnce;
    },
    get waiting() {
      return finishers.length;
    },
    write: (name: string) => () =>
      new Promise<string>((resolve) => {
        inFlight++;
        mostAtOnce = Math.max(mostAtOnce, inFlight);
        order.push(name);
        finishers.push(() => {
          inFlight--;
          resolve(name);
        });
      }),
    finishOne: () => finishers.shift()?.(),
  };
}

function infoLines(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = (obj: unknown, msg?: string) => void lines.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  const logger = {
    info: log,
    warn: log,
    error: log,
    debug: () => {},
    trace: () => {},
    fatal: log,
    child: () => logger,
  } as unknown as Logger;
  return { logger, lines };
}

describe('WriteTurn', () => {
  it('three writers take turns: one write in flight at a time, each given back for the next', async () => {
    const clock = new FakeClock();
    const leases = new MemoryLeases(clock);
    const w = writes();
    const turns = ['nodes', 'podplacement', 'nodepools'].map(
      (writer) => new WriteTurn({ leases, writer, clock }),
    );
    const done = turns.map((t, i) => t.run(w.write(['nodes', 'podplacement', 'nodepools'][i] ?? '')));
    for (let i = 0; i < 3; i++) {
      // Pollers look again on their timers; the one write in flight holds the turn meanwhile.
      for (let j = 0; j < 20 && w.waiting === 0; j++) await clock.advance(10);
      expect(w.waiting).toBe(1);
      await clock.advance(50);
      expect(w.waiting).toBe(1);
      w.finishOne();
      await flushAsync();
    }
    expect(await Promise.all(done)).toEqual(['nodes', 'podplacement', 'nodepools']);
    expect(w.mostAtOnce).toBe(1);
    expect(turns.map((t) => t.stats.taken)).toEqual([1, 1, 1]);
    expect(leases.lease?.spec?.holderIdentity).toBe('');
  });

  it('a writer that waited maxWaitMs writes without its turn; a holder that crashed is passed over after holdMs', async () => {
    const clock = new FakeClock();
    const leases = new MemoryLeases(clock);
    const crashed = new WriteTurn({ leases, writer: 'crashed', clock });
    // It takes the turn and never gives it back (its write never ends).
    void crashed.run(() => new Promise<never>(() => {}));
    await flushAsync();
    expect(leases.lease?.spec?.holderIdentity).toMatch(/^crashed-/);

    const next = new WriteTurn({ leases, writer: 'nodes', clock });
    const w = writes();
    const first = next.run(w.write('first'));
    await clock.advance(WRITE_TURN_MAX_WAIT_MS - 100);
    expect(w.waiting).toBe(0);
    await clock.advance(200);
    expect(w.waiting).toBe(1);
    w.finishOne();
    await first;
    expect(next.stats).toMatchObject({ taken: 0, without: 1 });

    // Once the holder's Lease has gone unrenewed for its duration, the turn is taken from it.
    await clock.advance(WRITE_TURN_HOLD_MS);
    const second = next.run(w.write('second'));
    await flushAsync();
    expect(w.waiting).toBe(1);
    expect(leases.lease?.spec?.holderIdentity).toMatch(/^nodes-/);
    w.finishOne();
    await second;
    expect(next.stats).toMatchObject({ taken: 1, without: 1 });
  });

  it('a Lease it may not use: writes at once, says why once, and looks again only after a while', async () => {
    const clock = new FakeClock();
    const leases = new MemoryLeases(clock);
    let reads = 0;
    leases.get = () => {
      reads++;
      return Promise.reject(new ApiStatusError('GET', '/lease', 403, 'Forbidden', 'leases is forbidden', {}));
    };
    const { logger, lines } = infoLines();
    const turn = new WriteTurn({ leases, writer: 'external', clock, logger });
    for (let i = 0; i < 3; i++) expect(await turn.run(() => Promise.resolve(i))).toBe(i);
    expect(turn.stats).toMatchObject({ taken: 0, without: 3, waitedMs: 0 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('not allowed to use Lease tessera-update-status/updatestatus-write-turn');
    expect(reads).toBe(1);
    await clock.advance(5 * 60_000);
    await turn.run(() => Promise.resolve('later'));
    expect(reads).toBe(2);
  });

  it('a failed write gives the turn back all the same', async () => {
    const clock = new FakeClock();
    const leases = new MemoryLeases(clock);
    const turn = new WriteTurn({ leases, writer: 'cpi', clock });
    await expect(turn.run(() => Promise.reject(new Error('apply refused')))).rejects.toThrow('apply refused');
    expect(leases.lease?.spec?.holderIdentity).toBe('');
  });

  it('a Lease read that never answers holds the write up for maxWaitMs, not until the client gives up', async () => {
    const clock = new FakeClock();
    const leases = new MemoryLeases(clock);
    leases.mode = 'hang';
    const turn = new WriteTurn({ leases, writer: 'nodes', clock });
    const w = writes();
    const done = turn.run(w.write('at once'));
    await clock.advance(WRITE_TURN_MAX_WAIT_MS - 1);
    expect(w.waiting).toBe(0);
    await clock.advance(1);
    expect(w.waiting).toBe(1);
    w.finishOne();
    expect(await done).toBe('at once');
    expect(turn.stats).toMatchObject({ taken: 0, without: 1 });
  });

  it('giving the turn back that never answers is abandoned after maxWaitMs', async () => {
    const clock = new FakeClock();
    const leases = new MemoryLeases(clock);
    const turn = new WriteTurn({ leases, writer: 'cpi', clock });
    let result: string | undefined;
    const done = turn
      .run(() => {
        leases.mode = 'hang';
        return Promise.resolve('written');
      })
      .then((r) => (result = r));
    await flushAsync();
    expect(turn.stats.taken).toBe(1);
    expect(result).toBeUndefined();
    await clock.advance(WRITE_TURN_MAX_WAIT_MS);
    await done;
    expect(result).toBe('written');
    expect(leases.calls.at(-1)?.signal?.aborted).toBe(true);
  });

  it('a Lease deleted between its read and the update is looked at again, not given up on for 5 minutes', async () => {
    const clock = new FakeClock();
    const leases = new MemoryLeases(clock);
    await new WriteTurn({ leases, writer: 'earlier', clock }).run(() => Promise.resolve());
    const update = leases.update.bind(leases);
    let deleted = false;
    leases.update = (obj, opts) => {
      if (deleted) return update(obj, opts);
      deleted = true;
      leases.lease = undefined;
      return Promise.reject(new ApiStatusError('PUT', '/lease', 404, 'NotFound', 'not found', {}));
    };
    const { logger, lines } = infoLines();
    const turn = new WriteTurn({ leases, writer: 'nodes', clock, logger });
    const first = turn.run(() => Promise.resolve('first'));
    await clock.advance(100);
    expect(await first).toBe('first');
    expect(await turn.run(() => Promise.resolve('second'))).toBe('second');
    expect(turn.stats).toMatchObject({ taken: 2, without: 0 });
    expect(lines).toEqual([]);
  });
});
