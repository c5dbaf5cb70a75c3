// Node availability as the machine-config operator judges it (MCO's layered node state, as oc embeds it):
// a node is unavailable when it is not ready, under disk or network pressure, unschedulable, or its daemon is
// still working towards the desired config. Each reason keeps its condition's message and transition time.
// Pure: seriousness of a reason depends on how long it has lasted, measured against the `now` passed in.
// Also what a node's MachineConfigNode says about its update (the drain), and when it can be believed.
import { type Instant, GO_ZERO_TIME, MINUTE, isZeroTime, sub } from './gotime.js';
import { goQuote } from './gofmt.js';
import type { MachineConfigNode, MachineConfigPool, Node } from './inputs.js';
import { findCondition, timeOf } from './controlplane.js';

export const Annotations = {
  currentConfig: 'machineconfiguration.openshift.io/currentConfig',
  desiredConfig: 'machineconfiguration.openshift.io/desiredConfig',
  currentImage: 'machineconfiguration.openshift.io/currentImage',
  desiredImage: 'machineconfiguration.openshift.io/desiredImage',
  state: 'machineconfiguration.openshift.io/state',
  reason: 'machineconfiguration.openshift.io/reason',
  desiredDrain: 'machineconfiguration.openshift.io/desiredDrain',
  lastAppliedDrain: 'machineconfiguration.openshift.io/lastAppliedDrain',
  releaseImageVersion: 'machineconfiguration.openshift.io/release-image-version',
  newestImageEquivalentConfig: 'machineconfiguration.openshift.io/newestImageEquivalentConfig',
} as const;

export const LAYERING_ENABLED_POOL_LABEL = 'machineconfiguration.openshift.io/layering-enabled';

export const DaemonState = {
  working: 'Working',
  done: 'Done',
  degraded: 'Degraded',
  rebooting: 'Rebooting',
  unreconcilable: 'Unreconcilable',
} as const;

const REASON_MCD_WORKING = 'Machine Config Daemon is processing the node';
const REASON_UNSCHEDULABLE = 'Node is marked unschedulable';
const REASON_NOT_READY = 'Not ready';
const REASON_DISK_PRESSURE = 'Disk pressure';
const REASON_NETWORK_UNAVAILABLE = 'Network unavailable';

interface UnavailabilityReason {
  readonly reason: string;
  readonly message: string;
  /** `GO_ZERO_TIME` for reasons that are not conditions. */
  readonly since: Instant;
}

/** Why a node is unavailable, in the order the reasons were found. Empty when available. */
export interface NodeAvailability {
  readonly unavailable: boolean;
  readonly reasons: readonly UnavailabilityReason[];
}

function annotation(node: Node, key: string): string | undefined {
  return node.metadata?.annotations?.[key];
}

function isDaemonState(node: Node, state: string): boolean {
  const value = annotation(node, Annotations.state);
  return value !== undefined && value !== '' && value === state;
}

/** The MCD finished: current == desired config, image annotations (if any) agree, and state is Done. */
function isNodeDone(node: Node): boolean {
  if (node.metadata?.annotations === undefined) return false;
  const current = annotation(node, Annotations.currentConfig) ?? '';
  const desired = annotation(node, Annotations.desiredConfig) ?? '';
  if (current === '' || desired === '' || current !== desired) return false;
  const desiredImage = annotation(node, Annotations.desiredImage);
  const currentImage = annotation(node, Annotations.currentImage);
  if (desiredImage !== undefined || currentImage !== undefined) {
    if (!desiredImage || !currentImage || desiredImage !== currentImage) return false;
  }
  return isDaemonState(node, DaemonState.done);
}

function readinessProblems(node: Node): UnavailabilityReason[] {
  const reasons: UnavailabilityReason[] = [];
  for (const c of node.status?.conditions ?? []) {
    let reason: string | undefined;
    if (c.type === 'Ready' && c.status !== 'True') reason = REASON_NOT_READY;
    else if (c.type === 'DiskPressure' && c.status !== 'False') reason = REASON_DISK_PRESSURE;
    else if (c.type === 'NetworkUnavailable' && c.status !== 'False') reason = REASON_NETWORK_UNAVAILABLE;
    // Only bad conditions are kept (and their times parsed): most nodes have none.
    if (reason !== undefined)
      reasons.push({ reason, message: c.message ?? '', since: timeOf(c.lastTransitionTime) });
  }
  if (node.spec?.unschedulable === true) {
    reasons.push({ reason: REASON_UNSCHEDULABLE, message: '', since: GO_ZERO_TIME });
  }
  return reasons;
}

