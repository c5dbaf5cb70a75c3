// Fair queuing between tenants for a work queue: keys are grouped into shards by `shardOf` (e.g. the namespace of
// a `namespace/name` key) and handed out round-robin, one key per shard with waiting keys in turn, first in first
// out within a shard. So a shard with many waiting keys cannot delay another shard's key by more than one key per
// other shard with waiting keys, whatever their count (API Priority and Fairness' fair queuing with equal shares
// and unit cost). Not guaranteed: fairness in processing time; a shard whose keys take long still holds the workers
// it was handed (bound that where the work is done). Memory is per waiting key: an emptied shard is dropped.
import { FifoOrder, type KeyOrder } from './key-order.js';

export class FairOrder<K> implements KeyOrder<K> {
  /**
   * Shards with waiting keys, in turn order (Map insertion order: the next shard to serve is the first entry).
   * Every shard here has at least one key.
   */
  private readonly shards = new Map<string, FifoOrder<K>>();
  private waiting = 0;

  /** @param shardOf The shard of a key; must be the same for every push of one key (pure). */
  constructor(private readonly shardOf: (key: K) => string) {}

  push(key: K): void {
    const shard = this.shardOf(key);
    let keys = this.shards.get(shard);
    if (keys === undefined) {
      // A shard that had nothing waiting joins at the end of the turn order.
      keys = new FifoOrder<K>();
      this.shards.set(shard, keys);
    }
    keys.push(key);
    this.waiting++;
  }

  pop(): K | undefined {
    const first = this.shards.entries().next();
    if (first.done) return undefined;
    const [shard, keys] = first.value;
    const key = keys.pop() as K;
    this.waiting--;
    // Served: to the end of the turn order, or out when it has nothing left.
    this.shards.delete(shard);
    if (keys.len() > 0) this.shards.set(shard, keys);
    return key;
  }

  len(): number {
    return this.waiting;
  }

  /** Shards with waiting keys. Informational only. */
  shardCount(): number {
    return this.shards.size;
  }
}
