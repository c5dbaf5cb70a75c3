// NodePools as an informer of the UpdateStatus API (README "Update status informers", informer `nodepools`). On a
// HyperShift management cluster, each NodePool with something to say gets a worker pool of the UpdateStatus (its
// name, resource hypershift.openshift.io/nodepools) holding Health insights, which `tessera upgrade status` prints
// under `= Update Health =`:
// - its update state, from HyperShift's UpdatingVersion and UpdatingConfig conditions and status.version: Info
//   while it rolls out a release or a configuration, Error when HyperShift reports the rollout failed;
// - its PerformanceProfile state, from PerformanceProfileAppliedSuccessfully and the mirrored
//   performance.operator.openshift.io/<Type> conditions this controller writes: Error when degraded, Info while
//   being applied (Warning past PROFILE_SLOW_MS), Warning when unknown (not reported, stale, refused).
// Why Health insights: the API's worker-pool progress insights (MachineConfigPool, Node) must name
// MachineConfigPools, so a NodePool's progress has no other place in the wire contract. A NodePool at rest with its
// profile applied has nothing to report and gets no pool.
// Budgets: the API holds at most 32 worker pools in all informers together, so this informer takes at most what
// the others leave (minus SPARE_POOLS, for a pool another informer adds before this one looks again), the most
// severe NodePools first; the rest are counted and named (at most 16) by one control-plane insight. A pool's name
// is its NodePool's name, so a NodePool whose name a MachineConfigPool, another informer's pool or a NodePool of
// another namespace already has is left out the same way: two writers never share a pool. Every text taken from
// a NodePool is cut before it is joined (NodePool names and condition messages are written by tenants and by
// HyperShift): a pool's insights stay under 8 KiB, the whole contribution well under the contract's 512 KiB.
// NodePools are compared in Sets and arrays, never as object keys.
import { readmeSectionUrl, truncateText, type KubeObject, type Manager } from '../../runtime/index.js';
import {
  type ControlPlaneInsight,
  INFORMER_BUDGETS,
  type InformerContribution,
  type InsightEntry,
  InsightPublisher,
  type ResourceRef,
  type UpdateStatusStatus,
  type WorkerPoolInsight,
  hashedUid,
  heartbeatTimeOf,
} from '../../updatestatus/informer.js';
import type { NodePool, NodePoolCondition } from '../api/types.js';
import {
  APPLIED_SUCCESSFULLY_CONDITION,
  HYPERSHIFT_GROUP,
  NODEPOOL_CONDITION_PREFIX,
  NODEPOOL_PLURAL,
} from '../constants.js';
import { MachineConfigPools, NodePools } from '../resources.js';

/** The informer's name in the UpdateStatus (reserved for Tessera). */
export const NODEPOOL_INFORMER = 'nodepools';
/** HyperShift's NodePool condition types and the reason of a rollout that goes as expected. */
export const UPDATING_VERSION_CONDITION = 'UpdatingVersion';
export const UPDATING_CONFIG_CONDITION = 'UpdatingConfig';
const AS_EXPECTED = 'AsExpected';
/** The MachineConfigPool of control-plane nodes: the node informer reports it under the control plane. */
const MASTER_POOL = 'master';
/** Pools left free for other informers' new pools between two looks of this one. */
export const SPARE_POOLS = 4;
/** A profile still being applied after this long is a Warning: tuning usually settles within minutes (ms). */
export const PROFILE_SLOW_MS = 30 * 60_000;
/** NodePools named by the "not shown" insight (the API's limit of resources in a scope). */
export const MAX_NAMED_LEFT_OUT = 16;
const MAX_MESSAGE_CHARS = 300;
const MAX_DESCRIPTION_CHARS = 1024;
const MAX_SUMMARY_CHARS = 256;
/** Where the remediation points (README section on NodePools in the update status). */
export const NODEPOOL_INSIGHTS_REFERENCE = readmeSectionUrl('nodepools-in-the-update-status');

