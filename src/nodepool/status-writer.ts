// The Node Tuning side's status writer (imperative shell). For every mirrored PerformanceProfile ConfigMap in one
// HCP namespace of the management cluster, it reads the profile's components in the hosted cluster (Nodes and
// Tuned Profiles of the NodePool, the NTO-generated KubeletConfig ConfigMap) from caches, asks profile-status.ts
// for the next status, and creates/updates `status-<cm>` only on a meaningful change (or a due heartbeat).
// The caches are trusted only while a live probe of the hosted API (a one-item list of Tuned Profiles) answers, so
// heartbeats stop when the hosted cluster goes away, and past the grace period the status says
// GettingTunedStatusFailed instead of repeating frozen cache contents.
// Guarantees: at most one write per reconcile; no write when only timestamps would change; a status ConfigMap
// whose PerformanceProfile ConfigMap is gone is deleted (garbage collection would too, when running).
// The caller must start the returned Runnable and abort its signal to stop it.
import type { Registry } from 'prom-client';
import { Counter } from 'prom-client';
import {
  type Clock,
  ConfigMaps,
  Controller,
  InvalidArgumentError,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type KubeClient,
  type Logger,
  metaTime,
  Nodes,
  objectKey,
  realClock,
  type ReconcileResult,
  ResourceClient,
  resourcePath,
  type Runnable,
  SharedInformerFactory,
  silentLogger,
  TerminalError,
} from '../runtime/index.js';
import type { ConfigMap, Node, PerformanceProfileStatus, TunedProfile } from './api-types.js';
import { ANNOTATIONS, DATA_KEYS, LABELS, NTO_NAMESPACE } from './constants.js';
import { NodePoolError } from './errors.js';
import { hostedReadability } from './hosted-readability.js';
import { nameOfNamespacedName, statusConfigMapName } from './names.js';
import {
  assessProfileState,
  nextHeartbeatInMs,
  nextProfileStatus,
  type ComponentObservation,
  type KubeletConfigCondition,
  type Observed,
} from './profile-status.js';
import { TunedProfiles } from './resources.js';
import { runTogether } from './run-all.js';
import { parseWithinBudget, TUNING_YAML_BUDGET } from './bounded-yaml.js';
import { decodeProfileStatus } from './status-codec.js';
import {
  desiredStatusConfigMap,
  performanceProfileNameIn,
  refOf,
  statusConfigMapMetadataDrifted,
} from './status-configmap.js';

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
  /** Registers `tessera_nto_status_writes_total{kind}`. Default: none. */
  registry?: Registry;
}

const NODEPOOL_INDEX = 'nodePool';
/** Retry delay after a write lost to a newer object version (the cache catches up within milliseconds). */
const CACHE_LAG_RETRY_MS = 20;
/** Reconciles within this long share one probe result, so many profiles cost one probe (ms). */
const PROBE_REUSE_MS = 1_000;
/** While the hosted cluster is out of reach, probe again this often to notice it coming back (ms). */
const UNREADABLE_RECHECK_MS = 5_000;
const byNodePoolLabel = (obj: { metadata?: { labels?: Record<string, string> } }): string[] => {
  const np = obj.metadata?.labels?.[LABELS.nodePool];
  return np ? [np] : [];
};

