// Splits a watch response body (newline-delimited JSON, arbitrary chunk boundaries, UTF-8 characters possibly cut
// between chunks) into parsed watch events. Works on bytes: a newline byte never occurs inside a UTF-8 character nor
// inside a JSON string (it would be escaped), so each line is cut out as chunk views and decoded alone; only the
// current event is held. An event line longer than `maxEventBytes` throws ApiResponseError TOO_LARGE before it is
// copied or parsed; a line that is not JSON throws SyntaxError. Pure over its input.
import { ApiResponseError } from './errors.js';
import { DEFAULT_MAX_OBJECT_BYTES, formatBytes } from './list-decoder.js';

/** One event of a watch stream, as sent by the API server. */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** Room for the event's own fields (`{"type":"MODIFIED","object":...}`) around the largest object. */
const EVENT_ENVELOPE_BYTES = 1024;

export interface WatchDecodeOptions {
  /** Longest event line, in bytes. Default: DEFAULT_MAX_OBJECT_BYTES + 1 KiB (one object and its event fields). */
  maxEventBytes?: number;
  /** Names the watch in errors, e.g. `WATCH /api/v1/pods`. Default: `watch`. */
  what?: string;
}

const NEWLINE = 0x0a;

export async function* decodeWatchStream<T>(
  chunks: AsyncIterable<Uint8Array | string>,
  options: WatchDecodeOptions = {},
): AsyncGenerator<WatchEvent<T>> {
  const maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_OBJECT_BYTES + EVENT_ENVELOPE_BYTES;
  /** The current line's bytes so far (views of the chunks). */
  let parts: Buffer[] = [];
  let size = 0;
  const keep = (part: Buffer): void => {
    size += part.length;
    if (size > maxEventBytes)
      throw new ApiResponseError(
        'TESSERA_API_RESPONSE_TOO_LARGE',
        `${options.what ?? 'watch'}: an event is larger than ${formatBytes(maxEventBytes)} (maxEventBytes); ` +
          'no object of an API server with the default etcd request limit is. If this cluster stores larger ' +
          'objects, raise the limit',
        { budget: 'maxEventBytes' },
      );
    if (part.length > 0) parts.push(part);
  };
  const take = (): WatchEvent<T> | undefined => {
    const line = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    parts = [];
    size = 0;
    const text = line.toString('utf8');
    return text.trim() === '' ? undefined : (JSON.parse(text) as WatchEvent<T>);
  };
  for await (const input of chunks) {
    const chunk =
      typeof input === 'string'
        ? Buffer.from(input, 'utf8')
        : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE, start); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      keep(chunk.subarray(start, nl));
      start = nl + 1;
      const event = take();
      if (event !== undefined) yield event;
    }
    if (start < chunk.length) keep(chunk.subarray(start));
  }
  if (size > 0) {
    const event = take();
    if (event !== undefined) yield event;
  }
}
