// A runtime trigger: an in-process event source that is not a Kubernetes object, such as a renewed certificate or a
// readiness change, as controller-runtime's source.Channel. Whoever owns the event fires it; a Controller watches it
// (Controller.watchTrigger) so each event queues keys, and other components subscribe to act on it directly.

/** The side of a Trigger its listeners see: they may subscribe, not fire. */
export interface TriggerSource<E = void> {
  /** Calls `listener` on every later fire(), in subscription order; the returned function unsubscribes. */
  subscribe(listener: (event: E) => void): () => void;
}

export class Trigger<E = void> implements TriggerSource<E> {
  private readonly listeners = new Set<(event: E) => void>();

  /**
   * Tells every current listener, in subscription order. A listener that throws is a bug in that listener: the
   * others are still told, and the first error is rethrown once all have been.
   */
  fire(event: E): void {
    let failure: { err: unknown } | undefined;
    // A copy: a listener that unsubscribes (or subscribes another) changes only later fires.
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
  }

  subscribe(listener: (event: E) => void): () => void {
    // Each subscription is its own entry, so subscribing one function twice calls it twice and unsubscribes once.
    const entry = (event: E): void => listener(event);
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  /** Listeners subscribed now. */
  listenerCount(): number {
    return this.listeners.size;
  }
}
