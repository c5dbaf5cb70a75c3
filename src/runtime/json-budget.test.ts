// The JSON shape scanner against the parser's own view: depth and value counts of real and hostile documents, with
// chunk boundaries anywhere, and strings that merely contain brackets; and the budgeted parse every caller uses.
import { describe, expect, it } from 'vitest';
import { JsonTooLargeError, TesseraError } from './errors.js';
import { JsonShapeScanner, checkJsonShape, parseBudgetedJson } from './json-budget.js';

const roomy = { maxDepth: 1_000, maxValues: 1_000_000 };

/** Deepest nesting JSON.parse sees in `value` (root container = 1). */
function parsedDepth(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Object.values(value as Record<string, unknown>);
  return 1 + Math.max(0, ...children.map(parsedDepth));
}

function scanInPieces(text: string, budget: { maxDepth: number; maxValues: number }, piece: number) {
  const bytes = Buffer.from(text, 'utf8');
  const scanner = new JsonShapeScanner(budget);
  for (let i = 0; i < bytes.length; i += piece) {
    const violation = scanner.push(bytes.subarray(i, i + piece));
    if (violation) return { violation, values: scanner.values() };
  }
  return { violation: undefined, values: scanner.values() };
}

describe('checkJsonShape', () => {
  it('accepts an AdmissionReview of a pod at exactly its depth and refuses one level less', () => {
    const review = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'u',
        object: {
          spec: {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'In', values: ['a'] }] }],
                },
              },
            },
          },
        },
      },
    });
    const depth = parsedDepth(JSON.parse(review));
    expect(depth).toBe(12); // well under the default budget of 64
    expect(checkJsonShape(review, { maxDepth: depth, maxValues: 1_000 })).toBeUndefined();
    expect(checkJsonShape(review, { maxDepth: depth - 1, maxValues: 1_000 })).toEqual({
      budget: 'depth',
      limit: depth - 1,
    });
  });

  it('ignores brackets, commas and escaped quotes inside strings', () => {
    const text = JSON.stringify({ a: '[[[{{{,,,', b: 'say \\"[[[\\" ok', c: '\\\\', d: ['"]]]"'] });
    expect(JSON.parse(text)).toBeTruthy();
    expect(checkJsonShape(text, { maxDepth: 2, maxValues: 6 })).toBeUndefined();
    expect(checkJsonShape(text, { maxDepth: 1, maxValues: 100 })).toEqual({ budget: 'depth', limit: 1 });
  });

  it('counts a string ending in an escaped backslash as closed', () => {
    // "x\\" is the two characters x and \; the quote after the pair ends the string.
    const text = '{"a":"x\\\\","b":[[1]]}';
    expect(JSON.parse(text)).toEqual({ a: 'x\\', b: [[1]] });
    expect(checkJsonShape(text, { maxDepth: 2, maxValues: 100 })).toEqual({ budget: 'depth', limit: 2 });
    expect(checkJsonShape(text, { maxDepth: 3, maxValues: 100 })).toBeUndefined();
  });

  it('treats multi-byte UTF-8 text as opaque', () => {
    const text = JSON.stringify({ name: 'Größe [日本] 🚀', list: ['ü', 'é'] });
    expect(checkJsonShape(text, { maxDepth: 2, maxValues: 5 })).toBeUndefined();
  });

  it('counts values as containers plus separators plus one: never fewer than half of what the parser builds', () => {
    expect(checkJsonShape('[0,0,0]', { maxDepth: 5, maxValues: 4 })).toBeUndefined(); // 4 values exactly
    expect(checkJsonShape('[0,0,0]', { maxDepth: 5, maxValues: 3 })).toEqual({ budget: 'values', limit: 3 });
    expect(checkJsonShape('{"a":1,"b":{}}', { maxDepth: 5, maxValues: 4 })).toBeUndefined();
    const wide = `[${Array.from({ length: 10_000 }, () => '{}').join(',')}]`;
    expect(checkJsonShape(wide, { maxDepth: 5, maxValues: 10_000 })).toEqual({
      budget: 'values',
      limit: 10_000,
    });
  });

  it('refuses a deeply nested document whatever the chunk size, and stops scanning at the first violation', () => {
    const deep = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    for (const piece of [1, 7, 4096]) {
      expect(scanInPieces(deep, { maxDepth: 64, maxValues: 1_000_000 }, piece).violation).toEqual({
        budget: 'depth',
        limit: 64,
      });
    }
    // Later pushes keep reporting the same violation without scanning.
    const scanner = new JsonShapeScanner({ maxDepth: 1, maxValues: 10 });
    expect(scanner.push(Buffer.from('[['))).toEqual({ budget: 'depth', limit: 1 });
    expect(scanner.push(Buffer.from(']]'))).toEqual({ budget: 'depth', limit: 1 });
  });

  it('gives the same verdict split at every byte as whole', () => {
    const text = JSON.stringify({ s: 'a\\"b[', t: [[['x', '\\\\']], { u: ',,' }] });
    const whole = checkJsonShape(text, roomy);
    expect(whole).toBeUndefined();
    for (let piece = 1; piece <= 5; piece++)
      expect(scanInPieces(text, { maxDepth: 4, maxValues: 1_000 }, piece).violation).toBeUndefined();
    for (let piece = 1; piece <= 5; piece++)
      expect(scanInPieces(text, { maxDepth: 3, maxValues: 1_000 }, piece).violation?.budget).toBe('depth');
  });

  it('cannot be talked into extra depth by unbalanced closers', () => {
    expect(checkJsonShape(`]]]]${'['.repeat(5)}`, { maxDepth: 4, maxValues: 100 })).toEqual({
      budget: 'depth',
      limit: 4,
    });
  });
});

