// Whether the status writer may present what its hosted-cluster caches hold as the current state. A cache that
// synced once keeps its last contents when the hosted API server goes away, so "synced" alone proves nothing:
// the caller also passes the outcome of a live probe of the hosted API made for this decision.
// Guarantees: `readable` only when the caches synced and the probe answered; `unreadable` only after the hosted
// cluster has been out of reach for longer than the grace period (counted from the last answer, or from `since`).
// The caller must write nothing on `wait`, and may refresh heartbeats only on `readable`.

export interface HostedReadabilityInput {
  /** Both hosted caches (Nodes, Tuned Profiles) delivered their first list. */
  readonly synced: boolean;
  /** The live probe of the hosted API answered for this decision. */
  readonly probeAnswered: boolean;
  /** When the hosted API last answered a probe, ms since the epoch; undefined if never. */
  readonly lastContactAt: number | undefined;
  /** When the writer started looking (its first reconcile), ms since the epoch. */
  readonly since: number;
  /** Evaluation time, ms since the epoch. */
  readonly now: number;
  /** How long the hosted cluster may be out of reach before it is reported. Milliseconds. */
  readonly graceMs: number;
}

export type HostedReadability =
  | { readonly kind: 'readable' }
  /** Out of reach for less than the grace period: decide again after `retryAfterMs`. */
  | { readonly kind: 'wait'; readonly retryAfterMs: number }
  /** Out of reach past the grace period (since `lastContactAt`, or never reached). */
  | { readonly kind: 'unreadable'; readonly lastContactAt: number | undefined };

/** Grace-period waits re-check at least this often (ms). */
const WAIT_RETRY_MS = 1_000;

export function hostedReadability(input: HostedReadabilityInput): HostedReadability {
  if (input.synced && input.probeAnswered) return { kind: 'readable' };
  // Until the caches fill, an answering API server does not help (the caches may never fill): count from the start.
  const from = input.synced ? Math.max(input.lastContactAt ?? input.since, input.since) : input.since;
  const outOfReachFor = input.now - from;
  if (outOfReachFor < input.graceMs) {
    return {
      kind: 'wait',
      retryAfterMs: Math.max(1, Math.min(WAIT_RETRY_MS, input.graceMs - outOfReachFor)),
    };
  }
  return { kind: 'unreadable', lastContactAt: input.lastContactAt };
}