type Level = 'Info' | 'Warning' | 'Error';
type ImpactType = NonNullable<WorkerPoolInsight['health']>['impact']['type'];
const RANK: Record<Level, number> = { Info: 1, Warning: 2, Error: 3 };

/** One thing to say about a NodePool: a Health insight of its pool. */
interface Finding {
  readonly uid: string;
  readonly level: Level;
  readonly type: ImpactType;
  readonly summary: string;
  readonly description: string;
  readonly startedAtMs: number | undefined;
}

/** One line of at most `max` characters; the work is bounded by `max`, whatever the length of `text`. */
const cut = (text: string | undefined, max = MAX_MESSAGE_CHARS) =>
  truncateText(
    truncateText(text ?? '', 2 * max)
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .join(' '),
    max,
    '…',
  );
const conditionOf = (np: NodePool, type: string): NodePoolCondition | undefined =>
  np.status?.conditions?.find((c) => c.type === type);
const timeOf = (c: NodePoolCondition | undefined): number | undefined => {
  const ms = Date.parse(c?.lastTransitionTime ?? '');
  return Number.isNaN(ms) ? undefined : ms;
};
const keyOf = (np: NodePool) => `${np.metadata.namespace ?? ''}/${np.metadata.name ?? ''}`;
/** A release version as HyperShift writes it (status.version, "Target version: X"); anything else is not shown. */
const RELEASE_VERSION = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]{1,40})?$/;
const releaseVersion = (text: unknown): string | undefined =>
  typeof text === 'string' && text.length <= 64 && RELEASE_VERSION.test(text) ? text : undefined;
/** HyperShift's UpdatingVersion message: "Updating version in progress. Target version: 4.16.3". */
const targetVersionOf = (message: string | undefined): string | undefined =>
  releaseVersion(/Target version: (\S{1,64})/.exec(cut(message))?.[1]?.replace(/[.,;]$/, ''));

function updateFindings(np: NodePool, key: string): Finding[] {
  const findings: Finding[] = [];
  const current = releaseVersion((np.status as { version?: unknown } | undefined)?.version);
  const version = conditionOf(np, UPDATING_VERSION_CONDITION);
  const cluster = cut(np.spec.clusterName, 253);
  const follow = `Follow it with \`oc get nodepool -n ${np.metadata.namespace ?? ''} ${np.metadata.name ?? ''}\`.`;
  if (version?.status === 'True') {
    const target = targetVersionOf(version.message);
    findings.push({
      uid: hashedUid('np-version', target ?? ''),
      level: 'Info',
      type: 'None',
      summary: `NodePool ${key} is updating to ${target ?? 'a new release'}${current ? ` (from ${current})` : ''}`,
      description:
        `HyperShift rolls the nodes of this NodePool of hosted cluster ${cluster} to the release of its spec.release; ` +
        `workloads move as nodes are replaced or updated in place. HyperShift says: ${cut(version.message)}. ${follow}`,
      startedAtMs: timeOf(version),
    });
  } else if (version?.status === 'False' && version.reason && version.reason !== AS_EXPECTED) {
    findings.push({
      uid: 'np-version-failed',
      level: 'Error',
      type: 'Update Stalled',
      summary: `NodePool ${key} cannot update${current ? ` from ${current}` : ''} (${cut(version.reason, 64)})`,
      description:
        `HyperShift reports the release rollout of this NodePool of hosted cluster ${cluster} failed: ` +
        `${cut(version.message)}. Its nodes stay where they are until the cause is fixed. ${follow}`,
      startedAtMs: timeOf(version),
    });
  }
  const config = conditionOf(np, UPDATING_CONFIG_CONDITION);
  if (config?.status === 'True') {
    findings.push({
      uid: 'np-config',
      level: 'Info',
      type: 'None',
      summary: `NodePool ${key} is rolling out a configuration change`,
      description:
        `HyperShift rolls a new configuration (spec.config, spec.tuningConfig or platform settings) onto the nodes ` +
        `of this NodePool of hosted cluster ${cluster}. HyperShift says: ${cut(config.message)}. ${follow}`,
      startedAtMs: timeOf(config),
    });
  } else if (config?.status === 'False' && config.reason && config.reason !== AS_EXPECTED) {
    findings.push({
      uid: 'np-config-failed',
      level: 'Error',
      type: 'Update Stalled',
      summary: `NodePool ${key} cannot roll out its configuration (${cut(config.reason, 64)})`,
      description:
        `HyperShift reports the configuration rollout of this NodePool of hosted cluster ${cluster} failed: ` +
        `${cut(config.message)}. ${follow}`,
      startedAtMs: timeOf(config),
    });
  }
  return findings;
}

