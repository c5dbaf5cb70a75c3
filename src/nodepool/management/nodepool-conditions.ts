// The NodePool side, as pure functions: the status ConfigMaps found for a NodePool (zero, one, several; with or
// without a decodable `status`) -> the NodePool's `performance.operator.openshift.io/<Type>` mirrors and the
// `PerformanceProfileAppliedSuccessfully` summary, including staleness (a stale status turns the summary and every
// mirror Unknown with the stale reason, so old data is never shown as current).
// Guarantees: bad input becomes a condition that names the offending ConfigMap, never an exception; conditions of
// other owners are kept in place; lastTransitionTime moves only when a condition's status changes; `changed` is
// false when only timestamps would differ, so callers write the NodePool once per meaningful change.
// Hosted-cluster text is untrusted: a status over its budgets (status-codec.ts) or holding conditions a NodePool
// cannot carry becomes one Unknown summary naming the ConfigMap and the limit, and every message written is capped
// at the CRD's 32768 characters, so the NodePool status update is never rejected for our conditions.
import { metaTime, transitionTime, truncateText } from '../../runtime/index.js';
import type { ConfigMap, NodePool, NodePoolCondition, PerformanceProfileStatus } from '../api/types.js';
import {
  APPLIED_SUCCESSFULLY_CONDITION,
  DATA_KEYS,
  LABELS,
  NODEPOOL_CONDITION_PREFIX,
  REFERENCE_MESSAGES,
  mirroredConditionType,
} from '../constants.js';
import { overLengthError, STATUS_YAML_BUDGET } from '../bounded-yaml.js';
import { BudgetExceededError, StatusInvalidError, StatusUndecodableError } from '../errors.js';
import { statusHeartbeatMs } from '../tuning/profile-status.js';
import { decodeProfileStatus, STATUS_CONDITION_LIMITS } from '../status-codec.js';
import { refOf, STATUS_NOT_CACHED_ANNOTATION } from '../status-configmap.js';

/** Reasons of the summary condition (ours; NTO's reasons are carried through for Progressing/Degraded). */
export const SUMMARY_REASONS = {
  available: 'AsExpected',
  notReported: 'PerformanceProfileStatusNotFound',
  multiple: 'MultiplePerformanceProfileStatuses',
  missingKey: 'PerformanceProfileStatusKeyMissing',
  undecodable: 'PerformanceProfileStatusUndecodable',
  /** The status ConfigMap exceeds a size, depth, node or condition-count budget. */
  tooLarge: 'PerformanceProfileStatusTooLarge',
  /** The status uses aliases or holds a condition a NodePool cannot carry. */
  invalid: 'PerformanceProfileStatusInvalid',
  /** The API server refused the NodePool status built from the status ConfigMap. */
  rejected: 'PerformanceProfileStatusRejected',
  stale: 'PerformanceProfileStatusStale',
  inconclusive: 'PerformanceProfileStatusInconclusive',
  unresolved: 'TuningConfigUnresolved',
  controlPlaneMissing: 'HostedControlPlaneNotFound',
} as const;

/** What the NodePool references, as resolved by the caller from `spec.tuningConfig`. */
export type ProfileReference =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'profile';
      /** PerformanceProfile name in the referenced tuning ConfigMap. */
      readonly profileName: string;
      /** Expected status ConfigMap name (`status-<PP ConfigMap in HCP ns>`); undefined skips the name check. */
      readonly statusConfigMapName?: string;
    }
  /**
   * The reference cannot be resolved (ConfigMap missing, undecodable manifest, no control plane yet): `message` says
   * why; `reason` defaults to TuningConfigUnresolved.
   */
  | { readonly kind: 'unresolved'; readonly message: string; readonly reason?: string };

export interface AssessNodePoolInput {
  readonly nodePool: NodePool;
  readonly reference: ProfileReference;
  /** Status ConfigMaps labelled for this NodePool in its HCP namespace. */
  readonly statusConfigMaps: readonly ConfigMap[];
  /** Evaluation time, ms since the epoch. */
  readonly now: number;
  /** A status whose newest heartbeat is older than this is stale. Milliseconds; 0 disables the check. */
  readonly staleAfterMs: number;
  /** Decodes a `status` key; a caching wrapper of decodeProfileStatus. Default: decodeProfileStatus. */
  readonly decodeStatus?: (text: string) => PerformanceProfileStatus;
}

