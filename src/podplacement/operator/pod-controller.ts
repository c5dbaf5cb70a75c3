// The pod reconciler (leader only): gated pods are inspected and placed. It watches the gated pods and, so a new
// or changed PodPlacementConfig reaches the pods still gated in its namespace, the PodPlacementConfigs.
import {
  NAMESPACE_INDEX,
  Pods,
  ResourceClient,
  namespaceIndexFunc,
  shareStrings,
  splitObjectKey,
  type Controller,
  type KubeObject,
  type Manager,
  type SharedInformer,
  type SharedInformerFactory,
} from '../../runtime/index.js';
import type { ImageInspector } from '../../registry/index.js';
import { EVENT_RECORDER_COMPONENT, LABELS, LABEL_VALUES } from '../constants.js';
import { inspectionSlotCaps } from '../inspection-slots.js';
import type { PodPlacementMetrics } from '../metrics.js';
import { projectGatedPod } from '../pod-projection.js';
import { PodReconciler, type InspectionRecorder } from '../pod-reconciler.js';
import type { Pod } from '../pod-types.js';
import type { PullSecretResolver } from '../pull-secrets.js';
import type { ConfigCaches } from './config-caches.js';
import type { PodPlacementOperatorOptions } from './options.js';

export type GatedPods = SharedInformer<Pod & KubeObject>;

/**
 * The cache of pods carrying the scheduling gate, by namespace. It holds projections (projectGatedPod: what the
 * reconciler reads), made as each pod is decoded, so a tenant's large pods cost the cache little and a list page
 * only one raw pod at a time.
 */
export function gatedPodInformer(informers: SharedInformerFactory): GatedPods {
  return informers.informerFor<Pod & KubeObject>({
    type: Pods,
    labelSelector: `${LABELS.schedulingGate}=${LABEL_VALUES.gated}`,
    indexers: { [NAMESPACE_INDEX]: namespaceIndexFunc },
    transform: (pod) => shareStrings(projectGatedPod(pod)),
  });
}

export interface PodControllerOptions {
  manager: Manager;
  configs: ConfigCaches;
  gatedPods: GatedPods;
  inspector: ImageInspector;
  searchRegistries: () => readonly string[];
  pullSecrets: PullSecretResolver;
  metrics: PodPlacementMetrics;
  operatorNamespace: string;
  workers: number;
  inspectionDeadlineMs: number;
  /** Records the pods being inspected, so the next process releases one that killed this one (leader only). */
  breaker?: InspectionRecorder;
  /** Told about every failed image inspection (the update insights' failure window). */
  onInspectionFailure?: (failure: { image: string; namespace: string; error: string }) => void;
  tuning: Pick<
    PodPlacementOperatorOptions,
    'retryBaseDelayMs' | 'maxInspectionsPerNamespace' | 'maxInspectionsPerRegistry' | 'onPlanned'
  >;
}

/** Creates the pod reconciler and its controller, registered with the manager. */
export function addPodController(o: PodControllerOptions): Controller {
  const { manager, gatedPods } = o;
  const pods = new ResourceClient<Pod & KubeObject>(manager.client, Pods);
  const reconciler = new PodReconciler({
    getPod: (key) => gatedPods.getIndexer().get(key),
    // The patched pod comes back through the watch; its answer (a whole pod) is not parsed.
    patchPod: (ns, name, patch, signal) =>
      pods.mergePatch({ namespace: ns, name }, patch, { signal, discardAnswer: true }),
    clusterConfig: () => o.configs.clusterConfig(),
    podPlacementConfigs: (ns) => o.configs.podPlacementConfigsIn(ns),
    inspector: o.inspector,
    searchRegistries: o.searchRegistries,
    pullSecrets: o.pullSecrets,
    events: manager.eventRecorder(EVENT_RECORDER_COMPONENT, { api: 'v1' }),
    operatorNamespace: o.operatorNamespace,
    clock: manager.clock,
    logger: manager.logger.child({ controller: 'podplacement-pods' }),
    metrics: o.metrics,
    retryBaseDelayMs: o.tuning.retryBaseDelayMs,
    inspectionDeadlineMs: o.inspectionDeadlineMs,
    // Pods inspected at once (waiting on registries); the total cap always follows the workers.
    ...inspectionSlotCaps(
      {
        maxInspectionsPerNamespace: o.tuning.maxInspectionsPerNamespace,
        maxInspectionsPerRegistry: o.tuning.maxInspectionsPerRegistry,
      },
      o.workers,
    ),
    wake: (key) => controller.enqueue(key),
    onPlanned: o.tuning.onPlanned,
    onInspectionFailure: o.onInspectionFailure,
    breaker: o.breaker,
  });
  const controller = manager.newController({
    name: 'podplacement-pods',
    reconciler,
    workers: o.workers,
    // Tenants take turns for workers: one namespace's backlog does not queue ahead of another's pods.
    shardOf: (key) => splitObjectKey(key).namespace,
  });
  controller.watch(gatedPods);
  controller.watch(o.configs.podPlacementConfigs, (ppc) =>
    gatedPods
      .getIndexer()
      .byIndex(NAMESPACE_INDEX, ppc.metadata?.namespace ?? '')
      .map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`),
  );
  return controller;
}
