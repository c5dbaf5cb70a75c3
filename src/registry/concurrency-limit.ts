// Bounds the requests in flight per registry host: `run(key, fn)` waits for a free slot of `key`, then runs `fn`.
// Waiters are served first-in first-out; a key's bookkeeping is dropped when it has no running or waiting task,
// so the map never grows with the number of registries ever seen.

interface Slot {
  running: number;
  /** Resolvers of tasks waiting for a slot, oldest first. */
  readonly waiting: (() => void)[];
}

export class KeyedConcurrencyLimit {
  private readonly slots = new Map<string, Slot>();

  /** @param limit Maximum concurrent tasks per key (>= 1). */
  constructor(private readonly limit: number) {}

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = { running: 0, waiting: [] };
      this.slots.set(key, slot);
    }
    if (slot.running >= this.limit) {
      await new Promise<void>((resolve) => slot?.waiting.push(resolve));
    } else {
      slot.running++;
    }
    try {
      return await fn();
    } finally {
      const next = slot.waiting.shift();
      if (next !== undefined)
        next(); // hand the slot over: `running` stays the same
      else {
        slot.running--;
        if (slot.running === 0) this.slots.delete(key);
      }
    }
  }

  /** Tasks running for `key` (for tests and metrics). */
  running(key: string): number {
    return this.slots.get(key)?.running ?? 0;
  }
}
