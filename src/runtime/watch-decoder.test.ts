import { describe, expect, it } from 'vitest';
import { decodeWatchStream, type WatchEvent } from './watch-decoder.js';

async function collect(chunks: Array<Uint8Array | string>): Promise<Array<WatchEvent<{ v: string }>>> {
  const out: Array<WatchEvent<{ v: string }>> = [];
  async function* source(): AsyncGenerator<Uint8Array | string> {
    yield* chunks;
  }
  for await (const e of decodeWatchStream<{ v: string }>(source())) out.push(e);
  return out;
}

describe('decodeWatchStream', () => {
  it('splits events at newlines regardless of chunk boundaries', async () => {
    const text =
      '{"type":"ADDED","object":{"v":"a"}}\n{"type":"MODIFIED","object":{"v":"b"}}\n\n{"type":"DELETED","object":{"v":"c"}}';
    const bytes = Buffer.from(text);
    const chunked = [bytes.subarray(0, 7), bytes.subarray(7, 40), bytes.subarray(40, 41), bytes.subarray(41)];
    expect((await collect(chunked)).map((e) => `${e.type}:${e.object.v}`)).toEqual([
      'ADDED:a',
      'MODIFIED:b',
      'DELETED:c',
    ]);
  });

  it('keeps multi-byte UTF-8 characters cut between chunks intact', async () => {
    const bytes = Buffer.from('{"type":"ADDED","object":{"v":"żółw 🐢"}}\n');
    const cut = bytes.indexOf(0xf0) + 2; // inside the 4-byte emoji
    expect((await collect([bytes.subarray(0, cut), bytes.subarray(cut)]))[0]?.object.v).toBe('żółw 🐢');
  });

  it('throws on a line that is not JSON', async () => {
    await expect(collect(['{"type":"ADDED"\n'])).rejects.toThrow(SyntaxError);
  });
});
