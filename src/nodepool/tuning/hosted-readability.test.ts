import { describe, expect, it } from 'vitest';
import { hostedReadability, type HostedReadabilityInput } from './hosted-readability.js';

const T0 = Date.UTC(2026, 0, 1);
const base: HostedReadabilityInput = {
  synced: true,
  probeAnswered: true,
  lastContactAt: T0,
  since: T0,
  now: T0,
  graceMs: 60_000,
};

describe('hostedReadability', () => {
  it('trusts the caches only while the hosted API answers', () => {
    expect(hostedReadability(base)).toEqual({ kind: 'readable' });
  });

  it('does not trust caches that synced once when the hosted API stops answering', () => {
    const r = hostedReadability({ ...base, probeAnswered: false, now: T0 + 10_000 });
    expect(r).toEqual({ kind: 'wait', retryAfterMs: 1_000 });
  });

  it('reports the hosted cluster unreadable once out of reach past the grace period', () => {
    const r = hostedReadability({ ...base, probeAnswered: false, now: T0 + 60_000 });
    expect(r).toEqual({ kind: 'unreadable', lastContactAt: T0 });
  });

  it('counts the grace period from the last answer, not from the start', () => {
    const input = { ...base, since: T0 - 3_600_000, probeAnswered: false };
    expect(hostedReadability({ ...input, now: T0 + 59_999 }).kind).toBe('wait');
    expect(hostedReadability({ ...input, now: T0 + 60_000 }).kind).toBe('unreadable');
  });

  it('counts from the start when the hosted cluster never answered, and never waits past the grace end', () => {
    const never = { ...base, synced: false, probeAnswered: false, lastContactAt: undefined };
    expect(hostedReadability({ ...never, now: T0 + 59_700 })).toEqual({ kind: 'wait', retryAfterMs: 300 });
    expect(hostedReadability({ ...never, now: T0 + 61_000 })).toEqual({
      kind: 'unreadable',
      lastContactAt: undefined,
    });
  });

  it('does not trust an answering API server before the caches filled, nor wait for them forever', () => {
    const unsynced = { ...base, synced: false, since: T0 - 60_000, lastContactAt: T0 + 1_000 };
    expect(hostedReadability({ ...unsynced, now: T0 - 1_000 }).kind).toBe('wait');
    expect(hostedReadability({ ...unsynced, now: T0 + 1_000 }).kind).toBe('unreadable');
  });
});
