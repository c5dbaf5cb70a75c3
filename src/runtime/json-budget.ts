// Measures the shape of a JSON document before JSON.parse sees it: nesting depth and a count of values, so a
// document that would make the parser recurse deeply or allocate millions of small objects is refused after one
// cheap linear pass (constant memory, chunk boundaries anywhere). For everything Tessera parses from outside its
// control: admission webhook bodies, registry manifests, config blobs, token answers, alerts answers. It does not
// validate JSON: malformed text passes through to JSON.parse, which rejects it. Works on raw UTF-8 bytes: every
// byte of a multi-byte character is >= 0x80, so it can never be mistaken for a quote, backslash, bracket or comma.
import { JsonTooLargeError } from './errors.js';

/** Limits on the shape of one JSON document. */
export interface JsonShapeBudget {
  /** Deepest nesting of objects/arrays accepted (the document root is depth 1). */
  readonly maxDepth: number;
  /** Most values accepted, counted as objects/arrays + separators (`,`) + 1: an upper bound for parse cost. */
  readonly maxValues: number;
}

/** Which budget a document broke and the limit it broke. */
export interface JsonShapeViolation {
  readonly budget: 'depth' | 'values';
  readonly limit: number;
}

/** The bytes of JSON's structure, shared by the runtime's byte-level JSON scanners (this one, list-decoder.ts). */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;

/** Incremental scanner: feed chunks in order with push(); the first violation is returned and remembered. */
export class JsonShapeScanner {
  private inString = false;
  private escaped = false;
  private depth = 0;
  private valueCount = 1;
  private violation: JsonShapeViolation | undefined;

  constructor(private readonly budget: JsonShapeBudget) {}

  /** Values counted so far (see JsonShapeBudget.maxValues). */
  values(): number {
    return this.valueCount;
  }

  /** Scans `chunk`; returns the violation once a budget is exceeded (and for every later call). */
  push(chunk: Uint8Array): JsonShapeViolation | undefined {
    if (this.violation) return this.violation;
    const { maxDepth, maxValues } = this.budget;
    // Locals in the hot loop; written back once per chunk.
    let { inString, escaped, depth, valueCount } = this;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number;
      if (inString) {
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) inString = false;
        continue;
      }
      if (b === QUOTE) {
        inString = true;
      } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        depth++;
        valueCount++;
        if (depth > maxDepth) {
          this.violation = { budget: 'depth', limit: maxDepth };
          break;
        }
        if (valueCount > maxValues) {
          this.violation = { budget: 'values', limit: maxValues };
          break;
        }
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        // Unbalanced closers are JSON.parse's to reject; never go negative so they cannot buy extra depth.
        if (depth > 0) depth--;
      } else if (b === COMMA) {
        valueCount++;
        if (valueCount > maxValues) {
          this.violation = { budget: 'values', limit: maxValues };
          break;
        }
      }
    }
    this.inString = inString;
    this.escaped = escaped;
    this.depth = depth;
    this.valueCount = valueCount;
    return this.violation;
  }
}

/** Scans a whole document at once. */
export function checkJsonShape(
  text: Uint8Array | string,
  budget: JsonShapeBudget,
): JsonShapeViolation | undefined {
  return new JsonShapeScanner(budget).push(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
}

/**
 * JSON.parse of `document` after its shape passed `budget`; throws JsonTooLargeError (TESSERA_JSON_TOO_LARGE,
 * naming `what`, e.g. "the image config of registry/repo@sha256:...") without parsing when it does not. What the
 * parser builds is then bounded by the budget: a few tens of bytes of heap per value. Malformed JSON throws the
 * parser's SyntaxError, left to the caller to word. Callers should keep only the fields they need from the result.
 */
export function parseBudgetedJson(
  document: Uint8Array | string,
  budget: JsonShapeBudget,
  what: string,
): unknown {
  const bytes = typeof document === 'string' ? Buffer.from(document, 'utf8') : document;
  const violation = checkJsonShape(bytes, budget);
  if (violation !== undefined) throw new JsonTooLargeError(what, violation.budget, violation.limit);
  return JSON.parse(
    typeof document === 'string'
      ? document
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
  );
}
