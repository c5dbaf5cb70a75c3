import { describe, expect, it } from 'vitest';
import { TokenCache } from './token-cache.js';

describe('TokenCache.obtain', () => {
  it('reports a token as fresh when it was fetched, even if the issuer returns the same text again', async () => {
    const cache = new TokenCache({ now: () => 0 });
    const fetch = async (): Promise<{ token: string; expiresInSeconds: number }> => ({
      token: 'same',
      expiresInSeconds: 300,
    });
    expect(await cache.obtain('k', fetch)).toEqual({ token: 'same', fresh: true });
    expect(await cache.obtain('k', fetch)).toEqual({ token: 'same', fresh: false });
    cache.invalidate('k');
    expect(await cache.obtain('k', fetch)).toEqual({ token: 'same', fresh: true });
  });

  it('marks callers that joined a concurrent fetch as fresh too, with one fetch', async () => {
    const cache = new TokenCache({ now: () => 0 });
    let fetches = 0;
    const fetch = async (): Promise<{ token: string; expiresInSeconds: number }> => {
      fetches++;
      await Promise.resolve();
      return { token: 't', expiresInSeconds: 300 };
    };
    const results = await Promise.all([cache.obtain('k', fetch), cache.obtain('k', fetch)]);
    expect(results).toEqual([
      { token: 't', fresh: true },
      { token: 't', fresh: true },
    ]);
    expect(fetches).toBe(1);
  });
});
