// Encodes and decodes the `status` key of a status ConfigMap (a performance.openshift.io/v2 PerformanceProfileStatus).
// Guarantees: encode() writes what sigs.k8s.io/yaml would (keys sorted, zero times as null, omitempty fields left
// out); decode() accepts YAML or JSON like apimachinery's yaml.Unmarshal, ignores unknown fields, and throws
// StatusUndecodableError naming the first bad field. Neither function reads the clock.
// The text comes from the hosted cluster, so decode() parses only within STATUS_YAML_BUDGET (BudgetExceededError
// before parsing) and accepts only conditions a NodePool can carry (STATUS_CONDITION_LIMITS, StatusInvalidError):
// every error it throws is a NodePoolError.
import { stringify } from 'yaml';
import type { PerformanceProfileStatus, ProfileCondition } from './api/types.js';
import { parseWithinBudget, STATUS_YAML_BUDGET } from './bounded-yaml.js';
import { NOT_CANONICAL, parseCanonicalStatusYaml } from './canonical-status-yaml.js';
import { NODEPOOL_CONDITION_PREFIX } from './constants.js';
import { BudgetExceededError, NodePoolError, StatusInvalidError, StatusUndecodableError } from './errors.js';
import { isRecord, MAX_CONDITION_MESSAGE_LENGTH, truncateText, errorMessage } from '../runtime/light.js';

/**
 * What a decoded status may hold, so that every mirrored `performance.operator.openshift.io/<type>` condition fits
 * the NodePool CRD (NodePoolCondition: type <= 316, reason <= 1024, message <= 32768 characters; conditions are a
 * list-map keyed by type, at most 100 per NodePool upstream, shared with other controllers).
 */
export const STATUS_CONDITION_LIMITS = {
  /** NTO writes 4 (Available, Upgradeable, Progressing, Degraded); room for a few more, never dozens. */
  maxConditions: 8,
  /** The name part of a qualified name (the mirror prefixes it with our domain). */
  maxTypeLength: 63,
  maxReasonLength: 1024,
  maxMessageLength: MAX_CONDITION_MESSAGE_LENGTH,
} as const;

/** Name part of a Kubernetes qualified name; a single character class, so matching is linear. */
const CONDITION_TYPE_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/** metav1.Condition's reason pattern, plus spaces: NTO itself reports "KubeletConfig failure". */
const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,: ]*[A-Za-z0-9_])?$/;
/** Longest piece of untrusted text quoted in an error message. */
const QUOTE_MAX = 64;

