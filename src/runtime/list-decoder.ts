// Decodes a list response (`{"kind":..., "metadata":{...}, "items":[...]}`) while its bytes arrive, one item at a
// time: each item of `items` is cut out of the byte stream, parsed alone and handed to the caller's `item` function
// at once, so what a page costs is at most one raw item plus what `item` keeps (e.g. a projection), never the page
// as one string nor the page as a parsed array of whole objects. Everything around `items` (the envelope: kind,
// apiVersion, metadata with resourceVersion and continue) is parsed at the end.
// Budgets, enforced while scanning, before any copy or parse: one item at most `maxItemBytes`, the envelope at
// most `maxEnvelopeBytes`. The scan tracks strings and nesting on raw UTF-8 bytes (every byte of a multi-byte
// character is >= 0x80, so it can never be taken for a quote, backslash, bracket or comma); chunk boundaries may
// fall anywhere. Malformed input (not JSON, truncated, not an object, `items` not an array) throws
// ApiResponseError MALFORMED; it never yields a partial list.
import { ApiResponseError } from './errors.js';
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from './json-budget.js';
import { isRecord } from './json.js';
import type { KubeList } from './object.js';

/**
 * Default largest object accepted in a list or watch, in bytes of JSON: 10 MiB. etcd refuses values over 1.5 MiB
 * (its default --max-request-bytes), and JSON can spell a stored byte in up to 6 (`\u0001`), so no object of an API
 * server with etcd's default limit reaches it.
 */
export const DEFAULT_MAX_OBJECT_BYTES = 10 * 1024 * 1024;
/** Default largest list envelope (everything but the items), in bytes: 1 MiB (a continue token is a few hundred). */
export const DEFAULT_MAX_LIST_ENVELOPE_BYTES = 1024 * 1024;

export interface ListDecodeOptions<T> {
  /**
   * Turns each parsed item into what the list keeps (a projection, a compacted copy), called once per item in
   * order, as soon as the item is complete. Default: the item as parsed.
   */
  item?: (raw: unknown, index: number) => T;
  /** Largest item, in bytes of JSON. Default: DEFAULT_MAX_OBJECT_BYTES. */
  maxItemBytes?: number;
  /** Largest envelope, in bytes of JSON. Default: DEFAULT_MAX_LIST_ENVELOPE_BYTES. */
  maxEnvelopeBytes?: number;
  /** Names the request in errors, e.g. `GET /api/v1/pods`. Default: `list`. */
  what?: string;
}

/** Raw bytes of a top-level key kept to compare it with `items`; longer keys are not `items`, however escaped. */
const MAX_KEY_BYTES = 64;

function isJsonWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** Where the scan is in the `items` array (depth 2). */
type ArrayState = 'first' | 'afterComma' | 'inItem';

/**
 * Incremental list decoder: push() the body's chunks in order, then end(). Throws ApiResponseError as soon as a
 * budget is broken or the input cannot be a list. Not reusable.
 */
export class ListPageDecoder<T> {
  private readonly items: T[] = [];
  private readonly toItem: (raw: unknown, index: number) => T;
  private readonly maxItemBytes: number;
  private readonly maxEnvelopeBytes: number;
  private readonly what: string;

  // Scanner state, valid between chunks.
  /** Nesting of objects/arrays; the list object itself is depth 1, the items array depth 2, an item object 3. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The top-level value has started (it must be an object). */
  private started = false;
  /** At depth 1, the next string is a key. */
  private expectKey = false;
  /** Capturing a top-level key: its raw bytes so far (undefined when longer than MAX_KEY_BYTES). */
  private keyParts: Uint8Array[] | undefined;
  private keyBytes = 0;
  private capturingKey = false;
  /** The last complete top-level key, decoded; '' for one too long to be `items`. */
  private lastKey = '';
  /** After `"items":` at depth 1, waiting for its value. */
  private awaitingItemsValue = false;
  private inItems = false;
  private itemsSeen = false;
  private arrayState: ArrayState = 'first';

  // The envelope (everything outside `items`, which it holds as `[]`) and the current item, as chunk views.
  private envelopeParts: Uint8Array[] = [];
  private envelopeBytes = 0;
  private itemParts: Uint8Array[] = [];
  private itemBytes = 0;
  private ended = false;

  constructor(options: ListDecodeOptions<T> = {}) {
    this.toItem = options.item ?? ((raw) => raw as T);
    this.maxItemBytes = options.maxItemBytes ?? DEFAULT_MAX_OBJECT_BYTES;
    this.maxEnvelopeBytes = options.maxEnvelopeBytes ?? DEFAULT_MAX_LIST_ENVELOPE_BYTES;
    this.what = options.what ?? 'list';
  }

