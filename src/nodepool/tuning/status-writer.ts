// The Node Tuning side's status writer (imperative shell). For every mirrored PerformanceProfile ConfigMap in one
// HCP namespace of the management cluster, it reads the profile's components in the hosted cluster (Nodes and
// Tuned Profiles of the NodePool, the NTO-generated KubeletConfig ConfigMap) from caches (observation.ts), asks
// profile-status.ts for the next status, and creates/updates `status-<cm>` only on a meaningful change (or a due
// heartbeat). The caches are trusted only while a live probe of the hosted API answers (hosted-probe.ts,
// hosted-readability.ts), so heartbeats stop when the hosted cluster goes away, and past the grace period the
// status says GettingTunedStatusFailed instead of repeating frozen cache contents.
// Guarantees: at most one write per reconcile; no write when only timestamps would change; the watch event that
// only echoes its own write queues no reconcile; a status ConfigMap whose PerformanceProfile ConfigMap is gone is
// deleted (garbage collection would too, when running).
// The caller must start the returned Runnable and abort its signal to stop it.
import { Counter, type Registry } from 'prom-client';
import {
  type Clock,
  ConfigMaps,
  Controller,
  InvalidArgumentError,
  isAlreadyExists,
  isConflict,
  ignoreNotFound,
  type KubeClient,
  type Logger,
  Nodes,
  objectKey,
  OwnWrites,
  realClock,
  type ReconcileResult,
  ResourceClient,
  type Runnable,
  runTogether,
  type SharedInformer,
  SharedInformerFactory,
  silentLogger,
  TerminalError,
  type WorkQueueMetricsProvider,
} from '../../runtime/index.js';
import type { ConfigMap, Node, PerformanceProfileStatus, TunedProfile } from '../api/types.js';
import { ANNOTATIONS, DATA_KEYS, LABELS, NTO_NAMESPACE } from '../constants.js';
import { NodePoolError } from '../errors.js';
import { nameOfNamespacedName, statusConfigMapName } from '../names.js';
import { TunedProfiles } from '../resources.js';
import { decodeProfileStatus } from '../status-codec.js';
import {
  desiredStatusConfigMap,
  performanceProfileNameIn,
  refOf,
  statusConfigMapMetadataDrifted,
} from '../status-configmap.js';
import { HostedProbe } from './hosted-probe.js';
import { type HostedReadability, hostedReadability } from './hosted-readability.js';
import { observeComponents, unreadableObservation } from './observation.js';
import {
  assessProfileState,
  type NextStatus,
  nextHeartbeatInMs,
  nextProfileStatus,
} from './profile-status.js';

export interface StatusWriterOptions {
  /** Client of the management cluster (reads PP ConfigMaps, writes status ConfigMaps). Required. */
  management: KubeClient;
  /** Client of the hosted cluster (reads Nodes and Tuned Profiles). Required. */
  hosted: KubeClient;
  /** The hosted control plane namespace this writer serves. Required. */
  hcpNamespace: string;
  /**
   * Rewrite an unchanged status when its heartbeat is this old, so the NodePool side can detect a dead writer.
   * Milliseconds; 0 disables. Default: 300,000 (5 min). Keep it well below the NodePool side's staleAfterMs.
   */
  heartbeatIntervalMs?: number;
  /**
   * How long the hosted cluster may be out of reach (caches not filled yet, or its API server not answering the
   * probe) before the profile is reported Degraded with GettingTunedStatusFailed, as NTO does when it cannot list
   * Tuned Profiles. Meanwhile nothing is written, heartbeats included. Milliseconds. Default: 60,000.
   */
  hostedSyncGraceMs?: number;
  /** Time the hosted API has to answer the reachability probe. Milliseconds. Default: 5,000. */
  hostedProbeTimeoutMs?: number;
  /** Concurrent reconciles. Default: 2. */
  workers?: number;
  /** Field manager of the writes. Default: `tessera-nto-status`. */
  fieldManager?: string;
  clock?: Clock;
  logger?: Logger;
  /** Registers `tessera_nto_status_writes_total{kind}` and the controller's `controller_runtime_reconcile_*`. */
  registry?: Registry;
  /** The work queue's `workqueue_*` metrics (a Manager's queueMetrics). Default: none. */
  queueMetrics?: WorkQueueMetricsProvider;
  /**
   * Shared informers of the management cluster to build its caches on, started by their owner (a Manager: on every
   * replica, holding /readyz until they synced). Default: a factory of its own on `management`, run with the writer.
   */
  informers?: SharedInformerFactory;
  /**
   * Shared informers of the hosted cluster, started by their owner (a Manager's `cluster(hostedKubeConfig)`, whose
   * caches gate neither /readyz nor leader election: the hosted cluster's reachability must not decide the
   * process's). Default: a factory of its own on `hosted`, run with the writer.
   */
  hostedInformers?: SharedInformerFactory;
}