/** `value` for an error message: JSON, cut to QUOTE_MAX characters. */
function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : typeof value;
  const cut = text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}...` : text;
  return typeof value === 'string' ? JSON.stringify(cut) : cut;
}

/** YAML text of `status`, as NTO writes it. */
export function encodeProfileStatus(status: PerformanceProfileStatus): string {
  const out: Record<string, unknown> = {};
  if (status.conditions && status.conditions.length > 0) {
    out.conditions = status.conditions.map((c) => {
      const cond: Record<string, unknown> = {
        lastHeartbeatTime: c.lastHeartbeatTime ?? null,
        lastTransitionTime: c.lastTransitionTime ?? null,
      };
      if (c.message) cond.message = c.message;
      if (c.reason) cond.reason = c.reason;
      cond.status = c.status;
      cond.type = c.type;
      return cond;
    });
  }
  if (status.runtimeClass != null) out.runtimeClass = status.runtimeClass;
  if (status.tuned != null) out.tuned = status.tuned;
  // YAML 1.1 quotes what go-yaml v2 quotes ("True", timestamps), so the text matches NTO's byte for byte.
  return stringify(out, { version: '1.1', lineWidth: 0, sortMapEntries: true, indentSeq: false });
}

/** What ends a condition message that encodeProfileStatusWithin shortened. */
export const SHORTENED_MESSAGE_MARKER = ' ... (shortened to fit the status ConfigMap)';

/**
 * encodeProfileStatus, with the longest condition message halved (on a code-point boundary, marked) until the text
 * fits `maxBytes` of UTF-8, the NodePool side's budget for the `status` key. Messages carry hosted-cluster text (a
 * Tuned Profile's), and one of 32,768 characters that YAML must escape, or that is not ASCII, would otherwise make
 * the whole status too large to be read: the NodePool would show "too large" instead of why tuning failed. At most
 * 16 halvings (32,768 characters to none), each one encode.
 */
export function encodeProfileStatusWithin(
  status: PerformanceProfileStatus,
  maxBytes: number = STATUS_YAML_BUDGET.maxBytes,
): string {
  let current = status;
  let text = encodeProfileStatus(current);
  for (let round = 0; round < 16 && Buffer.byteLength(text, 'utf8') > maxBytes; round++) {
    const conditions = current.conditions ?? [];
    let longest = -1;
    for (const [i, c] of conditions.entries())
      if ((c.message?.length ?? 0) > (conditions[longest]?.message?.length ?? 0)) longest = i;
    const message = conditions[longest]?.message;
    if (!message) break; // nothing left to shorten: the rest of the status is the writer's own, and small
    const shortened = truncateText(message, Math.floor(message.length / 2), SHORTENED_MESSAGE_MARKER);
    current = {
      ...current,
      conditions: conditions.map((c, i) => (i === longest ? { ...c, message: shortened } : c)),
    };
    text = encodeProfileStatus(current);
  }
  return text;
}

function optionalString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new StatusUndecodableError(`${where}.${key}: expected a string, got ${typeof value}`);
  return value;
}

function checkLength(value: string | undefined, max: number, field: string): void {
  if (value !== undefined && value.length > max) {
    throw new StatusInvalidError(
      `${field} is ${value.length} characters, over the NodePool condition limit of ${max}`,
    );
  }
}

/** A time field: RFC 3339 text, null, or (YAML 1.1 parsers) a Date. */
function optionalTime(obj: Record<string, unknown>, key: string, where: string): string | null | undefined {
  const value = obj[key];
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (value instanceof Date) return value.toISOString().replace('.000Z', 'Z');
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return value;
  throw new StatusUndecodableError(`${where}.${key}: expected an RFC 3339 time, got ${quote(value)}`);
}

function decodeCondition(raw: unknown, index: number): ProfileCondition {
  const where = `conditions[${index}]`;
  if (!isRecord(raw)) throw new StatusUndecodableError(`${where}: expected an object`);
  const type = optionalString(raw, 'type', where);
  const status = optionalString(raw, 'status', where);
  if (!type) throw new StatusUndecodableError(`${where}.type: missing`);
  if (status !== 'True' && status !== 'False' && status !== 'Unknown') {
    throw new StatusUndecodableError(
      `${where}.status: expected True, False or Unknown, got ${quote(status)}`,
    );
  }
  // Lengths first: the patterns below then run on short strings only.
  checkLength(type, STATUS_CONDITION_LIMITS.maxTypeLength, `${where}.type`);
  if (!CONDITION_TYPE_NAME.test(type)) {
    throw new StatusInvalidError(
      `${where}.type ${quote(type)} cannot follow ${NODEPOOL_CONDITION_PREFIX}/ in a condition type (letters, digits, '-', '_', '.'; alphanumeric at both ends)`,
    );
  }
  const cond: ProfileCondition = { type, status };
  const reason = optionalString(raw, 'reason', where);
  const message = optionalString(raw, 'message', where);
  checkLength(reason, STATUS_CONDITION_LIMITS.maxReasonLength, `${where}.reason`);
  if (reason && !CONDITION_REASON.test(reason)) {
    throw new StatusInvalidError(
      `${where}.reason ${quote(reason)} is not a condition reason (a letter, then letters, digits, '_', ',', ':' or spaces)`,
    );
  }
  checkLength(message, STATUS_CONDITION_LIMITS.maxMessageLength, `${where}.message`);
  const lastHeartbeatTime = optionalTime(raw, 'lastHeartbeatTime', where);
  const lastTransitionTime = optionalTime(raw, 'lastTransitionTime', where);
  if (reason !== undefined) cond.reason = reason;
  if (message !== undefined) cond.message = message;
  if (lastHeartbeatTime !== undefined) cond.lastHeartbeatTime = lastHeartbeatTime;
  if (lastTransitionTime !== undefined) cond.lastTransitionTime = lastTransitionTime;
  return cond;
}

/**
 * Parses the `status` key. Empty text or `null` is an empty status, as in Go. Throws BudgetExceededError (before
 * parsing, or for too many conditions), StatusInvalidError (a condition the NodePool cannot carry) or
 * StatusUndecodableError (anything else, including the parser's own errors).
 */
export function decodeProfileStatus(text: string): PerformanceProfileStatus {
  // The layout NTO and encodeProfileStatus write is read without the YAML library (same value); any other text,
  // hostile text included, takes the budgeted general path.
  let raw: unknown = parseCanonicalStatusYaml(text);
  if (raw === NOT_CANONICAL) {
    try {
      raw = parseWithinBudget(text, STATUS_YAML_BUDGET, 'key "status"');
    } catch (err) {
      if (err instanceof NodePoolError) throw err;
      const message = errorMessage(err);
      throw new StatusUndecodableError(message.split('\n')[0] ?? message, { cause: err });
    }
  }
  if (raw === null || raw === undefined) return {};
  if (!isRecord(raw))
    throw new StatusUndecodableError(`expected a mapping at the top level, got ${typeof raw}`);
  const status: PerformanceProfileStatus = {};
  const conditions = raw.conditions;
  if (conditions !== undefined && conditions !== null) {
    if (!Array.isArray(conditions)) throw new StatusUndecodableError('conditions: expected a list');
    const max = STATUS_CONDITION_LIMITS.maxConditions;
    if (conditions.length > max) {
      throw new BudgetExceededError(
        'conditions',
        max,
        conditions.length,
        `key "status" has ${conditions.length} conditions, over the limit of ${max}`,
      );
    }
    status.conditions = conditions.map(decodeCondition);
    const seen = new Set<string>();
    for (const c of status.conditions) {
      if (seen.has(c.type)) throw new StatusInvalidError(`condition type ${quote(c.type)} appears twice`);
      seen.add(c.type);
    }
  }
  const tuned = optionalString(raw, 'tuned', 'status');
  const runtimeClass = optionalString(raw, 'runtimeClass', 'status');
  if (tuned !== undefined) status.tuned = tuned;
  if (runtimeClass !== undefined) status.runtimeClass = runtimeClass;
  return status;
}
