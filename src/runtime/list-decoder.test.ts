// The streaming list decoder must give exactly what JSON.parse gives, however the bytes are cut, hand each item to
// the caller as soon as it is complete, refuse an over-budget item or envelope before parsing it, and refuse
// anything that is not a list.
import { describe, expect, it } from 'vitest';
import { ApiResponseError } from './errors.js';
import { ListPageDecoder, decodeListStream } from './list-decoder.js';
import type { KubeList } from './object.js';

type Obj = Record<string, unknown>;

function decodeChunks(
  chunks: Uint8Array[],
  opts: ConstructorParameters<typeof ListPageDecoder<Obj>>[0] = {},
) {
  const d = new ListPageDecoder<Obj>(opts);
  for (const c of chunks) d.push(c);
  return d.end();
}

/** `bytes` cut at the given offsets. */
function cut(bytes: Buffer, at: number[]): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (const to of [...at].sort((a, b) => a - b)) {
    out.push(bytes.subarray(from, to));
    from = to;
  }
  out.push(bytes.subarray(from));
  return out;
}

/** A deterministic pseudo-random source (tests must not depend on Math.random). */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const tricky = {
  kind: 'PodList',
  apiVersion: 'v1',
  metadata: {
    resourceVersion: '12345',
    continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzNDV9',
    remainingItemCount: 7,
  },
  items: [
    {
      metadata: {
        name: 'a',
        annotations: { 'x/y': 'brackets ]}[{ , : and "quotes" and \\ backslashes \\\\' },
      },
    },
    { metadata: { name: 'b', labels: { items: '[1,2]' } }, items: [{ items: [] }], s: '\\"]' },
    {
      metadata: { name: 'żółw 🐢 ünïcödé', annotations: { e: 'tab\t nl\n cr\r \u0000 \u2028 \ud83d\ude00' } },
    },
    { metadata: { name: 'd' }, spec: { n: -1.5e3, t: true, f: false, z: null, arr: [[], {}, [[{}]]] } },
  ],
};