function profileFindings(np: NodePool, key: string, nowMs: number): Finding[] {
  const summary = conditionOf(np, APPLIED_SUCCESSFULLY_CONDITION);
  if (!summary || summary.status === 'True') return [];
  const mirrored = (np.status?.conditions ?? []).filter((c) =>
    c.type.startsWith(`${NODEPOOL_CONDITION_PREFIX}/`),
  );
  const mirror = (type: string) => mirrored.find((c) => c.type === `${NODEPOOL_CONDITION_PREFIX}/${type}`);
  const reason = cut(summary.reason || 'NoReason', 64);
  const startedAtMs = timeOf(summary);
  let level: Level;
  let type: ImpactType;
  let what: string;
  let uid: string;
  if (summary.status === 'False' && mirror('Degraded')?.status === 'True') {
    [level, type, uid] = ['Error', 'Application Availability', 'np-profile-degraded'];
    what = `The PerformanceProfile of NodePool ${key} is degraded (${reason})`;
  } else if (summary.status === 'False') {
    const slow = startedAtMs !== undefined && nowMs - startedAtMs > PROFILE_SLOW_MS;
    [level, type, uid] = slow
      ? ['Warning', 'Update Speed', 'np-profile-slow']
      : ['Info', 'None', 'np-profile'];
    what = `The PerformanceProfile of NodePool ${key} is still being applied (${reason})`;
  } else {
    [level, type, uid] = ['Warning', 'Unknown', 'np-profile-unknown'];
    what = `The state of the PerformanceProfile of NodePool ${key} is unknown (${reason})`;
  }
  const conditions = mirrored
    .slice(0, 8)
    .map(
      (c) =>
        `${c.type.slice(NODEPOOL_CONDITION_PREFIX.length + 1)}=${c.status}${c.reason ? ` (${cut(c.reason, 64)})` : ''}`,
    )
    .join(', ');
  return [
    {
      uid,
      level,
      type,
      summary: what,
      description:
        `${cut(summary.message) || 'No message.'} ${conditions ? `Node Tuning Operator conditions: ${conditions}. ` : ''}` +
        'Until the profile is applied, workloads that need its tuning (isolated CPUs, huge pages) may not run as ' +
        `intended on this pool's nodes. Run \`tessera nodepool status ${key}\` for the conditions and their messages.`,
      startedAtMs,
    },
  ];
}

const nodePoolRef = (np: NodePool): ResourceRef => ({
  group: HYPERSHIFT_GROUP,
  resource: NODEPOOL_PLURAL,
  name: np.metadata.name ?? '',
  namespace: np.metadata.namespace ?? '',
});
/** Start times to the millisecond: readers take a start equal to the insight's acquiredAt (whole seconds) as unknown. */
const startTime = (ms: number | undefined, nowMs: number) => new Date(ms ?? nowMs).toISOString();
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function insightOf(
  f: Finding,
  np: NodePool,
  acquiredAt: string,
  nowMs: number,
): InsightEntry<WorkerPoolInsight> {
  return {
    uid: f.uid,
    acquiredAt,
    insight: {
      type: 'Health',
      health: {
        startedAt: startTime(f.startedAtMs, nowMs),
        scope: { type: 'WorkerPool', resources: [nodePoolRef(np)] },
        impact: {
          level: f.level,
          type: f.type,
          summary: truncateText(f.summary, MAX_SUMMARY_CHARS),
          description: truncateText(f.description, MAX_DESCRIPTION_CHARS),
        },
        remediation: { reference: NODEPOOL_INSIGHTS_REFERENCE },
      },
    },
  };
}

