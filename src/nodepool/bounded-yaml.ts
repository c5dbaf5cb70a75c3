// YAML from outside the operator's trust (the hosted cluster's status ConfigMaps, users' tuning ConfigMaps), parsed
// only within a budget. Guarantees: size is checked first (O(1) on the string length, then the exact UTF-8 length);
// nesting depth, node count and aliases are then counted by one pass of the YAML library's own lexer (linear time,
// constant memory apart from a depth stack capped at the budget), so the parser never sees text that could make it
// build a large or deep tree; the parse itself also refuses alias expansion beyond the budget. Throws
// BudgetExceededError (with the budget's name, limit and what was found) before any parsing; parse errors of text
// within budget are left to the caller to wrap in its own error.
import { CST, Lexer, parse, parseAllDocuments } from 'yaml';
import { BudgetExceededError } from './errors.js';

export interface YamlBudget {
  /** Largest text accepted, in UTF-8 bytes. */
  readonly maxBytes: number;
  /** Deepest nesting of collections (block or flow) accepted. */
  readonly maxDepth: number;
  /** Most YAML nodes (scalars, collections, aliases) accepted. */
  readonly maxNodes: number;
  /** Most aliases (`*name`) accepted; 0 forbids them. */
  readonly maxAliases: number;
}

/**
 * The `status` key of a status ConfigMap. NTO's real status is under 2 KiB, 3 levels deep, about 30 nodes, and
 * never uses aliases (sigs.k8s.io/yaml does not write them); the budget leaves 30x room and nothing more.
 */
export const STATUS_YAML_BUDGET: YamlBudget = {
  maxBytes: 64 * 1024,
  maxDepth: 16,
  maxNodes: 2_000,
  maxAliases: 0,
};

/**
 * The `tuning` key of a tuning ConfigMap (a PerformanceProfile and Tuneds, written by people: a few KiB each).
 * Aliases are allowed sparingly because the Go side (sigs.k8s.io/yaml) accepts them.
 */
export const TUNING_YAML_BUDGET: YamlBudget = {
  maxBytes: 256 * 1024,
  maxDepth: 64,
  maxNodes: 50_000,
  maxAliases: 16,
};

/** The error for a text of `length` UTF-16 code units, more than `budget.maxBytes` (so at least that many bytes). */
export function overLengthError(length: number, budget: YamlBudget, subject: string): BudgetExceededError {
  return new BudgetExceededError(
    'bytes',
    budget.maxBytes,
    length,
    `${subject} is at least ${length} bytes, over the limit of ${budget.maxBytes} bytes`,
  );
}

/** An open block collection: its column, and whether it is a sequence (a sequence may sit at its key's column). */
interface BlockLevel {
  readonly col: number;
  readonly seq: boolean;
}

/**
 * Throws BudgetExceededError when `text` exceeds `budget`; `subject` names the text in the message (e.g.
 * `key "status"`). The depth counted is an upper bound of the parser's: each block collection is one level per
 * distinct indentation (plus a compact sequence under its key), each flow bracket one level.
 */
