import { describe, expect, it } from 'vitest';
import type { PullSecretLike } from '../registry/index.js';
import { briefSecretCache } from './pull-secret-cache.js';

const signal = new AbortController().signal;

function countingGetter(secrets: Record<string, PullSecretLike>) {
  const calls: string[] = [];
  return {
    calls,
    get: async (namespace: string, name: string) => {
      calls.push(`${namespace}/${name}`);
      return secrets[`${namespace}/${name}`];
    },
  };
}

describe('brief pull secret cache', () => {
  const secret = {
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': 'e30=' },
    metadata: { name: 'pull', namespace: 'a', managedFields: [{ manager: 'x' }] },
  } as PullSecretLike;

  it('reads each secret once per TTL, keeps absent ones too, and never mixes namespaces', async () => {
    let now = 1_000;
    const api = countingGetter({ 'a/pull': secret });
    const get = briefSecretCache(api.get, { ttlMs: 10_000, now: () => now });
    for (let i = 0; i < 100; i++) {
      expect(await get('a', 'pull', signal)).toEqual({ type: secret.type, data: secret.data });
      expect(await get('a', 'missing', signal)).toBeUndefined();
      expect(await get('b', 'pull', signal)).toBeUndefined();
    }
    expect(api.calls).toEqual(['a/pull', 'a/missing', 'b/pull']);
    now = 11_001;
    await get('a', 'pull', signal);
    expect(api.calls).toEqual(['a/pull', 'a/missing', 'b/pull', 'a/pull']);
  });

  it('is bounded by bytes: a secret larger than its share is read every time, not kept', async () => {
    const big = {
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': 'x'.repeat(300_000) },
    };
    const api = countingGetter({ 'a/big': big, 'a/pull': secret });
    const get = briefSecretCache(api.get, { maxBytes: 1_000_000 });
    await get('a', 'big', signal);
    await get('a', 'big', signal);
    expect(api.calls.filter((c) => c === 'a/big')).toHaveLength(2);
    // Many small ones evict the oldest instead of growing.
    const reads: string[] = [];
    const tracked = briefSecretCache(
      async (_ns, name) => {
        reads.push(name);
        return { type: 'kubernetes.io/dockerconfigjson', data: { k: 'v'.repeat(1_000) } };
      },
      { maxBytes: 100_000 },
    );
    for (let i = 0; i < 500; i++) await tracked('a', `s${i}`, signal);
    await tracked('a', 's0', signal);
    expect(reads.filter((n) => n === 's0')).toHaveLength(2);
    await tracked('a', 's499', signal);
    expect(reads.filter((n) => n === 's499')).toHaveLength(1);
  });
});
