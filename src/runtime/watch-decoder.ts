// Splits a watch response body (newline-delimited JSON, arbitrary chunk boundaries, UTF-8 characters possibly cut
// between chunks) into parsed watch events. Pure over its input; a line that is not JSON throws SyntaxError.
import { StringDecoder } from 'node:string_decoder';

/** One event of a watch stream, as sent by the API server. */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export async function* decodeWatchStream<T>(
  chunks: AsyncIterable<Uint8Array | string>,
): AsyncGenerator<WatchEvent<T>> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of chunks) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
    let start = 0;
    let nl = pending.indexOf('\n', start);
    while (nl >= 0) {
      if (nl > start) yield JSON.parse(pending.slice(start, nl)) as WatchEvent<T>;
      start = nl + 1;
      nl = pending.indexOf('\n', start);
    }
    pending = start > 0 ? pending.slice(start) : pending;
  }
  pending += decoder.end();
  if (pending.trim()) yield JSON.parse(pending) as WatchEvent<T>;
}
