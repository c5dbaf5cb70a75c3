// YAML from outside the operator's trust (the hosted cluster's status ConfigMaps, users' tuning ConfigMaps), parsed
// only within a budget. Guarantees: size is checked first (O(1) on the string length, then the exact UTF-8 length);
// nesting depth, node count and aliases are then counted by one pass of the YAML library's own lexer (linear time,
// constant memory apart from a depth stack capped at the budget), so the parser never sees text that could make it
// build a large or deep tree; the parse itself also refuses alias expansion beyond the budget, and duplicate keys
// are found with one set per mapping (the library compares each key with every earlier one: quadratic, seconds
// for a mapping of 25,000 keys within budget), so parsing stays linear in the text. Throws
// BudgetExceededError (with the budget's name, limit and what was found) before any parsing; parse errors of text
// within budget are left to the caller to wrap in its own error.
import {
  CST,
  isScalar,
  Lexer,
  parseAllDocuments,
  parseDocument,
  visit,
  YAMLParseError,
  type Document,
} from 'yaml';
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
  const scan = new YamlBudgetScan(budget, subject);
  for (const token of new Lexer().lex(text)) scan.token(token);
}

/** One pass over the lexer's tokens, counting nodes, aliases and nesting against the budget. */
class YamlBudgetScan {
  private readonly blocks: BlockLevel[] = [];
  private flow = 0;
  private nodes = 0;
  private aliases = 0;
  private col = 0;
  /** Column where the current block node of this line starts (its key, for a mapping); undefined until seen. */
  private nodeCol: number | undefined;
  private scalarNext = false;

  constructor(
    private readonly budget: YamlBudget,
    private readonly subject: string,
  ) {}

  token(token: string): void {
    // Zero-width control tokens: document start, flow error, BOM, and "a scalar follows".
    if (token === '\x1f') {
      this.scalarNext = true;
      return;
    }
    if (token === '\x02' || token === '\x18' || token === '\ufeff') return;
    const type = this.scalarNext ? 'scalar' : CST.tokenType(token);
    this.scalarNext = false;
    this.count(type, token, this.col);
    const newline = token.lastIndexOf('\n');
    if (newline >= 0) {
      this.col = token.length - newline - 1;
      if (type !== 'newline') this.nodeCol = undefined; // a multi-line token ends on a later line
    } else {
      this.col += token.length;
    }
  }

  /** Accounts for one token of `type` starting at column `start`. */
  private count(type: CST.TokenType | 'scalar' | null, token: string, start: number): void {
    switch (type) {
      case 'newline':
        this.nodeCol = undefined;
        break;
      case 'space':
      case 'comment':
        break;
      case 'doc-start':
      case 'doc-end':
        this.blocks.length = 0;
        this.flow = 0;
        this.nodeCol = undefined;
        break;
      case 'seq-item-ind':
      case 'explicit-key-ind':
        if (this.flow === 0) {
          this.openBlock(start, type === 'seq-item-ind');
          this.nodeCol = undefined; // the item's own content starts after the indicator
        }
        break;
      case 'map-value-ind':
        if (this.flow === 0) this.openBlock(this.nodeCol ?? start, false);
        break;
      case 'flow-map-start':
      case 'flow-seq-start':
        this.nodeCol ??= start;
        this.flow++;
        this.countNode();
        this.checkDepth();
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        if (this.flow > 0) this.flow--;
        break;
      case 'alias':
        this.nodeCol ??= start;
        this.countNode();
        this.countAlias(token);
        break;
      case 'scalar':
      case 'single-quoted-scalar':
      case 'double-quoted-scalar':
        this.nodeCol ??= start;
        this.countNode();
        break;
      case 'anchor':
      case 'tag':
      case 'block-scalar-header':
      case 'byte-order-mark':
      case 'comma':
      case 'directive-line':
      case 'doc-mode':
      case 'flow-error-end':
      case null:
        // No node of their own (null: a token the lexer did not classify).
        this.nodeCol ??= start;
        break;
      default: {
        // A token type a newer `yaml` added: the switch above must name it.
        const unknown: never = type;
        this.nodeCol ??= start;
        void unknown;
      }
    }
  }

