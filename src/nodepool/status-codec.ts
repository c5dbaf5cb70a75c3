// Encodes and decodes the `status` key of a status ConfigMap (a performance.openshift.io/v2 PerformanceProfileStatus).
// Guarantees: encode() writes what sigs.k8s.io/yaml would (keys sorted, zero times as null, omitempty fields left
// out); decode() accepts YAML or JSON like apimachinery's yaml.Unmarshal, ignores unknown fields, and throws
// StatusUndecodableError naming the first bad field. Neither function reads the clock.
import { parse, stringify } from 'yaml';
import type { PerformanceProfileStatus, ProfileCondition } from './api-types.js';
import { StatusUndecodableError } from './errors.js';

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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new StatusUndecodableError(`${where}.${key}: expected a string, got ${typeof value}`);
  return value;
}

/** A time field: RFC 3339 text, null, or (YAML 1.1 parsers) a Date. */
function optionalTime(obj: Record<string, unknown>, key: string, where: string): string | null | undefined {
  const value = obj[key];
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (value instanceof Date) return value.toISOString().replace('.000Z', 'Z');
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return value;
  throw new StatusUndecodableError(
    `${where}.${key}: expected an RFC 3339 time, got ${JSON.stringify(value)}`,
  );
}

function decodeCondition(raw: unknown, index: number): ProfileCondition {
  const where = `conditions[${index}]`;
  if (!isRecord(raw)) throw new StatusUndecodableError(`${where}: expected an object`);
  const type = optionalString(raw, 'type', where);
  const status = optionalString(raw, 'status', where);
  if (!type) throw new StatusUndecodableError(`${where}.type: missing`);
  if (status !== 'True' && status !== 'False' && status !== 'Unknown') {
    throw new StatusUndecodableError(
      `${where}.status: expected True, False or Unknown, got ${JSON.stringify(status)}`,
    );
  }
  const cond: ProfileCondition = { type, status };
  const reason = optionalString(raw, 'reason', where);
  const message = optionalString(raw, 'message', where);
  const lastHeartbeatTime = optionalTime(raw, 'lastHeartbeatTime', where);
  const lastTransitionTime = optionalTime(raw, 'lastTransitionTime', where);
  if (reason !== undefined) cond.reason = reason;
  if (message !== undefined) cond.message = message;
  if (lastHeartbeatTime !== undefined) cond.lastHeartbeatTime = lastHeartbeatTime;
  if (lastTransitionTime !== undefined) cond.lastTransitionTime = lastTransitionTime;
  return cond;
}

/** Parses the `status` key. Empty text or `null` is an empty status, as in Go. */
export function decodeProfileStatus(text: string): PerformanceProfileStatus {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    throw new StatusUndecodableError(
      err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err),
      {
        cause: err,
      },
    );
  }
  if (raw === null || raw === undefined) return {};
  if (!isRecord(raw))
    throw new StatusUndecodableError(`expected a mapping at the top level, got ${typeof raw}`);
  const status: PerformanceProfileStatus = {};
  const conditions = raw.conditions;
  if (conditions !== undefined && conditions !== null) {
    if (!Array.isArray(conditions)) throw new StatusUndecodableError('conditions: expected a list');
    status.conditions = conditions.map(decodeCondition);
  }
  const tuned = optionalString(raw, 'tuned', 'status');
  const runtimeClass = optionalString(raw, 'runtimeClass', 'status');
  if (tuned !== undefined) status.tuned = tuned;
  if (runtimeClass !== undefined) status.runtimeClass = runtimeClass;
  return status;
}
