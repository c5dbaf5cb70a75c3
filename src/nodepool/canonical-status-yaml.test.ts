import { describe, expect, it } from 'vitest';
import type { PerformanceProfileStatus, ProfileCondition } from './api/types.js';
import { parseWithinBudget, STATUS_YAML_BUDGET } from './bounded-yaml.js';
import { NOT_CANONICAL, parseCanonicalStatusYaml } from './canonical-status-yaml.js';
import { encodeProfileStatus } from './status-codec.js';

/** The general path's value (what decodeProfileStatus read before the fast path), or the error it throws. */
function general(text: string): unknown {
  return parseWithinBudget(text, STATUS_YAML_BUDGET, 'key "status"');
}

/** A small seeded generator, so a failure names a case that can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  'a',
  'Z',
  'x',
  '0',
  '7',
  ' ',
  ' ',
  '  ',
  ':',
  ': ',
  '#',
  ' #',
  '"',
  "'",
  '\\',
  '\\n',
  '\n',
  '\n\n',
  '\t',
  '-',
  '- ',
  '.',
  '/',
  '_',
  ',',
  'é',
  '✓',
  '😀',
  '\u0085',
  '\u2028',
  '{',
  '[',
  ']',
  '&a',
  '*a',
  '!',
  '|',
  '>',
  '%',
  '@',
  '`',
  '\u00a0',
  '(',
  ')',
  '=',
  '<',
  ' :',
  'a:',
  '::',
  '?',
  '~',
  'true',
  'null',
  'NULL',
  'False',
  'yes',
  '~',
  '1',
  '0x1F',
  '.inf',
  '2024-07-30T10:00:00Z',
  'Tuned',
  'Degraded ',
];

function pick<T>(rnd: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rnd() * xs.length)] as T;
}

/** Pieces of the text NTO puts in a message: the layout the fast path reads. */
const TAME = [
  'Tuned',
  ' ',
  'worker-0',
  ' ',
  'Degraded',
  ': ',
  'x',
  '.',
  '\n',
  '"',
  "'",
  '#',
  '/',
  'é',
  '\t',
  ',',
  '(',
  ')',
  '=',
];

function text(rnd: () => number, maxPieces: number): string {
  const pieces = rnd() < 0.5 ? TAME : PIECES;
  let s = '';
  for (let n = Math.floor(rnd() * maxPieces); n > 0; n--) s += pick(rnd, pieces);
  return s;
}

function status(rnd: () => number): PerformanceProfileStatus {
  const conditions: ProfileCondition[] = [];
  for (let n = Math.floor(rnd() * 10); n > 0; n--) {
    const c: ProfileCondition = {
      type: rnd() < 0.7 ? pick(rnd, ['Available', 'Upgradeable', 'Progressing', 'Degraded']) : text(rnd, 4),
      // 'maybe' is not a condition status: the encoder writes it all the same, and decoding refuses it.
      status: pick(rnd, [
        'True',
        'False',
        'Unknown',
        'True',
        'False',
        'maybe',
      ] as ProfileCondition['status'][]),
    };
    if (rnd() < 0.5)
      c.reason = rnd() < 0.6 ? pick(rnd, ['TunedProfileDegraded', 'A b', 'yes']) : text(rnd, 4);
    if (rnd() < 0.6) c.message = text(rnd, 12);
    const time = (): string | null | undefined =>
      pick(rnd, ['2024-07-30T10:00:00Z', null, undefined, '2026-12-05T03:34:37Z']);
    const heartbeat = time();
    const transition = time();
    if (heartbeat !== undefined) c.lastHeartbeatTime = heartbeat;
    if (transition !== undefined) c.lastTransitionTime = transition;
    conditions.push(c);
  }
  const s: PerformanceProfileStatus = {};
  if (conditions.length > 0 || rnd() < 0.5) s.conditions = conditions;
  if (rnd() < 0.7) s.runtimeClass = rnd() < 0.7 ? 'performance-pp-x' : text(rnd, 3);
  if (rnd() < 0.7)
    s.tuned = rnd() < 0.7 ? 'openshift-cluster-node-tuning-operator/openshift-node-perf-1a2b' : text(rnd, 3);
  return s;
}

/** One random edit: a character or piece in or out, a line repeated, moved or re-indented. */
function mutate(rnd: () => number, t: string): string {
  const at = Math.floor(rnd() * (t.length + 1));
  const lines = t.split('\n');
  const line = Math.floor(rnd() * lines.length);
  switch (Math.floor(rnd() * 7)) {
    case 0:
      return t.slice(0, at) + pick(rnd, PIECES) + t.slice(at);
    case 1:
      return t.slice(0, at) + t.slice(at + 1);
    case 2:
      return [...lines.slice(0, line + 1), lines[line], ...lines.slice(line + 1)].join('\n');
    case 3:
      return [...lines.slice(0, line), ` ${lines[line] ?? ''}`, ...lines.slice(line + 1)].join('\n');
    case 4:
      return [...lines.slice(0, line), (lines[line] ?? '').slice(1), ...lines.slice(line + 1)].join('\n');
    case 5:
      return t.replaceAll(
        pick(rnd, ['"', "'", '|', '- ', '  ']),
        pick(rnd, ["'", '"', '>', '-  ', '   ', '\t']),
      );
    default:
      return lines.reverse().join('\n');
  }
}

