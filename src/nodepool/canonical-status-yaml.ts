// A fast path for the `status` key of a status ConfigMap: the one layout its writers produce (sigs.k8s.io/yaml in
// NTO, encodeProfileStatus here: block mappings with sorted keys, a `conditions` sequence at column 0, one scalar per
// line, multi-line messages as literal blocks) is read by a line scanner, about 20x faster than the YAML library.
// Guarantees: for a text it accepts, the value is what parseWithinBudget(text, STATUS_YAML_BUDGET) returns, for
// every key decodeProfileStatus reads (`conditions` and their six fields, `runtimeClass`, `tuned`), and that call
// would not throw. Anything else (another layout, escapes or characters outside a small safe set, a repeated key,
// more conditions than decodeProfileStatus accepts, a longer text) is NOT_CANONICAL, and the caller parses the text
// with the YAML library, budgets and all. It runs in time linear in the text and only on texts far below the byte
// budget, holding no more than a few values the size of the text, so it adds nothing a hostile text can use.
import { STATUS_YAML_BUDGET } from './bounded-yaml.js';

/** What parseCanonicalStatusYaml returns for a text it does not read; the caller takes the general path. */
export const NOT_CANONICAL: unique symbol = Symbol('not canonical status YAML');

/**
 * Longest text tried (UTF-16 code units): at most 3 UTF-8 bytes each, so it is within the byte budget, and the
 * node, depth and alias budgets are met by the layout itself (at most MAX_CONDITIONS x 6 fields, 3 levels, no
 * aliases).
 */
const MAX_LENGTH = Math.floor(STATUS_YAML_BUDGET.maxBytes / 3);
/** decodeProfileStatus's limit (STATUS_CONDITION_LIMITS.maxConditions); a text with more takes the general path. */
const MAX_CONDITIONS = 8;

const TOP_KEYS = new Set(['conditions', 'runtimeClass', 'tuned']);
const CONDITION_KEYS = new Set([
  'lastHeartbeatTime',
  'lastTransitionTime',
  'message',
  'reason',
  'status',
  'type',
]);

/**
 * Characters never accepted anywhere (C0 controls but tab and newline, DEL, C1 controls, the line and paragraph
 * separators, BOM, surrogates): the YAML library treats some of them specially.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARACTER = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]/;
/**
 * A plain scalar the YAML 1.2 core schema reads as this very string, with PLAIN_BREAKS: printable ASCII, a letter
 * first (no indicator, no number), neither a space nor a colon last.
 */
const PLAIN_STRING = /^[A-Za-z](?:[\x20-\x7e]*[\x21-\x39\x3b-\x7e])?$/;
/** What ends a plain scalar early: a mapping value indicator or a comment. */
const PLAIN_BREAKS = /: | #/;
/** Plain scalars of that shape the core schema reads as something else. */
const PLAIN_NOT_STRING = new Set(['true', 'True', 'TRUE', 'false', 'False', 'FALSE', 'null', 'Null', 'NULL']);
/** A double-quoted scalar on one line: printable characters and the escapes \\ \" \n \t \r only. */
const DOUBLE_QUOTED = /^"((?:[^"\\\t]|\\["\\ntr])*)"$/;
/** A single-quoted scalar on one line: `''` stands for one quote. */
const SINGLE_QUOTED = /^'((?:[^'\t]|'')*)'$/;
/** `key: value` / `key:` of a mapping line, after its indentation (and `- ` for the first key of an item). */
const KEY_LINE = /^([A-Za-z]+):(?: (.*))?$/;

const ESCAPES: Record<string, string> = { '\\': '\\', '"': '"', n: '\n', t: '\t', r: '\r' };

/** A single-line scalar's value, or NOT_CANONICAL. `null` is the only non-string accepted. */
function scalar(text: string): string | null | typeof NOT_CANONICAL {
  if (text === 'null') return null;
  if (text.includes('\t')) return NOT_CANONICAL;
  const first = text.charCodeAt(0);
  if (first === 0x22 /* " */) {
    const m = DOUBLE_QUOTED.exec(text);
    return m ? (m[1] ?? '').replace(/\\(.)/g, (_, c: string) => ESCAPES[c] ?? c) : NOT_CANONICAL;
  }
  if (first === 0x27 /* ' */) {
    const m = SINGLE_QUOTED.exec(text);
    return m ? (m[1] ?? '').replaceAll("''", "'") : NOT_CANONICAL;
  }
  return PLAIN_STRING.test(text) && !PLAIN_BREAKS.test(text) && !PLAIN_NOT_STRING.has(text)
    ? text
    : NOT_CANONICAL;
}

