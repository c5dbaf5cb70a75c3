// Pure rules of Lease-based leader election (client-go's tryAcquireOrRenew), separated from I/O so they are
// unit-tested with plain numbers. Expiry is judged on the *local* time at which this candidate first observed the
// current lease record, never on the timestamps written by another host, so clock skew between hosts is harmless.

/** The fields of coordination.k8s.io/v1 LeaseSpec the election uses (times are MicroTime strings). */
export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

/** What this candidate last saw, and when (local clock ms). */
export interface ObservedLease {
  /** A fingerprint of the record (holder + renewTime + transitions); a change resets `observedAt`. */
  fingerprint: string;
  observedAt: number;
}

export type LeaseDecision =
  | { readonly action: 'create'; readonly spec: LeaseSpec }
  | { readonly action: 'update'; readonly spec: LeaseSpec; readonly gained: boolean }
  /** Another holder's lease is valid; look again in `retryInMs` at the latest (when it would expire). */
  | { readonly action: 'wait'; readonly holder: string; readonly expiresInMs: number };

/** MicroTime in the API's format: RFC 3339 with 6 fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function fingerprintOf(spec: LeaseSpec | undefined): string {
  if (!spec) return '';
  return `${spec.holderIdentity ?? ''}|${spec.renewTime ?? ''}|${spec.leaseTransitions ?? 0}|${spec.leaseDurationSeconds ?? 0}`;
}

/**
 * Decides what to do given the lease on the server (`current`, undefined when absent).
 * @param observed what we saw before (updated by the caller with `observe()`).
 */
export function decideLease(
  current: LeaseSpec | undefined,
  observed: ObservedLease,
  identity: string,
  leaseDurationMs: number,
  now: number,
): LeaseDecision {
  const leaseDurationSeconds = Math.max(1, Math.round(leaseDurationMs / 1000));
  const nowTime = microTime(now);
  if (!current) {
    return {
      action: 'create',
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: nowTime,
        renewTime: nowTime,
        leaseTransitions: 0,
      },
    };
  }
  const holder = current.holderIdentity ?? '';
  const heldByMe = holder === identity;
  if (holder && !heldByMe) {
    // The holder's own duration governs (it may differ from ours).
    const durationMs = (current.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    const expiresAt = observed.observedAt + durationMs;
    if (expiresAt > now) return { action: 'wait', holder, expiresInMs: expiresAt - now };
  }
  const transitions = current.leaseTransitions ?? 0;
  const spec: LeaseSpec = heldByMe
    ? { ...current, leaseDurationSeconds, renewTime: nowTime }
    : {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: nowTime,
        renewTime: nowTime,
        leaseTransitions: transitions + 1,
      };
  return { action: 'update', spec, gained: !heldByMe };
}

/** Updates `observed` with the record just read at local time `now`; returns the new observation. */
export function observe(observed: ObservedLease, current: LeaseSpec | undefined, now: number): ObservedLease {
  const fingerprint = fingerprintOf(current);
  return fingerprint === observed.fingerprint ? observed : { fingerprint, observedAt: now };
}

/** The record written when a leader steps down: no holder, so others may take over at once. */
export function releasedSpec(current: LeaseSpec, now: number): LeaseSpec {
  const t = microTime(now);
  return { ...current, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: t, renewTime: t };
}
