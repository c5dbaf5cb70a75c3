// metav1.Condition helpers with apimachinery's meta.SetStatusCondition semantics, as pure functions returning new
// arrays: lastTransitionTime moves only when `status` changes; reason, message and observedGeneration are
// always updated; `changed` says whether a status write is needed at all. The caller passes `now`.
import { InvalidArgumentError } from './errors.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition as it appears in JSON. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  /** The .metadata.generation the condition was computed from. */
  observedGeneration?: number;
  /** RFC 3339, second precision. */
  lastTransitionTime: string;
  /** CamelCase machine-readable reason. */
  reason: string;
  message: string;
}

export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

const TYPE_RE =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const REASON_RE = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

/** metav1.Condition's message limit, in characters; the NodePool CRD's NodePoolCondition has the same. */
export const MAX_CONDITION_MESSAGE_LENGTH = 32_768;

/**
 * `text` cut to at most `maxLength` UTF-16 code units (so at most that many characters as the API server counts
 * them, code points), never between the two halves of a surrogate pair; when cut, `marker` is appended within the
 * limit. O(maxLength): the part after the cut is never copied.
 */
export function truncateText(text: string, maxLength: number, marker = ''): string {
  if (text.length <= maxLength) return text;
  let end = Math.max(0, maxLength - marker.length);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate whose low half is past the cut
  return `${text.slice(0, end)}${marker.slice(0, maxLength)}`;
}

/** metav1.Time format: RFC 3339 with second precision. */
export function metaTime(now: number | Date): string {
  return new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Throws InvalidArgumentError when `c` would be rejected by the API server's Condition validation. */
export function validateCondition(c: ConditionUpdate): void {
  if (!TYPE_RE.test(c.type) || c.type.length > 316)
    throw new InvalidArgumentError('condition.type', `"${c.type}" is not a valid condition type`);
  if (!['True', 'False', 'Unknown'].includes(c.status))
    throw new InvalidArgumentError('condition.status', `must be True, False or Unknown, got "${c.status}"`);
  if (!REASON_RE.test(c.reason) || c.reason.length > 1024)
    throw new InvalidArgumentError(
      'condition.reason',
      `"${c.reason}" must be CamelCase (letters, digits, _ , :)`,
    );
  if (c.message.length > MAX_CONDITION_MESSAGE_LENGTH)
    throw new InvalidArgumentError(
      'condition.message',
      `longer than ${MAX_CONDITION_MESSAGE_LENGTH} characters`,
    );
  if (c.observedGeneration !== undefined && c.observedGeneration < 0)
    throw new InvalidArgumentError('condition.observedGeneration', 'must be >= 0');
}

/**
 * The condition-time rule (meta.SetStatusCondition's), the one every status writer follows: a condition's
 * lastTransitionTime moves only when its status changes. `previous` is the condition of the same type before
 * (undefined: new); returns the time the condition with `status` carries, `now` when it moved.
 */
export function transitionTime(
  previous: { readonly status: string; readonly lastTransitionTime?: string | null } | undefined,
  status: string,
  now: string,
): string {
  return previous?.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : now;
}

/**
 * Sets `update` in `conditions` (added at the end when its type is new). Returns a new array and whether anything
 * changed; the input is not modified.
 */
export function setStatusCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  now: number | Date,
): { conditions: Condition[]; changed: boolean } {
  validateCondition(update);
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === update.type);
  const existing = i >= 0 ? list[i] : undefined;
  if (!existing) {
    list.push(compact({ ...update, lastTransitionTime: update.lastTransitionTime ?? metaTime(now) }));
    return { conditions: list, changed: true };
  }
  const next: Condition = compact({
    type: existing.type,
    status: update.status,
    observedGeneration: update.observedGeneration,
    lastTransitionTime: transitionTime(existing, update.status, update.lastTransitionTime ?? metaTime(now)),
    reason: update.reason,
    message: update.message,
  });
  const changed =
    next.status !== existing.status ||
    next.reason !== existing.reason ||
    next.message !== existing.message ||
    next.observedGeneration !== existing.observedGeneration ||
    next.lastTransitionTime !== existing.lastTransitionTime;
  list[i] = next;
  return { conditions: changed ? list : [...(conditions ?? [])], changed };
}

/** Removes the condition of `type`; `changed` is false when it was absent. */
export function removeStatusCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): { conditions: Condition[]; changed: boolean } {
  const list = (conditions ?? []).filter((c) => c.type !== type);
  return { conditions: list, changed: list.length !== (conditions ?? []).length };
}

export function findStatusCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isStatusConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findStatusCondition(conditions, type)?.status === 'True';
}

export function isStatusConditionFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findStatusCondition(conditions, type)?.status === 'False';
}

function compact(c: Condition): Condition {
  const out: Condition = {
    type: c.type,
    status: c.status,
    lastTransitionTime: c.lastTransitionTime,
    reason: c.reason,
    message: c.message,
  };
  if (c.observedGeneration !== undefined) out.observedGeneration = c.observedGeneration;
  return out;
}