  private openBlock(at: number, seq: boolean): void {
    const { blocks } = this;
    for (let top = blocks.at(-1); top; top = blocks.at(-1)) {
      // Deeper levels end; so does a compact sequence when a key of its own mapping follows.
      if (top.col > at || (top.col === at && top.seq && !seq)) blocks.pop();
      else break;
    }
    const top = blocks.at(-1);
    if (top && top.col === at && top.seq === seq) return; // a sibling in the same collection
    blocks.push({ col: at, seq });
    this.countNode();
    this.checkDepth();
  }

  private countNode(): void {
    const { maxNodes } = this.budget;
    if (++this.nodes > maxNodes) {
      throw new BudgetExceededError(
        'nodes',
        maxNodes,
        this.nodes,
        `${this.subject} has more than ${maxNodes} YAML nodes`,
      );
    }
  }

  private countAlias(token: string): void {
    const { maxAliases } = this.budget;
    if (++this.aliases <= maxAliases) return;
    throw new BudgetExceededError(
      'aliases',
      maxAliases,
      this.aliases,
      maxAliases === 0
        ? `${this.subject} uses a YAML alias (${token.slice(0, 64)}); aliases are not accepted here`
        : `${this.subject} has more than ${maxAliases} YAML aliases`,
    );
  }

  private checkDepth(): void {
    const depth = this.blocks.length + this.flow;
    const { maxDepth } = this.budget;
    if (depth > maxDepth) {
      throw new BudgetExceededError(
        'depth',
        maxDepth,
        depth,
        `${this.subject} nests deeper than ${maxDepth} levels`,
      );
    }
  }
}

/** Parser options for text that passed checkYamlBudget: alias expansion capped as well (0 disables aliases). */
function parseOptions(budget: YamlBudget): { maxAliasCount: number } {
  return { maxAliasCount: budget.maxAliases };
}

/** Composer options: duplicate keys are checked by checkUniqueKeys instead (linear, same rule). */
const composeOptions = { uniqueKeys: false } as const;

/** "line L, column C" (1-based) of `offset` in `text`, as the library words positions. */
function linePosition(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

/**
 * Throws the library's own DUPLICATE_KEY error for the first mapping that repeats a key, with its rule (two keys
 * are the same when both are scalars of equal value), in one pass: a set of key values per mapping.
 */
function checkUniqueKeys(doc: Document, text: string): void {
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        if (!isScalar(key)) continue;
        if (!seen.has(key.value)) {
          seen.add(key.value);
          continue;
        }
        const start = key.range?.[0] ?? 0;
        throw new YAMLParseError(
          [start, start + 1],
          'DUPLICATE_KEY',
          `Map keys must be unique at ${linePosition(text, start)}`,
        );
      }
    },
  });
}

/** The document's value, or its first error (syntax, duplicate key, alias expansion) as the library's. */
function documentValue(doc: Document, text: string, budget: YamlBudget): unknown {
  const error = doc.errors[0];
  if (error) throw error;
  checkUniqueKeys(doc, text);
  return doc.toJS(parseOptions(budget)) as unknown;
}

/** One YAML (or JSON) document within `budget`; see checkYamlBudget. Parse errors are thrown as the library's. */
export function parseWithinBudget(text: string, budget: YamlBudget, subject: string): unknown {
  checkYamlBudget(text, budget, subject);
  return documentValue(parseDocument(text, composeOptions), text, budget);
}

/**
 * Every document of a multi-document YAML stream within `budget`, as plain values. Throws the first document's
 * first syntax error (the library's YAMLParseError) or the alias-expansion error.
 */
export function parseAllWithinBudget(text: string, budget: YamlBudget, subject: string): unknown[] {
  checkYamlBudget(text, budget, subject);
  const docs = parseAllDocuments(text, composeOptions);
  // An empty stream yields an empty array, or an EmptyStream (an array too) in older versions.
  return Array.from(docs, (doc) => documentValue(doc, text, budget));
}
