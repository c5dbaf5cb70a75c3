// Evaluates metav1.LabelSelector against a label set with the API server's semantics: all matchLabels and all
// matchExpressions must hold; an empty selector matches everything. Pure. An invalid selector (unknown operator,
// values where none are allowed, a key or value that is not a valid label key or value) throws
// InvalidLabelSelectorError so the caller decides whether to skip it: like apimachinery's LabelSelectorAsSelector,
// an invalid selector never silently means "everything". Key and value syntax is checked character by character
// (no regular expression), after a length check.
import type { LabelSelector } from './api/schema.js';

export class InvalidLabelSelectorError extends Error {
  readonly code = 'TESSERA_PODPLACEMENT_INVALID_LABEL_SELECTOR' as const;
  constructor(message: string) {
    super(message);
    this.name = 'InvalidLabelSelectorError';
  }
}

const MAX_LABEL_NAME = 63;
const MAX_DNS_SUBDOMAIN = 253;

const isAlnum = (c: string): boolean =>
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
const isLowerAlnum = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

/** A label name or value body: alphanumerics at both ends, `-`, `_`, `.` inside, at most 63 characters. */
function isLabelName(s: string): boolean {
  if (s.length === 0 || s.length > MAX_LABEL_NAME) return false;
  if (!isAlnum(s[0] ?? '') || !isAlnum(s[s.length - 1] ?? '')) return false;
  for (const c of s) if (!isAlnum(c) && c !== '-' && c !== '_' && c !== '.') return false;
  return true;
}

/** A DNS-1123 subdomain: lower-case labels of alphanumerics and inner `-`, joined by dots, at most 253. */
export function isDnsSubdomain(s: string): boolean {
  if (s.length === 0 || s.length > MAX_DNS_SUBDOMAIN) return false;
  for (const label of s.split('.')) {
    if (label.length === 0 || label.length > MAX_LABEL_NAME) return false;
    if (!isLowerAlnum(label[0] ?? '') || !isLowerAlnum(label[label.length - 1] ?? '')) return false;
    for (const c of label) if (!isLowerAlnum(c) && c !== '-') return false;
  }
  return true;
}

/** Why `key` is not a valid label key (`[prefix/]name`), or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  if (key.length > MAX_DNS_SUBDOMAIN + 1 + MAX_LABEL_NAME) return `label key is longer than 317 characters`;
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && !isDnsSubdomain(prefix))
    return `label key ${JSON.stringify(key)} has an invalid prefix: it must be a DNS subdomain (lower case, at most 253 characters)`;
  if (!isLabelName(name))
    return `label key ${JSON.stringify(key)} is invalid: the name must be 1-63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is (the empty value is valid). */
export function labelValueProblem(value: string): string | undefined {
  if (value === '' || isLabelName(value)) return undefined;
  return `label value ${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value)} is invalid: at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
}

/**
 * Why `selector` is invalid (apimachinery's ValidateLabelSelector rules: operators, value counts, key and value
 * syntax), or undefined when it is valid. Used at admission and before matching.
 */
export function labelSelectorProblem(selector: LabelSelector | undefined): string | undefined {
  if (!selector) return undefined;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    const problem = labelKeyProblem(key) ?? labelValueProblem(value);
    if (problem) return `matchLabels: ${problem}`;
  }
  for (const [i, req] of (selector.matchExpressions ?? []).entries()) {
    const where = `matchExpressions[${i}]`;
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) return `${where}: operator ${req.operator} on ${req.key} needs values`;
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) return `${where}: operator ${req.operator} on ${req.key} takes no values`;
        break;
      default:
        return `${where}: unknown label selector operator ${JSON.stringify(req.operator)}: use In, NotIn, Exists or DoesNotExist`;
    }
    const problem = labelKeyProblem(req.key) ?? values.map(labelValueProblem).find(Boolean);
    if (problem) return `${where}: ${problem}`;
  }
  return undefined;
}

/** True when `labels` satisfy `selector`; an undefined or empty selector matches every label set. */
export function labelSelectorMatches(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const have = labels ?? {};
  if (!selector) return true;
  const problem = labelSelectorProblem(selector);
  if (problem) throw new InvalidLabelSelectorError(problem);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    // Own properties only: a pod without a `constructor` label must not see Object.prototype's.
    if (!Object.hasOwn(have, key) || have[key] !== value) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(have, req.key);
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