/** StatusWriterOptions.heartbeatIntervalMs's default: `tessera nodepool run --heartbeat`'s help names it. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 300_000;

const NODEPOOL_INDEX = 'nodePool';
/** Retry delay after a write lost to a newer object version (the cache catches up within milliseconds). */
const CACHE_LAG_RETRY_MS = 20;
/** While the hosted cluster is out of reach, probe again this often to notice it coming back (ms). */
const UNREADABLE_RECHECK_MS = 5_000;
const byNodePoolLabel = (obj: { metadata?: { labels?: Record<string, string> } }): string[] => {
  const np = obj.metadata?.labels?.[LABELS.nodePool];
  return np ? [np] : [];
};

/** The PerformanceProfile ConfigMap being reported on, and what it names. */
interface Subject {
  readonly pp: ConfigMap;
  readonly profileName: string;
  readonly nodePoolName: string;
}

/** What one reconcile decided to write, and when to look again. */
interface Decision {
  readonly subject: Subject;
  readonly existing?: ConfigMap;
  readonly previous?: PerformanceProfileStatus;
  readonly next: NextStatus;
  readonly requeue: ReconcileResult | undefined;
  readonly state: string;
}

/** Builds the writer; nothing runs until start(). */
export function createStatusWriter(options: StatusWriterOptions): Runnable {
  return new StatusWriter(options);
}

class StatusWriter implements Runnable {
  readonly name: string;
  readonly needsLeaderElection = true;
  private readonly ns: string;
  private readonly heartbeatIntervalMs: number;
  private readonly hostedSyncGraceMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly fieldManager: string;
  /** The informers that are the writer's own, started with it (the others' owners start theirs). */
  private readonly ownInformers: SharedInformerFactory[];
  private readonly ppConfigMaps: SharedInformer<ConfigMap>;
  private readonly statusConfigMaps: SharedInformer<ConfigMap>;
  private readonly kubeletConfigMaps: SharedInformer<ConfigMap>;
  private readonly nodes: SharedInformer<Node>;
  private readonly tunedProfiles: SharedInformer<TunedProfile>;
  private readonly configMapClient: ResourceClient<ConfigMap>;
  private readonly probe: HostedProbe;
  private readonly controller: Controller<string>;
  private readonly writes?: Counter<string>;
  /** When the first reconcile ran: the hosted caches' grace period counts from there. */
  private firstReconcileAt: number | undefined;
  /** Our own status writes, whose echoes need no reconcile (others' changes still do). */
  private readonly ownWrites = new OwnWrites((cm) =>
    this.ppKeyOfStatus(cm as ConfigMap).forEach((k) => this.controller.enqueue(k)),
  );

