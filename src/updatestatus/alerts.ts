// Alert insights (oc's rules): firing alerts that started during the update, plus allow-listed alerts known to
// affect updates whatever their start; pending alerts and info-level alerts are left out.
// Pure: `updateStartedAt` is passed in. Also here: decoding an alerts response the way oc's `json.Unmarshal` into
// its AlertData struct does, and the lines oc prints when alerts cannot be had. The answer comes from an endpoint
// outside our control: its shape is budgeted before parsing, and its alert count before decoding.
import {
  JsonTooLargeError,
  parseBudgetedJson,
  type JsonShapeBudget,
  errorMessage,
} from '../runtime/light.js';
import { goJsonKind, goJsonSyntaxError, goRFC3339ParseError } from './goerrors.js';
import { type Instant, GO_ZERO_TIME, parseTime } from './gotime.js';
import type { AlertData } from './inputs.js';
import { CONFIG_GROUP, ImpactLevel, type UpdateInsight } from './insight.js';

/** Budgets of one alerts answer: its JSON shape, checked before parsing, and the alerts it may list. */
export interface AlertsBudget extends JsonShapeBudget {
  /** Most alerts decoded; an answer listing more is refused whole, with a notice (health leaves alerts out). */
  readonly maxAlerts: number;
}

/**
 * Sized for a 5,000-node cluster with ten alerts firing on every node, 50,000 alerts: a real alert (some 20
 * labels and annotations) is ~20 JSON values and ~1 KiB decoded, so 1,000,000 values is also what a full 32 MiB
 * answer of real alerts holds. Real nesting is 5 levels. What parsing and decoding build then stays near 100 MiB
 * at worst, within the update status controller's 384 MiB heap.
 */
export const DEFAULT_ALERTS_BUDGET: AlertsBudget = { maxDepth: 16, maxValues: 1_000_000, maxAlerts: 50_000 };

/** Alerts shown even when they fired before the update began. */
const ALERTS_AFFECTING_UPDATES = new Set(['PodDisruptionBudgetLimit', 'PodDisruptionBudgetAtLimit']);

function levelOfSeverity(severity: string | undefined): ImpactLevel {
  if (severity === 'warning') return ImpactLevel.Warning;
  if (severity === 'critical') return ImpactLevel.Critical;
  return ImpactLevel.Info;
}

export function alertInsights(alertData: AlertData, updateStartedAt: Instant): UpdateInsight[] {
  const insights: UpdateInsight[] = [];
  for (const alert of alertData.data?.alerts ?? []) {
    const name = alert.labels?.alertname ?? '';
    if (name === '') continue;
    const activeAt = parseTime(alert.activeAt) ?? GO_ZERO_TIME;
    const startedDuringUpdate = updateStartedAt < activeAt;
    let description: string;
    if (ALERTS_AFFECTING_UPDATES.has(name)) {
      description = startedDuringUpdate
        ? 'Alert known to affect updates started firing during the update.'
        : 'Alert known to affect updates has been firing since before the update started.';
    } else if (startedDuringUpdate) {
      description = 'Alert started firing during the update.';
    } else {
      continue;
    }
    if (alert.state === 'pending') continue;
    const level = levelOfSeverity(alert.labels?.severity);
    if (level < ImpactLevel.Warning) continue;

    const annotations = alert.annotations ?? {};
    const alertDescription = annotations.description ?? '';
    const alertMessage = annotations.message ?? '';
    if (alertMessage !== '' && alertDescription !== '') {
      description += ` The alert description is: ${alertDescription} | ${alertMessage}`;
    } else if (alertDescription !== '') {
      description += ` The alert description is: ${alertDescription}`;
    } else if (alertMessage !== '') {
      description += ` The alert description is: ${alertMessage}`;
    } else {
      description += ' The alert has no description.';
    }
    insights.push({
      startedAt: activeAt,
      scope: {
        type: 'Cluster',
        resources: [
          {
            group: CONFIG_GROUP,
            kind: 'Alert',
            ...(alert.labels?.namespace ? { namespace: alert.labels.namespace } : {}),
            name,
          },
        ],
      },
      impact: {
        level,
        type: 'Unknown',
        summary: `Alert is firing: ${annotations.summary || name}`,
        description,
      },
      remediation: { reference: annotations.runbook_url || '<alert does not have a runbook_url annotation>' },
    });
  }
  return insights;
}

