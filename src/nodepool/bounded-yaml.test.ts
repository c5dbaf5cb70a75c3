import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fixturePath } from '../../test/support/fixtures.js';
import {
  checkYamlBudget,
  parseAllWithinBudget,
  parseWithinBudget,
  STATUS_YAML_BUDGET,
  TUNING_YAML_BUDGET,
  type YamlBudget,
} from './bounded-yaml.js';
import { BudgetExceededError, NodePoolError } from './errors.js';
import { decodeProfileStatus } from './status-codec.js';

const exampleStatus = (
  parse(readFileSync(fixturePath('hypershift/status-configmap-example.yaml'), 'utf8')) as {
    data: { status: string };
  }
).data.status;

/** The BudgetExceededError `fn` throws (fails the test when it throws anything else, or nothing). */
function budgetError(fn: () => unknown): BudgetExceededError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BudgetExceededError);
    return err as BudgetExceededError;
  }
  throw new Error('expected a BudgetExceededError, nothing was thrown');
}

/**
 * Growth of the V8 heap's committed size while `fn` runs: it rises with the peak of live allocations and does not
 * shrink right away, so it catches a parser building a huge transient tree. Budgets in the tests are generous
 * (the unbounded parser took hundreds of MiB on these inputs).
 */
function heapGrowthMiB(fn: () => void): number {
  const before = getHeapStatistics().total_heap_size;
  fn();
  return (getHeapStatistics().total_heap_size - before) / (1024 * 1024);
}

const MiB = 1024 * 1024;
/** 1 MiB of the hostile inputs of issue #10 item 5. */
const hostile = {
  oversize: `conditions: []\npadding: "${'x'.repeat(MiB)}"\n`,
  flowNesting: '['.repeat(MiB / 2) + ']'.repeat(MiB / 2),
  // A billion-laughs bomb: 9 levels of 9 aliases, well under the library's own default alias limit per node.
  aliasBomb: [
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ...'bcdefghi'.split('').map((name, i) => {
      const prev = 'abcdefghi'[i] ?? 'a';
      return `${name}: &${name} [${Array.from({ length: 9 }, () => `*${prev}`).join(',')}]`;
    }),
  ].join('\n'),
};

