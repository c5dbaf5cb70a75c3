// The controller's decisions without a server or a clock: write throttling, the Healthy condition's transition
// time (apimachinery's SetStatusCondition rule).
import { describe, expect, it } from 'vitest';
import type { Condition } from './api/schema.js';
import { healthConditions, MAX_CONDITION_MESSAGE, writeDelayMs } from './write-policy.js';

const T0 = Date.UTC(2026, 0, 1);
const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('writeDelayMs', () => {
  it('lets the first write and any write after the interval go at once', () => {
    expect(writeDelayMs(T0, -Infinity, 1_000)).toBe(0);
    expect(writeDelayMs(T0 + 1_000, T0, 1_000)).toBe(0);
    expect(writeDelayMs(T0 + 5_000, T0, 1_000)).toBe(0);
  });
  it('puts off a write inside the interval until the interval ends', () => {
    expect(writeDelayMs(T0 + 250, T0, 1_000)).toBe(750);
    expect(writeDelayMs(T0, T0, 1_000)).toBe(1_000);
  });
  it('never throttles with a zero interval', () => {
    expect(writeDelayMs(T0, T0, 0)).toBe(0);
  });
});

describe('healthConditions', () => {
  const ok = { healthy: true, reason: 'AsExpected', message: 'Insights are gathered and interpreted' };
  const first = healthConditions(undefined, ok, T0);

  it('stamps a new Healthy condition with now', () => {
    expect(first).toEqual([
      {
        type: 'Healthy',
        status: 'True',
        reason: 'AsExpected',
        message: ok.message,
        lastTransitionTime: at(T0),
      },
    ]);
  });

  it('keeps the transition time while the status stays, even when reason or message change', () => {
    const later = healthConditions(first, { ...ok, message: 'other words' }, T0 + 60_000);
    expect(later[0]).toMatchObject({ message: 'other words', lastTransitionTime: at(T0) });
    const failed = healthConditions(
      [
        {
          type: 'Healthy',
          status: 'False',
          reason: 'CannotAssess',
          message: 'a',
          lastTransitionTime: at(T0),
        },
      ],
      { healthy: false, reason: 'InsufficientData', message: 'b' },
      T0 + 60_000,
    );
    expect(failed[0]).toMatchObject({ reason: 'InsufficientData', lastTransitionTime: at(T0) });
  });

  it('moves the transition time when the status flips', () => {
    const down = healthConditions(
      first,
      { healthy: false, reason: 'InsufficientData', message: 'no CV' },
      T0 + 60_000,
    );
    expect(down).toEqual([
      {
        type: 'Healthy',
        status: 'False',
        reason: 'InsufficientData',
        message: 'no CV',
        lastTransitionTime: at(T0 + 60_000),
      },
    ]);
  });

  it('owns the whole list: other condition types are not carried over', () => {
    const previous: Condition[] = [
      { type: 'Stale', status: 'True', reason: 'X', message: '', lastTransitionTime: at(T0) },
      ...first,
    ];
    expect(healthConditions(previous, ok, T0 + 1_000).map((c) => c.type)).toEqual(['Healthy']);
  });

  it('cuts a message the API server would refuse', () => {
    const long = healthConditions(
      undefined,
      { healthy: false, reason: 'InternalError', message: 'x'.repeat(100_000) },
      T0,
    );
    expect(long[0]?.message).toHaveLength(MAX_CONDITION_MESSAGE);
  });
});
