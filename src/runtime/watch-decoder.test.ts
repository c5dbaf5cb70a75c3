import { describe, expect, it } from 'vitest';
import { ApiResponseError } from './errors.js';
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

  it('refuses an event over maxEventBytes before reading it whole, after delivering the ones before it', async () => {
    let pulled = 0;
    const seen: string[] = [];
    async function* body(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('{"type":"ADDED","object":{"v":"small"}}\n{"type":"ADDED","object":{"v":"');
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield Buffer.from('x'.repeat(1024));
      }
      yield Buffer.from('"}}\n');
    }
    const err = await (async () => {
      for await (const e of decodeWatchStream<{ v: string }>(body(), {
        maxEventBytes: 16 * 1024,
        what: 'WATCH /p',
      }))
        seen.push(e.object.v);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['small']);
    expect(err).toBeInstanceOf(ApiResponseError);
    expect(err).toMatchObject({ code: 'TESSERA_API_RESPONSE_TOO_LARGE', budget: 'maxEventBytes' });
    expect((err as Error).message).toContain('WATCH /p: an event is larger than 16 KiB');
    expect(pulled).toBeLessThan(20);
  });

  it('cuts lines at any byte, and a last line without a newline is an event too', async () => {
    const text = '{"type":"ADDED","object":{"v":"a\\n"}}\n\n{"type":"DELETED","object":{"v":"b"}}';
    const bytes = Buffer.from(text);
    for (let at = 0; at <= bytes.length; at++) {
      const events = await collect([bytes.subarray(0, at), bytes.subarray(at)]);
      expect(events.map((e) => `${e.type}:${e.object.v}`)).toEqual(['ADDED:a\n', 'DELETED:b']);
    }
  });

  it('throws on a line that is not JSON', async () => {
    await expect(collect(['{"type":"ADDED"\n'])).rejects.toThrow(SyntaxError);
  });
});
