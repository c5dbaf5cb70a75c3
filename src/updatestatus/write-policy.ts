// The update-status controller's decisions, as pure functions of what it observed: whether a status write must
// wait (throttling) and the Healthy condition with its transition time. Whether a write would change anything is
// the informer contract's to decide (api/informers.ts, informer.ts); controller.ts observes and applies.
import { MAX_CONDITION_MESSAGE_LENGTH, setStatusCondition, truncateText } from '../runtime/light.js';
import type { Condition } from './api/schema.js';

/** Condition type of `.status.conditions`: could the controller gather and interpret the data. */
export const HEALTHY = 'Healthy';

/** metav1.Condition's message limit (characters). */
export const MAX_CONDITION_MESSAGE = MAX_CONDITION_MESSAGE_LENGTH;

/**
 * How long a write must wait so that two writes start at least `minIntervalMs` apart (`lastWriteAtMs`: when the
 * last one started): 0 when it may go now. The caller requeues after the wait and the queue coalesces the events
 * of the meantime into that one look.
 */
export function writeDelayMs(nowMs: number, lastWriteAtMs: number, minIntervalMs: number): number {
  const sinceWrite = nowMs - lastWriteAtMs;
  return sinceWrite < minIntervalMs ? minIntervalMs - sinceWrite : 0;
}

/** What the controller found about its own ability to report. */
export interface Health {
  readonly healthy: boolean;
  /** CamelCase, e.g. AsExpected, InsufficientData, CannotAssess. */
  readonly reason: string;
  readonly message: string;
}

/**
 * The status's conditions for `health`: the one Healthy condition, with apimachinery's SetStatusCondition rule
 * for its lastTransitionTime (kept while `status` stays the same, even when reason or message change; `now`
 * otherwise). Conditions of other types in `previous` are not carried over: the controller owns the whole list.
 */
export function healthConditions(
  previous: readonly Condition[] | undefined,
  health: Health,
  nowMs: number,
): Condition[] {
  const old = previous?.find((c) => c.type === HEALTHY);
  return setStatusCondition(
    old ? [old] : [],
    {
      type: HEALTHY,
      status: health.healthy ? 'True' : 'False',
      reason: health.reason,
      // metav1.Condition's limit: a longer message (an error's text) would make the API server refuse the write.
      message: truncateText(health.message, MAX_CONDITION_MESSAGE),
    },
    nowMs,
  ).conditions;
}
