// Node and MachineConfigPool assessment (oc's rules): each node's phase from its machine-config annotations (and
// its MachineConfigNode's drain report, when that is in step with them) and the release version of its
// current/desired MachineConfig, its assessment (degraded and unavailable override progress), the node insights,
// and the pool roll-up (counts, assessment, completion, paused-pool insight).
// Pure: `now` is passed in. Nodes come back in oc's display order.
import {
  InvalidLabelSelectorError,
  type LabelMatcher,
  type LabelSelector,
  labelSelectorMatcher,
} from '../runtime/light.js';
import { InvalidSelectorError } from './errors.js';
import { type Instant, GO_ZERO_TIME } from './gotime.js';
import { goSortSlice } from './gofmt.js';
import type {
  ClusterVersion,
  MachineConfig,
  MachineConfigNode,
  MachineConfigPool,
  Node,
  UpdateHistory,
} from './inputs.js';
import { ImpactLevel, MACHINECONFIG_GROUP, type ScopeType, type UpdateInsight } from './insight.js';
import {
  Annotations,
  DaemonState,
  isMachineConfigNodeDraining,
  isSeriouslyUnavailable,
  machineConfigNodeInStep,
  nodeAvailability,
  unavailableDescription,
  unavailableMessage,
  unavailableReason,
  unavailableSince,
} from './nodestate.js';

/** Ordered as oc sorts them: earlier phases first. */
export const NodePhase = {
  Draining: 0,
  Updating: 1,
  Rebooting: 2,
  Paused: 3,
  Pending: 4,
  Updated: 5,
} as const;
export type NodePhase = (typeof NodePhase)[keyof typeof NodePhase];
const PHASE_NAMES = ['Draining', 'Updating', 'Rebooting', 'Paused', 'Pending', 'Updated'] as const;
export function nodePhaseName(p: NodePhase): (typeof PHASE_NAMES)[number] {
  return PHASE_NAMES[p];
}

/** Ordered as oc sorts them: the most troubled first. */
export const NodeAssessment = {
  Degraded: 0,
  Unavailable: 1,
  Progressing: 2,
  Excluded: 3,
  Outdated: 4,
  Completed: 5,
} as const;
export type NodeAssessment = (typeof NodeAssessment)[keyof typeof NodeAssessment];
const ASSESSMENT_NAMES = [
  'Degraded',
  'Unavailable',
  'Progressing',
  'Excluded',
  'Outdated',
  'Completed',
] as const;
export function nodeAssessmentName(a: NodeAssessment): (typeof ASSESSMENT_NAMES)[number] {
  return ASSESSMENT_NAMES[a];
}

export interface NodeStatus {
  readonly name: string;
  readonly assessment: NodeAssessment;
  readonly phase: NodePhase;
  /** OpenShift version of the node's current MachineConfig; "" when unknown. */
  readonly version: string;
  /** "-", "?", "+5m" or "+10m". */
  readonly estimate: string;
  /** Why the node is unavailable or degraded, the node's own name replaced by "<node>". */
  readonly message: string;
  readonly isUnavailable: boolean;
  readonly isDegraded: boolean;
  readonly isUpdating: boolean;
  readonly isUpdated: boolean;
}

export type PoolAssessment = 'Completed' | 'Pending' | 'Degraded' | 'Excluded' | 'Progressing';

export interface NodesOverview {
  readonly total: number;
  readonly available: number;
  readonly progressing: number;
  readonly outdated: number;
  readonly draining: number;
  readonly excluded: number;
  readonly degraded: number;
}

export interface PoolStatus {
  readonly name: string;
  readonly assessment: PoolAssessment;
  /** Percentage of nodes updated (0..100, unrounded; NaN for an empty pool). */
  readonly completion: number;
  readonly overview: NodesOverview;
  readonly nodes: readonly NodeStatus[];
  /**
   * Nodes counted in `overview` but not in `nodes` (a stored UpdateStatus lists only the most troubled nodes of
   * each pool); rendered as part of the "Omitted additional" line. Undefined when every node is listed.
   */
  readonly unlisted?: {
    readonly total: number;
    readonly completed: number;
    readonly available: number;
    readonly progressing: number;
    readonly outdated: number;
    readonly draining: number;
    readonly excluded: number;
  };
}

