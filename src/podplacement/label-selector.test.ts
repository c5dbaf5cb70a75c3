import { describe, expect, it } from 'vitest';
import {
  InvalidLabelSelectorError,
  labelSelectorMatches,
  labelSelectorMatchesOrFalse,
  labelSelectorToQuery,
} from './label-selector.js';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front' };
  it('matches like the API server', () => {
    expect(labelSelectorMatches(undefined, labels)).toBe(true);
    expect(labelSelectorMatches({}, labels)).toBe(true);
    expect(labelSelectorMatches({ matchLabels: { app: 'web' } }, labels)).toBe(true);
    expect(labelSelectorMatches({ matchLabels: { app: 'db' } }, labels)).toBe(false);
    expect(
      labelSelectorMatches(
        { matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] },
        labels,
      ),
    ).toBe(true);
    expect(
      labelSelectorMatches(
        { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] },
        labels,
      ),
    ).toBe(false);
    expect(
      labelSelectorMatches({ matchExpressions: [{ key: 'gone', operator: 'NotIn', values: ['x'] }] }, labels),
    ).toBe(true);
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] }, labels)).toBe(
      true,
    );
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'app', operator: 'Exists' }] }, {})).toBe(false);
  });

  it('treats invalid selectors as errors, or as matching nothing', () => {
    const bad = { matchExpressions: [{ key: 'a', operator: 'Near', values: ['b'] }] };
    expect(() => labelSelectorMatches(bad, labels)).toThrow(InvalidLabelSelectorError);
    expect(labelSelectorMatchesOrFalse(bad, labels)).toBe(false);
    expect(() =>
      labelSelectorMatches({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, labels),
    ).toThrow(/needs values/);
  });

  it('renders the query form', () => {
    expect(
      labelSelectorToQuery({
        matchLabels: { a: 'b' },
        matchExpressions: [
          { key: 'c', operator: 'In', values: ['d', 'e'] },
          { key: 'f', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('a=b,c in (d,e),!f');
  });
});
