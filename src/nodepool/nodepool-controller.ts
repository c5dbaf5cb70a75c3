// The NodePool side (imperative shell), in the management cluster. For each NodePool it mirrors the referenced
// PerformanceProfile into the HCP namespace (`<cm>-<nodepool>`), reads the status ConfigMaps labelled for it,
// asks nodepool-conditions.ts for the conditions, and writes the NodePool status only when they changed
// meaningfully. It watches NodePools, status ConfigMaps (by label), mirrored PP ConfigMaps and HostedControlPlanes,
// so every status change is reflected, not only NodePool generation changes. Users' tuning ConfigMaps are watched
// only in namespaces that hold a NodePool with spec.tuningConfig (one informer per such namespace, started when the
// first one appears), trimmed to the `tuning` key without managedFields, so the cache does not grow with the
// management cluster's ConfigMaps.
// Guarantees: one NodePool status write per meaningful change, none for timestamp-only changes; conditions of
// other controllers are preserved (read-modify-write guarded by resourceVersion; a conflict retries).
// Status ConfigMaps are written from the hosted cluster and treated as hostile: the cache keeps only their `status`
// key, and not even that when it is over budget; decoding is budgeted (status-codec.ts) and cached by content
// (status-decode-cache.ts); a refused status is a NodePool condition plus a Warning event naming the ConfigMap and
// the limit, and the reconcile then succeeds (no retry until something changes). Should the API server still
// refuse the NodePool status, the conditions built from that ConfigMap are replaced by one naming it
// (PerformanceProfileStatusRejected) instead of retrying forever.
import type { Registry } from 'prom-client';
import { Counter } from 'prom-client';
import {
  ApiStatusError,
  type Clock,
  ConfigMaps,
  Controller,
  type EventRecorder,
  InvalidArgumentError,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type KubeClient,
  KubeEventRecorder,
  type Logger,
  objectKey,
  realClock,
  type ReconcileResult,
  ResourceClient,
  type Runnable,
  type SharedInformer,
  SharedInformerFactory,
  silentLogger,
  stripManagedFields,
  TerminalError,
} from '../runtime/index.js';
import type { ConfigMap, HostedControlPlane, NodePool } from './api-types.js';
import { ANNOTATIONS, DATA_KEYS, LABELS } from './constants.js';
import { NodePoolError } from './errors.js';
import {
  assessNodePoolPerformance,
  assessRejectedStatus,
  type NodePoolAssessment,
  type ProfileReference,
  SUMMARY_REASONS,
} from './nodepool-conditions.js';
import {
  hostedControlPlaneNamespace,
  performanceProfileConfigMapName,
  statusConfigMapName,
} from './names.js';
import { HostedControlPlanes, NodePools } from './resources.js';
import { runTogether } from './run-all.js';
import { performanceProfileNameIn, refOf, trimStatusConfigMap } from './status-configmap.js';
import { createStatusDecodeCache } from './status-decode-cache.js';

export interface NodePoolControllerOptions {
  /** Client of the management cluster. Required. */
  management: KubeClient;
  /**
   * A status whose newest heartbeat is older than this is reported stale. Milliseconds; 0 disables the check.
   * Default: 0, because the reference Node Tuning Operator rewrites a status only when it changes; enable it (e.g.
   * 900,000) with a writer that refreshes heartbeats, such as createStatusWriter (every 5 min by default).
   */
  staleAfterMs?: number;
  /** Concurrent reconciles. Default: 4. */
  workers?: number;
  /** Only NodePools in this namespace. Default: all namespaces. */
  namespace?: string;
  /** Field manager of the writes. Default: `tessera-nodepool`. */
  fieldManager?: string;
  clock?: Clock;
  logger?: Logger;
  /**
   * Warning events on a NodePool whose status ConfigMap is refused (reasons as the summary condition's).
   * Default: events.k8s.io/v1 Events written with `management`, reporting controller = fieldManager.
   */
  events?: EventRecorder;
  /** Bytes of decoded status ConfigMaps remembered by content (see status-decode-cache.ts). Default: 4 MiB. */
  statusDecodeCacheBytes?: number;
  /**
   * Registers `tessera_nodepool_status_writes_total`, `tessera_nodepool_mirror_writes_total`,
   * `tessera_nodepool_status_decodes_total` and the controller's `controller_runtime_reconcile_*` metrics.
   * Default: none.
   */
  registry?: Registry;
}

