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