const MCO_DOC =
  'https://docs.openshift.com/container-platform/latest/post_installation_configuration/machine-configuration-tasks.html#understanding-the-machine-config-operator';
const PAUSED_POOL_DOC =
  'https://docs.openshift.com/container-platform/latest/support/troubleshooting/troubleshooting-operator-issues.html#troubleshooting-disabling-autoreboot-mco_troubleshooting-operator-issues';

/** Release version of each MachineConfig by name, from its release-image-version annotation. */
export type MachineConfigVersions = ReadonlyMap<string, string>;

export function machineConfigVersions(machineConfigs: readonly MachineConfig[]): MachineConfigVersions {
  const versions = new Map<string, string>();
  for (const mc of machineConfigs) {
    const name = mc.metadata?.name ?? '';
    // The first MachineConfig of a name wins, as in oc's linear search.
    if (!versions.has(name))
      versions.set(name, mc.metadata?.annotations?.[Annotations.releaseImageVersion] ?? '');
  }
  return versions;
}

function versionOf(versions: MachineConfigVersions, name: string | undefined): [string, boolean] {
  const v = versions.get(name ?? '') ?? '';
  return [v, v !== ''];
}

function isLatestHistoryVersion(history: readonly UpdateHistory[] | undefined, version: string): boolean {
  const current = history?.[0];
  return current !== undefined && (current.version ?? '') === version;
}

/**
 * Drain requested and not yet applied, or an update not yet picked up by a daemon still reporting Done. With a
 * MachineConfigNode in step with the annotations (machineConfigNodeInStep), the drain controller's own report on
 * it says whether the drain is under way, in place of comparing the requested and the applied drain; the rest of
 * oc's rule stays (only a node whose drain annotations are both set can be draining).
 */
export function isNodeDraining(
  node: Node,
  isUpdating: boolean,
  machineConfigNode?: MachineConfigNode,
): boolean {
  const desiredDrain = node.metadata?.annotations?.[Annotations.desiredDrain] ?? '';
  const appliedDrain = node.metadata?.annotations?.[Annotations.lastAppliedDrain] ?? '';
  if (appliedDrain === '' || desiredDrain === '') return false;
  const drainUnderWay = machineConfigNode
    ? isMachineConfigNodeDraining(machineConfigNode)
    : desiredDrain !== appliedDrain && desiredDrain.split('-')[0] === 'drain';
  if (drainUnderWay) return true;
  return isUpdating && node.metadata?.annotations?.[Annotations.state] === DaemonState.done;
}

export function isNodeDegraded(node: Node): boolean {
  const annotations = node.metadata?.annotations;
  if (!annotations?.[Annotations.desiredConfig]) return false;
  const state = annotations[Annotations.state];
  return state === DaemonState.degraded || state === DaemonState.unreconcilable;
}

// The daemon's state comes from its annotation even with a MachineConfigNode in step: the MCO never writes
// state=Rebooting (its reboot is post-config-action=Rebooting, with RebootedNode Unknown on the MachineConfigNode),
// so oc shows a rebooting node as Updating, and so does this; a daemon that does report Rebooting keeps it.
function phaseOf(
  pool: MachineConfigPool,
  node: Node,
  machineConfigNode: MachineConfigNode | undefined,
  isUpdating: boolean,
  isUpdated: boolean,
): NodePhase {
  if (isUpdating && isNodeDraining(node, isUpdating, machineConfigNode)) return NodePhase.Draining;
  if (isUpdating) {
    switch (node.metadata?.annotations?.[Annotations.state]) {
      case DaemonState.rebooting:
        return NodePhase.Rebooting;
      case DaemonState.done:
        return NodePhase.Updated;
      case undefined: // no state reported yet
      default:
        return NodePhase.Updating;
    }
  }
  if (isUpdated) return NodePhase.Updated;
  if (pool.spec?.paused === true) return NodePhase.Paused;
  return NodePhase.Pending;
}

