// The order in which a work queue hands out the keys waiting in it (client-go's workqueue `Queue`: the storage
// under the dirty and processing sets). The work queue keeps the guarantees (dedup, one worker per key, shutdown)
// and calls push() only for a key that is not waiting already, so an order never sees duplicates and needs no
// lookup by key. FifoOrder is the default; FairOrder (fair-order.ts) round-robins between shards of keys.

export interface KeyOrder<K> {
  /** Adds `key`, which is not waiting already. */
  push(key: K): void;
  /** Removes and returns the next key, or undefined when none waits. */
  pop(): K | undefined;
  /** Keys waiting. */
  len(): number;
}

/** First in, first out. */
export class FifoOrder<K> implements KeyOrder<K> {
  /** items[head..] wait, oldest first; the consumed prefix is cut off once it is the larger half. */
  private items: K[] = [];
  private head = 0;

  push(key: K): void {
    this.items.push(key);
  }

  pop(): K | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head] as K;
    this.head++;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }

  len(): number {
    return this.items.length - this.head;
  }
}
