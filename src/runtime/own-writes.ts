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

interface HeldEvent {
  readonly obj: KubeObject;
  /** The version an update replaced. */
  readonly old: KubeObject | undefined;
}

export class OwnWrites {
  /** Object key -> resourceVersion our last write returned, until its echo arrives. */
  private readonly written = new Map<string, string>();
  /** Object key -> events (object, and the version it replaced) held while a write of that object is in flight. */
  private readonly held = new Map<string, HeldEvent[]>();

  /**
   * `onMissedChange`: called after a tracked write for each object of the held events that were not its echo,
   * the versions they replaced included (a caller whose keys depend on the object must queue the old key too, as
   * Controller.watch does).
   */
  constructor(private readonly onMissedChange: (obj: KubeObject) => void = () => undefined) {}

  /**
   * Runs `write` (a create/update/patch of the object whose key is `key`, `namespace/name`) and remembers the
   * version it returned; events for that object are held meanwhile. Returns (or throws) what `write` did.
   */
  async track<T extends KubeObject>(key: string, write: () => Promise<T>): Promise<T> {
    const held: HeldEvent[] = [];
    this.held.set(key, held);
    let written: T | undefined;
    try {
      written = await write();
      return written;
    } finally {
      if (this.held.get(key) === held) this.held.delete(key);
      const rv = written?.metadata?.resourceVersion;
      const echoSeen = rv !== undefined && held.some((e) => e.obj.metadata?.resourceVersion === rv);
      if (rv !== undefined && !echoSeen) this.written.set(key, rv);
      const missed = new Set<KubeObject>();
      for (const e of held) {
        if (e.obj.metadata?.resourceVersion === rv) continue;
        missed.add(e.obj);
        if (e.old) missed.add(e.old);
      }
      for (const obj of missed) this.onMissedChange(obj);
    }
  }

  /** Entries held (for tests and debugging). */
  get size(): number {
    return this.written.size + this.held.size;
  }

  /** A Controller.watch predicate dropping the add/update events that echo a tracked write. */
  predicate<T extends KubeObject>(): WatchPredicate<T> {
    const pass = (obj: T, old?: T): boolean => {
      const key = objectKey(obj);
      const held = this.held.get(key);
      if (held) {
        held.push({ obj, old });
        return false;
      }
      const rv = obj.metadata?.resourceVersion;
      if (rv === undefined || this.written.get(key) !== rv) return true;
      this.written.delete(key);
      return false;
    };
    return {
      add: (obj) => pass(obj),
      update: (old, cur) => pass(cur, old),
      delete: (obj) => {
        this.written.delete(objectKey(obj));
        return true;
      },
    };
  }
}