/** Why a NodePool with findings got no pool. */
type LeftOut = { readonly np: NodePool; readonly level: Level; readonly startedAtMs: number | undefined };

/**
 * The NodePool informer's contribution: pure, from the cached NodePools, the status as last observed (for the
 * pools other informers hold) and `nowMs`. See the module comment for what is reported and the budgets.
 */
export function nodePoolContribution(
  nodePools: readonly NodePool[],
  stored: UpdateStatusStatus | undefined,
  nowMs: number,
  /** The cluster's MachineConfigPools: their names belong to the node informer's pools, written or not yet. */
  machineConfigPools: readonly string[] = [],
): InformerContribution {
  const acquiredAt = heartbeatTimeOf(nowMs);
  const candidates = nodePools
    .flatMap((np) => {
      const key = keyOf(np);
      const findings = [...updateFindings(np, key), ...profileFindings(np, key, nowMs)];
      if (findings.length === 0) return [];
      const level = findings.reduce<Level>((l, f) => (RANK[f.level] > RANK[l] ? f.level : l), 'Info');
      const starts = findings.flatMap((f) => (f.startedAtMs === undefined ? [] : [f.startedAtMs]));
      return [{ np, key, findings, level, startedAtMs: starts.length > 0 ? Math.min(...starts) : undefined }];
    })
    // Most severe first, then by namespace/name: the same NodePools keep their pools from one look to the next.
    .sort((a, b) => RANK[b.level] - RANK[a.level] || byteOrder(a.key, b.key));

  // Pools other informers hold count against the API's 32, and their names are taken: even a pool another
  // informer writes about this very NodePool, since a pool's `resource` shows whichever writer applied it last
  // (sharing a pool whose `resource` two writers set differently would have them overwrite each other forever).
  // Every MachineConfigPool but `master` (the control plane's) is a pool of the node informer, written or not
  // yet: counted too, or this informer could fill the 32 first and the API would refuse the node informer's pools.
  const others = new Set(
    (stored?.workerPools ?? [])
      .filter((p) => (p.informers ?? []).some((i) => i.name !== NODEPOOL_INFORMER))
      .map((p) => p.name),
  );
  for (const name of machineConfigPools) if (name !== MASTER_POOL) others.add(name);
  const taken = new Set([...others, ...machineConfigPools]);
  let room = Math.max(0, INFORMER_BUDGETS.maxWorkerPools - others.size - SPARE_POOLS);
  const workerPools: NonNullable<InformerContribution['workerPools']>[number][] = [];
  const leftOut: LeftOut[] = [];
  for (const c of candidates) {
    const name = c.np.metadata.name ?? '';
    if (taken.has(name) || room === 0) {
      leftOut.push({ np: c.np, level: c.level, startedAtMs: c.startedAtMs });
      continue;
    }
    taken.add(name);
    room--;
    workerPools.push({
      name,
      resource: nodePoolRef(c.np),
      insights: c.findings.map((f) => insightOf(f, c.np, acquiredAt, nowMs)),
    });
  }
  workerPools.sort((a, b) => byteOrder(a.name, b.name));
  return {
    name: NODEPOOL_INFORMER,
    description: 'Tessera NodePool status: NodePool updates and PerformanceProfile state',
    ...(leftOut.length > 0
      ? { controlPlane: [leftOutInsight(leftOut, others.size, acquiredAt, nowMs)] }
      : {}),
    workerPools,
  };
}

