// Reconciles the ClusterPodPlacementConfig `cluster`: finalizers, the MutatingWebhookConfiguration's lifecycle and
// the status conditions. Guarantees: the webhook configuration exists only while the config exists, is not being
// deleted, and both the reconciler and the webhook are ready (so no pod is gated with nobody to ungate it); on
// deletion it is removed first, then the config is held (finalizer) until no pod carries the gate, and released.
// Level-based: call reconcile('cluster') on any change of the inputs (the operator wires the informers).
import {
  ignoreNotFound,
  isConflict,
  isNotFound,
  type Clock,
  type Logger,
  type ReconcileResult,
  type ResourceClient,
} from '../runtime/index.js';
import type { ClusterPodPlacementConfig, LabelSelector } from './api/schema.js';
import { canServeMutatingWebhook, desiredConditions, mergeConditions, sameConditions } from './conditions.js';
import { CLUSTER_CONFIG_NAME, FINALIZERS, MUTATING_WEBHOOK } from './constants.js';
import { execFormatErrorMonitorEnabled } from './unsupported-plugins.js';
import {
  mutatingWebhookConfiguration,
  type WebhookConfigurationObject,
  type WebhookEndpoint,
  type WebhookTlsTrust,
} from './webhook-configurations.js';

export interface ClusterConfigReconcilerOptions {
  /** The cached `cluster` object, or undefined. */
  getClusterConfig: () => ClusterPodPlacementConfig | undefined;
  clusterConfigs: ResourceClient<ClusterPodPlacementConfig & { metadata: { name: string } }>;
  webhookConfigurations: ResourceClient<WebhookConfigurationObject>;
  /** Number of PodPlacementConfigs cluster-wide (cached). */
  podPlacementConfigCount: () => number;
  /** Number of pods carrying the gate (cached). */
  gatedPodCount: () => number;
  controllerReady: () => boolean;
  webhookReady: () => boolean;
  endpoint: WebhookEndpoint;
  /** The operator's namespace: the API server never sends its pods (nor kube-*, openshift-*) to the webhook. */
  operatorNamespace: string;
  /** Current trust material for the webhook (CA bundle or service-ca injection). */
  trust: () => WebhookTlsTrust;
  clock: Clock;
  logger: Logger;
  /** Time to keep waiting for late gated pods after the webhook configuration is deleted, in ms. Default: 3,000. */
  teardownGraceMs?: number;
  /** Re-check interval while nothing changes (heals a deleted webhook configuration), in ms. Default: 30,000. */
  resyncMs?: number;
  /**
   * After a (re)start, how long an existing webhook configuration is left alone while this process is not ready
   * yet, in ms, so a restart does not open a window where new pods go ungated. Default: 30,000.
   */
  startupGraceMs?: number;
}

function selectorOf(config: ClusterPodPlacementConfig): LabelSelector | undefined {
  return config.spec?.namespaceSelector;
}

export class ClusterConfigReconciler {
  private webhookDeletedAt: number | undefined;
  /** Clock time of the first reconcile of this process. */
  private startedAt: number | undefined;
  /** This process has been ready at least once (so "not ready" now means readiness was lost). */
  private everReady = false;

  constructor(private readonly o: ClusterConfigReconcilerOptions) {}

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    if (key !== CLUSTER_CONFIG_NAME) return;
    const config = this.o.getClusterConfig();
    if (!config) {
      await this.deleteMutatingWebhook(signal);
      return;
    }
    if (config.metadata.deletionTimestamp) return this.teardown(config, signal);
    this.webhookDeletedAt = undefined;