  constructor(options: StatusWriterOptions) {
    if (!options.hcpNamespace)
      throw new InvalidArgumentError('hcpNamespace', 'the HCP namespace to serve is required');
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    if (!(this.heartbeatIntervalMs >= 0))
      throw new InvalidArgumentError('heartbeatIntervalMs', 'must be >= 0');
    this.hostedSyncGraceMs = options.hostedSyncGraceMs ?? 60_000;
    const ns = (this.ns = options.hcpNamespace);
    this.name = `nto-status-writer-${ns}`;
    const clock = (this.clock = options.clock ?? realClock);
    const logger = (this.logger = (options.logger ?? silentLogger).child({
      component: 'nto-status-writer',
      hcpNamespace: ns,
    }));
    this.fieldManager = options.fieldManager ?? 'tessera-nto-status';
    const mgmt =
      options.informers ?? new SharedInformerFactory({ client: options.management, clock, logger });
    const hosted =
      options.hostedInformers ?? new SharedInformerFactory({ client: options.hosted, clock, logger });
    this.ownInformers = [...(options.informers ? [] : [mgmt]), ...(options.hostedInformers ? [] : [hosted])];
    const inHcpNamespace = (label: string) => ({
      type: ConfigMaps,
      namespace: ns,
      labelSelector: `${label}=true`,
    });
    this.ppConfigMaps = mgmt.informerFor<ConfigMap>({
      ...inHcpNamespace(LABELS.ppConfigMap),
      indexers: { [NODEPOOL_INDEX]: byNodePoolLabel },
    });
    this.statusConfigMaps = mgmt.informerFor<ConfigMap>(inHcpNamespace(LABELS.statusConfigMap));
    this.kubeletConfigMaps = mgmt.informerFor<ConfigMap>(inHcpNamespace(LABELS.kubeletConfigConfigMap));
    this.nodes = hosted.informerFor<Node>({
      type: Nodes,
      indexers: { [NODEPOOL_INDEX]: byNodePoolLabel },
    });
    this.tunedProfiles = hosted.informerFor<TunedProfile>({
      type: TunedProfiles,
      namespace: NTO_NAMESPACE,
    });
    this.configMapClient = new ResourceClient<ConfigMap>(options.management, ConfigMaps);
    this.probe = new HostedProbe(options.hosted, options.hostedProbeTimeoutMs ?? 5_000, clock, logger);
    this.writes = options.registry && writesCounter(options.registry);
    this.controller = new Controller<string>({
      name: this.name,
      reconciler: { reconcile: (key, signal) => this.reconcile(key, signal) },
      workers: options.workers ?? 2,
      needsLeaderElection: false,
      clock,
      logger,
      registry: options.registry,
      queueMetrics: options.queueMetrics,
    });
    this.watchCaches();
  }

  start(signal: AbortSignal): Promise<void> {
    return runTogether(this.name, [...this.ownInformers, this.controller]).start(signal);
  }

  private ppKeysOfNodePool(np: string): string[] {
    return this.ppConfigMaps.getIndexer().byIndex(NODEPOOL_INDEX, np).map(objectKey);
  }

  /** The PerformanceProfile ConfigMap a status ConfigMap reports on (its controller owner). */
  private ppKeyOfStatus(cm: ConfigMap): string[] {
    const owner = cm.metadata.ownerReferences?.find((o) => o.kind === 'ConfigMap' && o.controller);
    return owner ? [`${this.ns}/${owner.name}`] : [];
  }

  private watchCaches(): void {
    const { controller } = this;
    controller.watch(this.ppConfigMaps);
    controller.watch(this.statusConfigMaps, (cm) => this.ppKeyOfStatus(cm), this.ownWrites.predicate());
    controller.watch(this.kubeletConfigMaps, (cm) =>
      this.ppKeysOfNodePool(cm.metadata.labels?.[LABELS.nodePool] ?? ''),
    );
    // Hosted-cluster events feed the queue without gating the workers on those caches' sync (Controller.watch
    // would): an unreachable hosted cluster must become a Degraded status, not a silent stall. Each key once per
    // event, so an idle worker that takes it at once does not get it twice.
    const enqueue = (keys: readonly string[]): void => new Set(keys).forEach((k) => controller.enqueue(k));
    const ppKeysOfNodes = (...nodes: Node[]): string[] =>
      nodes.flatMap(byNodePoolLabel).flatMap((np) => this.ppKeysOfNodePool(np));
    this.nodes.addEventHandler({
      onAdd: (node) => enqueue(ppKeysOfNodes(node)),
      onUpdate: (old, cur) => enqueue(ppKeysOfNodes(old, cur)),
      onDelete: (node) => enqueue(ppKeysOfNodes(node)),
    });
    const onProfile = (profile: TunedProfile): void => {
      const node = this.nodes.getIndexer().get(profile.metadata.name ?? '');
      // A profile whose node is unknown (not yet cached, or deleted) may concern any NodePool.
      enqueue(node ? ppKeysOfNodes(node) : this.ppConfigMaps.getIndexer().listKeys());
    };
    this.tunedProfiles.addEventHandler({
      onAdd: onProfile,
      onUpdate: (_old, cur) => onProfile(cur),
      onDelete: onProfile,
    });
  }