/**
 * Reads `text` when it has the canonical layout (see the module comment); NOT_CANONICAL otherwise. The value is a
 * plain object: `conditions` (an array of objects), `runtimeClass` and `tuned`, each only when present.
 */
export function parseCanonicalStatusYaml(text: string): Record<string, unknown> | typeof NOT_CANONICAL {
  if (text.length === 0 || text.length > MAX_LENGTH || !text.endsWith('\n')) return NOT_CANONICAL;
  if (UNSAFE_CHARACTER.test(text)) return NOT_CANONICAL;
  const lines = text.split('\n');
  lines.pop(); // the empty string after the final newline
  const top: Record<string, unknown> = {};
  let conditions: Record<string, unknown>[] | undefined;
  let current: Record<string, unknown> | undefined;
  let i = 0;
  /** The value after `key:` on line i (a scalar, or a literal block on the next lines); advances i past it. */
  const value = (rest: string | undefined, keyColumn: number): unknown => {
    i++;
    if (rest === undefined) return NOT_CANONICAL;
    if (rest !== '|' && rest !== '|-') return scalar(rest);
    return literalBlock(lines, i, keyColumn + 2, rest === '|', (next) => (i = next));
  };
  while (i < lines.length) {
    const line = lines[i] ?? '';
    if (line.startsWith('- ') || line.startsWith('  ')) {
      // A condition: its first key after `- `, the others indented by two.
      if (!conditions || line.length < 3 || line.charCodeAt(2) === 0x20) return NOT_CANONICAL;
      const first = line.startsWith('- ');
      if (first) {
        if (conditions.length === MAX_CONDITIONS) return NOT_CANONICAL;
        current = {};
        conditions.push(current);
      }
      if (!current) return NOT_CANONICAL;
      const m = KEY_LINE.exec(line.slice(2));
      const key = m?.[1];
      if (!key || !CONDITION_KEYS.has(key) || Object.hasOwn(current, key)) return NOT_CANONICAL;
      const v = value(m[2], 2);
      if (v === NOT_CANONICAL) return NOT_CANONICAL;
      current[key] = v;
      continue;
    }
    const m = KEY_LINE.exec(line);
    const key = m?.[1];
    if (!key || !TOP_KEYS.has(key) || Object.hasOwn(top, key)) return NOT_CANONICAL;
    current = undefined;
    if (key === 'conditions') {
      // Only the block sequence that follows; an empty or flow one takes the general path.
      if (m[2] !== undefined || !(lines[i + 1] ?? '').startsWith('- ')) return NOT_CANONICAL;
      conditions = [];
      top.conditions = conditions;
      i++;
      continue;
    }
    conditions = undefined;
    const v = value(m[2], 0);
    if (v === NOT_CANONICAL) return NOT_CANONICAL;
    top[key] = v;
  }
  return top;
}

/**
 * A literal block scalar (`|`: one final newline kept; `|-`: none) whose lines start at `start` and are indented by
 * exactly `indent` spaces (the first one followed by a non-space), possibly with empty lines between them; it ends
 * at the first line indented less (or the end). Calls `advance` with the index of that line.
 */
function literalBlock(
  lines: readonly string[],
  start: number,
  indent: number,
  clip: boolean,
  advance: (next: number) => void,
): string | typeof NOT_CANONICAL {
  const prefix = ' '.repeat(indent);
  const first = lines[start];
  if (first === undefined || !first.startsWith(prefix)) return NOT_CANONICAL;
  const c = first.charCodeAt(indent);
  if (Number.isNaN(c) || c === 0x20 || c === 0x09) return NOT_CANONICAL;
  const content: string[] = [];
  let blank = 0;
  let i = start;
  for (; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line === '') {
      blank++;
      continue;
    }
    if (!line.startsWith(prefix)) break;
    // Whitespace-only lines are read by rules of their own: the general path takes them.
    if (line.trim() === '') return NOT_CANONICAL;
    for (; blank > 0; blank--) content.push('');
    content.push(line.slice(indent));
  }
  advance(i);
  const text = content.join('\n');
  return clip ? `${text}\n` : text;
}
