// Bounds the requests in flight per registry host: `run(key, fn, signal)` waits for a free slot of `key`, then
// runs `fn`. Waiters are served first-in first-out; a waiter whose signal aborts leaves the queue at once and
// rejects with the abort reason. A key's bookkeeping is dropped when it has no running or waiting task, so the
// map never grows with the number of registries ever seen.

interface Waiter {
  /** Hands a slot to this waiter. */
  readonly grant: () => void;
}

interface Slot {
  running: number;
  /** Tasks waiting for a slot, oldest first. */
  readonly waiting: Waiter[];
}

export class KeyedConcurrencyLimit {
  private readonly slots = new Map<string, Slot>();

  /** @param limit Maximum concurrent tasks per key (>= 1). */
  constructor(private readonly limit: number) {}

  /**
   * Runs `fn` once a slot of `key` is free. When `signal` aborts before that, rejects with `signal.reason`
   * without running `fn` (an aborted task never takes a slot).
   */
  async run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw signal.reason;
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = { running: 0, waiting: [] };
      this.slots.set(key, slot);
    }
    if (slot.running >= this.limit) {
      await this.wait(key, slot, signal);
    } else {
      slot.running++;
    }
    try {
      return await fn();
    } finally {
      this.release(key, slot);
    }
  }

  /**
   * Takes a slot of `key` only if one is free now and nobody is waiting for one; never waits. Returns the
   * function that gives the slot back (idempotent), or undefined when `key` is saturated, so a caller that must
   * not block (a controller worker) can do something else and come back later.
   */
  tryAcquire(key: string): (() => void) | undefined {
    let slot = this.slots.get(key);
    if (slot !== undefined && (slot.running >= this.limit || slot.waiting.length > 0)) return undefined;
    if (slot === undefined) {
      slot = { running: 0, waiting: [] };
      this.slots.set(key, slot);
    }
    slot.running++;
    const held = slot;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(key, held);
    };
  }

  private wait(key: string, slot: Slot, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const at = slot.waiting.indexOf(waiter);
        if (at >= 0) slot.waiting.splice(at, 1);
        if (slot.running === 0 && slot.waiting.length === 0) this.slots.delete(key);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      slot.waiting.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(key: string, slot: Slot): void {
    const next = slot.waiting.shift();
    if (next !== undefined)
      next.grant(); // hand the slot over: `running` stays the same
    else {
      slot.running--;
      if (slot.running === 0) this.slots.delete(key);
    }
  }

  /** Tasks running for `key` (for tests and metrics). */
  running(key: string): number {
    return this.slots.get(key)?.running ?? 0;
  }

  /** Tasks waiting for a slot of `key` (for tests and metrics). */
  waiting(key: string): number {
    return this.slots.get(key)?.waiting.length ?? 0;
  }
}
