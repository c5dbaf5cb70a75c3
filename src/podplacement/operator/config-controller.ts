// The cluster-config controller (leader only): it owns the mutating webhook configuration and the config's status
// (readiness of both halves, counts, deprovisioning). It waits for ValidatingWebhookGate first: adding or
// removing the finalizer is an UPDATE the validating webhook sees.
import {
  MutatingWebhookConfigurations,
  ResourceClient,
  type Controller,
  type KubeObject,
  type Manager,
} from '../../runtime/index.js';
import type { ClusterPodPlacementConfig } from '../api/schema.js';
import { ClusterConfigController } from '../cluster-config-controller.js';
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

/**
 * Re-queues the cluster config when something it reports changes (readiness, a renewed certificate). Components
 * built before the controller exists fire it; it does nothing until bind() (and never in a webhook-only process).
 */
export class ClusterConfigTrigger {
  private target: { enqueue(key: string): void } | undefined;

  bind(target: { enqueue(key: string): void }): void {
    this.target = target;
  }

  fire(): void {
    this.target?.enqueue(CLUSTER_CONFIG_NAME);
  }
}

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
  trigger: ClusterConfigTrigger;
}

/** Creates the cluster-config controller, registered with the manager and bound to `trigger`. */
export function addClusterConfigController(o: ConfigControllerOptions): Controller {
  const { manager, configs, gatedPods } = o;
  const reconciler = new ClusterConfigController({
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
  o.trigger.bind(controller);
  controller.watch(configs.clusterConfigs, () => [CLUSTER_CONFIG_NAME]);
  controller.watch(configs.podPlacementConfigs, () => [CLUSTER_CONFIG_NAME]);
  // While deprovisioning, each released pod may be the last one.
  controller.watch(gatedPods, () =>
    configs.clusterConfig()?.metadata.deletionTimestamp ? [CLUSTER_CONFIG_NAME] : [],
  );
  return controller;
}
