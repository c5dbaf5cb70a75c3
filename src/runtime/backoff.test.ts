import { describe, expect, it } from 'vitest';
import { Backoff, retryForever } from './backoff.js';
import { InvalidArgumentError } from './errors.js';
import type { Logger } from './logging.js';
import { FakeClock, flushAsync } from './testing/index.js';

describe('Backoff', () => {
  it('grows exponentially up to the cap and never stops', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0 });
    const delays = Array.from({ length: 8 }, () => b.next());
    expect(delays).toEqual([100, 200, 400, 800, 1000, 1000, 1000, 1000]);
    expect(b.attempts()).toBe(8);
  });

  it('adds jitter within [delay, delay * (1 + jitter)]', () => {
    const lo = new Backoff({ initialMs: 100, jitter: 1, random: () => 0 });
    const hi = new Backoff({ initialMs: 100, jitter: 1, random: () => 0.999 });
    expect(lo.next()).toBe(100);
    expect(hi.next()).toBeCloseTo(199.9);
  });

  it('starts over after reset', () => {
    const b = new Backoff({ initialMs: 10, jitter: 0 });
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(10);
  });

  it('rejects a cap below the initial delay', () => {
    expect(() => new Backoff({ initialMs: 10, maxMs: 5 })).toThrow(InvalidArgumentError);
  });
});

interface Warning {
  obj: Record<string, unknown>;
  msg: string;
}

function warningsLogger(warnings: Warning[]): Logger {
  const ignore = (): void => undefined;
  const logger: Logger = {
    error: ignore,
    warn: (obj, msg) => warnings.push({ obj: obj as Record<string, unknown>, msg: msg ?? '' }),
    info: ignore,
    debug: ignore,
    trace: ignore,
    child: () => logger,
  };
  return logger;
}

/** An operation that fails `failures` times, then returns 'done'. */
function failingThenOk(failures: number): { run: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    run: async () => {
      calls++;
      if (calls <= failures) throw new Error(`attempt ${calls} refused`);
      return 'done';
    },
    calls: () => calls,
  };
}

describe('retryForever', () => {
  it('retries with the backoff until the operation succeeds, logging each failure with what it was doing', async () => {
    const clock = new FakeClock();
    const warnings: Warning[] = [];
    const op = failingThenOk(3);
    const result = retryForever(op.run, {
      what: 'write the webhook configuration',
      impact: 'config changes are refused',
      log: warningsLogger(warnings),
      backoff: new Backoff({ initialMs: 100, maxMs: 250, jitter: 0 }),
      clock,
    });
    for (let i = 0; i < 3; i++) await clock.advance(1000);
    await expect(result).resolves.toBe('done');
    expect(op.calls()).toBe(4);
    expect(warnings.map((w) => w.msg)).toEqual(
      Array(3).fill('could not write the webhook configuration; retrying'),
    );
    expect(warnings.map((w) => w.obj['retryInMs'])).toEqual([100, 200, 250]);
    expect(warnings.map((w) => w.obj['attempt'])).toEqual([1, 2, 3]);
    expect(warnings.map((w) => (w.obj['err'] as Error).message)).toEqual([
      'attempt 1 refused',
      'attempt 2 refused',
      'attempt 3 refused',
    ]);
    expect(warnings[0]?.obj['impact']).toBe('config changes are refused');
  });

  it('waits for the backoff before the next attempt', async () => {
    const clock = new FakeClock();
    const op = failingThenOk(1);
    const result = retryForever(op.run, {
      what: 'x',
      log: warningsLogger([]),
      backoff: new Backoff({ initialMs: 100, jitter: 0 }),
      clock,
    });
    await clock.advance(99);
    expect(op.calls()).toBe(1);
    await clock.advance(1);
    await expect(result).resolves.toBe('done');
    expect(op.calls()).toBe(2);
  });

  it('stops when the signal aborts during a wait, without another attempt', async () => {
    const clock = new FakeClock();
    const stop = new AbortController();
    const op = failingThenOk(Infinity);
    const result = retryForever(op.run, { what: 'x', log: warningsLogger([]), signal: stop.signal, clock });
    await flushAsync();
    expect(op.calls()).toBe(1);
    stop.abort();
    await expect(result).resolves.toBeUndefined();
    await clock.advance(60_000);
    expect(op.calls()).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('does not start when the signal has already aborted', async () => {
    const op = failingThenOk(0);
    const result = await retryForever(op.run, {
      what: 'x',
      log: warningsLogger([]),
      signal: AbortSignal.abort(),
      clock: new FakeClock(),
    });
    expect(result).toBeUndefined();
    expect(op.calls()).toBe(0);
  });

  it('does not log a failure caused by the abort', async () => {
    const stop = new AbortController();
    const warnings: Warning[] = [];
    const result = await retryForever(
      async () => {
        stop.abort();
        throw new Error('aborted mid-request');
      },
      { what: 'x', log: warningsLogger(warnings), signal: stop.signal, clock: new FakeClock() },
    );
    expect(result).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it('starts the backoff over after a success, so a shared backoff is reusable', async () => {
    const clock = new FakeClock();
    const warnings: Warning[] = [];
    const backoff = new Backoff({ initialMs: 100, jitter: 0 });
    const options = { what: 'x', log: warningsLogger(warnings), backoff, clock };
    const first = retryForever(failingThenOk(2).run, options);
    await clock.advance(1000);
    await first;
    const second = retryForever(failingThenOk(1).run, options);
    await clock.advance(1000);
    await second;
    expect(warnings.map((w) => w.obj['retryInMs'])).toEqual([100, 200, 100]);
  });
});
