// Adds addAfter() to the work queue: a key becomes available after a delay measured on the queue's Clock.
// A key waiting with several delays is added once, at the earliest due time. Waiting keys are dropped at shutdown.
// Delays of any length work on any Clock: the queue never asks for a timer longer than MAX_TIMER_DELAY_MS and
// re-arms when a slice ends before the first key is due.
import { MAX_TIMER_DELAY_MS, type Timer } from '../clock.js';
import { WorkQueue, type Queue, type QueueOptions } from './queue.js';

export interface DelayingQueue<K> extends Queue<K> {
  /** Adds `key` after `delayMs` milliseconds (<= 0: now). Counts as a retry in metrics. */
  addAfter(key: K, delayMs: number): void;
}

interface Waiting<K> {
  key: K;
  due: number;
}

export class DelayingWorkQueue<K> extends WorkQueue<K> implements DelayingQueue<K> {
  /** Min-heap on `due`; `waitingByKey` points at the same entries (one per key). */
  private heap: Waiting<K>[] = [];
  private readonly waitingByKey = new Map<K, Waiting<K>>();
  private timer: Timer | undefined;
  /** When `timer` fires (Infinity when none is armed); may be before the first key is due (capped slice). */
  private timerDue = Infinity;

  constructor(options: QueueOptions<K> = {}) {
    super(options);
  }

  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown()) return;
    this.metrics.retried();
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const due = this.clock.now() + delayMs;
    const existing = this.waitingByKey.get(key);
    if (existing) {
      if (due >= existing.due) return;
      existing.due = due;
      this.heapify();
    } else {
      const entry = { key, due };
      this.waitingByKey.set(key, entry);
      this.push(entry);
    }
    this.arm();
  }

  override shutDown(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.heap = [];
    this.waitingByKey.clear();
    super.shutDown();
  }

  /** Number of keys waiting for their delay. Informational only. */
  waitingLen(): number {
    return this.heap.length;
  }

  private arm(): void {
    const first = this.heap[0];
    if (!first || first.due >= this.timerDue) return;
    this.timer?.cancel();
    const now = this.clock.now();
    const delay = Math.min(first.due - now, MAX_TIMER_DELAY_MS);
    this.timerDue = now + delay;
    this.timer = this.clock.setTimer(() => this.fire(), delay);
  }

  private fire(): void {
    this.timer = undefined;
    this.timerDue = Infinity;
    const now = this.clock.now();
    for (let first = this.heap[0]; first && first.due <= now; first = this.heap[0]) {
      this.pop();
      this.waitingByKey.delete(first.key);
      this.add(first.key);
    }
    this.arm();
  }

  private push(entry: Waiting<K>): void {
    const h = this.heap;
    h.push(entry);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] as Waiting<K>;
      if (p.due <= entry.due) break;
      h[i] = p;
      i = parent;
    }
    h[i] = entry;
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop();
    if (!last || h.length === 0) return;
    h[0] = last;
    this.siftDown(0);
  }

  private siftDown(start: number): void {
    const h = this.heap;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && (h[l] as Waiting<K>).due < (h[m] as Waiting<K>).due) m = l;
      if (r < h.length && (h[r] as Waiting<K>).due < (h[m] as Waiting<K>).due) m = r;
      if (m === i) return;
      const tmp = h[i] as Waiting<K>;
      h[i] = h[m] as Waiting<K>;
      h[m] = tmp;
      i = m;
    }
  }

  private heapify(): void {
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }
}