function nodeInsights(
  pool: MachineConfigPool,
  nodeName: string,
  summary: string,
  description: string,
  seriouslyUnavailable: boolean,
  isUpdating: boolean,
  isDegraded: boolean,
  since: Instant,
): UpdateInsight[] {
  const scopeType: ScopeType = pool.metadata?.name === 'master' ? 'ControlPlane' : 'WorkerPool';
  const resources = [{ group: '', kind: 'Node', name: nodeName }];
  const insights: UpdateInsight[] = [];
  if (seriouslyUnavailable && !isUpdating) {
    insights.push({
      startedAt: since,
      scope: { type: scopeType, resources },
      impact: { level: ImpactLevel.Warning, type: 'Update Speed', summary, description },
      remediation: { reference: MCO_DOC },
    });
  }
  if (isDegraded) {
    insights.push({
      startedAt: GO_ZERO_TIME,
      scope: { type: scopeType, resources },
      impact: {
        level: ImpactLevel.Error,
        type: 'Update Stalled',
        summary: `Node ${nodeName} is degraded`,
        description,
      },
      remediation: { reference: MCO_DOC },
    });
  }
  return insights;
}

/**
 * oc's `ellipsizeNames`: names of 8 bytes or more are replaced by "<node>" in the message. Go's `len` counts
 * UTF-8 bytes ("nöde-01" is 8), not UTF-16 units; `strings.Replace` on valid UTF-8 matches what split/join does.
 */
export function replaceNodeName(message: string, name: string): string {
  return utf8.encode(name).length < 8 ? message : message.split(name).join('<node>');
}

/** TextEncoder rather than Node's Buffer: the dashboard's console plugin runs this assessment in the browser. */
const utf8 = new TextEncoder();

/**
 * Assesses the nodes of one pool. `multiArchMigrationInProgress`: same version, new (multi-arch) payload.
 * `unavailableAgeReference`: the instant against which the age of a node's unavailability is judged (see
 * AssessOptions.unavailableAgeReference). `machineConfigNodes`: by node name (none: annotations only).
 */