/** The fast path agrees with the general one on `t`, or leaves it to it; returns whether it read it. */
function check(t: string): boolean {
  const fast = parseCanonicalStatusYaml(t);
  if (fast === NOT_CANONICAL) return false;
  let expected: unknown;
  expect(() => (expected = general(t)), JSON.stringify(t)).not.toThrow();
  expect(fast, JSON.stringify(t)).toEqual(expected);
  return true;
}

describe('parseCanonicalStatusYaml', () => {
  it('reads what NTO and encodeProfileStatus write, as the YAML library does', () => {
    const available: PerformanceProfileStatus = {
      conditions: ['Available', 'Upgradeable', 'Progressing', 'Degraded'].map((type, i) => ({
        type,
        status: i < 2 ? 'True' : 'False',
        lastHeartbeatTime: '2024-07-30T10:00:00Z',
        lastTransitionTime: i === 0 ? null : '2024-07-30T10:00:00Z',
      })),
      runtimeClass: 'performance-perfprof',
      tuned: 'openshift-cluster-node-tuning-operator/openshift-node-performance-perfprof-5f8d9c',
    };
    const degraded: PerformanceProfileStatus = {
      ...available,
      conditions: [
        ...(available.conditions ?? []).slice(0, 3),
        {
          type: 'Degraded',
          status: 'True',
          reason: 'KubeletConfig failure',
          message: 'Tuned worker-0 Degraded Reason: TunedError: "a": b # c\n\n  indented\tline\n',
        },
      ],
    };
    const short: PerformanceProfileStatus = {
      conditions: [{ type: 'X', status: 'Unknown', message: 'no newline' }],
    };
    for (const s of [available, degraded, short]) {
      const t = encodeProfileStatus(s);
      expect(parseCanonicalStatusYaml(t), t).not.toBe(NOT_CANONICAL);
      expect(check(t)).toBe(true);
    }
  });

  it.each([
    ['empty text', ''],
    ['JSON', '{"conditions":[]}\n'],
    ['no final newline', 'tuned: x'],
    ['a directive', '%YAML 1.1\n---\ntuned: x\n'],
    ['a comment', 'tuned: x # c\n'],
    ['an alias', 'tuned: &a x\nruntimeClass: *a\n'],
    ['a repeated key', 'tuned: x\ntuned: y\n'],
    ['a repeated condition field', 'conditions:\n- type: A\n  type: B\n'],
    ['an unknown field', 'conditions:\n- type: A\n  extra: 1\n'],
    ['a flow sequence', 'conditions: []\n'],
    ['an indented sequence', 'conditions:\n  - type: A\n'],
    ['a tab', 'conditions:\n-\ttype: A\n'],
    ['a plain boolean', 'conditions:\n- status: True\n  type: A\n'],
    ['a plain number', 'tuned: 12\n'],
    ['an unknown escape', 'tuned: "a\\u0041"\n'],
    ['a whitespace-only block line', 'tuned: |\n  a\n   \n  b\n'],
    ['a keep-chomping block', 'tuned: |+\n  a\n\n'],
    ['a block with an indentation indicator', 'tuned: |2\n   a\n'],
    ['a block indented by more than two', 'tuned: |\n    a\n'],
    ['nine conditions', `conditions:\n${'- type: A\n'.repeat(9)}`],
    ['text too long to take shortcuts with', `tuned: "${'x'.repeat(30_000)}"\n`],
  ])('leaves %s to the YAML library', (_, t) => {
    expect(parseCanonicalStatusYaml(t)).toBe(NOT_CANONICAL);
  });

  it('agrees with the YAML library on 3,000 random statuses and 6,000 random edits of them', () => {
    const rnd = random(Number(process.env.CANONICAL_STATUS_SEED ?? 20261205));
    let read = 0;
    let readEdited = 0;
    for (let n = 0, runs = Number(process.env.CANONICAL_STATUS_RUNS ?? 3000); n < runs; n++) {
      const t = encodeProfileStatus(status(rnd));
      if (check(t)) read++;
      let edited = t;
      for (let e = 0; e < 2; e++) {
        edited = mutate(rnd, edited);
        if (check(edited)) readEdited++;
      }
    }
    // Most encodings, and some edits, take the fast path: both paths are exercised.
    expect(read).toBeGreaterThan(600);
    expect(readEdited).toBeGreaterThan(150);
  });
});