/** Why the status ConfigMap was not used: the summary's reason and message (for an event, too). */
export interface RefusedStatus {
  readonly reason: string;
  readonly message: string;
}

/** What the controller shows and writes. */
export interface NodePoolAssessment {
  /** The NodePool's complete new condition list. */
  readonly conditions: NodePoolCondition[];
  /** True when a condition's type, status, reason, message or observedGeneration differs from the current list. */
  readonly changed: boolean;
  /** The status ConfigMap used, if exactly one was usable. */
  readonly source?: string;
  /** Re-evaluate after this many ms even without events (the status becomes stale then). */
  readonly recheckAfterMs?: number;
  /** Set when the status ConfigMap was refused as hostile or broken (undecodable, over budget, invalid). */
  readonly refused?: RefusedStatus;
}

type Desired = Omit<NodePoolCondition, 'lastTransitionTime' | 'observedGeneration'>;

function isOurs(type: string): boolean {
  return type.startsWith(`${NODEPOOL_CONDITION_PREFIX}/`) || type === APPLIED_SUCCESSFULLY_CONDITION;
}

function format(template: string, ...args: (string | number)[]): string {
  let i = 0;
  return template.replace(/%[dsw]/g, () => String(args[i++] ?? ''));
}

function summary(status: NodePoolCondition['status'], reason: string, message: string): Desired {
  return { type: APPLIED_SUCCESSFULLY_CONDITION, status, reason, message };
}

/** Summary for a decoded status: Degraded wins over Progressing, which wins over Available. */
function summaryOf(status: PerformanceProfileStatus): Desired {
  const find = (type: string) => status.conditions?.find((c) => c.type === type && c.status === 'True');
  const degraded = find('Degraded');
  if (degraded) return summary('False', degraded.reason || 'Degraded', degraded.message ?? '');
  const progressing = find('Progressing');
  if (progressing) return summary('False', progressing.reason || 'Progressing', progressing.message ?? '');
  const available = find('Available');
  if (available) return summary('True', SUMMARY_REASONS.available, available.message ?? '');
  return summary(
    'Unknown',
    SUMMARY_REASONS.inconclusive,
    'the PerformanceProfile status reports none of Available, Progressing or Degraded as True',
  );
}

/** Why the status is stale, or undefined when it is current. */
function staleness(
  cm: ConfigMap,
  status: PerformanceProfileStatus,
  reference: Extract<ProfileReference, { kind: 'profile' }>,
  now: number,
  staleAfterMs: number,
): { reason: string | undefined; recheckAfterMs: number | undefined } {
  const reported = cm.metadata.labels?.[LABELS.performanceProfileName];
  if (reported !== reference.profileName) {
    return {
      reason: `status ConfigMap ${refOf(cm)} reports PerformanceProfile "${reported ?? ''}", but the NodePool references "${reference.profileName}"; waiting for the Node Tuning Operator to report the current profile`,
      recheckAfterMs: undefined,
    };
  }
  if (reference.statusConfigMapName !== undefined && cm.metadata.name !== reference.statusConfigMapName) {
    return {
      reason: `status ConfigMap ${refOf(cm)} belongs to an older PerformanceProfile ConfigMap (expected ${reference.statusConfigMapName}); waiting for the Node Tuning Operator to report the current one`,
      recheckAfterMs: undefined,
    };
  }
  if (staleAfterMs <= 0) return { reason: undefined, recheckAfterMs: undefined };
  const heartbeat = statusHeartbeatMs(status);
  if (heartbeat === undefined) return { reason: undefined, recheckAfterMs: undefined };
  const age = now - heartbeat;
  if (age > staleAfterMs) {
    return {
      reason: `status ConfigMap ${refOf(cm)} was last refreshed ${Math.round(age / 1000)}s ago (limit ${Math.round(staleAfterMs / 1000)}s); check that the Node Tuning Operator of this hosted cluster is running`,
      recheckAfterMs: undefined,
    };
  }
  return { reason: undefined, recheckAfterMs: staleAfterMs - age + 1 };
}