describe('parseBudgetedJson', () => {
  const budget = { maxDepth: 3, maxValues: 10 };

  it('parses a document within budget, from bytes or text, the same as JSON.parse', () => {
    const text = JSON.stringify({ architecture: 'arm64', os: 'linux', history: [{ created_by: 'ö [x]' }] });
    expect(parseBudgetedJson(Buffer.from(text), budget, 'the config')).toEqual(JSON.parse(text));
    expect(parseBudgetedJson(text, budget, 'the config')).toEqual(JSON.parse(text));
    // A view into a larger buffer is read at its own offset and length.
    const framed = Buffer.from(`xx${text}yy`);
    expect(
      parseBudgetedJson(new Uint8Array(framed.buffer, framed.byteOffset + 2, text.length + 1), budget, 'x'),
    ).toEqual(JSON.parse(text));
  });

  it('refuses a document nested too deep, or with too many values, naming it and the budget, without parsing', () => {
    const deep = () => parseBudgetedJson(Buffer.from('[[[[1]]]]'), budget, 'the image config sha256:abc');
    expect(deep).toThrow(JsonTooLargeError);
    expect(deep).toThrow(
      'the image config sha256:abc nests arrays and objects deeper than 3 levels, the most accepted; it was not parsed',
    );
    let wide: unknown;
    try {
      parseBudgetedJson(`[${'0,'.repeat(20)}0]`, budget, 'the token answer');
    } catch (err) {
      wide = err;
    }
    expect(wide).toBeInstanceOf(TesseraError);
    expect(wide).toMatchObject({
      code: 'TESSERA_JSON_TOO_LARGE',
      what: 'the token answer',
      budget: 'values',
      limit: 10,
      message:
        'the token answer has more than 10 JSON values (arrays, objects and their items), the most accepted; it was not parsed',
    });
  });

  it("leaves malformed JSON to the parser's SyntaxError", () => {
    expect(() => parseBudgetedJson('{"a":', budget, 'x')).toThrow(SyntaxError);
  });
});