    await this.ensureFinalizers(
      config,
      [
        FINALIZERS.podPlacement,
        ...(this.o.podPlacementConfigCount() > 0 ? [FINALIZERS.noPodPlacementConfig] : []),
      ],
      signal,
    );
    const observation = {
      controllerReady: this.o.controllerReady(),
      webhookReady: this.o.webhookReady(),
      deprovisioning: false,
      mutatingWebhookConfigurationPresent: false,
      execFormatErrorMonitorEnabled: execFormatErrorMonitorEnabled(config),
    };
    const now = this.o.clock.now();
    this.startedAt ??= now;
    if (canServeMutatingWebhook(observation)) {
      this.everReady = true;
      await this.ensureMutatingWebhook(selectorOf(config), signal);
      observation.mutatingWebhookConfigurationPresent = true;
    } else if (!this.everReady && now - this.startedAt < (this.o.startupGraceMs ?? 30_000)) {
      // Starting up: keep what is there until we are ready or the grace period ends.
      observation.mutatingWebhookConfigurationPresent = await this.mutatingWebhookExists(signal);
      await this.writeStatus(config, observation, signal);
      return { requeueAfterMs: 1_000 };
    } else {
      await this.deleteMutatingWebhook(signal);
    }
    await this.writeStatus(config, observation, signal);
    return { requeueAfterMs: this.o.resyncMs ?? 30_000 };
  }

  private async teardown(
    config: ClusterPodPlacementConfig,
    signal: AbortSignal,
  ): Promise<ReconcileResult | void> {
    await this.deleteMutatingWebhook(signal);
    const now = this.o.clock.now();
    this.webhookDeletedAt ??= now;
    await this.writeStatus(
      config,
      {
        controllerReady: this.o.controllerReady(),
        webhookReady: this.o.webhookReady(),
        deprovisioning: true,
        mutatingWebhookConfigurationPresent: false,
        execFormatErrorMonitorEnabled: execFormatErrorMonitorEnabled(config),
      },
      signal,
    );
    const gated = this.o.gatedPodCount();
    const grace = (this.o.teardownGraceMs ?? 3_000) - (now - this.webhookDeletedAt);
    if (gated > 0 || grace > 0) {
      this.o.logger.info({ gatedPods: gated }, 'deprovisioning: waiting for gated pods to be released');
      return { requeueAfterMs: Math.max(500, Math.min(grace > 0 ? grace : 1_000, 1_000)) };
    }
    const keep = this.o.podPlacementConfigCount() > 0 ? [FINALIZERS.noPodPlacementConfig] : [];
    await this.ensureFinalizers(config, keep, signal, true);
    if (keep.length > 0)
      this.o.logger.info(
        {},
        'deprovisioning: PodPlacementConfigs still exist; the config is kept until they are deleted',
      );
  }

  /** Makes our finalizers exactly `wanted` (others' finalizers untouched). */
  private async ensureFinalizers(
    config: ClusterPodPlacementConfig,
    wanted: string[],
    signal: AbortSignal,
    deleting = false,
  ): Promise<void> {
    const ours: string[] = Object.values(FINALIZERS);
    const current = config.metadata.finalizers ?? [];
    const next = [
      ...current.filter((f) => !ours.includes(f) || wanted.includes(f)),
      ...wanted.filter((f) => !current.includes(f)),
    ];
    if (next.length === current.length && next.every((f, i) => f === current[i])) return;
    if (deleting && next.some((f) => !current.includes(f))) return; // never add finalizers to an object being deleted
    try {
      await this.o.clusterConfigs.mergePatch(
        { name: CLUSTER_CONFIG_NAME },
        { metadata: { finalizers: next, resourceVersion: config.metadata.resourceVersion } },
        { signal },
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err; // a conflict retries with the newer object from the cache
    }
  }

  private async ensureMutatingWebhook(
    selector: LabelSelector | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const desired = mutatingWebhookConfiguration(
      this.o.endpoint,
      this.o.trust(),
      selector,
      this.o.operatorNamespace,
    );
    const existing = await ignoreNotFound(
      this.o.webhookConfigurations.get({ name: MUTATING_WEBHOOK.configurationName }, signal),
    );
    if (!existing) {
      await this.o.webhookConfigurations.create(desired, { signal });
      this.o.logger.info(
        { name: desired.metadata.name },
        'mutating webhook configuration created: pods are gated from now on',
      );
      return;
    }
    if (sameWebhooks(existing, desired)) return;
    try {
      await this.o.webhookConfigurations.update(
        { ...desired, metadata: { ...desired.metadata, resourceVersion: existing.metadata.resourceVersion } },
        { signal },
      );
      this.o.logger.info({ name: desired.metadata.name }, 'mutating webhook configuration updated');
    } catch (err) {
      if (!isConflict(err)) throw err;
      throw err;
    }
  }

  private async mutatingWebhookExists(signal: AbortSignal): Promise<boolean> {
    try {
      await this.o.webhookConfigurations.get({ name: MUTATING_WEBHOOK.configurationName }, signal);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  private async deleteMutatingWebhook(signal: AbortSignal): Promise<void> {
    try {
      await this.o.webhookConfigurations.delete({ name: MUTATING_WEBHOOK.configurationName }, { signal });
      this.o.logger.info({}, 'mutating webhook configuration deleted: new pods are no longer gated');
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private async writeStatus(
    config: ClusterPodPlacementConfig,
    observation: Parameters<typeof desiredConditions>[0],
    signal: AbortSignal,
  ): Promise<void> {
    const merged = mergeConditions(
      config.status?.conditions,
      desiredConditions(observation, config.metadata.generation),
      new Date(this.o.clock.now()),
    );
    if (sameConditions(config.status?.conditions, merged)) return;
    await ignoreNotFound(
      this.o.clusterConfigs.mergePatch(
        { name: CLUSTER_CONFIG_NAME },
        { status: { conditions: merged } },
        { subresource: 'status', signal },
      ),
    );
  }
}

/** JSON with object keys sorted, so that field order (ours vs. the API server's) does not matter. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Compares the fields we own: selector, client config, rules, policies. */
export function sameWebhooks(
  existing: WebhookConfigurationObject,
  desired: WebhookConfigurationObject,
): boolean {
  const pick = (w: WebhookConfigurationObject, keepCaBundle: boolean) =>
    canonical(
      w.webhooks.map((h) => {
        const cc = { ...(h['clientConfig'] as Record<string, unknown> | undefined) };
        if (!keepCaBundle) delete cc['caBundle'];
        return [
          h['name'],
          cc,
          h['namespaceSelector'] ?? {},
          h['matchConditions'] ?? [],
          h['rules'],
          h['failurePolicy'],
          h['sideEffects'],
        ];
      }),
    );
  // With service-ca injection the caBundle is not ours to compare.
  const ours = desired.webhooks.some(
    (h) => (h['clientConfig'] as Record<string, unknown> | undefined)?.['caBundle'] !== undefined,
  );
  const annotations = (w: WebhookConfigurationObject) => canonical(w.metadata.annotations ?? {});
  return pick(existing, ours) === pick(desired, ours) && annotations(existing) === annotations(desired);
}