interface Plan {
  mirrors: Desired[];
  summary: Desired | undefined;
  source?: string;
  recheckAfterMs?: number;
  refused?: RefusedStatus;
}

/** What the NodePool says about a status ConfigMap that could not be used, by the error decoding it threw. */
function refusal(cm: ConfigMap, err: unknown): RefusedStatus {
  const where = `status ConfigMap ${refOf(cm)}`;
  const consequence =
    'the NodePool shows no performance-profile conditions from it until that ConfigMap changes; check the Node Tuning Operator of this hosted cluster';
  if (err instanceof BudgetExceededError) {
    return {
      reason: err.budget === 'aliases' ? SUMMARY_REASONS.invalid : SUMMARY_REASONS.tooLarge,
      message: `${where}: ${err.message} (a real status is a few KiB); ${consequence}`,
    };
  }
  if (err instanceof StatusInvalidError) {
    return { reason: SUMMARY_REASONS.invalid, message: `${where}: ${err.message}; ${consequence}` };
  }
  const detail = err instanceof StatusUndecodableError ? err.message : String(err);
  return {
    reason: SUMMARY_REASONS.undecodable,
    message: `${format(REFERENCE_MESSAGES.decode, detail)} (ConfigMap ${refOf(cm)})`,
  };
}

function plan(input: AssessNodePoolInput): Plan {
  const { reference, statusConfigMaps } = input;
  if (reference.kind === 'none') return { mirrors: [], summary: undefined };
  if (reference.kind === 'unresolved') {
    return {
      mirrors: [],
      summary: summary('Unknown', reference.reason ?? SUMMARY_REASONS.unresolved, reference.message),
    };
  }
  const npName = input.nodePool.metadata.name ?? '';
  if (statusConfigMaps.length === 0) {
    const expected = reference.statusConfigMapName
      ? ` (expected ConfigMap ${reference.statusConfigMapName})`
      : '';
    return {
      mirrors: [],
      summary: summary(
        'Unknown',
        SUMMARY_REASONS.notReported,
        `${REFERENCE_MESSAGES.missing} for NodePool ${npName}${expected}; the Node Tuning Operator has not reported yet`,
      ),
    };
  }
  if (statusConfigMaps.length > 1) {
    const names = statusConfigMaps.map(refOf).sort().join(', ');
    return {
      mirrors: [],
      summary: summary(
        'Unknown',
        SUMMARY_REASONS.multiple,
        `${format(REFERENCE_MESSAGES.multiple, statusConfigMaps.length, npName)} (${names}); delete the ones not owned by the current PerformanceProfile ConfigMap`,
      ),
    };
  }
  const cm = statusConfigMaps[0] as ConfigMap;
  const raw = cm.data?.[DATA_KEYS.status];
  const notCached = cm.metadata.annotations?.[STATUS_NOT_CACHED_ANNOTATION];
  if (raw === undefined && notCached !== undefined) {
    // The cache dropped an over-long status (trimStatusConfigMap): refused on its length alone.
    const refused = refusal(cm, overLengthError(Number(notCached), STATUS_YAML_BUDGET, 'key "status"'));
    return {
      mirrors: [],
      summary: summary('Unknown', refused.reason, refused.message),
      source: refOf(cm),
      refused,
    };
  }
  if (raw === undefined) {
    return {
      mirrors: [],
      summary: summary('Unknown', SUMMARY_REASONS.missingKey, `${REFERENCE_MESSAGES.noKey} ${refOf(cm)}`),
      source: refOf(cm),
    };
  }
  let status: PerformanceProfileStatus;
  try {
    status = (input.decodeStatus ?? decodeProfileStatus)(raw);
  } catch (err) {
    const refused = refusal(cm, err);
    return {
      mirrors: [],
      summary: summary('Unknown', refused.reason, refused.message),
      source: refOf(cm),
      refused,
    };
  }
  const mirrors = (status.conditions ?? []).map((c): Desired => ({
    type: mirroredConditionType(c.type),
    status: c.status,
    reason: c.reason ?? '',
    message: c.message ?? '',
  }));
  const stale = staleness(cm, status, reference, input.now, input.staleAfterMs);
  // Stale data is not presented as current: every mirror says Unknown and why, keeping only its type.
  const result: Plan = stale.reason
    ? {
        mirrors: mirrors.map((m) => ({
          type: m.type,
          status: 'Unknown',
          reason: SUMMARY_REASONS.stale,
          message: stale.reason ?? '',
        })),
        summary: summary('Unknown', SUMMARY_REASONS.stale, stale.reason),
        source: refOf(cm),
      }
    : { mirrors, summary: summaryOf(status), source: refOf(cm) };
  if (stale.recheckAfterMs !== undefined) result.recheckAfterMs = stale.recheckAfterMs;
  return result;
}

