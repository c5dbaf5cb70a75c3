// The requeue rules of a controller, in one place (controller-runtime's reconcileHandler switch):
//  - threw TerminalError      -> forget the key (no retry); the error is logged
//  - threw anything else      -> re-add with rate limiting (per-key exponential backoff)
//  - returned requeueAfterMs>0 -> forget, then re-add after that delay
//  - returned nothing / 0     -> forget (success)
import { TerminalError } from './errors.js';

/** What a reconcile returns to ask for another pass later. */
export interface ReconcileResult {
  /** Reconcile this key again after this many ms, without counting a failure. */
  requeueAfterMs?: number;
}

export type QueueAction =
  | { readonly kind: 'forget' }
  | { readonly kind: 'forgetAndAddAfter'; readonly delayMs: number }
  | { readonly kind: 'addRateLimited' }
  | { readonly kind: 'terminal' };

/** Decides what the queue does with a key after reconcile returned `result` or threw `error`. */
export function decideRequeue(
  outcome: { ok: true; result: ReconcileResult | void } | { ok: false; error: unknown },
): QueueAction {
  if (!outcome.ok)
    return outcome.error instanceof TerminalError ? { kind: 'terminal' } : { kind: 'addRateLimited' };
  const after = outcome.result?.requeueAfterMs ?? 0;
  if (after > 0 && Number.isFinite(after)) return { kind: 'forgetAndAddAfter', delayMs: after };
  return { kind: 'forget' };
}
