// metav1.LabelSelector for every area, with apimachinery's semantics (LabelSelectorAsSelector): all matchLabels
// and all matchExpressions must hold; an empty selector `{}` matches everything. What an absent (null) selector
// means is the caller's API contract (nothing for a MachineConfigPool's nodeSelector, everything for an optional
// PodPlacementConfig labelSelector), so these functions take a present selector only. Pure.
// An invalid selector (unknown operator, values where none are allowed or none where some are needed, a key or
// value that is not a valid label key or value) throws InvalidLabelSelectorError so the caller decides what it
// means: like LabelSelectorAsSelector, an invalid selector never silently means "everything". The selector comes
// from tenants' objects: key and value syntax is checked character by character (no regular expression), after a
// length check, and only own properties of the label set are read.
import { RuntimeError } from './errors.js';

/** metav1.LabelSelectorRequirement as decoded (fields may be missing in hostile or hand-written input). */
export interface LabelSelectorRequirement {
  readonly key?: string;
  readonly operator?: string;
  readonly values?: readonly string[];
}

/** metav1.LabelSelector as decoded. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export type Labels = Readonly<Record<string, string>> | undefined;

/** A validated selector, ready to test many label sets. */
export type LabelMatcher = (labels: Labels) => boolean;

export class InvalidLabelSelectorError extends RuntimeError {
  constructor(message: string) {
    super('TESSERA_INVALID_LABEL_SELECTOR', message);
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

/**
 * A DNS-1123 subdomain: lower-case labels of alphanumerics and inner `-`, joined by dots, at most 253 in all (as
 * apimachinery's IsDNS1123Subdomain: no limit per label).
 */
export function isDnsSubdomain(s: string): boolean {
  if (s.length === 0 || s.length > MAX_DNS_SUBDOMAIN) return false;
  for (const label of s.split('.')) {
    if (label.length === 0) return false;
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
 * syntax), or undefined when it is valid. An absent selector has no problem. Used at admission and before matching.
 */
export function labelSelectorProblem(selector: LabelSelector | null | undefined): string | undefined {
  if (!selector) return undefined;
  // Hand-written input (a snapshot file) may carry any JSON: shapes are checked before syntax.
  const matchLabels: unknown = selector.matchLabels ?? {};
  if (typeof matchLabels !== 'object' || matchLabels === null || Array.isArray(matchLabels))
    return 'matchLabels must be a map of label keys to values';
  for (const [key, value] of Object.entries(matchLabels)) {
    if (typeof value !== 'string') return `matchLabels: the value of ${JSON.stringify(key)} must be a string`;
    const problem = labelKeyProblem(key) ?? labelValueProblem(value);
    if (problem) return `matchLabels: ${problem}`;
  }
  const expressions: unknown = selector.matchExpressions ?? [];
  if (!Array.isArray(expressions)) return 'matchExpressions must be a list';
  for (const [i, req] of (expressions as unknown[]).entries()) {
    const where = `matchExpressions[${i}]`;
    if (typeof req !== 'object' || req === null || Array.isArray(req)) return `${where} must be an object`;
    const {
      key = '',
      values = [],
      operator,
    } = req as { key?: unknown; values?: unknown; operator?: unknown };
    if (typeof key !== 'string') return `${where}: key must be a string`;
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string'))
      return `${where}: values must be a list of strings`;
    const problem =
      operatorProblem(where, key, operator, values as string[]) ??
      syntaxProblem(where, key, values as string[]);
    if (problem) return problem;
  }
  return undefined;
}

function operatorProblem(
  where: string,
  key: string,
  operator: unknown,
  values: readonly string[],
): string | undefined {
  switch (operator) {
    case 'In':
    case 'NotIn':
      return values.length === 0 ? `${where}: operator ${operator} on ${key} needs values` : undefined;
    case 'Exists':
    case 'DoesNotExist':
      return values.length > 0 ? `${where}: operator ${operator} on ${key} takes no values` : undefined;
    default:
      return `${where}: unknown label selector operator ${JSON.stringify(operator)}: use In, NotIn, Exists or DoesNotExist`;
  }
}

function syntaxProblem(where: string, key: string, values: readonly string[]): string | undefined {
  const problem = labelKeyProblem(key) ?? values.map(labelValueProblem).find(Boolean);
  return problem && `${where}: ${problem}`;
}

/**
 * Validates `selector` once and returns its matcher; throws InvalidLabelSelectorError when it is invalid.
 * Only own properties of a label set are read: a set without a `constructor` label never sees Object.prototype's.
 */
export function labelSelectorMatcher(selector: LabelSelector): LabelMatcher {
  const problem = labelSelectorProblem(selector);
  if (problem) throw new InvalidLabelSelectorError(problem);
  const checks: LabelMatcher[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    checks.push((labels) => labels !== undefined && Object.hasOwn(labels, key) && labels[key] === value);
  for (const req of selector.matchExpressions ?? []) {
    // Validated above: the key is present and the operator is one of the four.
    const key = req.key ?? '';
    const values = new Set(req.values ?? []);
    const has = (labels: Labels): labels is Readonly<Record<string, string>> =>
      labels !== undefined && Object.hasOwn(labels, key);
    switch (req.operator) {
      case 'In':
        checks.push((labels) => has(labels) && values.has(labels[key] ?? ''));
        break;
      case 'NotIn':
        checks.push((labels) => !has(labels) || !values.has(labels[key] ?? ''));
        break;
      case 'Exists':
        checks.push((labels) => has(labels));
        break;
      case 'DoesNotExist':
        checks.push((labels) => !has(labels));
        break;
      case undefined:
      default:
        // Unreachable: labelSelectorProblem refused every other operator above.
        throw new InvalidLabelSelectorError(
          `unknown label selector operator ${JSON.stringify(req.operator)}`,
        );
    }
  }
  return (labels) => checks.every((check) => check(labels));
}

/** True when `labels` satisfy `selector` (an empty selector matches every label set); throws when it is invalid. */
export function labelSelectorMatches(selector: LabelSelector, labels: Labels): boolean {
  return labelSelectorMatcher(selector)(labels);
}

/** `labelSelectorMatches`, treating an invalid selector as matching nothing. */
export function labelSelectorMatchesOrFalse(selector: LabelSelector, labels: Labels): boolean {
  try {
    return labelSelectorMatches(selector, labels);
  } catch (err) {
    if (err instanceof InvalidLabelSelectorError) return false;
    throw err;
  }
}

/** The selector as a `labelSelector` query string for list/watch calls (`a=b,c in (d,e),!f`). */
export function labelSelectorToQuery(selector: LabelSelector): string {
  const problem = labelSelectorProblem(selector);
  if (problem) throw new InvalidLabelSelectorError(problem);
  const parts: string[] = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) parts.push(`${k}=${v}`);
  for (const req of selector.matchExpressions ?? []) {
    const key = req.key ?? '';
    const values = (req.values ?? []).join(',');
    if (req.operator === 'In') parts.push(`${key} in (${values})`);
    else if (req.operator === 'NotIn') parts.push(`${key} notin (${values})`);
    else if (req.operator === 'Exists') parts.push(key);
    else parts.push(`!${key}`);
  }
  return parts.join(',');
}