/** Alerts as the assessment gets them, and what oc prints on stdout (before the report) about getting them. */
export interface AlertsReading {
  /** undefined: alerts could not be fetched, health ignores them. */
  readonly alerts: AlertData | undefined;
  /** "" or whole lines; oc prints them only for a cluster that is updating (otherwise it never reads alerts). */
  readonly notice: string;
}

/**
 * oc's `fmt.Println("Unable to fetch alerts, ignoring alerts in 'Update Health': ", err)`: Println adds a space
 * between operands, hence two spaces before Go's error text.
 */
export function alertsUnavailableNotice(goErrorText: string): string {
  return `Unable to fetch alerts, ignoring alerts in 'Update Health':  ${goErrorText}\n`;
}

/** oc's `fmt.Println("Ignoring alerts in 'Update Health'. Error unmarshaling alerts: %w", err)`, "%w" and all. */
function unmarshalNotice(goErrorText: string): string {
  return `Ignoring alerts in 'Update Health'. Error unmarshaling alerts: %w ${goErrorText}\n`;
}

type GoField = readonly [json: string, type: GoType];
type GoType =
  | { readonly kind: 'string' }
  | { readonly kind: 'time' }
  | { readonly kind: 'struct'; readonly name: string; readonly fields: readonly GoField[] }
  | { readonly kind: 'slice'; readonly name: string; readonly elem: GoType };

const GO_STRING: GoType = { kind: 'string' };
const stringFields = (...names: string[]): GoField[] => names.map((n) => [n, GO_STRING] as const);
const GO_ALERT: GoType = {
  kind: 'struct',
  name: 'Alert',
  fields: [
    [
      'labels',
      {
        kind: 'struct',
        name: 'AlertLabels',
        fields: stringFields(
          'alertname',
          'name',
          'namespace',
          'poddisruptionbudget',
          'reason',
          'severity',
          'openShiftUpdatePrecheck',
        ),
      },
    ],
    [
      'annotations',
      {
        kind: 'struct',
        name: 'AlertAnnotations',
        fields: stringFields('description', 'summary', 'runbook_url', 'message'),
      },
    ],
    ...stringFields('state', 'value'),
    ['activeAt', { kind: 'time' }],
    ...stringFields('partialResponseStrategy'),
  ],
};
/** oc's AlertData struct (pkg/cli/admin/upgrade/status/alerts.go). */
const GO_ALERT_DATA: GoType = {
  kind: 'struct',
  name: 'AlertData',
  fields: [
    ['status', GO_STRING],
    [
      'data',
      {
        kind: 'struct',
        name: 'Data',
        fields: [['alerts', { kind: 'slice', name: '[]status.Alert', elem: GO_ALERT }]],
      },
    ],
  ],
};

function goTypeName(t: GoType): string {
  if (t.kind === 'string') return 'string';
  if (t.kind === 'time') return 'time.Time';
  return t.kind === 'struct' ? `status.${t.name}` : t.name;
}

/** encoding/json's field lookup: an exact key first, else a case-insensitive one. */
function findField(fields: readonly GoField[], key: string): GoField | undefined {
  const exact = fields.find(([name]) => name === key);
  if (exact) return exact;
  const folded = key.toLowerCase();
  return fields.find(([name]) => name.toLowerCase() === folded);
}

interface DecodeContext {
  /** The first error, as Go keeps it while decoding on. */
  firstError: string | undefined;
  /** Longest slice decoded (the alerts); a longer one is not decoded, and its length is kept in `tooLong`. */
  readonly maxItems: number;
  tooLong: number | undefined;
}