/** Whether the node's desired image matches what the pool expects (layered pools only carry images). */
function desiredImageMatchesPool(
  node: Node,
  pool: MachineConfigPool,
  reasons: UnavailabilityReason[],
): boolean {
  const value = annotation(node, Annotations.desiredImage);
  const layered = pool.metadata?.labels?.[LAYERING_ENABLED_POOL_LABEL] !== undefined;
  const osImage = pool.metadata?.annotations?.[Annotations.newestImageEquivalentConfig] ?? '';
  if (layered && osImage !== '') {
    if (osImage === value) return true;
    reasons.push({
      reason: `Node has an unexpected annotation ${Annotations.newestImageEquivalentConfig}=${osImage}`,
      message: '',
      since: GO_ZERO_TIME,
    });
    return false;
  }
  return value === undefined || value === '';
}

/** MCO's "unavailable for the pool" judgement with the reasons behind it. */
export function nodeAvailability(node: Node, pool: MachineConfigPool): NodeAvailability {
  const reasons = readinessProblems(node);
  let unavailable: boolean;
  if (reasons.length > 0) {
    unavailable = true;
  } else if (isNodeDone(node)) {
    unavailable = false;
  } else if (isDaemonState(node, DaemonState.degraded) || isDaemonState(node, DaemonState.unreconcilable)) {
    // A failed daemon can be retargeted at once, so the node does not hold back the pool.
    unavailable = false;
  } else {
    reasons.push({ reason: REASON_MCD_WORKING, message: '', since: GO_ZERO_TIME });
    unavailable = true;
  }
  if (unavailable) unavailable = desiredImageMatchesPool(node, pool, reasons);
  return { unavailable, reasons };
}

/** Earliest known start among the reasons; `GO_ZERO_TIME` when none is known. */
export function unavailableSince(a: NodeAvailability): Instant {
  let earliest = GO_ZERO_TIME;
  for (const r of a.reasons) {
    if (isZeroTime(r.since)) continue;
    if (isZeroTime(earliest) || r.since < earliest) earliest = r.since;
  }
  return earliest;
}

/** Short reasons joined with " | " (the node table's MESSAGE). */
export function unavailableReason(a: NodeAvailability): string {
  return a.reasons.map((r) => r.reason).join(' | ');
}

/** One-line summaries naming the node (the health insight's summary). */
export function unavailableMessage(a: NodeAvailability, nodeName: string): string {
  return a.reasons
    .map((r) => {
      if (r.reason === REASON_NOT_READY) return `Node ${nodeName} is not ready`;
      if (r.reason === REASON_DISK_PRESSURE) return `Node ${nodeName} has disk pressure`;
      if (r.reason === REASON_NETWORK_UNAVAILABLE) return `Node ${nodeName} has unavailable network`;
      return r.reason;
    })
    .join(' | ');
}

/** Descriptions quoting the offending condition (the health insight's description). */
export function unavailableDescription(a: NodeAvailability): string {
  const describe = (type: string, expected: string, r: UnavailabilityReason) =>
    `Node has a ${type}!=${expected} condition with Reason ${goQuote(r.reason)} and message ${goQuote(r.message)}`;
  return a.reasons
    .map((r) => {
      if (r.reason === REASON_NOT_READY) return describe('Ready', 'True', r);
      if (r.reason === REASON_DISK_PRESSURE) return describe('DiskPressure', 'False', r);
      if (r.reason === REASON_NETWORK_UNAVAILABLE) return describe('NetworkUnavailable', 'False', r);
      return r.reason;
    })
    .join(' | ');
}

/**
 * Whether the unavailability needs an administrator: not for an unschedulable node or a working daemon, nor for
 * short NotReady (< 5m), disk pressure (< 1m) or network (< 1m) blips.
 */
