// Whether the gating webhook should keep gating, judged by the controller's leader Lease as the webhook observes
// it. A gate is a promise that the controller will come and place the pod; while the controller crash-loops or is
// gone, every new pod of every covered namespace would stay Pending. So when the Lease has not changed for
// `staleAfterMs` (well above an ordinary restart), the webhook stops gating until it changes again.
// Pure: the caller reads the Lease and passes a *monotonic local* time. The Lease's renewTime is the holder's clock,
// not ours, so it is never compared with our clock; what counts is how long this process has seen the record
// unchanged (the rule a Lease candidate and `tessera podplacement release` follow: runtime/lease-decision.ts).
import { observe, type LeaseSpec, type ObservedLease } from '../runtime/light.js';

/** Default of --controller-lease-stale-after-ms: 5 minutes, far above a restart (seconds) or a lease hand-over (15 s). */
export const DEFAULT_CONTROLLER_LEASE_STALE_AFTER_MS = 5 * 60_000;

/** What the webhook has seen of the Lease. `now` values are monotonic local ms. */
export interface ControllerLeaseView {
  /** The record last read and since when it has been unchanged; undefined before the first successful read. */
  readonly observed: ObservedLease | undefined;
  /** When the Lease (or its absence) was last read successfully. */
  readonly lastReadAt: number | undefined;
  /** Holder named by the last record read ('' when released or absent). */
  readonly holder: string;
  /** The last read found no Lease at all. */
  readonly absent: boolean;
}

export const NO_LEASE_VIEW: ControllerLeaseView = {
  observed: undefined,
  lastReadAt: undefined,
  holder: '',
  absent: false,
};

/** Folds one successful read (`lease` undefined: the Lease does not exist) into the view. */
export function observeControllerLease(
  view: ControllerLeaseView,
  lease: LeaseSpec | undefined,
  now: number,
): ControllerLeaseView {
  const observed = observe(view.observed ?? { fingerprint: '\u0000never', observedAt: now }, lease, now);
  return { observed, lastReadAt: now, holder: lease?.holderIdentity ?? '', absent: lease === undefined };
}

export type GatingVerdict =
  /** Gate: the Lease changed within the threshold. */
  | { readonly gate: true; readonly why: 'renewed'; readonly unchangedForMs: number }
  /**
   * Gate, as without this check: the Lease could not be read within the threshold (or not yet), or there is none,
   * so nothing is known about the controller. An unreadable Lease is an RBAC or API problem, not a sign the
   * controller is gone; and a controller run without leader election (--no-leader-elect) never creates one, while
   * a leader-elected one creates it at its first start and a crashed one leaves it behind.
   */
  | { readonly gate: true; readonly why: 'unknown' }
  /** Do not gate: the Lease has been unchanged (not renewed, or released) for at least the threshold. */
  | { readonly gate: false; readonly why: 'stale'; readonly unchangedForMs: number; readonly holder: string };

/** The verdict at monotonic time `now`. */
export function gatingVerdict(view: ControllerLeaseView, now: number, staleAfterMs: number): GatingVerdict {
  const { observed, lastReadAt } = view;
  if (observed === undefined || lastReadAt === undefined || view.absent || now - lastReadAt >= staleAfterMs)
    return { gate: true, why: 'unknown' };
  const unchangedForMs = Math.max(0, now - observed.observedAt);
  return unchangedForMs >= staleAfterMs
    ? { gate: false, why: 'stale', unchangedForMs, holder: view.holder }
    : { gate: true, why: 'renewed', unchangedForMs };
}

/** How often the webhook reads the Lease: often enough that the verdict lags by at most a fifth of the threshold. */
export function leasePollIntervalMs(staleAfterMs: number): number {
  return Math.max(100, Math.min(10_000, Math.floor(staleAfterMs / 5)));
}

/** The sentence logged and put in the Warning event when gating stops. */
export function gatingSuspendedMessage(v: { unchangedForMs: number; holder: string }, lease: string): string {
  const who = v.holder ? `held by ${v.holder}` : 'released';
  return (
    `the pod placement controller's Lease ${lease} (${who}) has not been renewed for ` +
    `${Math.round(v.unchangedForMs / 1000)} s: new pods are admitted without the scheduling gate, so they are ` +
    'scheduled unplaced instead of waiting for a controller that is not running. Gating resumes when the Lease ' +
    'is renewed. Check the controller Deployment (crash loop, scaled to zero, or unable to reach the API server).'
  );
}
