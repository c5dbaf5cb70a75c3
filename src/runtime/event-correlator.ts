// Decides what happens to an emitted event, like client-go's EventCorrelator, as pure logic over a caller-given
// time: (1) spam filter: a token bucket per (source, object) with burst 25 refilling one token per 5 minutes drops
// floods; (2) aggregation: more than 10 events in 10 minutes that differ only in message collapse into one event
// "(combined from similar events): <latest message>"; (3) dedup: an event identical to a recent one becomes an
// update of that event (count+1, lastTimestamp) instead of a new object. Caches are bounded LRUs.
import { LRUCache } from 'lru-cache';

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export type EventType = 'Normal' | 'Warning';

/** What a caller emits. */
export interface EventInput {
  regarding: ObjectReference;
  type: EventType;
  /** CamelCase reason, e.g. `ImageInspectionFailed`. */
  reason: string;
  message: string;
  /** What was done (events.k8s.io `action`). Default: the reason. */
  action?: string;
}

/** The event to write, API-version neutral. Times are ms since epoch. */
export interface EventRecord extends EventInput {
  /** Object name of the Event (kept across updates of the same event). */
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: number;
  lastTimestamp: number;
}

export type CorrelationResult =
  | { readonly action: 'drop' }
  | { readonly action: 'create'; readonly event: EventRecord }
  | { readonly action: 'update'; readonly event: EventRecord };

export interface EventCorrelatorOptions {
  /** Events allowed at once per (source, object). Default: 25. */
  burst?: number;
  /** Token refill per second per (source, object). Default: 1/300. */
  qps?: number;
  /** Distinct messages before aggregation. Default: 10. */
  maxSimilarEvents?: number;
  /** Aggregation window (ms). Default: 600,000. */
  aggregationWindowMs?: number;
  /** Entries kept per cache. Default: 4096. */
  cacheSize?: number;
}

interface Bucket {
  tokens: number;
  last: number;
}

interface SimilarGroup {
  messages: Set<string>;
  firstAt: number;
}

export const AGGREGATED_PREFIX = '(combined from similar events): ';

export class EventCorrelator {
  private readonly burst: number;
  private readonly qps: number;
  private readonly maxSimilar: number;
  private readonly windowMs: number;
  private readonly buckets: LRUCache<string, Bucket>;
  private readonly groups: LRUCache<string, SimilarGroup>;
  private readonly seen: LRUCache<string, EventRecord>;
  /** Makes names unique within one millisecond (client-go uses nanoseconds). */
  private sequence = 0;
  /** Random start, so two recorders emitting in the same millisecond do not pick the same name. */
  private readonly nameOffset = Math.floor(Math.random() * 1_000_000);

  constructor(
    private readonly source: string,
    options: EventCorrelatorOptions = {},
  ) {
    this.burst = options.burst ?? 25;
    this.qps = options.qps ?? 1 / 300;
    this.maxSimilar = options.maxSimilarEvents ?? 10;
    this.windowMs = options.aggregationWindowMs ?? 600_000;
    const max = options.cacheSize ?? 4096;
    this.buckets = new LRUCache({ max });
    this.groups = new LRUCache({ max });
    this.seen = new LRUCache({ max });
  }

  correlate(input: EventInput, now: number): CorrelationResult {
    const ref = input.regarding;
    const objectKey = [ref.apiVersion, ref.kind, ref.namespace, ref.name, ref.uid].join('|');
    if (!this.allow(`${this.source}|${objectKey}`, now)) return { action: 'drop' };

    const aggregateKey = [this.source, objectKey, input.type, input.reason].join('|');
    let group = this.groups.get(aggregateKey);
    if (!group || now - group.firstAt > this.windowMs) {
      group = { messages: new Set(), firstAt: now };
      this.groups.set(aggregateKey, group);
    }
    group.messages.add(input.message);
    const aggregated = group.messages.size > this.maxSimilar;
    const message = aggregated ? AGGREGATED_PREFIX + input.message : input.message;
    const key = aggregated ? aggregateKey : `${aggregateKey}|${input.message}`;

    const previous = this.seen.get(key);
    if (previous) {
      const event: EventRecord = {
        ...previous,
        ...input,
        message,
        count: previous.count + 1,
        lastTimestamp: now,
      };
      this.seen.set(key, event);
      return { action: 'update', event };
    }
    const event: EventRecord = {
      ...input,
      message,
      name: `${ref.name ?? 'unknown'}.${(BigInt(now) * 1_000_000n + BigInt((this.nameOffset + this.sequence++) % 1_000_000)).toString(16)}`,
      namespace: ref.namespace || 'default',
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
    };
    this.seen.set(key, event);
    return { action: 'create', event };
  }

  /** Forgets a recorded event (e.g. the server no longer has it), so the next one is created afresh. */
  forget(event: EventRecord): void {
    for (const [k, v] of this.seen.entries()) if (v.name === event.name) this.seen.delete(k);
  }

  private allow(key: string, now: number): boolean {
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, last: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.last) / 1000) * this.qps);
    bucket.last = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
