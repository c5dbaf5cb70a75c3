// The cluster-config controller (leader only): it owns the mutating webhook configuration and the config's status
// (readiness of both halves, counts, deprovisioning). It waits for ValidatingWebhookGate first: adding or
// removing the finalizer is an UPDATE the validating webhook sees. Besides its caches it watches in-process
// triggers (a readiness change, a renewed certificate) for what the status and the configuration report.
import {
  MutatingWebhookConfigurations,
  ResourceClient,
  type Controller,
  type KubeObject,
  type Manager,
  type TriggerSource,
} from '../../runtime/index.js';
import type { ClusterPodPlacementConfig } from '../api/schema.js';
import { ClusterConfigReconciler } from '../cluster-config-reconciler.js';
import { CLUSTER_CONFIG_NAME } from '../constants.js';
import { ClusterPodPlacementConfigs } from '../resources.js';
import type {
  WebhookConfigurationObject,
  WebhookEndpoint,
  WebhookTlsTrust,
} from '../webhook-configurations.js';
import type { ConfigCaches } from './config-caches.js';
import type { GatedPods } from './pod-controller.js';
import type { ValidatingWebhookGate } from './webhook-registrar.js';

export interface ConfigControllerOptions {
  manager: Manager;
  configs: ConfigCaches;
  gatedPods: GatedPods;
  controllerReady: () => boolean;
  webhookReady: () => boolean;
  endpoint: WebhookEndpoint;
  operatorNamespace: string;
  trust: () => WebhookTlsTrust;
  gate: ValidatingWebhookGate;
  /** In-process changes that re-queue the cluster config: readiness, a renewed certificate. */
  triggers: readonly TriggerSource[];
}

/** Creates the cluster-config controller, registered with the manager and watching `triggers`. */
export function addClusterConfigController(o: ConfigControllerOptions): Controller {
  const { manager, configs, gatedPods } = o;
  const reconciler = new ClusterConfigReconciler({
    getClusterConfig: () => configs.clusterConfig(),
    clusterConfigs: new ResourceClient<
      ClusterPodPlacementConfig & KubeObject & { metadata: { name: string } }
    >(manager.client, ClusterPodPlacementConfigs),
    webhookConfigurations: new ResourceClient<WebhookConfigurationObject & KubeObject>(
      manager.client,
      MutatingWebhookConfigurations,
    ),
    podPlacementConfigCount: () => configs.podPlacementConfigs.getIndexer().list().length,
    gatedPodCount: () => gatedPods.getIndexer().list().length,
    controllerReady: o.controllerReady,
    webhookReady: o.webhookReady,
    endpoint: o.endpoint,
    operatorNamespace: o.operatorNamespace,
    trust: o.trust,
    clock: manager.clock,
    logger: manager.logger.child({ controller: 'podplacement-config' }),
  });
  const controller = manager.newController({
    name: 'podplacement-config',
    reconciler: {
      reconcile: async (key, signal) => {
        await o.gate.wait(signal);
        if (signal.aborted) return;
        return reconciler.reconcile(key, signal);
      },
    },
  });
  for (const trigger of o.triggers) controller.watchTrigger(trigger, () => [CLUSTER_CONFIG_NAME]);
  controller.watch(configs.clusterConfigs, () => [CLUSTER_CONFIG_NAME]);
  controller.watch(configs.podPlacementConfigs, () => [CLUSTER_CONFIG_NAME]);
  // While deprovisioning, each released pod may be the last one.
  controller.watch(gatedPods, () =>
    configs.clusterConfig()?.metadata.deletionTimestamp ? [CLUSTER_CONFIG_NAME] : [],
  );
  return controller;
}