describe('checkYamlBudget', () => {
  it('accepts the status NTO writes, as YAML and as JSON', () => {
    expect(() => checkYamlBudget(exampleStatus, STATUS_YAML_BUDGET, 'status')).not.toThrow();
    const json = JSON.stringify(parse(exampleStatus));
    expect(() => checkYamlBudget(json, STATUS_YAML_BUDGET, 'status')).not.toThrow();
  });

  it('rejects text over the byte budget before looking at it, counting UTF-8 bytes', () => {
    const err = budgetError(() => checkYamlBudget(hostile.oversize, STATUS_YAML_BUDGET, 'key "status"'));
    expect(err).toMatchObject({ budget: 'bytes', limit: 65536 });
    expect(err.message).toMatch(/^key "status" is at least \d+ bytes, over the limit of 65536 bytes$/);
    // 30,000 characters, 90,000 bytes: fewer characters than the limit, more bytes.
    const wide = budgetError(() => checkYamlBudget('€'.repeat(30_000), STATUS_YAML_BUDGET, 's'));
    expect(wide).toMatchObject({ budget: 'bytes', actual: 90_000 });
  });

  const deep = (depth: number): Record<string, string> => ({
    'flow sequences': '['.repeat(depth) + ']'.repeat(depth),
    'flow mappings': '{a: '.repeat(depth) + '1' + '}'.repeat(depth),
    'block mappings': Array.from({ length: depth }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n') + ' x\n',
    'compact sequences': `${'- '.repeat(depth)}x\n`,
    "sequences at their key's column":
      Array.from({ length: depth }, (_, i) =>
        i % 2 === 0 ? `${'  '.repeat(i / 2)}k${i}:` : `${'  '.repeat((i - 1) / 2)}-`,
      ).join('\n') + ' x\n',
  });

  it.each(Object.entries(deep(STATUS_YAML_BUDGET.maxDepth + 1)))(
    'rejects %s one level deeper than the budget',
    (_name, text) => {
      const err = budgetError(() => checkYamlBudget(text, STATUS_YAML_BUDGET, 's'));
      expect(err).toMatchObject({ budget: 'depth', limit: 16 });
      expect(err.message).toBe('s nests deeper than 16 levels');
    },
  );

  it.each(Object.entries(deep(STATUS_YAML_BUDGET.maxDepth)))(
    'accepts %s exactly at the budget',
    (_n, text) => {
      expect(() => checkYamlBudget(text, STATUS_YAML_BUDGET, 's')).not.toThrow();
      expect(() => parse(text)).not.toThrow(); // and they are YAML the parser accepts, so the count is meaningful
    },
  );

  it('does not count brackets, dashes or indentation inside quoted and block scalars', () => {
    const text = [
      `a: "${'['.repeat(100)}"`,
      `b: '${'{'.repeat(100)}'`,
      'c: |',
      ...Array.from({ length: 40 }, (_, i) => `  ${' '.repeat(i)}- [[[ {`),
      '# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[',
      'd: x',
    ].join('\n');
    expect(() => checkYamlBudget(text, STATUS_YAML_BUDGET, 's')).not.toThrow();
  });

  it('rejects any alias in a status, and more aliases than a tuning budget allows', () => {
    const one = budgetError(() => checkYamlBudget('a: &x 1\nb: *x\n', STATUS_YAML_BUDGET, 's'));
    expect(one).toMatchObject({ budget: 'aliases', limit: 0 });
    expect(one.message).toBe('s uses a YAML alias (*x); aliases are not accepted here');
    const bomb = budgetError(() => checkYamlBudget(hostile.aliasBomb, TUNING_YAML_BUDGET, 't'));
    expect(bomb).toMatchObject({ budget: 'aliases', limit: 16 });
  });

  it('rejects more nodes than the budget (a long flat list)', () => {
    const text = `[${'1,'.repeat(STATUS_YAML_BUDGET.maxNodes)}1]`;
    expect(budgetError(() => checkYamlBudget(text, STATUS_YAML_BUDGET, 's'))).toMatchObject({
      budget: 'nodes',
      limit: 2000,
    });
  });
});

describe('parseWithinBudget and parseAllWithinBudget', () => {
  it('return what the parser returns for text within budget', () => {
    expect(parseWithinBudget('a: [1, {b: c}]', STATUS_YAML_BUDGET, 's')).toEqual({ a: [1, { b: 'c' }] });
    expect(parseAllWithinBudget('a: 1\n---\nb: 2\n', TUNING_YAML_BUDGET, 't')).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('stop alias expansion beyond the budget even when the alias count itself is within it', () => {
    // 4 levels of 4 aliases (16 in all) expand to 256 nodes: the parser's own limit refuses that.
    const budget: YamlBudget = { ...TUNING_YAML_BUDGET, maxAliases: 16 };
    const text = [
      'a: &a [x, x, x, x]',
      'b: &b [*a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c]',
      'e: [*d, *d, *d, *d]',
    ].join('\n');
    expect(() => parseAllWithinBudget(text, budget, 't')).toThrow(/alias/i);
  });

  it('refuse a repeated key, in a block or a flow mapping, with the position (as the library words it)', () => {
    expect(() => parseWithinBudget('a: 1\nb: 2\na: 3\n', STATUS_YAML_BUDGET, 's')).toThrow(
      'Map keys must be unique at line 3, column 1',
    );
    expect(() => parseAllWithinBudget('x: 1\n---\nm: {k: 1, j: 2, k: 3}\n', TUNING_YAML_BUDGET, 't')).toThrow(
      'Map keys must be unique at line 3, column 17',
    );
    // Keys of different types or different values are different keys, as for the library.
    expect(parseWithinBudget('1: a\n"1": b\ntrue: c\n', STATUS_YAML_BUDGET, 's')).toEqual({
      1: 'b',
      true: 'c',
    });
  });

  it('parse a tuning key of 24,000 map keys (within budget) in time linear in its size (issue #20 item 7)', () => {
    // The library's own duplicate-key check compares each key with every earlier one: 8x the keys cost 64x the
    // CPU (9 s for this input). CPU time of the same process, smallest of a few runs; a ratio, not a duration.
    const mapping = (keys: number): string =>
      [
        'kind: PerformanceProfile',
        'metadata: {name: p}',
        ...Array.from({ length: keys }, (_, i) => `k${i}: v`),
      ].join('\n');
    const large = mapping(24_000);
    expect(Buffer.byteLength(large)).toBeLessThanOrEqual(TUNING_YAML_BUDGET.maxBytes);
    const cpuMs = (text: string, runs: number): number => {
      let best = Number.POSITIVE_INFINITY;
      for (let i = 0; i < runs; i++) {
        const before = process.cpuUsage();
        parseAllWithinBudget(text, TUNING_YAML_BUDGET, 't');
        const used = process.cpuUsage(before);
        best = Math.min(best, (used.user + used.system) / 1000);
      }
      return best;
    };
    const small = cpuMs(mapping(24_000 / 8), 5);
    const big = cpuMs(large, 1);
    expect(big / Math.max(small, 1)).toBeLessThan(24);
  }, 120_000); // generous for a loaded 2-core machine: the quadratic parse this replaced took minutes there
});

describe('hostile status text (issue #10 item 5): a clear NodePoolError, a bounded heap', () => {
  it.each(Object.entries(hostile))('%s', (_name, text) => {
    let thrown: unknown;
    const growth = heapGrowthMiB(() => {
      try {
        decodeProfileStatus(text);
      } catch (err) {
        thrown = err;
      }
    });
    expect(thrown).toBeInstanceOf(BudgetExceededError);
    expect(growth).toBeLessThan(64);
  });

  it('garbage within the byte budget: a NodePoolError every time, a bounded heap', () => {
    // Deterministic pseudo-random printable garbage, and structural characters in bulk.
    let seed = 42;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const samples = [
      Array.from({ length: 60_000 }, () => String.fromCharCode(32 + (next() % 95))).join(''),
      Array.from({ length: 60_000 }, () => '{[:,-?&*!|>"\'#\n '.charAt(next() % 16)).join(''),
      Array.from({ length: 60_000 }, () => ':- \n'.charAt(next() % 4)).join(''),
      `conditions: ${'"x\\'.repeat(20_000)}`,
    ];
    for (const text of samples) {
      let thrown: unknown;
      const growth = heapGrowthMiB(() => {
        try {
          decodeProfileStatus(text);
        } catch (err) {
          thrown = err;
        }
      });
      expect(thrown).toBeInstanceOf(NodePoolError);
      expect(growth).toBeLessThan(64);
    }
  });
});