describe('ListPageDecoder', () => {
  it('gives what JSON.parse gives, for every single cut and many random cuts of a tricky list', () => {
    const text = JSON.stringify(tricky, null, 1);
    const bytes = Buffer.from(text, 'utf8');
    const expected = JSON.parse(text) as KubeList<Obj>;
    for (let at = 0; at <= bytes.length; at++) expect(decodeChunks(cut(bytes, [at]))).toEqual(expected);
    const random = seeded(7);
    for (let round = 0; round < 300; round++) {
      const cuts = Array.from({ length: 1 + Math.floor(random() * 12) }, () =>
        Math.floor(random() * bytes.length),
      );
      expect(decodeChunks(cut(bytes, cuts))).toEqual(expected);
    }
    // One byte at a time, compact form too.
    const compact = Buffer.from(JSON.stringify(tricky), 'utf8');
    expect(decodeChunks([...compact].map((b) => Uint8Array.of(b)))).toEqual(expected);
  });

  it('reads the envelope whatever its order and spelling: items first, an escaped "items" key, no items', () => {
    const itemsFirst = '{"items":[{"a":1}],"metadata":{"resourceVersion":"9","continue":"tok"},"kind":"L"}';
    expect(decodeChunks([Buffer.from(itemsFirst)])).toEqual(JSON.parse(itemsFirst));
    const escaped = '{"\\u0069tems":[{"a":1},{"b":2}],"metadata":{"resourceVersion":"3"}}';
    const seen: Obj[] = [];
    const list = decodeChunks([Buffer.from(escaped)], { item: (raw) => (seen.push(raw as Obj), raw as Obj) });
    expect(list.items).toEqual([{ a: 1 }, { b: 2 }]);
    expect(seen).toHaveLength(2);
    expect(decodeChunks([Buffer.from('{"kind":"L","items":[]}')])).toEqual({ kind: 'L', items: [] });
    expect(decodeChunks([Buffer.from(' {"items" : null} ')]).items).toEqual([]);
    expect(decodeChunks([Buffer.from('{"metadata":{"resourceVersion":"1"}}')]).items).toEqual([]);
    // A key that only looks like `items` inside another value is not the list's.
    expect(decodeChunks([Buffer.from('{"metadata":{"items":[1]},"items":[{"x":"items"}]}')])).toEqual({
      metadata: { items: [1] },
      items: [{ x: 'items' }],
    });
  });

  it('hands each item to `item` as soon as it is complete, with its index, and keeps what it returns', () => {
    const calls: number[] = [];
    const d = new ListPageDecoder<string>({
      item: (raw, index) => {
        calls.push(index);
        return `${(raw as { metadata: { name: string } }).metadata.name}!`;
      },
    });
    d.push(Buffer.from('{"metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}}'));
    expect(calls).toEqual([]); // the item may still go on: `,` or `]` ends it
    d.push(Buffer.from(',{"metadata":{"na'));
    expect(calls).toEqual([0]);
    d.push(Buffer.from('me":"b"}}]}'));
    expect(calls).toEqual([0, 1]);
    expect(d.end()).toEqual({ metadata: { resourceVersion: '5' }, items: ['a!', 'b!'] });
  });

  it('refuses an item over maxItemBytes before parsing it, and reads the answer no further', async () => {
    let pulled = 0;
    const parsed: unknown[] = [];
    async function* body(): AsyncGenerator<Uint8Array> {
      pulled++;
      yield Buffer.from('{"metadata":{"resourceVersion":"1"},"items":[{"a":1},{"big":"');
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield Buffer.from('x'.repeat(1024));
      }
      yield Buffer.from('"}]}');
    }
    const err = await decodeListStream(body(), {
      maxItemBytes: 64 * 1024,
      what: 'GET /api/v1/pods',
      item: (raw) => (parsed.push(raw), raw),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiResponseError);
    expect(err).toMatchObject({ code: 'TESSERA_API_RESPONSE_TOO_LARGE', budget: 'maxItemBytes' });
    expect((err as Error).message).toContain('GET /api/v1/pods: item 2 of the page is larger than 64 KiB');
    expect(parsed).toEqual([{ a: 1 }]);
    expect(pulled).toBeLessThan(70);
  });

  it('accepts an item of exactly maxItemBytes', () => {
    const item = '{"s":"' + 'y'.repeat(100) + '"}';
    const list = decodeChunks([Buffer.from(`{"items":[${item}]}`)], { maxItemBytes: item.length });
    expect(list.items).toHaveLength(1);
    expect(() =>
      decodeChunks([Buffer.from(`{"items":[${item}]}`)], { maxItemBytes: item.length - 1 }),
    ).toThrow(`larger than ${item.length - 1} bytes`);
  });

  it('refuses an envelope over maxEnvelopeBytes', () => {
    const text = `{"metadata":{"continue":"${'c'.repeat(5000)}"},"items":[]}`;
    expect(() => decodeChunks([Buffer.from(text)], { maxEnvelopeBytes: 4096 })).toThrow(
      expect.objectContaining({ code: 'TESSERA_API_RESPONSE_TOO_LARGE', budget: 'maxEnvelopeBytes' }),
    );
  });

  it.each([
    ['an empty answer', ''],
    ['a top-level array', '[{"a":1}]'],
    ['a string', '"items"'],
    ['a truncated list', '{"items":[{"a":1}'],
    ['a truncated string', '{"items":[{"a":"1'],
    ['a trailing comma in items', '{"items":[{"a":1},]}'],
    ['a missing item', '{"items":[,{"a":1}]}'],
    ['two commas', '{"items":[{"a":1},,{"b":2}]}'],
    ['an item that is not an object', '{"items":[1]}'],
    ['an item that is not JSON', '{"items":[{"a":tru}]}'],
    ['a brace closing the items array', '{"items":[{"a":1}}]}'],
    ['items given twice', '{"items":[],"items":[{"a":1}]}'],
    ['items not an array', '{"items":{"a":1}}'],
    ['items a string', '{"items":"[]"}'],
    ['an envelope that is not JSON', '{"kind":PodList,"items":[]}'],
    ['garbage after the list', '{"items":[]} x'],
    ['a second object after the list', '{"items":[]}{"items":[]}'],
  ])('refuses %s as malformed', (_what, text) => {
    let err: unknown;
    try {
      decodeChunks([Buffer.from(text)]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiResponseError);
    expect(err).toMatchObject({ code: 'TESSERA_API_RESPONSE_MALFORMED' });
  });
});