// Decodes `value` into `type` as encoding/json does for oc's structs: type mismatches leave the zero value and
// record the first error (with Go's "Struct.field.path" context); unknown keys are ignored. Returns plain data
// holding only the fields oc knows, with the right types, so no hostile shape reaches the assessment.
function decodeGo(
  value: unknown,
  type: GoType,
  ctx: DecodeContext,
  struct: string,
  path: readonly string[],
): unknown {
  if (value === null) return undefined;
  const mismatch = () => {
    if (ctx.firstError === undefined) {
      const where = struct === '' ? 'Go value' : `Go struct field ${struct}.${path.join('.')}`;
      ctx.firstError = `json: cannot unmarshal ${goJsonKind(value)} into ${where} of type ${goTypeName(type)}`;
    }
    return undefined;
  };
  switch (type.kind) {
    case 'string':
      return typeof value === 'string' ? value : mismatch();
    case 'time':
      // time.Time's own UnmarshalJSON: RFC 3339 strings only.
      if (typeof value !== 'string') {
        ctx.firstError ??= 'Time.UnmarshalJSON: input is not a JSON string';
        return undefined;
      }
      {
        const timeError = goRFC3339ParseError(value);
        if (timeError !== undefined) {
          ctx.firstError ??= timeError;
          return undefined;
        }
      }
      return value;
    case 'slice': {
      if (!Array.isArray(value)) return mismatch();
      if (value.length > ctx.maxItems) {
        ctx.tooLong ??= value.length;
        return undefined;
      }
      return value.map((item: unknown) => decodeGo(item, type.elem, ctx, struct, path) ?? {});
    }
    case 'struct': {
      if (typeof value !== 'object' || Array.isArray(value)) return mismatch();
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const [key, child] of Object.entries(value)) {
        const field = findField(type.fields, key);
        if (field === undefined) continue;
        const [canonical, fieldType] = field;
        const decoded = decodeGo(child, fieldType, ctx, type.name, [...path, canonical]);
        if (decoded !== undefined) out[canonical] = decoded;
      }
      return out;
    }
  }
}

export interface DecodeAlertsOptions {
  /** Default: DEFAULT_ALERTS_BUDGET. */
  readonly budget?: AlertsBudget;
  /** Names the answer in a refusal (`the alerts answer of https://host/api/v1/alerts`). Default: `the alerts answer`. */
  readonly what?: string;
}

/**
 * An alerts response as oc's `json.Unmarshal(bytes, &alertData)` leaves it, with the notice oc prints when that
 * fails. Like Go, a syntax error decodes nothing, while a type mismatch keeps what decoded (oc then still reads
 * the alerts it got). An answer over its budget (shape, or more than `maxAlerts` alerts) is not read at all:
 * alerts are then unavailable, with oc's notice naming the budget (oc has no such limit).
 */
export function decodeAlerts(text: string | Uint8Array, options: DecodeAlertsOptions = {}): AlertsReading {
  const budget = options.budget ?? DEFAULT_ALERTS_BUDGET;
  const what = options.what ?? 'the alerts answer';
  let parsed: unknown;
  try {
    parsed = parseBudgetedJson(text, budget, what);
  } catch (err) {
    if (err instanceof JsonTooLargeError)
      return { alerts: undefined, notice: alertsUnavailableNotice(err.message) };
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    const goText = goJsonSyntaxError(bytes) ?? errorMessage(err);
    return { alerts: {}, notice: unmarshalNotice(goText) };
  }
  const ctx: DecodeContext = { firstError: undefined, maxItems: budget.maxAlerts, tooLong: undefined };
  const alerts = (decodeGo(parsed, GO_ALERT_DATA, ctx, '', []) ?? {}) as AlertData;
  if (ctx.tooLong !== undefined) {
    return {
      alerts: undefined,
      notice: alertsUnavailableNotice(
        `${what} lists ${ctx.tooLong} alerts, more than the ${budget.maxAlerts} accepted; it was not read`,
      ),
    };
  }
  return { alerts, notice: ctx.firstError === undefined ? '' : unmarshalNotice(ctx.firstError) };
}
