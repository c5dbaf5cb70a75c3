// Remembers what decoding a status ConfigMap's `status` text gave (the status, or the error), keyed by a SHA-256 of
// the text, so a reconcile that finds the same text again (another NodePool event, a resync, a HostedControlPlane
// update) neither parses it again nor pays for broken or hostile text twice. Guarantees: the cache is bounded by
// bytes (an estimate of the retained size, never by entry count alone), least recently used entries go first; text
// longer than the status budget is never hashed nor kept (decoding rejects it in O(1)). Results are shared: callers
// must not modify them.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { InvalidArgumentError } from '../../runtime/index.js';
import type { PerformanceProfileStatus } from '../api/types.js';
import { STATUS_YAML_BUDGET } from '../bounded-yaml.js';
import { decodeProfileStatus } from '../status-codec.js';

export interface StatusDecodeCacheOptions {
  /** Bytes of decoded results kept (estimated as 2 bytes per character plus 256 per entry). Default: 4 MiB. */
  readonly maxBytes?: number;
  /** Called on every actual decode (a cache miss), e.g. to count them. */
  readonly onDecode?: () => void;
}

type Entry =
  | { readonly ok: true; readonly status: PerformanceProfileStatus }
  | { readonly ok: false; readonly error: unknown };

/** Per-entry overhead assumed on top of the text it stands for: key, entry object, LRU bookkeeping. */
const ENTRY_OVERHEAD_BYTES = 256;

export interface StatusDecoder {
  /** decodeProfileStatus(text), from the cache when the same text was decoded before. */
  decode(text: string): PerformanceProfileStatus;
  /** Estimated bytes held. */
  size(): number;
}

export function createStatusDecodeCache(options: StatusDecodeCacheOptions = {}): StatusDecoder {
  const maxBytes = options.maxBytes ?? 4 * 1024 * 1024;
  if (!Number.isInteger(maxBytes) || maxBytes < 1)
    throw new InvalidArgumentError('maxBytes', `must be an integer >= 1, got ${maxBytes}`);
  const entries = new LRUCache<string, Entry>({ maxSize: maxBytes });

  const decodeNow = (text: string): Entry => {
    options.onDecode?.();
    try {
      return { ok: true, status: decodeProfileStatus(text) };
    } catch (error) {
      return { ok: false, error };
    }
  };

  return {
    decode(text: string): PerformanceProfileStatus {
      if (text.length > STATUS_YAML_BUDGET.maxBytes) {
        const entry = decodeNow(text); // rejected on its length alone; not worth a hash or a cache slot
        if (entry.ok) return entry.status;
        throw entry.error;
      }
      const key = createHash('sha256').update(text).digest('base64');
      let entry = entries.get(key);
      if (!entry) {
        entry = decodeNow(text);
        // A decoded status keeps at most the characters of its text; an error, its message (capped by the codec).
        const retained = entry.ok
          ? text.length
          : entry.error instanceof Error
            ? entry.error.message.length
            : 0;
        entries.set(key, entry, { size: ENTRY_OVERHEAD_BYTES + key.length + 2 * retained });
      }
      if (entry.ok) return entry.status;
      throw entry.error;
    },
    size: () => entries.calculatedSize,
  };
}