/** Builds the writer; nothing runs until start(). */
export function createStatusWriter(options: StatusWriterOptions): Runnable {
  if (!options.hcpNamespace)
    throw new InvalidArgumentError('hcpNamespace', 'the HCP namespace to serve is required');
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 300_000;
  if (!(heartbeatIntervalMs >= 0)) throw new InvalidArgumentError('heartbeatIntervalMs', 'must be >= 0');
  const hostedSyncGraceMs = options.hostedSyncGraceMs ?? 60_000;
  const hostedProbeTimeoutMs = options.hostedProbeTimeoutMs ?? 5_000;
  const clock = options.clock ?? realClock;
  const logger = (options.logger ?? silentLogger).child({
    component: 'nto-status-writer',
    hcpNamespace: options.hcpNamespace,
  });
  const fieldManager = options.fieldManager ?? 'tessera-nto-status';
  const ns = options.hcpNamespace;

  const mgmt = new SharedInformerFactory({ client: options.management, namespace: ns, clock, logger });
  const hosted = new SharedInformerFactory({ client: options.hosted, clock, logger });
  const ppConfigMaps = mgmt.informerFor<ConfigMap>({
    type: ConfigMaps,
    labelSelector: `${LABELS.ppConfigMap}=true`,
    indexers: { [NODEPOOL_INDEX]: byNodePoolLabel },
  });
  const statusConfigMaps = mgmt.informerFor<ConfigMap>({
    type: ConfigMaps,
    labelSelector: `${LABELS.statusConfigMap}=true`,
  });
  const kubeletConfigMaps = mgmt.informerFor<ConfigMap>({
    type: ConfigMaps,
    labelSelector: `${LABELS.kubeletConfigConfigMap}=true`,
  });
  const nodes = hosted.informerFor<Node>({ type: Nodes, indexers: { [NODEPOOL_INDEX]: byNodePoolLabel } });
  const tunedProfiles = hosted.informerFor<TunedProfile>({ type: TunedProfiles, namespace: NTO_NAMESPACE });
  const configMapClient = new ResourceClient<ConfigMap>(options.management, ConfigMaps);

  let writes: Counter<string> | undefined;
  if (options.registry) {
    const existing = options.registry.getSingleMetric('tessera_nto_status_writes_total') as
      Counter<string> | undefined;
    writes =
      existing ??
      new Counter({
        name: 'tessera_nto_status_writes_total',
        help: 'Status ConfigMap writes by the Node Tuning side, by kind (create, change, heartbeat, metadata, delete)',
        labelNames: ['kind'],
        registers: [options.registry],
      });
  }

  const ppKeysOfNodePool = (np: string): string[] =>
    ppConfigMaps.getIndexer().byIndex(NODEPOOL_INDEX, np).map(objectKey);

  /** When the first reconcile ran: the hosted caches' grace period counts from there. */
  let firstReconcileAt: number | undefined;
  /** When the hosted API last answered the probe. */
  let lastContactAt: number | undefined;
  let lastProbe: { at: number; answered: boolean } | undefined;
  let probeInFlight: Promise<boolean> | undefined;
  const probePath = resourcePath(TunedProfiles, NTO_NAMESPACE);

  /** A cheap live read of the hosted API (one Tuned Profile at most); shared by reconciles close in time. */
  function probeHosted(signal: AbortSignal): Promise<boolean> {
    if (lastProbe && clock.now() - lastProbe.at < PROBE_REUSE_MS) return Promise.resolve(lastProbe.answered);
    probeInFlight ??= (async () => {
      let answered = false;
      try {
        await options.hosted.request<unknown>({
          method: 'GET',
          path: probePath,
          query: { limit: 1 },
          timeoutMs: hostedProbeTimeoutMs,
          signal,
        });
        answered = true;
        lastContactAt = clock.now();
      } catch (err) {
        logger.debug({ err }, 'hosted API probe failed');
      }
      lastProbe = { at: clock.now(), answered };
      return answered;
    })().finally(() => {
      probeInFlight = undefined;
    });
    return probeInFlight;
  }

  const reconciler = {
    async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
      const pp = ppConfigMaps.getIndexer().get(key);
      const name = key.slice(key.indexOf('/') + 1);
      const statusName = statusConfigMapName(name);
      const existing = statusConfigMaps.getIndexer().get(`${ns}/${statusName}`);
      if (!pp) {
        if (existing?.metadata.ownerReferences?.some((o) => o.kind === 'ConfigMap' && o.name === name)) {
          await configMapClient
            .delete({ namespace: ns, name: statusName }, { preconditionUid: existing.metadata.uid, signal })
            .catch((err: unknown) => {
              if (!isNotFound(err)) throw err;
            });
          writes?.inc({ kind: 'delete' });
          logger.info(
            { configMap: `${ns}/${statusName}` },
            'deleted status of a removed PerformanceProfile ConfigMap',
          );
        }
        return;
      }
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
      const nodePoolName = nameOfNamespacedName(nodePoolRef);

      firstReconcileAt ??= clock.now();
      const synced = nodes.hasSynced() && tunedProfiles.hasSynced();
      const probeAnswered = synced && (await probeHosted(signal));
      const now = clock.now();
      const readability = hostedReadability({
        synced,
        probeAnswered,
        lastContactAt,
        since: firstReconcileAt,
        now,
        graceMs: hostedSyncGraceMs,
      });
      if (readability.kind === 'wait') return { requeueAfterMs: readability.retryAfterMs };
      const observation =
        readability.kind === 'readable'
          ? observe(nodePoolName, `kubeletconfig-${name}`)
          : unreadable(profileName, readability.lastContactAt);
      // Heartbeats vouch for the status being current: only while the hosted cluster demonstrably answers.
      const heartbeatMs = readability.kind === 'readable' ? heartbeatIntervalMs : 0;
      const state = assessProfileState(observation);
      let previous: PerformanceProfileStatus | undefined;
      const previousText = existing?.data?.[DATA_KEYS.status];
      if (previousText !== undefined) {
        try {
          previous = decodeProfileStatus(previousText);
        } catch {
          previous = undefined; // rewritten below: a corrupt status is repaired, not kept
        }
      }
      const next = nextProfileStatus({
        previous,
        state,
        profileName,
        nodePoolName,
        now,
        heartbeatIntervalMs: heartbeatMs,
      });
      const desired = desiredStatusConfigMap(pp, profileName, next.status);
      const requeue = (): ReconcileResult | void => {
        if (readability.kind === 'unreadable') return { requeueAfterMs: UNREADABLE_RECHECK_MS };
        const after = nextHeartbeatInMs(next.status, now, heartbeatMs);
        return after !== undefined ? { requeueAfterMs: Math.max(after, 1_000) } : undefined;
      };
      if (!existing) {
        try {
          await configMapClient.create(desired, { fieldManager, signal });
        } catch (err) {
          // Written by our previous pass but not cached yet: decide again once the cache has it.
          if (isAlreadyExists(err)) return { requeueAfterMs: CACHE_LAG_RETRY_MS };
          throw err;
        }
        writes?.inc({ kind: 'create' });
        logger.info({ configMap: refOf(desired), state: state.kind }, 'created status ConfigMap');
        return requeue();
      }
      const drifted = statusConfigMapMetadataDrifted(existing, desired);
      if (next.write === 'none' && !drifted && previous !== undefined) return requeue();
      const updated: ConfigMap = structuredClone(existing);
      updated.metadata.labels = { ...updated.metadata.labels, ...desired.metadata.labels };
      updated.metadata.annotations = { ...updated.metadata.annotations, ...desired.metadata.annotations };
      if (drifted) updated.metadata.ownerReferences = desired.metadata.ownerReferences;
      updated.data = desired.data;
      try {
        await configMapClient.update(updated, { fieldManager, signal });
      } catch (err) {
        if (isConflict(err)) return { requeueAfterMs: CACHE_LAG_RETRY_MS };
        throw err;
      }
      const kind = previous === undefined ? 'change' : next.write === 'none' ? 'metadata' : next.write;
      writes?.inc({ kind });
      logger.info({ configMap: refOf(desired), state: state.kind, kind }, 'updated status ConfigMap');
      return requeue();
    },
  };

  /**
   * NTO's wording when Tuned Profiles cannot be listed; the reflector and the probe log the underlying API error.
   * The message stays the same while the outage lasts, so it is written once, not on every look.
   */
  function unreadable(profileName: string, lastContact: number | undefined): ComponentObservation {
    const since =
      lastContact === undefined
        ? 'no successful read yet'
        : `last successful read at ${metaTime(lastContact)}`;
    const error =
      `Cannot list Tuned Profiles to match with profile ${profileName}: the hosted cluster's Nodes and Tuned ` +
      `Profiles could not be read for over ${Math.round(hostedSyncGraceMs / 1000)}s (${since}); ` +
      `check that it is reachable and serves ${TunedProfiles.group}/${TunedProfiles.version} ${TunedProfiles.plural}`;
    return { nodeNames: { ok: false, error }, tunedProfiles: { ok: false, error } };
  }

  function observe(nodePoolName: string, kubeletConfigMapName: string): ComponentObservation {
    const nodeNames = nodes
      .getIndexer()
      .byIndex(NODEPOOL_INDEX, nodePoolName)
      .map((n) => n.metadata.name ?? '');
    const obs: { -readonly [K in keyof ComponentObservation]: ComponentObservation[K] } = {
      nodeNames: { ok: true, value: nodeNames },
      tunedProfiles: { ok: true, value: tunedProfiles.getIndexer().list() },
    };
    const kc = kubeletConfigMaps.getIndexer().get(`${ns}/${kubeletConfigMapName}`);
    if (kc) obs.kubeletConfig = kubeletConfigConditions(kc);
    return obs;
  }

  const controller = new Controller<string>({
    name: `nto-status-writer-${ns}`,
    reconciler,
    workers: options.workers ?? 2,
    needsLeaderElection: false,
    clock,
    logger,
  });
  controller.watch(ppConfigMaps);
  controller.watch(statusConfigMaps, (cm) => {
    const owner = cm.metadata.ownerReferences?.find((o) => o.kind === 'ConfigMap' && o.controller);
    return owner ? [`${ns}/${owner.name}`] : [];
  });
  controller.watch(kubeletConfigMaps, (cm) => ppKeysOfNodePool(cm.metadata.labels?.[LABELS.nodePool] ?? ''));
  // Hosted-cluster events feed the queue without gating the workers on those caches' sync (Controller.watch
  // would): an unreachable hosted cluster must become a Degraded status, not a silent stall.
  const enqueueAll = (keys: readonly string[]): void => keys.forEach((k) => controller.enqueue(k));
  const onNode = (node: Node): void => enqueueAll(byNodePoolLabel(node).flatMap(ppKeysOfNodePool));
  nodes.addEventHandler({
    onAdd: onNode,
    onUpdate: (old, cur) => (onNode(old), onNode(cur)),
    onDelete: onNode,
  });
  const onProfile = (profile: TunedProfile): void => {
    const node = nodes.getIndexer().get(profile.metadata.name ?? '');
    // A profile whose node is unknown (not yet cached, or deleted) may concern any NodePool.
    enqueueAll(node ? byNodePoolLabel(node).flatMap(ppKeysOfNodePool) : ppConfigMaps.getIndexer().listKeys());
  };
  tunedProfiles.addEventHandler({
    onAdd: onProfile,
    onUpdate: (_old, cur) => onProfile(cur),
    onDelete: onProfile,
  });

  return runTogether(`nto-status-writer-${ns}`, [mgmt, hosted, controller], true);
}

/** KubeletConfig conditions out of an NTO-generated ConfigMap (`config` key); a bad manifest is a read failure. */
function kubeletConfigConditions(cm: ConfigMap): Observed<{ conditions: KubeletConfigCondition[] }> {
  try {
    const manifest = parseWithinBudget(
      cm.data?.[DATA_KEYS.config] ?? '',
      TUNING_YAML_BUDGET,
      `key "${DATA_KEYS.config}"`,
    ) as { status?: { conditions?: unknown } } | null;
    const raw = manifest?.status?.conditions;
    if (raw === undefined || raw === null) return { ok: true, value: { conditions: [] } };
    if (!Array.isArray(raw))
      return { ok: false, error: `KubeletConfig in ConfigMap ${refOf(cm)}: status.conditions is not a list` };
    const conditions = raw.filter(
      (c): c is KubeletConfigCondition =>
        typeof c === 'object' && c !== null && typeof (c as { type?: unknown }).type === 'string',
    );
    return { ok: true, value: { conditions } };
  } catch (err) {
    return {
      ok: false,
      error: `cannot decode KubeletConfig in ConfigMap ${refOf(cm)}: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}
