// Keeps the watch events that only echo a controller's own writes from queueing another reconcile: the reconcile
// that wrote the object already acted on that state. A write is run through track(); the event carrying the
// resourceVersion it returned is dropped, whether it arrives after the response (remembered version) or before it
// (held while the write is in flight). Any other change, by anyone, carries another resourceVersion: it passes,
// or, if it was held during the write, is handed to `onMissedChange` so the caller can queue the reconcile.
// Guarantees: never drops an event other than the echo of a tracked write; one entry per object key at most,
// dropped when its echo arrives or the object is deleted, so memory is bounded by the objects the controller
// writes; a missed echo (e.g. collapsed by a relist) only leaves one entry no later event can match
// (resourceVersions are never reused).
import type { WatchPredicate } from './controller.js';
import { objectKey, type KubeObject } from './object.js';

export class OwnWrites {
  /** Object key -> resourceVersion our last write returned, until its echo arrives. */
  private readonly written = new Map<string, string>();
  /** Object key -> events held while a write of that object is in flight. */
  private readonly held = new Map<string, KubeObject[]>();

  /** `onMissedChange`: called after a tracked write with the newest held event that was not its echo. */
  constructor(private readonly onMissedChange: (obj: KubeObject) => void = () => undefined) {}

  /**
   * Runs `write` (a create/update/patch of the object whose key is `key`, `namespace/name`) and remembers the
   * version it returned; events for that object are held meanwhile. Returns (or throws) what `write` did.
   */
  async track<T extends KubeObject>(key: string, write: () => Promise<T>): Promise<T> {
    const held: KubeObject[] = [];
    this.held.set(key, held);
    let written: T | undefined;
    try {
      written = await write();
      return written;
    } finally {
      if (this.held.get(key) === held) this.held.delete(key);
      const rv = written?.metadata?.resourceVersion;
      const echoSeen = rv !== undefined && held.some((o) => o.metadata?.resourceVersion === rv);
      if (rv !== undefined && !echoSeen) this.written.set(key, rv);
      const missed = held.filter((o) => o.metadata?.resourceVersion !== rv);
      const newest = missed[missed.length - 1];
      if (newest) this.onMissedChange(newest);
    }
  }

  /** Entries held (for tests and debugging). */
  get size(): number {
    return this.written.size + this.held.size;
  }

  /** A Controller.watch predicate dropping the add/update events that echo a tracked write. */
  predicate<T extends KubeObject>(): WatchPredicate<T> {
    const pass = (obj: T): boolean => {
      const key = objectKey(obj);
      const held = this.held.get(key);
      if (held) {
        held.push(obj);
        return false;
      }
      const rv = obj.metadata?.resourceVersion;
      if (rv === undefined || this.written.get(key) !== rv) return true;
      this.written.delete(key);
      return false;
    };
    return {
      add: pass,
      update: (_old, cur) => pass(cur),
      delete: (obj) => {
        this.written.delete(objectKey(obj));
        return true;
      },
    };
  }
}