  private async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const pp = this.ppConfigMaps.getIndexer().get(key);
    const name = key.slice(key.indexOf('/') + 1);
    const existing = this.statusConfigMaps.getIndexer().get(`${this.ns}/${statusConfigMapName(name)}`);
    if (!pp) return this.deleteOrphan(name, existing, signal);
    const subject = subjectOf(pp);
    this.firstReconcileAt ??= this.clock.now();
    const synced = this.nodes.hasSynced() && this.tunedProfiles.hasSynced();
    const probeAnswered = synced && (await this.probe.answers(signal));
    const now = this.clock.now();
    const readability = hostedReadability({
      synced,
      probeAnswered,
      lastContactAt: this.probe.lastContactAt,
      since: this.firstReconcileAt,
      now,
      graceMs: this.hostedSyncGraceMs,
    });
    if (readability.kind === 'wait') return { requeueAfterMs: readability.retryAfterMs };
    const decision = this.decide(subject, existing, readability, now);
    return this.write(decision, signal);
  }

  /** The next status of the subject's profile, from the hosted caches (or their absence) and the previous one. */
  private decide(
    subject: Subject,
    existing: ConfigMap | undefined,
    readability: Exclude<HostedReadability, { kind: 'wait' }>,
    now: number,
  ): Decision {
    const observation =
      readability.kind === 'readable'
        ? observeComponents({
            nodes: this.nodes.getIndexer().byIndex(NODEPOOL_INDEX, subject.nodePoolName),
            tunedProfiles: this.tunedProfiles.getIndexer().list(),
            kubeletConfig: this.kubeletConfigMaps
              .getIndexer()
              .get(`${this.ns}/kubeletconfig-${subject.pp.metadata.name ?? ''}`),
          })
        : unreadableObservation(subject.profileName, readability.lastContactAt, this.hostedSyncGraceMs);
    // Heartbeats vouch for the status being current: only while the hosted cluster demonstrably answers.
    const heartbeatMs = readability.kind === 'readable' ? this.heartbeatIntervalMs : 0;
    const state = assessProfileState(observation);
    const previous = previousStatus(existing);
    const next = nextProfileStatus({
      previous,
      state,
      profileName: subject.profileName,
      nodePoolName: subject.nodePoolName,
      now,
      heartbeatIntervalMs: heartbeatMs,
    });
    const after = nextHeartbeatInMs(next.status, now, heartbeatMs);
    const requeue =
      readability.kind === 'unreadable'
        ? { requeueAfterMs: UNREADABLE_RECHECK_MS }
        : after !== undefined
          ? { requeueAfterMs: Math.max(after, 1_000) }
          : undefined;
    return { subject, existing, previous, next, requeue, state: state.kind };
  }

  /** Creates or updates the status ConfigMap as decided (nothing when neither status nor metadata changed). */
  private async write(decision: Decision, signal: AbortSignal): Promise<ReconcileResult | void> {
    const { subject, existing, previous, next, requeue, state } = decision;
    const desired = desiredStatusConfigMap(subject.pp, subject.profileName, next.status);
    const { fieldManager } = this;
    if (!existing) {
      try {
        await this.ownWrites.track(refOf(desired), () =>
          this.configMapClient.create(desired, { fieldManager, signal }),
        );
      } catch (err) {
        // Written by our previous pass but not cached yet: decide again once the cache has it.
        if (isAlreadyExists(err)) return { requeueAfterMs: CACHE_LAG_RETRY_MS };
        throw err;
      }
      this.writes?.inc({ kind: 'create' });
      this.logger.info({ configMap: refOf(desired), state }, 'created status ConfigMap');
      return requeue;
    }
    const drifted = statusConfigMapMetadataDrifted(existing, desired);
    if (next.write === 'none' && !drifted && previous !== undefined) return requeue;
    const updated: ConfigMap = structuredClone(existing);
    updated.metadata.labels = { ...updated.metadata.labels, ...desired.metadata.labels };
    updated.metadata.annotations = { ...updated.metadata.annotations, ...desired.metadata.annotations };
    if (drifted) updated.metadata.ownerReferences = desired.metadata.ownerReferences;
    updated.data = desired.data;
    try {
      await this.ownWrites.track(refOf(updated), () =>
        this.configMapClient.update(updated, { fieldManager, signal }),
      );
    } catch (err) {
      if (isConflict(err)) return { requeueAfterMs: CACHE_LAG_RETRY_MS };
      throw err;
    }
    const kind = previous === undefined ? 'change' : next.write === 'none' ? 'metadata' : next.write;
    this.writes?.inc({ kind });
    this.logger.info({ configMap: refOf(desired), state, kind }, 'updated status ConfigMap');
    return requeue;
  }

  /** Deletes the status of a PerformanceProfile ConfigMap that is gone, if it is ours (owned by that ConfigMap). */
  private async deleteOrphan(
    ppName: string,
    existing: ConfigMap | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    if (!existing?.metadata.ownerReferences?.some((o) => o.kind === 'ConfigMap' && o.name === ppName)) return;
    const statusName = statusConfigMapName(ppName);
    await ignoreNotFound(
      this.configMapClient.delete(
        { namespace: this.ns, name: statusName },
        { preconditionUid: existing.metadata.uid, signal },
      ),
    );
    this.writes?.inc({ kind: 'delete' });
    this.logger.info(
      { configMap: `${this.ns}/${statusName}` },
      'deleted status of a removed PerformanceProfile ConfigMap',
    );
  }
}

