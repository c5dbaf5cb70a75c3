// The Node Tuning side, as pure functions: observed component states of one PerformanceProfile in one NodePool ->
// its state (Available / Progressing / Degraded with NTO's reasons and messages) -> the next
// PerformanceProfileStatus, and whether writing it is a meaningful change.
// Guarantees: deterministic for the same inputs and `now`; lastTransitionTime moves only when a condition's status
// changes; a timestamp-only difference is never "meaningful" (only the heartbeat interval may ask for a write).
import { metaTime, transitionTime, truncateText } from '../../runtime/index.js';
import type { PerformanceProfileStatus, ProfileCondition, TunedProfile } from '../api/types.js';
import { STATUS_CONDITION_LIMITS } from '../status-codec.js';
import {
  DEPLOYMENT_STARTING_MESSAGE,
  NTO_REASONS,
  PROFILE_CONDITION_TYPES,
  TUNED_CONDITION_APPLIED,
  TUNED_CONDITION_DEGRADED,
  type ProfileConditionType,
} from '../constants.js';
import { runtimeClassName, tunedStatusReference } from '../names.js';

/** Something read from the hosted cluster, or the error that prevented reading it. */
export type Observed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** KubeletConfig condition (machineconfiguration.openshift.io/v1): type `Success` or `Failure`. */
export interface KubeletConfigCondition {
  readonly type: string;
  readonly status?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

/** MachineConfigPool condition; `NodeDegraded`/`RenderDegraded` True make the profile Degraded. */
export interface MachineConfigPoolCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

export interface ComponentObservation {
  /** Names of the hosted-cluster Nodes of the NodePool (label `hypershift.openshift.io/nodePool`). */
  readonly nodeNames: Observed<readonly string[]>;
  /** Tuned Profiles of the NTO namespace; only those named after a node of the NodePool are considered. */
  readonly tunedProfiles: Observed<readonly TunedProfile[]>;
  /** The profile's KubeletConfig; undefined when it does not exist (not an error, as in NTO). */
  readonly kubeletConfig?: Observed<{ readonly conditions: readonly KubeletConfigCondition[] }>;
  /** The MachineConfigPool the profile selects; undefined where there is none (HyperShift has no MCPs). */
  readonly machineConfigPool?: Observed<{
    readonly name: string;
    readonly conditions: readonly MachineConfigPoolCondition[];
  }>;
}

export type ProfileState =
  | { readonly kind: 'Available' }
  | { readonly kind: 'Progressing'; readonly reason: string; readonly message: string }
  | { readonly kind: 'Degraded'; readonly reason: string; readonly message: string };

/** A condition of a Tuned Profile's status. */
type TunedProfileCondition = NonNullable<NonNullable<TunedProfile['status']>['conditions']>[number];

/** One degraded Tuned Profile's lines of tunedProfilesMessage, as NTO writes them. */
function degradedLines(name: string, degraded: TunedProfileCondition): string[] {
  const lines: string[] = [];
  if (degraded.reason) lines.push(`Tuned ${name} Degraded Reason: ${degraded.reason}.\n`);
  if (degraded.message) lines.push(`Tuned ${name} Degraded Message: ${degraded.message}.\n`);
  return lines;
}

/** The note ending a cut tunedProfilesMessage; `omitted` profiles were left out entirely. */
function omittedNote(omitted: number): string {
  return omitted > 0 ? `... and ${omitted} more degraded Tuned Profile(s)\n` : '';
}

/**
 * NTO's text for degraded Tuned Profiles: one "Reason" and one "Message" line per profile that has them. The
 * profiles' texts come from the hosted cluster, so the message is capped at `maxLength` (default: the NodePool
 * condition limit, which the NodePool side enforces on the whole status): past it, the line in progress is cut (at
 * a code point boundary) and a note says how many more profiles were left out. Work is O(profiles + maxLength):
 * nothing past the cap is copied.
 */
export function tunedProfilesMessage(
  profiles: readonly TunedProfile[],
  maxLength: number = STATUS_CONDITION_LIMITS.maxMessageLength,
): string {
  const failing: { name: string; degraded: TunedProfileCondition }[] = [];
  let fullLength = 0;
  for (const profile of profiles) {
    const conditions = profile.status?.conditions ?? [];
    const degraded = conditions.find((c) => c.type === TUNED_CONDITION_DEGRADED && c.status === 'True');
    const notApplied = conditions.some((c) => c.type === TUNED_CONDITION_APPLIED && c.status === 'False');
    // Degraded alone is not enough: TuneD can report Degraded and Applied both True (a warning, not a failure).
    if (!degraded || !notApplied) continue;
    const name = profile.metadata.name ?? '';
    if (!degraded.reason && !degraded.message) continue;
    failing.push({ name, degraded });
    // Lengths only (template strings are not flattened until read): exact, without building the text.
    for (const line of degradedLines(name, degraded)) fullLength += line.length;
  }
  if (fullLength <= maxLength)
    return failing.map(({ name, degraded }) => degradedLines(name, degraded).join('')).join('');
  const marker = ' ... (truncated)\n';
  const room = Math.max(0, maxLength - marker.length - omittedNote(failing.length - 1).length);
  const parts: string[] = [];
  let used = 0;
  for (const [i, { name, degraded }] of failing.entries()) {
    for (const line of degradedLines(name, degraded)) {
      if (used + line.length <= room) {
        parts.push(line);
        used += line.length;
        continue;
      }
      parts.push(truncateText(line, room - used), marker, omittedNote(failing.length - i - 1));
      return parts.join('');
    }
  }
  return parts.join(''); // not reached: the text is longer than `room`
}

function latestKubeletCondition(
  conditions: readonly KubeletConfigCondition[],
): KubeletConfigCondition | undefined {
  let latest: KubeletConfigCondition | undefined;
  for (const c of conditions) {
    if (!latest || Date.parse(latest.lastTransitionTime ?? '') < Date.parse(c.lastTransitionTime ?? ''))
      latest = c;
  }
  return latest;
}

function machineConfigPoolMessage(name: string, conditions: readonly MachineConfigPoolCondition[]): string {
  let message = '';
  for (const c of conditions) {
    if ((c.type !== 'NodeDegraded' && c.type !== 'RenderDegraded') || c.status !== 'True') continue;
    if (c.reason) message += `Machine config pool ${name} Degraded Reason: ${c.reason}.\n`;
    if (c.message) message += `Machine config pool ${name} Degraded Message: ${c.message}.\n`;
  }
  return message;
}

/** Nodes whose Tuned Profile is missing or has not reported Applied=True yet, sorted. */
function pendingNodes(nodeNames: readonly string[], profiles: readonly TunedProfile[]): string[] {
  const applied = new Set(
    profiles
      .filter((p) =>
        p.status?.conditions?.some((c) => c.type === TUNED_CONDITION_APPLIED && c.status === 'True'),
      )
      .map((p) => p.metadata.name),
  );
  return nodeNames.filter((n) => !applied.has(n)).sort();
}

/**
 * The profile's state, checked in NTO's order: KubeletConfig failure, MachineConfigPool degradation, degraded Tuned
 * Profiles. Unlike NTO in HyperShift mode, only the Tuned Profiles of this NodePool's nodes count (two NodePools of
 * one hosted cluster never see each other's failures), and a node whose profile is not applied yet keeps the
 * profile Progressing (DeploymentStarting) instead of reporting Available early. A NodePool without nodes has
 * nothing to tune and is Available, as in NTO.
 */
export function assessProfileState(obs: ComponentObservation): ProfileState {
  if (obs.kubeletConfig) {
    if (!obs.kubeletConfig.ok) {
      return {
        kind: 'Degraded',
        reason: NTO_REASONS.failedGettingKubeletStatus,
        message: obs.kubeletConfig.error,
      };
    }
    const latest = latestKubeletCondition(obs.kubeletConfig.value.conditions);
    if (latest?.type === 'Failure') {
      return { kind: 'Degraded', reason: NTO_REASONS.kubeletFailed, message: latest.message ?? '' };
    }
  }
  if (obs.machineConfigPool) {
    if (!obs.machineConfigPool.ok) {
      return {
        kind: 'Degraded',
        reason: NTO_REASONS.failedGettingMCPStatus,
        message: obs.machineConfigPool.error,
      };
    }
    const message = machineConfigPoolMessage(
      obs.machineConfigPool.value.name,
      obs.machineConfigPool.value.conditions,
    );
    if (message) return { kind: 'Degraded', reason: NTO_REASONS.mcpDegraded, message };
  }
  if (!obs.tunedProfiles.ok) {
    return {
      kind: 'Degraded',
      reason: NTO_REASONS.failedGettingTunedProfileStatus,
      message: obs.tunedProfiles.error,
    };
  }
  if (!obs.nodeNames.ok) {
    return {
      kind: 'Degraded',
      reason: NTO_REASONS.failedGettingTunedProfileStatus,
      message: obs.nodeNames.error,
    };
  }
  const nodes = new Set(obs.nodeNames.value);
  const ours = obs.tunedProfiles.value.filter((p) => nodes.has(p.metadata.name ?? ''));
  const degradedMessage = tunedProfilesMessage(ours);
  if (degradedMessage)
    return { kind: 'Degraded', reason: NTO_REASONS.tunedDegraded, message: degradedMessage };
  const pending = pendingNodes(obs.nodeNames.value, ours);
  if (pending.length > 0) {
    return {
      kind: 'Progressing',
      reason: NTO_REASONS.deploymentStarting,
      message: `${DEPLOYMENT_STARTING_MESSAGE}: Tuned profile not applied yet on ${pending.length} of ${nodes.size} node(s): ${pending.slice(0, 5).join(', ')}${pending.length > 5 ? ', ...' : ''}`,
    };
  }
  return { kind: 'Available' };
}

/** The four conditions NTO sets for a state, without timestamps, in NTO's order. */
export function conditionsForState(state: ProfileState): ProfileCondition[] {
  const status = (type: ProfileConditionType): 'True' | 'False' => {
    switch (state.kind) {
      case 'Available':
        return type === 'Available' || type === 'Upgradeable' ? 'True' : 'False';
      case 'Progressing':
        return type === 'Progressing' ? 'True' : 'False';
      case 'Degraded':
        return type === 'Degraded' ? 'True' : 'False';
    }
  };
  return PROFILE_CONDITION_TYPES.map((type) => {
    const cond: ProfileCondition = { type, status: status(type) };
    if (state.kind !== 'Available' && type === state.kind) {
      cond.reason = state.reason;
      cond.message = state.message;
    }
    return cond;
  });
}

function sameCondition(a: ProfileCondition, b: ProfileCondition): boolean {
  return (
    a.status === b.status && (a.reason ?? '') === (b.reason ?? '') && (a.message ?? '') === (b.message ?? '')
  );
}

/** Latest heartbeat (or, failing that, transition) time of a status in ms since the epoch; undefined if none. */
export function statusHeartbeatMs(status: PerformanceProfileStatus): number | undefined {
  let latest: number | undefined;
  for (const c of status.conditions ?? []) {
    for (const t of [c.lastHeartbeatTime, c.lastTransitionTime]) {
      const ms = t ? Date.parse(t) : Number.NaN;
      if (!Number.isNaN(ms) && (latest === undefined || ms > latest)) latest = ms;
    }
  }
  return latest;
}

export interface NextStatusInput {
  /** The status currently stored, or undefined when there is none (or it could not be decoded). */
  readonly previous: PerformanceProfileStatus | undefined;
  readonly state: ProfileState;
  /** PerformanceProfile name (from the `tuning` manifest). */
  readonly profileName: string;
  /** NodePool name (the PP ConfigMap's nodePool label), used in the Tuned name. */
  readonly nodePoolName: string;
  /** Evaluation time, ms since the epoch. */
  readonly now: number;
  /**
   * Rewrite an unchanged status once its heartbeat is this old, so the NodePool side can tell a live writer from a
   * dead one. Milliseconds; 0 disables heartbeats (then only meaningful changes are written).
   */
  readonly heartbeatIntervalMs: number;
}

export interface NextStatus {
  readonly status: PerformanceProfileStatus;
  /** Why a write is needed: a meaningful change, only the heartbeat, or nothing. */
  readonly write: 'change' | 'heartbeat' | 'none';
}

/**
 * The status to store next. Meaningful = a condition's status, reason or message, the condition set, `tuned` or
 * `runtimeClass` differs; timestamps never count. On a write every heartbeat becomes `now`, and a condition keeps
 * its lastTransitionTime unless its status changed.
 */
export function nextProfileStatus(input: NextStatusInput): NextStatus {
  const prevConditions = input.previous?.conditions ?? [];
  const wanted = conditionsForState(input.state);
  const tuned = tunedStatusReference(input.profileName, input.nodePoolName);
  const runtimeClass = runtimeClassName(input.profileName);
  const meaningful =
    wanted.length !== prevConditions.length ||
    wanted.some((w) => {
      const old = prevConditions.find((p) => p.type === w.type);
      return !old || !sameCondition(old, w);
    }) ||
    input.previous?.tuned !== tuned ||
    input.previous.runtimeClass !== runtimeClass;
  const heartbeat = input.previous ? statusHeartbeatMs(input.previous) : undefined;
  const heartbeatDue =
    input.heartbeatIntervalMs > 0 &&
    (heartbeat === undefined || input.now - heartbeat >= input.heartbeatIntervalMs);
  const write = meaningful ? 'change' : heartbeatDue ? 'heartbeat' : 'none';
  if (write === 'none' && input.previous) return { status: input.previous, write };
  const now = metaTime(input.now);
  const conditions = wanted.map((w): ProfileCondition => {
    const old = prevConditions.find((p) => p.type === w.type);
    return { ...w, lastHeartbeatTime: now, lastTransitionTime: transitionTime(old, w.status, now) };
  });
  return { status: { conditions, tuned, runtimeClass }, write };
}

/** Milliseconds until the next heartbeat write is due, or undefined when heartbeats are off. */
export function nextHeartbeatInMs(
  status: PerformanceProfileStatus,
  now: number,
  intervalMs: number,
): number | undefined {
  if (intervalMs <= 0) return undefined;
  const heartbeat = statusHeartbeatMs(status);
  if (heartbeat === undefined) return 0;
  return Math.max(0, heartbeat + intervalMs - now);
}