export function isSeriouslyUnavailable(a: NodeAvailability, now: Instant): boolean {
  return a.reasons.some((r) => {
    if (r.reason === REASON_UNSCHEDULABLE || r.reason === REASON_MCD_WORKING) return false;
    const lasted = sub(now, r.since);
    if (r.reason === REASON_NOT_READY && lasted < 5n * MINUTE) return false;
    if (r.reason === REASON_DISK_PRESSURE && lasted < MINUTE) return false;
    if (r.reason === REASON_NETWORK_UNAVAILABLE && lasted < MINUTE) return false;
    return true;
  });
}

/** The MachineConfigNode condition types read here (openshift/api machineconfiguration/v1 StateProgress). */
export const MachineConfigNodeCondition = {
  cordoned: 'Cordoned',
  drained: 'Drained',
} as const;

/**
 * The node's MachineConfigNode when it reports the update the node's annotations describe, else undefined (the
 * annotations alone then decide, as oc's do). The MCO writes the annotations first and copies them into the
 * MachineConfigNode afterwards, so one that disagrees with them is behind, and its conditions are about an
 * earlier step: `spec.configVersion.desired` must be the desiredConfig annotation, `status.configVersion.current`
 * the currentConfig one, and `status.configVersion.desired` the desiredConfig one too (the daemon sets it when it
 * takes the update up and resets the conditions; until then they describe the previous update).
 */
export function machineConfigNodeInStep(
  node: Node,
  mcn: MachineConfigNode | undefined,
): MachineConfigNode | undefined {
  if (mcn === undefined) return undefined;
  const desired = annotation(node, Annotations.desiredConfig) ?? '';
  const current = annotation(node, Annotations.currentConfig) ?? '';
  if (desired === '' || current === '') return undefined;
  const status = mcn.status?.configVersion;
  const inStep =
    mcn.spec?.configVersion?.desired === desired && status?.desired === desired && status.current === current;
  return inStep ? mcn : undefined;
}

/**
 * Whether the MCO's cordon and drain of the node has begun and not finished, as its drain controller reports it
 * on the MachineConfigNode: `Drained` Unknown (draining, or a failed drain being retried), or the node cordoned
 * (or its cordon failing) and not yet drained. A drain that is not needed leaves `Drained` False.
 */
export function isMachineConfigNodeDraining(mcn: MachineConfigNode): boolean {
  const conditions = mcn.status?.conditions;
  const drained = findCondition(conditions, MachineConfigNodeCondition.drained)?.status;
  if (drained === 'Unknown') return true;
  if (drained === 'True') return false;
  const cordoned = findCondition(conditions, MachineConfigNodeCondition.cordoned)?.status;
  return cordoned === 'True' || cordoned === 'Unknown';
}

/**
 * `mcn` with only what machineConfigNodeInStep and isMachineConfigNodeDraining read (its config versions, and the
 * type and status of the conditions they look at): an informer caches this, not the conditions' messages.
 */
export function machineConfigNodeFieldsRead<T extends MachineConfigNode>(mcn: T): T {
  const read = new Set<string | undefined>(Object.values(MachineConfigNodeCondition));
  const version = mcn.status?.configVersion;
  return {
    ...mcn,
    spec: { configVersion: { desired: mcn.spec?.configVersion?.desired } },
    status: {
      configVersion: version ? { current: version.current, desired: version.desired } : version,
      conditions: (mcn.status?.conditions ?? [])
        .filter((c) => read.has(c.type))
        .map((c) => ({ type: c.type, status: c.status })),
    },
  };
}

/** Every condition the machine-config operator creates on a MachineConfigNode (created False, "NotYetOccurred"). */
export const MCN_CONDITION_TYPES = [
  'UpdatePrepared',
  'UpdateExecuted',
  'UpdatePostActionComplete',
  'UpdateComplete',
  'Resumed',
  'Drained',
  'AppliedFilesAndOS',
  'Cordoned',
  'RebootedNode',
  'Updated',
  'Uncordoned',
  'NodeDegraded',
  'PinnedImageSetsProgressing',
  'PinnedImageSetsDegraded',
] as const;