/** What a PerformanceProfile ConfigMap names; one that cannot be reported on is a TerminalError. */
function subjectOf(pp: ConfigMap): Subject {
  let profileName: string | undefined;
  try {
    profileName = performanceProfileNameIn(pp);
  } catch (err) {
    if (err instanceof NodePoolError) throw new TerminalError(err.message, { cause: err });
    throw err;
  }
  if (!profileName)
    throw new TerminalError(`ConfigMap ${refOf(pp)} holds no PerformanceProfile; nothing to report`);
  const nodePoolRef = pp.metadata.annotations?.[ANNOTATIONS.nodePool];
  if (!nodePoolRef)
    throw new TerminalError(`ConfigMap ${refOf(pp)} has no ${ANNOTATIONS.nodePool} annotation`);
  return { pp, profileName, nodePoolName: nameOfNamespacedName(nodePoolRef) };
}

/** The status currently written; a corrupt one counts as none, so it is rewritten (repaired), not kept. */
function previousStatus(existing: ConfigMap | undefined): PerformanceProfileStatus | undefined {
  const text = existing?.data?.[DATA_KEYS.status];
  if (text === undefined) return undefined;
  try {
    return decodeProfileStatus(text);
  } catch {
    return undefined;
  }
}

function writesCounter(registry: Registry): Counter<string> {
  const existing = registry.getSingleMetric('tessera_nto_status_writes_total') as Counter<string> | undefined;
  return (
    existing ??
    new Counter({
      name: 'tessera_nto_status_writes_total',
      help: 'Status ConfigMap writes by the Node Tuning side, by kind (create, change, heartbeat, metadata, delete)',
      labelNames: ['kind'],
      registers: [registry],
    })
  );
}
