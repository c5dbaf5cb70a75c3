import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../runtime/index.js';
import {
  DEFAULT_INSPECTION_DEADLINE_MS,
  DEFAULT_RETRY_BASE_DELAY_MS,
  DEFAULT_RETRY_MAX_DELAY_MS,
  RetrySchedule,
} from './retry-schedule.js';

describe('RetrySchedule', () => {
  it('doubles the wait after each failed attempt, from the base delay up to the longest wait', () => {
    const s = new RetrySchedule({ retryBaseDelayMs: 1_000, retryMaxDelayMs: 5_000 });
    expect([1, 2, 3, 4, 5].map((n) => s.delayAfter(n))).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    const defaults = new RetrySchedule();
    expect(defaults.delayAfter(1)).toBe(DEFAULT_RETRY_BASE_DELAY_MS);
    expect(defaults.delayAfter(20)).toBe(DEFAULT_RETRY_MAX_DELAY_MS);
    expect(defaults.deadlineMs).toBe(DEFAULT_INSPECTION_DEADLINE_MS);
  });

  it('holds a failed pod back until its next attempt is due, then lets it through', () => {
    const s = new RetrySchedule({ retryBaseDelayMs: 1_000 });
    expect(s.dueInMs('ns/a', 0)).toBe(0);
    expect(s.retryLater('ns/a', 2, 10_000)).toBe(2_000);
    expect(s.dueInMs('ns/a', 10_500)).toBe(1_500);
    expect(s.dueInMs('ns/b', 10_500)).toBe(0); // another pod is not held back
    expect(s.dueInMs('ns/a', 12_000)).toBe(0);
  });

  it('counts the deadline over all attempts of one pod, and afresh for a new pod of the same name', () => {
    const s = new RetrySchedule({ inspectionDeadlineMs: 10_000 });
    expect(s.budgetMs('ns/a', 'uid-1')).toBe(10_000);
    s.addWait('ns/a', 'uid-1', 4_000);
    s.addWait('ns/a', 'uid-1', 4_000);
    expect(s.budgetMs('ns/a', 'uid-1')).toBe(2_000);
    s.addWait('ns/a', 'uid-1', 5_000);
    expect(s.budgetMs('ns/a', 'uid-1')).toBe(0); // never negative: the next attempt gives up at once
    expect(s.budgetMs('ns/a', 'uid-2')).toBe(10_000); // deleted and recreated: a new pod
  });

  it('forgets a pod that is ungated or gone, so its state does not outlive it', () => {
    const s = new RetrySchedule();
    s.retryLater('ns/a', 1, 0);
    s.addWait('ns/a', 'uid-1', 1_000);
    s.addWait('ns/b', 'uid-2', 1_000);
    expect(s.tracked()).toBe(2);
    s.forget('ns/a');
    s.forget('ns/b');
    expect(s.tracked()).toBe(0);
    expect(s.dueInMs('ns/a', 0)).toBe(0);
    expect(s.budgetMs('ns/a', 'uid-1')).toBe(DEFAULT_INSPECTION_DEADLINE_MS);
  });

  it('refuses a deadline that is not a whole number of milliseconds >= 1, naming the field', () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => new RetrySchedule({ inspectionDeadlineMs: bad })).toThrow(InvalidArgumentError);
    expect(() => new RetrySchedule({ inspectionDeadlineMs: 0 })).toThrow(/inspectionDeadlineMs/);
  });
});
