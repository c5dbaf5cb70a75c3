import { describe, expect, it } from 'vitest';
import {
  InvalidLabelSelectorError,
  labelSelectorMatcher,
  labelSelectorMatches,
  labelSelectorProblem,
  labelSelectorMatchesOrFalse,
  labelSelectorToQuery,
  type LabelSelector,
} from './label-selector.js';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front' };
  it('matches like the API server', () => {
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

  it('treats a selector with an invalid key or value as matching nothing, never everything (as MTO does)', () => {
    // NotIn/DoesNotExist on a key no pod carries would otherwise select every pod.
    const invalid: LabelSelector[] = [
      { matchExpressions: [{ key: 'bad key!', operator: 'DoesNotExist' }] },
      { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['not a value!'] }] },
      { matchExpressions: [{ key: 'Upper.Case/x', operator: 'DoesNotExist' }] },
      { matchExpressions: [{ key: `${'a'.repeat(64)}`, operator: 'Exists' }] },
      { matchExpressions: [{ key: '-leading', operator: 'DoesNotExist' }] },
      { matchLabels: { app: 'x'.repeat(64) } },
      { matchLabels: { '/app': 'web' } },
    ];
    for (const selector of invalid) {
      expect(labelSelectorProblem(selector), JSON.stringify(selector)).toBeDefined();
      expect(() => labelSelectorMatches(selector, labels)).toThrow(InvalidLabelSelectorError);
      expect(labelSelectorMatchesOrFalse(selector, labels)).toBe(false);
    }
    const valid: LabelSelector[] = [
      { matchExpressions: [{ key: 'example.com/tier', operator: 'NotIn', values: ['a-b_c.d', ''] }] },
      { matchLabels: { 'k8s.io/x': '', a: 'A1' } },
      // The longest valid key: a 253-character DNS subdomain prefix and a 63-character name.
      {
        matchExpressions: [
          {
            key: `${['a', 'b', 'c'].map((c) => c.repeat(63)).join('.')}.${'d'.repeat(61)}/${'e'.repeat(63)}`,
            operator: 'Exists',
          },
        ],
      },
    ];
    for (const selector of valid)
      expect(labelSelectorProblem(selector), JSON.stringify(selector)).toBeUndefined();
  });

  it('never reads inherited properties as labels', () => {
    expect(labelSelectorMatches({ matchLabels: { constructor: 'x' } }, labels)).toBe(false);
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, {})).toBe(
      false,
    );
    expect(
      labelSelectorMatches({ matchExpressions: [{ key: 'constructor', operator: 'DoesNotExist' }] }, {}),
    ).toBe(true);
  });

  it('compiles a selector once for many label sets; `{}` matches every set, even none', () => {
    const matches = labelSelectorMatcher({
      matchLabels: { app: 'web' },
      matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['back'] }],
    });
    expect([labels, { app: 'web' }, { app: 'web', tier: 'back' }, undefined].map(matches)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(labelSelectorMatcher({})(undefined)).toBe(true);
    expect(() => labelSelectorMatcher({ matchExpressions: [{ operator: 'Exists' }] })).toThrow(
      expect.objectContaining({ code: 'TESSERA_INVALID_LABEL_SELECTOR' }),
    );
  });
});

describe('labelSelectorProblem on what apimachinery accepts and on malformed input', () => {
  it('accepts a key prefix with a label over 63 characters, as IsDNS1123Subdomain does', () => {
    expect(
      labelSelectorProblem({ matchLabels: { [`${'a'.repeat(64)}.example.com/x`]: 'v' } }),
    ).toBeUndefined();
    expect(labelSelectorProblem({ matchLabels: { [`${'a'.repeat(254)}/x`]: 'v' } })).toMatch(
      /invalid prefix/,
    );
  });

  it('names the problem instead of throwing on shapes a hand-written file may carry', () => {
    const malformed: unknown[] = [
      { matchLabels: [] },
      { matchLabels: { app: 3 } },
      { matchExpressions: {} },
      { matchExpressions: [null] },
      { matchExpressions: [{ key: 7, operator: 'Exists' }] },
      { matchExpressions: [{ key: 'app', operator: 'In', values: 'web' }] },
      { matchExpressions: [{ key: 'app', operator: 'In', values: [1] }] },
    ];
    for (const selector of malformed)
      expect(labelSelectorProblem(selector as LabelSelector), JSON.stringify(selector)).toEqual(
        expect.any(String),
      );
  });
});