export function assessNodes(
  cv: ClusterVersion,
  pool: MachineConfigPool,
  nodes: readonly Node[],
  versions: MachineConfigVersions,
  multiArchMigrationInProgress: boolean,
  unavailableAgeReference: Instant,
  machineConfigNodes: ReadonlyMap<string, MachineConfigNode> = new Map(),
): { nodes: NodeStatus[]; insights: UpdateInsight[] } {
  const history = cv.status?.history;
  const poolConfig = pool.spec?.configuration?.name ?? '';
  const statuses: NodeStatus[] = [];
  const insights: UpdateInsight[] = [];
  for (const node of nodes) {
    const name = node.metadata?.name ?? '';
    const annotations = node.metadata?.annotations ?? {};
    const desiredConfig = annotations[Annotations.desiredConfig];
    const hasDesired = desiredConfig !== undefined;
    const currentConfig = annotations[Annotations.currentConfig] ?? '';
    const [currentVersion, foundCurrent] = versionOf(versions, currentConfig);
    const [desiredVersion, foundDesired] = versionOf(versions, desiredConfig ?? '');

    const availability = nodeAvailability(node, pool);
    const isUnavailable = availability.unavailable;
    const isDegraded = isNodeDegraded(node);
    const annotationMatched = currentConfig === (desiredConfig ?? '');
    const desiredIsPoolConfig = (desiredConfig ?? '') === poolConfig;
    // During a multi-arch migration the version number does not change, so the configs must have converged.
    const isUpdated =
      foundCurrent &&
      isLatestHistoryVersion(history, currentVersion) &&
      (!multiArchMigrationInProgress || !hasDesired || (annotationMatched && desiredIsPoolConfig));
    // Only nodes whose versions are known may be called updating, so a node never blips into "Updating".
    const isUpdating =
      !isUpdated &&
      foundCurrent &&
      foundDesired &&
      isLatestHistoryVersion(history, desiredVersion) &&
      !annotationMatched &&
      desiredIsPoolConfig;

    const phase = phaseOf(
      pool,
      node,
      machineConfigNodeInStep(node, machineConfigNodes.get(name)),
      isUpdating,
      isUpdated,
    );
    let assessment: NodeAssessment;
    let estimate: string;
    switch (phase) {
      case NodePhase.Paused:
        [assessment, estimate] = [NodeAssessment.Excluded, '-'];
        break;
      case NodePhase.Pending:
        [assessment, estimate] = [NodeAssessment.Outdated, '?'];
        break;
      case NodePhase.Draining:
        [assessment, estimate] = [NodeAssessment.Progressing, '+10m'];
        break;
      case NodePhase.Updating:
      case NodePhase.Rebooting:
        [assessment, estimate] = [NodeAssessment.Progressing, '+5m'];
        break;
      case NodePhase.Updated:
        [assessment, estimate] = [NodeAssessment.Completed, '-'];
        break;
    }

    let message = '';
    let summary = '';
    let description = '';
    if (isUnavailable && !isUpdating) {
      assessment = NodeAssessment.Unavailable;
      message = unavailableReason(availability);
      summary = unavailableMessage(availability, name);
      description = unavailableDescription(availability);
      estimate = isUpdated ? '-' : '?';
    }
    if (isDegraded) {
      assessment = NodeAssessment.Degraded;
      message = annotations[Annotations.reason] ?? '';
      description = message;
      estimate = isUpdated ? '-' : '?';
    }

    insights.push(
      ...nodeInsights(
        pool,
        name,
        summary,
        description,
        isSeriouslyUnavailable(availability, unavailableAgeReference),
        isUpdating,
        isDegraded,
        unavailableSince(availability),
      ),
    );
    statuses.push({
      name,
      assessment,
      phase,
      version: currentVersion,
      estimate,
      message: replaceNodeName(message, name),
      isUnavailable,
      isDegraded,
      isUpdating,
      isUpdated,
    });
  }

  sortNodesForDisplay(statuses);
  return { nodes: statuses, insights };
}

/** oc's node order: most troubled assessment first, then earlier phase, then name. */
export function sortNodesForDisplay(nodes: NodeStatus[]): void {
  goSortSlice(nodes, (a, b) => {
    if (a.assessment !== b.assessment) return a.assessment < b.assessment;
    if (a.phase !== b.phase) return a.phase < b.phase;
    return a.name < b.name;
  });
}

/**
 * Nodes by category, the one count behind every node summary: the pool roll-up (assessPool), the "Omitted
 * additional ..." line (render.ts), and the nodes a stored UpdateStatus lists (api/read.ts).
 */
export interface NodeCounts {
  readonly total: number;
  /** Not unavailable. */
  readonly available: number;
  readonly degraded: number;
  /** Assessed Progressing: draining, updating or rebooting, and not degraded. */
  readonly progressing: number;
  /** Phase Draining. */
  readonly draining: number;
  /** Phase Paused (a paused pool's outdated nodes). */
  readonly excluded: number;
  /** Phase Pending. */
  readonly pending: number;
  /** At the cluster's latest version (`isUpdated`): the summary line's "Completed". */
  readonly completed: number;
  /**
   * Phase Updated: the pool roll-up's notion of done. Also counts a node whose daemon reports Done while its
   * update is still being confirmed (`isUpdating`), which `completed` does not, as in oc.
   */
  readonly updatedPhase: number;
}

export function countNodes(nodes: Iterable<NodeStatus>): NodeCounts {
  const c = {
    total: 0,
    available: 0,
    degraded: 0,
    progressing: 0,
    draining: 0,
    excluded: 0,
    pending: 0,
    completed: 0,
    updatedPhase: 0,
  };
  for (const node of nodes) {
    c.total++;
    if (!node.isUnavailable) c.available++;
    if (node.isDegraded) c.degraded++;
    if (node.isUpdated) c.completed++;
    if (node.assessment === NodeAssessment.Progressing) c.progressing++;
    if (node.phase === NodePhase.Draining) c.draining++;
    else if (node.phase === NodePhase.Paused) c.excluded++;
    else if (node.phase === NodePhase.Pending) c.pending++;
    else if (node.phase === NodePhase.Updated) c.updatedPhase++;
  }
  return c;
}

