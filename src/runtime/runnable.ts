// The one lifecycle primitive: start(signal) runs until `signal` aborts (or the work ends) and resolves only when
// everything it started has stopped. Rejecting means "failed": the manager then shuts everything down.

export interface Runnable {
  /** Runs until `signal` aborts; must resolve only after its work has fully stopped. */
  start(signal: AbortSignal): Promise<void>;
  /** True: start only while this process holds the leader lease (and stop when it is lost). Default: false. */
  readonly needsLeaderElection?: boolean;
  /** For logs. */
  readonly name?: string;
}

/** Resolves once `signal` aborts (at once if it has): the wait at the heart of every Runnable's start(). */
export function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

/**
 * Work a Manager finishes before it starts any informer or runnable (Manager.addStartupStep), such as installing a
 * CRD that an informer lists: run() resolves when done and rejects to be retried.
 */
export interface StartupStep {
  /** For logs and /readyz. */
  readonly name: string;
  run(signal: AbortSignal): Promise<void>;
}
