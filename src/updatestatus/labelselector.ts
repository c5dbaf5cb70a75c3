// Kubernetes label selector matching (metav1.LabelSelectorAsSelector semantics): a null selector matches
// nothing, an empty one matches everything; matchLabels and matchExpressions are ANDed.
// Throws InvalidSelectorError for an unknown operator, as the Go conversion fails.
import { InvalidSelectorError } from './errors.js';
import type { LabelSelector } from './inputs.js';

export type LabelMatcher = (labels: Readonly<Record<string, string>> | undefined) => boolean;

export function selectorMatcher(selector: LabelSelector | null | undefined, owner: string): LabelMatcher {
  if (selector === null || selector === undefined) return () => false;
  const checks: LabelMatcher[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    checks.push((labels) => labels?.[key] === value);
  }
  for (const req of selector.matchExpressions ?? []) {
    const key = req.key ?? '';
    const values = new Set(req.values ?? []);
    switch (req.operator) {
      case 'In':
        checks.push((labels) => labels?.[key] !== undefined && values.has(labels[key] ?? ''));
        break;
      case 'NotIn':
        checks.push((labels) => labels?.[key] === undefined || !values.has(labels[key] ?? ''));
        break;
      case 'Exists':
        checks.push((labels) => labels?.[key] !== undefined);
        break;
      case 'DoesNotExist':
        checks.push((labels) => labels?.[key] === undefined);
        break;
      default:
        throw new InvalidSelectorError(owner, `unknown operator ${JSON.stringify(req.operator)}`);
    }
  }
  return (labels) => checks.every((check) => check(labels));
}