export function checkYamlBudget(text: string, budget: YamlBudget, subject: string): void {
  // UTF-8 never takes fewer bytes than UTF-16 code units, so an over-long string is rejected without encoding it.
  if (text.length > budget.maxBytes) throw overLengthError(text.length, budget, subject);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > budget.maxBytes) {
    throw new BudgetExceededError(
      'bytes',
      budget.maxBytes,
      bytes,
      `${subject} is ${bytes} bytes, over the limit of ${budget.maxBytes} bytes`,
    );
  }
  const blocks: BlockLevel[] = [];
  let flow = 0;
  let nodes = 0;
  let aliases = 0;
  let col = 0;
  /** Column where the current block node of this line starts (its key, for a mapping); undefined until seen. */
  let nodeCol: number | undefined;
  let scalarNext = false;

  const countNode = (): void => {
    if (++nodes > budget.maxNodes) {
      throw new BudgetExceededError(
        'nodes',
        budget.maxNodes,
        nodes,
        `${subject} has more than ${budget.maxNodes} YAML nodes`,
      );
    }
  };
  const checkDepth = (): void => {
    const depth = blocks.length + flow;
    if (depth > budget.maxDepth) {
      throw new BudgetExceededError(
        'depth',
        budget.maxDepth,
        depth,
        `${subject} nests deeper than ${budget.maxDepth} levels`,
      );
    }
  };
  const openBlock = (at: number, seq: boolean): void => {
    for (let top = blocks.at(-1); top; top = blocks.at(-1)) {
      // Deeper levels end; so does a compact sequence when a key of its own mapping follows.
      if (top.col > at || (top.col === at && top.seq && !seq)) blocks.pop();
      else break;
    }
    const top = blocks.at(-1);
    if (top && top.col === at && top.seq === seq) return; // a sibling in the same collection
    blocks.push({ col: at, seq });
    countNode();
    checkDepth();
  };

  for (const token of new Lexer().lex(text)) {
    // Zero-width control tokens: document start, flow error, BOM, and "a scalar follows".
    if (token === '\x1f') {
      scalarNext = true;
      continue;
    }
    if (token === '\x02' || token === '\x18' || token === '\ufeff') continue;
    const start = col;
    const type = scalarNext ? 'scalar' : CST.tokenType(token);
    scalarNext = false;
    switch (type) {
      case 'newline':
        nodeCol = undefined;
        break;
      case 'space':
      case 'comment':
        break;
      case 'doc-start':
      case 'doc-end':
        blocks.length = 0;
        flow = 0;
        nodeCol = undefined;
        break;
      case 'seq-item-ind':
      case 'explicit-key-ind':
        if (flow === 0) {
          openBlock(start, type === 'seq-item-ind');
          nodeCol = undefined; // the item's own content starts after the indicator
        }
        break;
      case 'map-value-ind':
        if (flow === 0) openBlock(nodeCol ?? start, false);
        break;
      case 'flow-map-start':
      case 'flow-seq-start':
        nodeCol ??= start;
        flow++;
        countNode();
        checkDepth();
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        if (flow > 0) flow--;
        break;
      case 'alias':
        nodeCol ??= start;
        countNode();
        if (++aliases > budget.maxAliases) {
          throw new BudgetExceededError(
            'aliases',
            budget.maxAliases,
            aliases,
            budget.maxAliases === 0
              ? `${subject} uses a YAML alias (${token.slice(0, 64)}); aliases are not accepted here`
              : `${subject} has more than ${budget.maxAliases} YAML aliases`,
          );
        }
        break;
      case 'scalar':
      case 'single-quoted-scalar':
      case 'double-quoted-scalar':
        nodeCol ??= start;
        countNode();
        break;
      default:
        // Anchors, tags, block scalar headers, commas, directives, errors: no node of their own.
        nodeCol ??= start;
    }
    const newline = token.lastIndexOf('\n');
    if (newline >= 0) {
      col = token.length - newline - 1;
      if (type !== 'newline') nodeCol = undefined; // a multi-line token ends on a later line
    } else {
      col += token.length;
    }
  }
}

/** Parser options for text that passed checkYamlBudget: alias expansion capped as well (0 disables aliases). */
function parseOptions(budget: YamlBudget): { maxAliasCount: number } {
  return { maxAliasCount: budget.maxAliases };
}

/** One YAML (or JSON) document within `budget`; see checkYamlBudget. Parse errors are thrown as the library's. */
export function parseWithinBudget(text: string, budget: YamlBudget, subject: string): unknown {
  checkYamlBudget(text, budget, subject);
  return parse(text, parseOptions(budget)) as unknown;
}

/**
 * Every document of a multi-document YAML stream within `budget`, as plain values. Throws the first document's
 * first syntax error (the library's YAMLParseError) or the alias-expansion error.
 */
export function parseAllWithinBudget(text: string, budget: YamlBudget, subject: string): unknown[] {
  checkYamlBudget(text, budget, subject);
  const values: unknown[] = [];
  for (const doc of parseAllDocuments(text)) {
    const error = doc.errors[0];
    if (error) throw error;
    values.push(doc.toJS(parseOptions(budget)) as unknown);
  }
  return values;
}