function leftOutInsight(
  leftOut: readonly LeftOut[],
  otherPools: number,
  acquiredAt: string,
  nowMs: number,
): InsightEntry<ControlPlaneInsight> {
  const level = leftOut.reduce<Level>((l, x) => (RANK[x.level] > RANK[l] ? x.level : l), 'Info');
  const errors = leftOut.filter((x) => x.level === 'Error').length;
  const starts = leftOut.flatMap((x) => (x.startedAtMs === undefined ? [] : [x.startedAtMs]));
  const named = leftOut.slice(0, MAX_NAMED_LEFT_OUT);
  const n = leftOut.length;
  return {
    uid: 'nodepools-left-out',
    acquiredAt,
    insight: {
      type: 'Health',
      health: {
        startedAt: startTime(starts.length > 0 ? Math.min(...starts) : undefined, nowMs),
        scope: { type: 'WorkerPool', resources: named.map((x) => nodePoolRef(x.np)) },
        impact: {
          level,
          type: level === 'Info' ? 'None' : 'Unknown',
          summary: `${n} more ${n === 1 ? 'NodePool has' : 'NodePools have'} update or PerformanceProfile findings not shown${errors > 0 ? ` (${errors} with errors)` : ''}`,
          description: truncateText(
            `The UpdateStatus holds at most ${INFORMER_BUDGETS.maxWorkerPools} worker pools in all (${otherPools} of them ` +
              `MachineConfigPools' or other informers'), and a pool is named after its NodePool, so a NodePool whose name another pool ` +
              'already has gets none. The most severe NodePools are shown; not shown: ' +
              `${named.map((x) => keyOf(x.np)).join(', ')}${n > named.length ? ` and ${n - named.length} more` : ''}. ` +
              'Run `oc get nodepools -A` and `tessera nodepool status` to see them all.',
            MAX_DESCRIPTION_CHARS,
          ),
        },
        remediation: { reference: NODEPOOL_INSIGHTS_REFERENCE },
      },
    },
  };
}

export interface NodePoolUpdateInsightsOptions {
  /** Only NodePools of this namespace (as the controller's --namespace). Default: all namespaces. */
  readonly namespace?: string;
  /** Least time between two writes (ms). Default: the contract's client's (1,000). */
  readonly minWriteIntervalMs?: number;
}

/** Cached form of a MachineConfigPool: its name is all that is read. */
const nameOnly = (mcp: KubeObject): KubeObject => ({ metadata: { name: mcp.metadata?.name } }) as KubeObject;

/**
 * Registers the NodePool informer with `manager` (it runs on the leader, with the NodePool controller): it reads
 * the NodePools from the Manager's shared informer (the controller's own cache), and the names of the
 * MachineConfigPools (an optional resource: a management cluster that is not OpenShift has none), and looks again
 * on every change of either. A cluster that does not serve the UpdateStatus API gets nothing written (logged once;
 * looked at again on every resync), as for pod placement's informer.
 */
export function addNodePoolUpdateInsights(
  manager: Manager,
  options: NodePoolUpdateInsightsOptions = {},
): InsightPublisher {
  const nodePools = manager.informers.informerFor<NodePool & KubeObject>({
    type: NodePools,
    namespace: options.namespace,
  });
  const machineConfigPools = manager.informers.informerFor<KubeObject>({
    type: MachineConfigPools,
    optional: true,
    transform: nameOnly,
  });
  const publisher = new InsightPublisher({
    client: manager.client,
    informer: NODEPOOL_INFORMER,
    reservedName: true,
    clock: manager.clock,
    minWriteIntervalMs: options.minWriteIntervalMs,
    logger: manager.logger.child({ component: 'nodepool-update-insights' }),
    contribution: (stored) =>
      nodePools.hasSynced() && machineConfigPools.hasSynced()
        ? nodePoolContribution(
            nodePools.getIndexer().list(),
            stored,
            manager.clock.now(),
            machineConfigPools
              .getIndexer()
              .list()
              .map((m) => m.metadata?.name ?? ''),
          )
        : undefined,
  });
  const trigger = () => publisher.trigger();
  nodePools.addEventHandler({ onAdd: trigger, onUpdate: trigger, onDelete: trigger });
  machineConfigPools.addEventHandler({ onAdd: trigger, onDelete: trigger });
  manager.add(publisher);
  return publisher;
}