  /** Items decoded so far (for tests and progress). */
  itemCount(): number {
    return this.items.length;
  }

  push(input: Uint8Array): void {
    if (this.ended) throw this.malformed('data after the end');
    const chunk = Buffer.isBuffer(input)
      ? input
      : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    const n = chunk.length;
    // Start (in this chunk) of the envelope or item bytes not yet saved; -1 when none is open here.
    let envelopeFrom = this.inItems ? -1 : 0;
    let itemFrom = this.inItems && this.arrayState === 'inItem' ? 0 : -1;
    let keyFrom = this.capturingKey ? 0 : -1;
    // Next quote / backslash at or after i in this chunk (n: none), found with native indexOf inside strings.
    let nextQuote = -1;
    let nextBackslash = -1;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          i++;
          continue;
        }
        if (nextQuote < i) nextQuote = indexOrEnd(chunk, QUOTE, i);
        if (nextBackslash < i) nextBackslash = indexOrEnd(chunk, BACKSLASH, i);
        if (nextBackslash < nextQuote) {
          this.escaped = true;
          i = nextBackslash + 1;
          continue;
        }
        if (nextQuote === n) break;
        this.inString = false;
        i = nextQuote + 1;
        if (this.capturingKey) {
          this.saveKey(chunk.subarray(keyFrom, i - 1));
          keyFrom = -1;
          this.endKey();
        }
        continue;
      }
      const b = chunk[i] as number;
      if (isJsonWhitespace(b)) {
        i++;
        continue;
      }
      if (!this.started) {
        if (b !== OPEN_BRACE) throw this.malformed('the answer is not a JSON object');
        this.started = true;
      }
      if (this.inItems && this.depth === 2) {
        // Between or at the end of items of the `items` array.
        if (this.arrayState !== 'inItem') {
          if (b === CLOSE_BRACKET && this.arrayState === 'first') {
            this.closeItems();
            envelopeFrom = i;
            i++;
            continue;
          }
          if (b === COMMA || b === CLOSE_BRACKET) throw this.malformed('a missing item in "items"');
          this.arrayState = 'inItem';
          itemFrom = i;
          this.itemParts = [];
          this.itemBytes = 0;
          // The item's first byte is handled below (it may open an object or a string).
        } else if (b === COMMA || b === CLOSE_BRACKET) {
          this.saveItem(chunk.subarray(itemFrom, i));
          itemFrom = -1;
          this.finishItem();
          if (b === COMMA) {
            this.arrayState = 'afterComma';
          } else {
            this.closeItems();
            envelopeFrom = i;
          }
          i++;
          continue;
        }
      }
      if (b === QUOTE) {
        this.inString = true;
        if (this.depth === 1 && !this.inItems) {
          if (!this.expectKey) {
            // A string value at the top level: not the `items` value.
            this.awaitingItemsValue = false;
          } else {
            this.capturingKey = true;
            this.keyParts = [];
            this.keyBytes = 0;
            keyFrom = i + 1;
          }
        }
      } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        if (this.depth === 1 && this.awaitingItemsValue) {
          this.awaitingItemsValue = false;
          if (b === OPEN_BRACKET) {
            if (this.itemsSeen) throw this.malformed('"items" appears twice');
            this.itemsSeen = true;
            this.inItems = true;
            this.arrayState = 'first';
            this.saveEnvelope(chunk.subarray(envelopeFrom, i + 1));
            envelopeFrom = -1;
          }
        }
        this.depth++;
        if (this.depth === 1) this.expectKey = true;
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        if (this.depth === 0) throw this.malformed('unbalanced brackets');
        this.depth--;
        // A `}` at the items array's own level is not the array's end: JSON.parse of the envelope cannot see it.
        if (this.inItems && this.depth < 2) throw this.malformed('unbalanced brackets in "items"');
      } else if (this.depth === 1 && !this.inItems) {
        if (b === COMMA) {
          this.expectKey = true;
          this.awaitingItemsValue = false;
        } else if (b === COLON) {
          this.awaitingItemsValue = this.lastKey === 'items';
        } else {
          // A literal (number, true, false, null) as a top-level value.
          this.awaitingItemsValue = false;
        }
      }
      i++;
    }
    if (this.capturingKey && keyFrom >= 0) this.saveKey(chunk.subarray(keyFrom));
    if (itemFrom >= 0) this.saveItem(chunk.subarray(itemFrom));
    if (envelopeFrom >= 0) this.saveEnvelope(chunk.subarray(envelopeFrom));
  }

  /** The list: the envelope as sent, `items` the values `item` returned, in order. */
  end(): KubeList<T> {
    if (this.ended) throw this.malformed('end() called twice');
    this.ended = true;
    if (!this.started) throw this.malformed('the answer is empty');
    if (this.inString || this.depth > 0 || this.inItems) throw this.malformed('the answer ends early');
    let envelope: unknown;
    try {
      envelope = JSON.parse(Buffer.concat(this.envelopeParts).toString('utf8'));
    } catch (err) {
      throw this.malformed(`not JSON (${(err as Error).message})`, err);
    }
    this.envelopeParts = [];
    if (!isRecord(envelope)) throw this.malformed('the answer is not a JSON object');
    if (!this.itemsSeen && envelope['items'] !== undefined && envelope['items'] !== null)
      throw this.malformed('"items" is not an array');
    return { ...(envelope as Omit<KubeList<T>, 'items'>), items: this.items };
  }

  private saveKey(part: Uint8Array): void {
    if (this.keyParts === undefined) return;
    this.keyBytes += part.length;
    if (this.keyBytes > MAX_KEY_BYTES) this.keyParts = undefined;
    else this.keyParts.push(part);
  }

  private endKey(): void {
    this.capturingKey = false;
    this.expectKey = false;
    const parts = this.keyParts;
    this.keyParts = undefined;
    if (parts === undefined) {
      this.lastKey = '';
      return;
    }
    const raw = Buffer.concat(parts);
    if (!raw.includes(BACKSLASH)) {
      this.lastKey = raw.toString('utf8');
      return;
    }
    // An escaped key (`"\u0069tems"` is `items` too): JSON decides what it spells.
    try {
      this.lastKey = JSON.parse(`"${raw.toString('utf8')}"`) as string;
    } catch (err) {
      throw this.malformed('a key is not a JSON string', err);
    }
  }

  private saveEnvelope(part: Uint8Array): void {
    this.envelopeBytes += part.length;
    if (this.envelopeBytes > this.maxEnvelopeBytes)
      throw new ApiResponseError(
        'TESSERA_API_RESPONSE_TOO_LARGE',
        `${this.what}: the list's metadata (everything but its items) is larger than ${formatBytes(this.maxEnvelopeBytes)}; ` +
          'this is not a list the API server sends',
        { budget: 'maxEnvelopeBytes' },
      );
    if (part.length > 0) this.envelopeParts.push(part);
  }

  private saveItem(part: Uint8Array): void {
    this.itemBytes += part.length;
    if (this.itemBytes > this.maxItemBytes)
      throw new ApiResponseError(
        'TESSERA_API_RESPONSE_TOO_LARGE',
        `${this.what}: item ${this.items.length + 1} of the page is larger than ${formatBytes(this.maxItemBytes)} ` +
          '(maxItemBytes); no object of an API server with the default etcd request limit is, so the list was ' +
          'not read further. If this cluster stores larger objects, raise the limit',
        { budget: 'maxItemBytes' },
      );
    if (part.length > 0) this.itemParts.push(part);
  }

  private finishItem(): void {
    const parts = this.itemParts;
    this.itemParts = [];
    const index = this.items.length;
    let raw: unknown;
    try {
      raw = JSON.parse((parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts)).toString('utf8'));
    } catch (err) {
      throw this.malformed(`item ${index + 1} is not JSON (${(err as Error).message})`, err);
    }
    if (!isRecord(raw)) throw this.malformed(`item ${index + 1} is not an object`);
    this.items.push(this.toItem(raw, index));
  }

  private closeItems(): void {
    this.inItems = false;
    this.depth = 1;
    this.expectKey = false;
  }

  private malformed(detail: string, cause?: unknown): ApiResponseError {
    return new ApiResponseError(
      'TESSERA_API_RESPONSE_MALFORMED',
      `${this.what}: the answer is not a Kubernetes list: ${detail}`,
      { cause },
    );
  }
}

/** Decodes a list response body (see ListPageDecoder). */
export async function decodeListStream<T>(
  chunks: AsyncIterable<Uint8Array>,
  options: ListDecodeOptions<T> = {},
): Promise<KubeList<T>> {
  const decoder = new ListPageDecoder<T>(options);
  for await (const chunk of chunks) decoder.push(chunk);
  return decoder.end();
}

function indexOrEnd(chunk: Buffer, byte: number, from: number): number {
  const at = chunk.indexOf(byte, from);
  return at < 0 ? chunk.length : at;
}

/** `10 MiB`, `64 KiB`, `512 bytes`. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
