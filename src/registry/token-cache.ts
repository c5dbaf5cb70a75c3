// Bearer tokens per (realm, service, scope, credential), kept until shortly before they expire. Concurrent
// requests for the same key share one token request. Bounded (LRU) so a long-running controller that sees many
// repositories does not grow without limit, by count and by bytes. Time comes from the injected clock.
import { LRUCache } from 'lru-cache';

interface Entry {
  readonly token: string;
  /** Clock time (ms) after which the token is not used any more. */
  readonly expiresAt: number;
}

export interface TokenCacheOptions {
  /** Clock in ms. Default: Date.now. */
  readonly now?: () => number;
  /** Tokens kept. Default: 1024. */
  readonly max?: number;
  /** Estimated bytes of tokens and keys kept (a token response may be up to 1 MiB). Default: 8 MiB. */
  readonly maxBytes?: number;
  /** Margin before expiry at which a token is dropped, in ms. Default: 10_000. */
  readonly expiryMarginMs?: number;
}

export class TokenCache {
  private readonly entries: LRUCache<string, Entry>;
  private readonly inflight = new Map<string, Promise<string>>();
  private readonly now: () => number;
  private readonly marginMs: number;

  constructor(options: TokenCacheOptions = {}) {
    this.entries = new LRUCache<string, Entry>({
      max: options.max ?? 1024,
      maxSize: options.maxBytes ?? 8 * 1024 * 1024,
      sizeCalculation: (entry, key) => 128 + (entry.token.length + key.length) * 2,
    });
    this.now = options.now ?? Date.now;
    this.marginMs = options.expiryMarginMs ?? 10_000;
  }

  /** A cached, unexpired token for `key`; undefined otherwise. */
  peek(key: string): string | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.token;
  }

  /**
   * The cached token for `key`, or the one `fetch` returns (shared with concurrent callers). `fetch` resolves
   * with the token and its lifetime in seconds.
   */
  async get(key: string, fetch: () => Promise<{ token: string; expiresInSeconds: number }>): Promise<string> {
    return (await this.obtain(key, fetch)).token;
  }

  /**
   * Like `get`, and says whether the token was just issued (`fresh`: this call's fetch, or a concurrent one it
   * joined) rather than taken from the cache, so a caller can tell a reissued token from a stale one.
   */
  async obtain(
    key: string,
    fetch: () => Promise<{ token: string; expiresInSeconds: number }>,
  ): Promise<{ token: string; fresh: boolean }> {
    const cached = this.peek(key);
    if (cached !== undefined) return { token: cached, fresh: false };
    let pending = this.inflight.get(key);
    if (pending === undefined) {
      pending = (async () => {
        try {
          const { token, expiresInSeconds } = await fetch();
          const lifetimeMs = expiresInSeconds * 1000 - this.marginMs;
          if (lifetimeMs > 0) this.entries.set(key, { token, expiresAt: this.now() + lifetimeMs });
          return token;
        } finally {
          this.inflight.delete(key);
        }
      })();
      this.inflight.set(key, pending);
    }
    return { token: await pending, fresh: true };
  }

  /** Forgets a token the registry refused. */
  invalidate(key: string): void {
    this.entries.delete(key);
  }
}