const NODEPOOL_KEY_INDEX = 'nodePoolKey';
const HCP_NODEPOOL_INDEX = 'hcpNodePool';
const TUNING_REF_INDEX = 'tuningConfigMap';
const HCP_NAMESPACE_INDEX = 'hcpNamespace';
/** Retry delay after a write lost to a newer object version (the cache catches up within milliseconds). */
const CACHE_LAG_RETRY_MS = 20;

/** What the NodePool references, and the manifest to mirror. */
interface Resolved {
  readonly reference: ProfileReference;
  readonly mirror?: { readonly name: string; readonly tuning: string };
}

export interface NodePoolController extends Runnable {
  /** Namespaces whose ConfigMaps are watched as possible tuning ConfigMaps, sorted. */
  tuningNamespaces(): string[];
}

/** Cached form of a possible tuning ConfigMap: metadata without managedFields, and only the `tuning` key. */
function trimTuningConfigMap(cm: ConfigMap): ConfigMap {
  const stripped = stripManagedFields(cm);
  const tuning = stripped.data?.[DATA_KEYS.tuning];
  const { data: _data, binaryData: _binary, ...rest } = stripped as ConfigMap & { binaryData?: unknown };
  return tuning === undefined ? rest : { ...rest, data: { [DATA_KEYS.tuning]: tuning } };
}

