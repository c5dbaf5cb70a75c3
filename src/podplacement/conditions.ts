// Status conditions of the ClusterPodPlacementConfig, derived from what the operator observes, with the reference
// operator's types, reasons and messages. Pure: `now` is passed in; lastTransitionTime changes only when a
// condition's status changes, so writing the same observation twice is a no-op.
import type { Condition } from './api/schema.js';
import { ALL_COMPONENTS_READY, CONDITION_TYPES, SCHEDULING_GATE } from './constants.js';
import { execFormatErrorMonitorCondition } from './unsupported-plugins.js';

export interface OperandObservation {
  /** The pod reconciler has synced its caches and is processing gated pods. */
  readonly controllerReady: boolean;
  /** The gating webhook is serving (TLS ready) at its Service. */
  readonly webhookReady: boolean;
  /** The MutatingWebhookConfiguration exists. */
  readonly mutatingWebhookConfigurationPresent: boolean;
  /** The config is being deleted (deletionTimestamp set). */
  readonly deprovisioning: boolean;
  /** The config asks for the exec format error monitor (detected from the kubelet's reports). */
  readonly execFormatErrorMonitorEnabled: boolean;
}

/** Whether the MutatingWebhookConfiguration may exist: both halves ready and not tearing down. */
export function canServeMutatingWebhook(o: OperandObservation): boolean {
  return o.controllerReady && o.webhookReady && !o.deprovisioning;
}

const status = (b: boolean): Condition['status'] => (b ? 'True' : 'False');
const not = (b: boolean): string => (b ? '' : 'not ');
const capitalized = (s: string): string => (s ? s[0]?.toUpperCase() + s.slice(1) : s);

/**
 * The reference's seven conditions for an observation, and Tessera's ExecFormatErrorMonitorUnsupported (without
 * timestamps merged; see mergeConditions).
 */
export function desiredConditions(
  o: OperandObservation,
  observedGeneration?: number,
): Omit<Condition, 'lastTransitionTime'>[] {
  const controllerNotReady = !o.controllerReady;
  const webhookNotReady = !o.webhookReady;
  const mwcMissing = !o.mutatingWebhookConfigurationPresent;
  const available = o.mutatingWebhookConfigurationPresent && o.webhookReady && o.controllerReady;
  const degraded = !available && !o.deprovisioning;
  const progressing = (controllerNotReady || webhookNotReady || mwcMissing) && !o.deprovisioning;
  let reason = '';
  if (controllerNotReady) reason += CONDITION_TYPES.controllerNotRolledOut;
  if (webhookNotReady) reason += CONDITION_TYPES.webhookNotRolledOut;
  if (mwcMissing) reason += CONDITION_TYPES.mutatingWebhookConfigurationNotAvailable;
  if (!reason) reason = ALL_COMPONENTS_READY;
  const gen = observedGeneration === undefined ? {} : { observedGeneration };
  return [
    {
      type: CONDITION_TYPES.available,
      status: status(available),
      reason,
      message: `The cluster pod placement config operand is ${not(available)}ready. We can${available ? '' : 'not'} gate and reconcile pods.`,
      ...gen,
    },
    {
      type: CONDITION_TYPES.progressing,
      status: status(progressing),
      reason,
      message: `The cluster pod placement config operand is ${not(progressing)}progressing.`,
      ...gen,
    },
    {
      type: CONDITION_TYPES.degraded,
      status: status(degraded),
      reason: `${capitalized(not(degraded).trim())}Degraded`,
      message: `The cluster pod placement config operand is ${not(degraded)}degraded.`,
      ...gen,
    },
    {
      type: CONDITION_TYPES.deprovisioning,
      status: status(o.deprovisioning),
      reason: `${capitalized(not(o.deprovisioning).trim())}Deprovisioning`,
      message:
        `The cluster pod placement config operand is ${not(o.deprovisioning)}being deprovisioned. ` +
        (o.deprovisioning
          ? `Some pods may still have the ${SCHEDULING_GATE} scheduling gate. The pod placement controller is updating them and will terminate.`
          : ''),
      ...gen,
    },
    {
      type: CONDITION_TYPES.controllerNotRolledOut,
      status: status(controllerNotReady),
      reason: `PodPlacementController${controllerNotReady ? 'Not' : ''}Ready`,
      message: `The pod placement controller is ${not(!controllerNotReady)}fully rolled out.`,
      ...gen,
    },
    {
      type: CONDITION_TYPES.webhookNotRolledOut,
      status: status(webhookNotReady),
      reason: `PodPlacementWebhook${webhookNotReady ? 'Not' : ''}Ready`,
      message: `The pod placement webhook is ${not(!webhookNotReady)}fully rolled out.`,
      ...gen,
    },
    {
      type: CONDITION_TYPES.mutatingWebhookConfigurationNotAvailable,
      status: status(mwcMissing),
      reason,
      message: `The mutating webhook configuration is ${not(!mwcMissing)}ready.`,
      ...gen,
    },
    execFormatErrorMonitorCondition(o.execFormatErrorMonitorEnabled, observedGeneration),
  ];
}

/**
 * Merges desired conditions into the existing list: keeps lastTransitionTime when the status did not change,
 * sets it to `now` (RFC 3339, second precision) when it did or the condition is new. Unknown existing types are kept.
 */
export function mergeConditions(
  existing: readonly Condition[] | undefined,
  desired: readonly Omit<Condition, 'lastTransitionTime'>[],
  now: Date,
): Condition[] {
  const stamp = new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const byType = new Map((existing ?? []).map((c) => [c.type, c]));
  const out: Condition[] = [];
  for (const d of desired) {
    const prev = byType.get(d.type);
    out.push({
      ...d,
      lastTransitionTime: prev && prev.status === d.status ? prev.lastTransitionTime : stamp,
    });
    byType.delete(d.type);
  }
  return [...out, ...byType.values()];
}

/** True when two condition lists carry the same information (order of types ignored). */
export function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[]): boolean {
  if ((a?.length ?? 0) !== b.length) return false;
  const index = new Map((a ?? []).map((c) => [c.type, c]));
  return b.every((c) => {
    const o = index.get(c.type);
    return (
      o !== undefined &&
      o.status === c.status &&
      o.reason === c.reason &&
      o.message === c.message &&
      o.lastTransitionTime === c.lastTransitionTime &&
      o.observedGeneration === c.observedGeneration
    );
  });
}