/** Rolls the nodes of a pool up into counts, an assessment and a completion. */
export function assessPool(
  pool: MachineConfigPool,
  nodes: readonly NodeStatus[],
): { status: PoolStatus; insights: UpdateInsight[] } {
  const counts = countNodes(nodes);
  const { available, degraded, excluded, draining, progressing, pending } = counts;
  const updated = counts.updatedPhase;
  // Every phase but Updated is outdated (paused and pending nodes included).
  const outdated = counts.total - updated;
  let assessment: PoolAssessment;
  if (updated === nodes.length) assessment = 'Completed';
  else if (pending === nodes.length) assessment = 'Pending';
  else if (degraded > 0) assessment = 'Degraded';
  else if (excluded > 0) assessment = 'Excluded';
  else assessment = 'Progressing';

  const name = pool.metadata?.name ?? '';
  const insights: UpdateInsight[] = [];
  if (excluded > 0 && pool.spec?.paused === true) {
    insights.push({
      startedAt: GO_ZERO_TIME,
      scope: {
        type: 'WorkerPool',
        resources: [{ group: MACHINECONFIG_GROUP, kind: 'MachineConfigPool', name }],
      },
      impact: {
        level: ImpactLevel.Warning,
        type: 'Update Stalled',
        summary: `Outdated nodes in a paused pool '${name}' will not be updated`,
        description:
          'Pool is paused, which stops all changes to the nodes in the pool, including updates. The nodes will not be updated until the pool is unpaused by the administrator.',
      },
      remediation: { reference: PAUSED_POOL_DOC },
    });
  }
  return {
    status: {
      name,
      assessment,
      completion: (updated / nodes.length) * 100,
      overview: { total: nodes.length, available, progressing, outdated, draining, excluded, degraded },
      nodes,
    },
    insights,
  };
}

/**
 * oc's `metav1.LabelSelectorAsSelector` of a pool's nodeSelector: a null selector matches no node, an empty one
 * every node; an invalid one fails the assessment naming the pool.
 */
function poolSelectorMatcher(selector: LabelSelector | null | undefined, pool: string): LabelMatcher {
  if (selector === null || selector === undefined) return () => false;
  try {
    return labelSelectorMatcher(selector);
  } catch (err) {
    if (err instanceof InvalidLabelSelectorError) throw new InvalidSelectorError(pool, err.message);
    throw err;
  }
}

/**
 * Assigns nodes to pools as oc does: master first, then custom pools (in pool order), then worker; a node in
 * none of them is left out. Returns node lists keyed by pool name.
 */
export function nodesByPool(
  pools: readonly MachineConfigPool[],
  nodes: readonly Node[],
): Map<string, Node[]> {
  let master: LabelMatcher | undefined;
  let worker: LabelMatcher | undefined;
  const custom: [string, LabelMatcher][] = [];
  for (const pool of pools) {
    const name = pool.metadata?.name ?? '';
    const matcher = poolSelectorMatcher(pool.spec?.nodeSelector, name);
    if (name === 'master') master = matcher;
    else if (name === 'worker') worker = matcher;
    else custom.push([name, matcher]);
  }
  const byPool = new Map<string, Node[]>();
  for (const node of nodes) {
    const labels = node.metadata?.labels;
    let pool = '';
    // Two places where oc is not deterministic or crashes, and we pick one behaviour: oc ranges over a Go map of
    // custom pools, so a node matching several gets any of them from run to run (we take the first in
    // MachineConfigPool order); and oc calls Matches on a nil selector, panicking, when the `master` or `worker`
    // pool is missing (we treat the missing pool as matching no node).
    if (master?.(labels)) pool = 'master';
    else pool = custom.find(([, m]) => m(labels))?.[0] ?? (worker?.(labels) ? 'worker' : '');
    const list = byPool.get(pool);
    if (list) list.push(node);
    else byPool.set(pool, [node]);
  }
  return byPool;
}
