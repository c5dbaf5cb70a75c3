// A short-lived, byte-bounded cache in front of by-name Secret reads for pods' imagePullSecrets. The operator reads
// Secrets only by name in the pod's own namespace (RBAC `get`, no cluster-wide list or watch, so Secrets it never
// needs never enter its memory); this cache keeps a burst of pods that share a secret from costing one GET each.
import { LRUCache } from 'lru-cache';
import type { PullSecretLike } from '../registry/index.js';
import type { SecretGetter } from './pull-secrets.js';

/** How long a pull secret read by name is reused: a burst of pods sharing one secret costs one GET. */
export const PULL_SECRET_CACHE_TTL_MS = 10_000;
/** Bytes of secret data kept at most (LRU); a Secret larger than a quarter of it is read but not kept. */
export const PULL_SECRET_CACHE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Wraps a by-name Secret GET with a short-lived cache bounded by bytes (not entries), keyed by namespace/name, so
 * Secrets stay read one name at a time in the pod's namespace (RBAC `get` only, no cluster-wide watch) without a
 * GET per pod. Absent Secrets are cached too. Only `type` and `data` are kept.
 */
export function briefSecretCache(
  get: SecretGetter,
  options: { ttlMs?: number; maxBytes?: number; now?: () => number } = {},
): SecretGetter {
  const maxSize = options.maxBytes ?? PULL_SECRET_CACHE_MAX_BYTES;
  const cache = new LRUCache<string, { secret: PullSecretLike | undefined }>({
    maxSize,
    maxEntrySize: Math.floor(maxSize / 4),
    ttl: options.ttlMs ?? PULL_SECRET_CACHE_TTL_MS,
    ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
    sizeCalculation: (v, key) => {
      let bytes = 64 + key.length + (v.secret?.type?.length ?? 0);
      for (const [k, d] of Object.entries(v.secret?.data ?? {})) bytes += k.length + d.length;
      return bytes;
    },
  });
  return async (namespace, name, signal) => {
    const key = `${namespace}/${name}`;
    const hit = cache.get(key);
    if (hit) return hit.secret;
    const fetched = await get(namespace, name, signal);
    const secret = fetched && { type: fetched.type, data: fetched.data };
    cache.set(key, { secret });
    return secret;
  };
}
