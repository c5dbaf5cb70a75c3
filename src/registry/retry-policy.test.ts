import { describe, expect, it } from 'vitest';
import { defaultRetryPolicy, isRetryableStatus, parseRetryAfter, retryDelayMs } from './retry-policy.js';

describe('retry policy', () => {
  it('retries 429 and 5xx except 501/505', () => {
    expect([429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([200, 401, 404, 501, 505].some(isRetryableStatus)).toBe(false);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-30T10:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Mon, 30 Nov 2026 10:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Mon, 30 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('backs off exponentially with bounded jitter, honours and caps Retry-After', () => {
    const policy = { ...defaultRetryPolicy, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, undefined, policy, () => 0))).toEqual([
      50, 100, 200, 400, 500,
    ]);
    expect(retryDelayMs(1, undefined, policy, () => 0.999)).toBeCloseTo(99.95);
    expect(retryDelayMs(1, 700, policy, () => 0.5)).toBe(700);
    expect(retryDelayMs(1, 60_000, policy, () => 0.5)).toBe(1000);
  });
});
