// Evaluates metav1.LabelSelector against a label set with the API server's semantics: all matchLabels and all
// matchExpressions must hold; an empty selector matches everything. Pure. An invalid selector (unknown operator,
// values where none are allowed) throws InvalidLabelSelectorError so the caller decides whether to skip it.
import type { LabelSelector } from './api/schema.js';

export class InvalidLabelSelectorError extends Error {
  readonly code = 'TESSERA_PODPLACEMENT_INVALID_LABEL_SELECTOR' as const;
  constructor(message: string) {
    super(message);
    this.name = 'InvalidLabelSelectorError';
  }
}

/** True when `labels` satisfy `selector`; an undefined or empty selector matches every label set. */
export function labelSelectorMatches(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const have = labels ?? {};
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (have[key] !== value) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const present = Object.prototype.hasOwnProperty.call(have, req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (values.length === 0)
          throw new InvalidLabelSelectorError(`operator In on ${req.key} needs values`);
        if (!present || !values.includes(have[req.key] ?? '')) return false;
        break;
      case 'NotIn':
        if (values.length === 0)
          throw new InvalidLabelSelectorError(`operator NotIn on ${req.key} needs values`);
        if (present && values.includes(have[req.key] ?? '')) return false;
        break;
      case 'Exists':
        if (values.length > 0)
          throw new InvalidLabelSelectorError(`operator Exists on ${req.key} takes no values`);
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (values.length > 0) {
          throw new InvalidLabelSelectorError(`operator DoesNotExist on ${req.key} takes no values`);
        }
        if (present) return false;
        break;
      default:
        throw new InvalidLabelSelectorError(
          `unknown label selector operator ${JSON.stringify(req.operator)}`,
        );
    }
  }
  return true;
}

/** `labelSelectorMatches`, treating an invalid selector as matching nothing. */
export function labelSelectorMatchesOrFalse(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  try {
    return labelSelectorMatches(selector, labels);
  } catch (err) {
    if (err instanceof InvalidLabelSelectorError) return false;
    throw err;
  }
}

/** The selector as a `labelSelector` query string for list/watch calls (`a=b,c in (d,e),!f`). */
export function labelSelectorToQuery(selector: LabelSelector): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) parts.push(`${k}=${v}`);
  for (const req of selector.matchExpressions ?? []) {
    const values = (req.values ?? []).join(',');
    switch (req.operator) {
      case 'In':
        parts.push(`${req.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${req.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(req.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${req.key}`);
        break;
      default:
        throw new InvalidLabelSelectorError(
          `unknown label selector operator ${JSON.stringify(req.operator)}`,
        );
    }
  }
  return parts.join(',');
}
