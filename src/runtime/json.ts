// Shape checks for decoded JSON/YAML (values of unknown type from the wire, files or tenants).

/** True for a JSON object: not null, not an array. Its keys are still untrusted strings. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