export function createNodePoolController(options: NodePoolControllerOptions): NodePoolController {
  const staleAfterMs = options.staleAfterMs ?? 0;
  if (!(staleAfterMs >= 0)) throw new InvalidArgumentError('staleAfterMs', 'must be >= 0');
  const clock = options.clock ?? realClock;
  const logger = (options.logger ?? silentLogger).child({ component: 'nodepool-performance-status' });
  const fieldManager = options.fieldManager ?? 'tessera-nodepool';

  const factory = new SharedInformerFactory({ client: options.management, clock, logger });
  const nodePools = factory.informerFor<NodePool>({
    type: NodePools,
    namespace: options.namespace,
    indexers: {
      [TUNING_REF_INDEX]: (np) =>
        (np.spec.tuningConfig ?? []).map((ref) => `${np.metadata.namespace ?? ''}/${ref.name}`),
      [HCP_NAMESPACE_INDEX]: (np) => [
        hostedControlPlaneNamespace(np.metadata.namespace ?? '', np.spec.clusterName),
      ],
    },
  });
  const hcps = factory.informerFor<HostedControlPlane>({ type: HostedControlPlanes });
  // Status and mirrored ConfigMaps, indexed by "<HCP namespace>/<nodePool label>".
  const hcpNodePool = (cm: ConfigMap): string[] => {
    const np = cm.metadata.labels?.[LABELS.nodePool];
    return np ? [`${cm.metadata.namespace ?? ''}/${np}`] : [];
  };
  const statusConfigMaps = factory.informerFor<ConfigMap>({
    type: ConfigMaps,
    labelSelector: `${LABELS.statusConfigMap}=true`,
    transform: trimStatusConfigMap,
    indexers: { [HCP_NODEPOOL_INDEX]: hcpNodePool },
  });
  const mirrors = factory.informerFor<ConfigMap>({
    type: ConfigMaps,
    labelSelector: `${LABELS.ppConfigMap}=true`,
    indexers: {
      [HCP_NODEPOOL_INDEX]: hcpNodePool,
      [NODEPOOL_KEY_INDEX]: (cm) => {
        const ref = cm.metadata.annotations?.[ANNOTATIONS.nodePool];
        return ref ? [ref] : [];
      },
    },
  });
  // Users' tuning ConfigMaps, one informer per namespace that has a NodePool naming one (see module comment);
  // NodePools are indexed by the ConfigMaps they name, so an edit of one reaches them.
  const tuningInformers = new Map<string, SharedInformer<ConfigMap>>();
  function tuningConfigMapsIn(namespace: string): SharedInformer<ConfigMap> {
    let informer = tuningInformers.get(namespace);
    if (!informer) {
      informer = factory.informerFor<ConfigMap>({
        type: ConfigMaps,
        namespace,
        transform: trimTuningConfigMap,
      });
      tuningInformers.set(namespace, informer);
      // Its first list queues every NodePool naming a ConfigMap there, so nothing changed meanwhile is missed.
      controller.watch(informer, (cm) => nodePools.getIndexer().indexKeys(TUNING_REF_INDEX, objectKey(cm)));
      logger.info({ namespace }, 'watching tuning ConfigMaps');
    }
    return informer;
  }
  const watchTuningOf = (np: NodePool): void => {
    if ((np.spec.tuningConfig ?? []).length > 0) tuningConfigMapsIn(np.metadata.namespace ?? '');
  };
  nodePools.addEventHandler({ onAdd: watchTuningOf, onUpdate: (_old, cur) => watchTuningOf(cur) });

  const nodePoolClient = new ResourceClient<NodePool>(options.management, NodePools);
  const configMapClient = new ResourceClient<ConfigMap>(options.management, ConfigMaps);

  const counter = (name: string, help: string): Counter<string> | undefined => {
    if (!options.registry) return undefined;
    const existing = options.registry.getSingleMetric(name) as Counter<string> | undefined;
    return existing ?? new Counter({ name, help, registers: [options.registry] });
  };
  const statusWrites = counter(
    'tessera_nodepool_status_writes_total',
    'NodePool status writes for performance-profile conditions',
  );
  const mirrorWrites = counter(
    'tessera_nodepool_mirror_writes_total',
    'Writes of mirrored PerformanceProfile ConfigMaps',
  );
  const statusDecodes = counter(
    'tessera_nodepool_status_decodes_total',
    'Status ConfigMap texts actually decoded (not found in the decode cache)',
  );
  const decoder = createStatusDecodeCache({
    maxBytes: options.statusDecodeCacheBytes,
    onDecode: () => statusDecodes?.inc(),
  });
  const events =
    options.events ??
    new KubeEventRecorder({ client: options.management, component: fieldManager, clock, logger });

  /** Writes the NodePool status; `{ invalid }` carries the message when the API server refuses it (HTTP 422). */
  async function writeConditions(
    np: NodePool,
    assessment: NodePoolAssessment,
    signal: AbortSignal,
  ): Promise<'written' | 'conflict' | { invalid: string }> {
    const updated: NodePool = structuredClone(np);
    updated.status = { ...updated.status, conditions: assessment.conditions };
    try {
      await nodePoolClient.updateStatus(updated, { fieldManager, signal });
    } catch (err) {
      if (isConflict(err)) return 'conflict';
      if (err instanceof ApiStatusError && err.statusCode === 422) return { invalid: err.message };
      throw err;
    }
    statusWrites?.inc();
    return 'written';
  }

  /** The NodePool a status ConfigMap belongs to: HCP namespace -> HostedCluster namespace, plus the nodePool label. */
  function nodePoolKeysOfStatus(cm: ConfigMap): string[] {
    const npName = cm.metadata.labels?.[LABELS.nodePool];
    if (!npName) return [];
    const hcp = hcps.getIndexer().byIndex('namespace', cm.metadata.namespace ?? '')[0];
    const cluster = hcp?.metadata.annotations?.[ANNOTATIONS.hostedClusterOnHCP];
    if (cluster?.includes('/')) return [`${cluster.slice(0, cluster.indexOf('/'))}/${npName}`];
    // No HostedControlPlane (yet): fall back on the NodePool the status names itself.
    const annotated = cm.metadata.annotations?.[ANNOTATIONS.nodePool];
    return annotated?.includes('/') ? [annotated] : [];
  }

  async function resolve(np: NodePool, signal: AbortSignal): Promise<Resolved> {
    const namespace = np.metadata.namespace ?? '';
    const npName = np.metadata.name ?? '';
    const found: { cm: string; profile: string; tuning: string }[] = [];
    for (const ref of np.spec.tuningConfig ?? []) {
      // The cache, or (when it has not seen the ConfigMap yet) the API server: a ConfigMap created just before its
      // NodePool must not be reported missing.
      let cm = tuningConfigMapsIn(namespace).getIndexer().get(`${namespace}/${ref.name}`);
      if (!cm) {
        try {
          cm = await configMapClient.get({ namespace, name: ref.name }, signal);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      if (!cm) {
        return {
          reference: {
            kind: 'unresolved',
            message: `ConfigMap ${namespace}/${ref.name} named in spec.tuningConfig does not exist; create it or remove the reference`,
          },
        };
      }
      try {
        const profile = performanceProfileNameIn(cm);
        if (profile) found.push({ cm: ref.name, profile, tuning: cm.data?.[DATA_KEYS.tuning] ?? '' });
      } catch (err) {
        if (err instanceof NodePoolError) return { reference: { kind: 'unresolved', message: err.message } };
        throw err;
      }
    }
    if (found.length === 0) return { reference: { kind: 'none' } };
    const first = found[0];
    if (found.length > 1 || !first) {
      return {
        reference: {
          kind: 'unresolved',
          message: `there cannot be more than one PerformanceProfile per NodePool. found: ${found.length} (ConfigMaps ${found.map((f) => f.cm).join(', ')})`,
        },
      };
    }
    const mirrorName = performanceProfileConfigMapName(first.cm, npName);
    return {
      reference: {
        kind: 'profile',
        profileName: first.profile,
        statusConfigMapName: statusConfigMapName(mirrorName),
      },
      mirror: { name: mirrorName, tuning: first.tuning },
    };
  }

  /** Creates/updates the wanted mirror and deletes the NodePool's other mirrors in `hcpNs`. */
  async function reconcileMirror(
    np: NodePool,
    hcpNs: string,
    mirror: Resolved['mirror'],
    signal: AbortSignal,
  ): Promise<void> {
    const npName = np.metadata.name ?? '';
    const npKey = objectKey(np);
    const existing = mirrors.getIndexer().byIndex(HCP_NODEPOOL_INDEX, `${hcpNs}/${npName}`);
    for (const cm of existing) {
      if (cm.metadata.name === mirror?.name) continue;
      await configMapClient
        .delete({ namespace: hcpNs, name: cm.metadata.name ?? '' }, { signal })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      mirrorWrites?.inc();
      logger.info({ nodePool: npKey, configMap: refOf(cm) }, 'deleted mirrored PerformanceProfile ConfigMap');
    }
    if (!mirror) return;
    const labels = { [LABELS.ppConfigMap]: 'true', [LABELS.nodePool]: npName };
    const annotations = { [ANNOTATIONS.nodePool]: npKey };
    const current = existing.find((cm) => cm.metadata.name === mirror.name);
    if (!current) {
      await configMapClient
        .create(
          {
            metadata: { name: mirror.name, namespace: hcpNs, labels, annotations },
            data: { [DATA_KEYS.tuning]: mirror.tuning },
          },
          { fieldManager, signal },
        )
        .catch((err: unknown) => {
          // Created by our previous pass, not yet in the cache: the next pass compares it.
          if (!isAlreadyExists(err)) throw err;
        });
      mirrorWrites?.inc();
      logger.info(
        { nodePool: npKey, configMap: `${hcpNs}/${mirror.name}` },
        'mirrored PerformanceProfile ConfigMap',
      );
      return;
    }
    const upToDate =
      current.data?.[DATA_KEYS.tuning] === mirror.tuning &&
      Object.entries(labels).every(([k, v]) => current.metadata.labels?.[k] === v) &&
      current.metadata.annotations?.[ANNOTATIONS.nodePool] === npKey;
    if (upToDate) return;
    const updated = structuredClone(current);
    updated.metadata.labels = { ...updated.metadata.labels, ...labels };
    updated.metadata.annotations = { ...updated.metadata.annotations, ...annotations };
    updated.data = { ...updated.data, [DATA_KEYS.tuning]: mirror.tuning };
    await configMapClient.update(updated, { fieldManager, signal });
    mirrorWrites?.inc();
  }

  const reconciler = {
    async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
      // Keys mapped from cluster-wide ConfigMaps may name NodePools of namespaces another instance serves.
      if (options.namespace && !key.startsWith(`${options.namespace}/`)) return;
      const np = nodePools.getIndexer().get(key);
      if (!np) {
        // Deleted NodePool: its mirrors (found through their annotation) go; their status ConfigMaps follow.
        for (const cm of mirrors.getIndexer().byIndex(NODEPOOL_KEY_INDEX, key)) {
          await configMapClient
            .delete({ namespace: cm.metadata.namespace ?? '', name: cm.metadata.name ?? '' }, { signal })
            .catch((err: unknown) => {
              if (!isNotFound(err)) throw err;
            });
        }
        return;
      }
      const hcpNs = hostedControlPlaneNamespace(np.metadata.namespace ?? '', np.spec.clusterName);
      let resolved = await resolve(np, signal);
      if (
        resolved.reference.kind === 'profile' &&
        hcps.getIndexer().byIndex('namespace', hcpNs).length === 0
      ) {
        // HyperShift creates the HCP namespace with its HostedControlPlane; until then there is nowhere to mirror to.
        resolved = {
          reference: {
            kind: 'unresolved',
            reason: SUMMARY_REASONS.controlPlaneMissing,
            message: `no HostedControlPlane in namespace ${hcpNs} yet; waiting for HostedCluster ${np.metadata.namespace ?? ''}/${np.spec.clusterName}`,
          },
        };
      }
      if (resolved.reference.kind !== 'unresolved') await reconcileMirror(np, hcpNs, resolved.mirror, signal);
      const assessment = assessNodePoolPerformance({
        nodePool: np,
        reference: resolved.reference,
        statusConfigMaps: statusConfigMaps
          .getIndexer()
          .byIndex(HCP_NODEPOOL_INDEX, `${hcpNs}/${np.metadata.name ?? ''}`),
        now: clock.now(),
        staleAfterMs,
        decodeStatus: decoder.decode,
      });
      if (assessment.changed) {
        const written = await writeConditions(np, assessment, signal);
        // Our cache is behind the server (another writer, or our own last write): look again shortly.
        if (written === 'conflict') return { requeueAfterMs: CACHE_LAG_RETRY_MS };
        if (written !== 'written') {
          // Refused although every condition we build fits the CRD (e.g. a schema stricter than ours): say so on
          // the NodePool instead of retrying the same refused write forever.
          const rejected = assessRejectedStatus(np, assessment.source, written.invalid, clock.now());
          const retried = await writeConditions(np, rejected, signal);
          if (retried === 'conflict') return { requeueAfterMs: CACHE_LAG_RETRY_MS };
          if (rejected.refused)
            events.event(np, 'Warning', rejected.refused.reason, rejected.refused.message);
          if (retried !== 'written') {
            throw new TerminalError(
              `NodePool ${key}: the API server refused its status twice (${retried.invalid}); not retrying until it changes`,
            );
          }
          logger.warn(
            { nodePool: key, source: assessment.source, err: written.invalid },
            'NodePool status refused; reported PerformanceProfileStatusRejected instead',
          );
          return;
        }
        if (assessment.refused) {
          events.event(np, 'Warning', assessment.refused.reason, assessment.refused.message);
          logger.warn(
            { nodePool: key, source: assessment.source, reason: assessment.refused.reason },
            'refused status ConfigMap',
          );
        }
        logger.info(
          { nodePool: key, source: assessment.source },
          'updated NodePool performance-profile conditions',
        );
      }
      return assessment.recheckAfterMs !== undefined
        ? { requeueAfterMs: assessment.recheckAfterMs }
        : undefined;
    },
  };

  const controller = new Controller<string>({
    name: 'nodepool-performance-status',
    reconciler,
    workers: options.workers ?? 4,
    needsLeaderElection: false,
    clock,
    logger,
    registry: options.registry,
  });
  controller.watch(nodePools);
  if (options.namespace) tuningConfigMapsIn(options.namespace);
  controller.watch(statusConfigMaps, nodePoolKeysOfStatus);
  controller.watch(mirrors, (cm) => {
    const ref = cm.metadata.annotations?.[ANNOTATIONS.nodePool];
    return ref?.includes('/') ? [ref] : [];
  });
  controller.watch(hcps, (hcp) => [
    ...nodePools.getIndexer().indexKeys(HCP_NAMESPACE_INDEX, hcp.metadata.namespace ?? ''),
    ...statusConfigMaps
      .getIndexer()
      .byIndex('namespace', hcp.metadata.namespace ?? '')
      .flatMap(nodePoolKeysOfStatus),
  ]);

  const runnable = runTogether('nodepool-performance-status', [factory, controller], true);
  return Object.assign(runnable, { tuningNamespaces: () => [...tuningInformers.keys()].sort() });
}
