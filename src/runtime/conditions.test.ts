import { describe, expect, it } from 'vitest';
import {
  findStatusCondition,
  isStatusConditionTrue,
  metaTime,
  removeStatusCondition,
  setStatusCondition,
  transitionTime,
  truncateText,
  type Condition,
} from './conditions.js';
import { InvalidArgumentError } from './errors.js';

const t0 = Date.UTC(2026, 0, 1, 10, 0, 0);
const t1 = t0 + 60_000;

describe('setStatusCondition', () => {
  it('adds a new condition with lastTransitionTime = now (second precision)', () => {
    const { conditions, changed } = setStatusCondition(
      [],
      { type: 'Ready', status: 'True', reason: 'AllGood', message: 'ok', observedGeneration: 3 },
      t0 + 123,
    );
    expect(changed).toBe(true);
    expect(conditions).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'AllGood',
        message: 'ok',
        observedGeneration: 3,
        lastTransitionTime: '2026-01-01T10:00:00Z',
      },
    ]);
  });

  it('keeps lastTransitionTime when only reason/message/observedGeneration change', () => {
    const first = setStatusCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'Waiting', message: 'a', observedGeneration: 1 },
      t0,
    ).conditions;
    const { conditions, changed } = setStatusCondition(
      first,
      { type: 'Ready', status: 'False', reason: 'StillWaiting', message: 'b', observedGeneration: 2 },
      t1,
    );
    expect(changed).toBe(true);
    expect(conditions[0]).toMatchObject({
      reason: 'StillWaiting',
      message: 'b',
      observedGeneration: 2,
      lastTransitionTime: metaTime(t0),
    });
  });

  it('moves lastTransitionTime when the status changes', () => {
    const first = setStatusCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'Waiting', message: '' },
      t0,
    ).conditions;
    const { conditions } = setStatusCondition(
      first,
      { type: 'Ready', status: 'True', reason: 'Done', message: '' },
      t1,
    );
    expect(findStatusCondition(conditions, 'Ready')?.lastTransitionTime).toBe(metaTime(t1));
    expect(isStatusConditionTrue(conditions, 'Ready')).toBe(true);
  });

  it('reports no change (and returns equal content) when nothing differs, without touching the input', () => {
    const first: readonly Condition[] = setStatusCondition(
      undefined,
      { type: 'A', status: 'True', reason: 'R', message: 'm' },
      t0,
    ).conditions;
    const snapshot = structuredClone(first);
    const { conditions, changed } = setStatusCondition(
      first,
      { type: 'A', status: 'True', reason: 'R', message: 'm' },
      t1,
    );
    expect(changed).toBe(false);
    expect(conditions).toEqual(snapshot);
    expect(first).toEqual(snapshot);
  });

  it('preserves the order of other conditions', () => {
    let list = setStatusCondition(
      undefined,
      { type: 'A', status: 'True', reason: 'R', message: '' },
      t0,
    ).conditions;
    list = setStatusCondition(list, { type: 'B', status: 'True', reason: 'R', message: '' }, t0).conditions;
    list = setStatusCondition(list, { type: 'A', status: 'False', reason: 'R', message: '' }, t1).conditions;
    expect(list.map((c) => c.type)).toEqual(['A', 'B']);
    expect(removeStatusCondition(list, 'A')).toEqual({ conditions: [list[1]], changed: true });
    expect(removeStatusCondition(list, 'C').changed).toBe(false);
  });

  it('rejects values the API server would reject', () => {
    expect(() =>
      setStatusCondition([], { type: 'Ready', status: 'True', reason: 'not camel case', message: '' }, t0),
    ).toThrow(InvalidArgumentError);
    expect(() =>
      setStatusCondition([], { type: 'Ready', status: 'Yes' as 'True', reason: 'R', message: '' }, t0),
    ).toThrow(InvalidArgumentError);
    expect(() => setStatusCondition([], { type: '', status: 'True', reason: 'R', message: '' }, t0)).toThrow(
      InvalidArgumentError,
    );
  });
});

describe('truncateText', () => {
  it('keeps text within the limit, and cuts longer text to the limit with its marker', () => {
    expect(truncateText('short', 10)).toBe('short');
    expect(truncateText('a'.repeat(20), 10)).toBe('a'.repeat(10));
    expect(truncateText('a'.repeat(20), 10, ' [cut]')).toBe('aaaa [cut]');
  });

  it('never splits a surrogate pair at the cut', () => {
    const cut = truncateText(`${'a'.repeat(9)}😀b`, 10);
    expect(cut).toBe('a'.repeat(9));
    expect(truncateText(`${'a'.repeat(8)}😀b`, 10)).toBe(`${'a'.repeat(8)}😀`);
    expect(truncateText(`${'a'.repeat(3)}😀${'b'.repeat(10)}`, 10, ' [cut]')).toBe('aaa [cut]');
  });
});

describe('transitionTime', () => {
  const earlier = '2026-01-01T00:00:00Z';
  const now = '2026-02-01T00:00:00Z';
  it('keeps the time while the status is unchanged, and moves it with the status', () => {
    expect(transitionTime({ status: 'True', lastTransitionTime: earlier }, 'True', now)).toBe(earlier);
    expect(transitionTime({ status: 'True', lastTransitionTime: earlier }, 'False', now)).toBe(now);
  });
  it('stamps a new condition, or one that carried no time, with now', () => {
    expect(transitionTime(undefined, 'True', now)).toBe(now);
    expect(transitionTime({ status: 'True' }, 'True', now)).toBe(now);
  });
});