function sameCondition(a: NodePoolCondition, b: NodePoolCondition): boolean {
  return (
    a.status === b.status &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '') &&
    (a.observedGeneration ?? 0) === (b.observedGeneration ?? 0) &&
    (a.severity ?? '') === (b.severity ?? '')
  );
}

/** `message` cut to the NodePool CRD's limit (at a code point boundary), saying that it was cut. */
export function capConditionMessage(message: string): string {
  return truncateText(message, STATUS_CONDITION_LIMITS.maxMessageLength, ' ... (truncated)');
}

/** The NodePool's conditions after reflecting its performance-profile status (see module comment). */
export function assessNodePoolPerformance(input: AssessNodePoolInput): NodePoolAssessment {
  return merge(input.nodePool, plan(input), input.now);
}

/**
 * The NodePool's conditions after the API server refused the status assessNodePoolPerformance built from `source`
 * (`detail` is the server's message): no mirrors, and an Unknown summary saying what was refused and why, so the
 * old conditions are not left standing as if current.
 */
export function assessRejectedStatus(
  nodePool: NodePool,
  source: string | undefined,
  detail: string,
  now: number,
): NodePoolAssessment {
  const from = source ? `status ConfigMap ${source}` : 'the performance-profile status';
  const refused: RefusedStatus = {
    reason: SUMMARY_REASONS.rejected,
    message: `the API server refused the NodePool conditions built from ${from}: ${detail}; they are not shown until that ConfigMap changes`,
  };
  return merge(
    nodePool,
    { mirrors: [], summary: summary('Unknown', refused.reason, refused.message), source, refused },
    now,
  );
}

function merge(nodePool: NodePool, p: Plan, nowMs: number): NodePoolAssessment {
  const current = nodePool.status?.conditions ?? [];
  const generation = nodePool.metadata.generation ?? 0;
  const wanted = [...p.mirrors, ...(p.summary ? [p.summary] : [])];
  const wantedByType = new Map(wanted.map((w) => [w.type, w]));
  const now = metaTime(nowMs);

  const complete = (w: Desired, old: NodePoolCondition | undefined): NodePoolCondition => {
    const c: NodePoolCondition = {
      type: w.type,
      status: w.status,
      lastTransitionTime: transitionTime(old, w.status, now),
      observedGeneration: generation,
    };
    if (w.reason) c.reason = w.reason;
    if (w.message) c.message = capConditionMessage(w.message);
    return c;
  };

  const conditions: NodePoolCondition[] = [];
  const placed = new Set<string>();
  let changed = false;
  for (const old of current) {
    if (!isOurs(old.type)) {
      conditions.push(old);
      continue;
    }
    const w = wantedByType.get(old.type);
    if (!w || placed.has(old.type)) {
      changed = true; // removed (or a duplicate entry of the same type)
      continue;
    }
    const next = complete(w, old);
    if (!sameCondition(old, next)) changed = true;
    conditions.push(next);
    placed.add(old.type);
  }
  for (const w of wanted) {
    if (placed.has(w.type)) continue;
    conditions.push(complete(w, undefined));
    placed.add(w.type);
    changed = true;
  }
  const result: { -readonly [K in keyof NodePoolAssessment]: NodePoolAssessment[K] } = {
    conditions,
    changed,
  };
  if (p.source !== undefined) result.source = p.source;
  if (p.recheckAfterMs !== undefined) result.recheckAfterMs = p.recheckAfterMs;
  if (p.refused !== undefined) result.refused = p.refused;
  return result;
}
