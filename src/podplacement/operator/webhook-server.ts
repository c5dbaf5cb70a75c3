// The webhook half: one HTTPS server for the gating (mutating) webhook, the two config validators and the CRD
// conversion webhook. Its readiness (/readyz "webhook") is the server listening with synced config caches.
import {
  ResourceClient,
  WebhookServer,
  isNotFound,
  type KubeClient,
  type KubeObject,
  type Manager,
} from '../../runtime/index.js';
import { CONVERSION_WEBHOOK_PATH, convertClusterPodPlacementConfig } from '../api/conversion.js';
import type { PodPlacementConfig } from '../api/schema.js';
import {
  ClusterConfigValidator,
  PodPlacementConfigValidator,
  type ConfigReader,
} from '../config-validation.js';
import { CLUSTER_CONFIG_NAME, MUTATING_WEBHOOK, VALIDATING_WEBHOOK } from '../constants.js';
import { GatingWebhook } from '../gating-webhook.js';
import type { PodPlacementMetrics } from '../metrics.js';
import { ClusterPodPlacementConfigs, PodPlacementConfigs } from '../resources.js';
import type { ConfigCaches } from './config-caches.js';
import type { PodPlacementOperatorOptions } from './options.js';
import type { WebhookReadiness } from './readiness.js';
import type { WebhookTlsSource } from './webhook-tls-source.js';

/** What the validators read: the caches, and (within their read budget) the API server to confirm. */
export function configReader(client: KubeClient, configs: ConfigCaches): ConfigReader {
  return {
    cachedClusterConfigExists: () => configs.clusterConfig() !== undefined,
    clusterConfigExists: async (signal) => {
      try {
        await new ResourceClient<KubeObject>(client, ClusterPodPlacementConfigs).get(
          { name: CLUSTER_CONFIG_NAME },
          signal,
        );
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },
    cachedPodPlacementConfigs: (ns) => configs.podPlacementConfigsIn(ns),
    podPlacementConfigs: async (ns, signal) =>
      (
        await new ResourceClient<PodPlacementConfig & KubeObject>(client, PodPlacementConfigs).list({
          namespace: ns,
          signal,
        })
      ).items,
    cachedPodPlacementConfigCount: () => configs.podPlacementConfigCount(),
  };
}

export interface WebhookServerOptions {
  manager: Manager;
  configs: ConfigCaches;
  tls: WebhookTlsSource;
  readiness: WebhookReadiness;
  metrics: PodPlacementMetrics;
  operatorNamespace: string;
  listen: Pick<
    PodPlacementOperatorOptions,
    'webhookHost' | 'webhookPort' | 'webhookBudgets' | 'webhookClientCa'
  >;
  /** True while the controller's Lease is not renewed (ControllerLeaseWatch): pods are admitted ungated. */
  gatingSuspended?: () => boolean;
}

/**
 * Creates the server with every handler, registered with the manager, and its readiness check. It reads its
 * certificate when it starts, after the Manager's TLS start-up step wrote it.
 */
export function addWebhookServer(o: WebhookServerOptions): WebhookServer {
  const { manager, configs } = o;
  const { clock, logger } = manager;
  const server = new WebhookServer({
    // Undefined: the runtime webhook server's defaults (0.0.0.0:9443).
    host: o.listen.webhookHost,
    port: o.listen.webhookPort,
    ...o.listen.webhookBudgets,
    ...(o.listen.webhookClientCa === undefined ? {} : { clientCa: o.listen.webhookClientCa }),
    ...o.tls.servingFileLocations(),
    registry: manager.registry,
    clock,
    logger,
  });
  const reader = configReader(manager.client, configs);
  server.register(
    MUTATING_WEBHOOK.path,
    new GatingWebhook({
      clusterConfig: () => configs.clusterConfig(),
      podPlacementConfigs: (ns) => configs.podPlacementConfigsIn(ns),
      operatorNamespace: o.operatorNamespace,
      clock,
      logger,
      metrics: o.metrics,
      gatingSuspended: o.gatingSuspended,
    }),
  );
  server.register(VALIDATING_WEBHOOK.podConfigPath, new PodPlacementConfigValidator(reader, { clock }));
  server.register(VALIDATING_WEBHOOK.clusterConfigPath, new ClusterConfigValidator(reader));
  server.registerConversion(CONVERSION_WEBHOOK_PATH, { convert: convertClusterPodPlacementConfig });
  manager.add(server);
  o.readiness.follow(server);
  manager.addReadyCheck('webhook', () => o.readiness.local() || 'webhook server not serving yet');
  return server;
}
