// The pod reconciler (leader only): gated pods are inspected and placed. It watches the gated pods and, so a new
// or changed PodPlacementConfig reaches the pods still gated in its namespace, the PodPlacementConfigs.
import {
  NAMESPACE_INDEX,
  Pods,
  ResourceClient,
  namespaceIndexFunc,
  type Controller,
  type KubeObject,
  type Manager,
  type SharedInformer,
  type SharedInformerFactory,
} from '../../runtime/index.js';
import type { ImageInspector } from '../../registry/index.js';
import { EVENT_RECORDER_COMPONENT, LABELS, LABEL_VALUES } from '../constants.js';
import type { PodPlacementMetrics } from '../metrics.js';
import { PodReconciler } from '../pod-reconciler.js';
import type { Pod } from '../pod-types.js';
import type { PullSecretResolver } from '../pull-secrets.js';
import type { ConfigCaches } from './config-caches.js';
import type { PodPlacementOperatorOptions } from './options.js';

export type GatedPods = SharedInformer<Pod & KubeObject>;

/** The cache of pods carrying the scheduling gate, by namespace. */
export function gatedPodInformer(informers: SharedInformerFactory): GatedPods {
  return informers.informerFor<Pod & KubeObject>({
    type: Pods,
    labelSelector: `${LABELS.schedulingGate}=${LABEL_VALUES.gated}`,
    indexers: { [NAMESPACE_INDEX]: namespaceIndexFunc },
  });
}

/**
 * Pods inspected at once per namespace and per registry host: a tenant (namespace) or a registry never holds every
 * worker, the rest requeue instead of waiting. Defaults: a quarter and half of `workers` (at least 1).
 */
export function inspectionCaps(
  workers: number,
  given: { maxInspectionsPerNamespace?: number; maxInspectionsPerRegistry?: number },
): { maxInspectionsPerNamespace: number; maxInspectionsPerRegistry: number } {
  return {
    maxInspectionsPerNamespace: given.maxInspectionsPerNamespace ?? Math.max(1, Math.floor(workers / 4)),
    maxInspectionsPerRegistry: given.maxInspectionsPerRegistry ?? Math.max(1, Math.floor(workers / 2)),
  };
}

export interface PodControllerOptions {
  manager: Manager;
  configs: ConfigCaches;
  gatedPods: GatedPods;
  inspector: ImageInspector;
  pullSecrets: PullSecretResolver;
  metrics: PodPlacementMetrics;
  operatorNamespace: string;
  workers: number;
  inspectionDeadlineMs: number;
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
    patchPod: (ns, name, patch, signal) => pods.mergePatch({ namespace: ns, name }, patch, { signal }),
    clusterConfig: () => o.configs.clusterConfig(),
    podPlacementConfigs: (ns) => o.configs.podPlacementConfigsIn(ns),
    inspector: o.inspector,
    pullSecrets: o.pullSecrets,
    events: manager.eventRecorder(EVENT_RECORDER_COMPONENT, { api: 'v1' }),
    operatorNamespace: o.operatorNamespace,
    clock: manager.clock,
    logger: manager.logger.child({ controller: 'podplacement-pods' }),
    metrics: o.metrics,
    retryBaseDelayMs: o.tuning.retryBaseDelayMs,
    inspectionDeadlineMs: o.inspectionDeadlineMs,
    ...inspectionCaps(o.workers, o.tuning),
    wake: (key) => controller.enqueue(key),
    onPlanned: o.tuning.onPlanned,
  });
  const controller = manager.newController({ name: 'podplacement-pods', reconciler, workers: o.workers });
  controller.watch(gatedPods);
  controller.watch(o.configs.podPlacementConfigs, (ppc) =>
    gatedPods
      .getIndexer()
      .byIndex(NAMESPACE_INDEX, ppc.metadata?.namespace ?? '')
      .map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`),
  );
  return controller;
}
