// The mutating admission handler for pods (path /add-pod-scheduling-gate): applies decideAdmission() to the pod
// under admission and answers with its JSON patch. Never denies: any problem (no cluster config yet, a malformed
// object, a bug that throws) admits the pod unchanged, matching failurePolicy Ignore, and a thrown error is logged
// and counted (tessera_podplacement_webhook_errors_total). failurePolicy 'Ignore' also tells the webhook server to
// admit unchanged if this handler ever misses its time budget. Reads configs from caches only, so it answers in
// microseconds and never calls the API server on the admission path. While the controller's Lease is not renewed
// (gatingSuspended), pods are admitted ungated: a gate nobody removes would keep them Pending.
import type { Operation } from 'fast-json-patch';
import {
  isRecord,
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionResult,
  type Clock,
  type Logger,
} from '../runtime/index.js';
import { decideAdmission } from './admission.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import type { PodPlacementMetrics } from './metrics.js';
import type { Pod } from './pod-types.js';

export interface GatingWebhookOptions {
  clusterConfig: () => ClusterPodPlacementConfig | undefined;
  podPlacementConfigs: (namespace: string) => readonly PodPlacementConfig[];
  operatorNamespace: string;
  clock: Clock;
  logger: Logger;
  metrics?: PodPlacementMetrics;
  /**
   * True while gating is suspended because the controller's Lease is not renewed (operator/controller-lease-watch.ts);
   * read on every request, so it must be cheap. Default: never suspended.
   */
  gatingSuspended?: () => boolean;
}

function isPod(v: unknown): v is Pod {
  return isRecord(v);
}

export class GatingWebhook implements AdmissionHandler {
  /** Gating is an optimisation, never a gate on admission: a failure admits the pod as it came. */
  readonly failurePolicy = 'Ignore' as const;

  constructor(private readonly o: GatingWebhookOptions) {}

  handle(request: AdmissionRequest): AdmissionResult {
    const started = this.o.clock.now();
    try {
      return this.decide(request);
    } catch (err) {
      this.o.metrics?.webhookErrors.inc();
      this.o.logger.error(
        {
          uid: request.uid,
          namespace: request.namespace,
          err: err instanceof Error ? err.message : String(err),
        },
        'gating webhook failed; pod admitted unchanged (not gated)',
      );
      return { allowed: true };
    } finally {
      this.o.metrics?.webhookResponseTime.observe((this.o.clock.now() - started) / 1000);
    }
  }

  private decide(request: AdmissionRequest): AdmissionResult {
    this.o.metrics?.webhookPodsProcessed.inc();
    const cluster = this.o.clusterConfig();
    if (request.operation !== 'CREATE' || request.resource.resource !== 'pods' || request.subResource) {
      return { allowed: true };
    }
    if (!cluster || cluster.metadata.deletionTimestamp || !isPod(request.object)) return { allowed: true };
    const namespace = request.namespace ?? request.object.metadata?.namespace ?? '';
    const decision = decideAdmission(request.object, {
      namespace,
      operatorNamespace: this.o.operatorNamespace,
      clusterConfig: cluster,
      podPlacementConfigs: this.o.podPlacementConfigs(namespace),
      gatingSuspended: this.o.gatingSuspended?.() ?? false,
    });
    if (decision.gate) {
      this.o.metrics?.webhookPodsGated.inc();
    } else if (decision.suspended) {
      this.o.metrics?.webhookPodsNotGatedControllerStale.inc();
      this.o.logger.debug({ namespace }, "pod not gated: the controller's Lease is not renewed");
    } else {
      this.o.logger.trace({ namespace, reason: decision.ignoreReason }, 'pod not gated');
    }
    const result: AdmissionResult = { allowed: true };
    if (decision.patch.length > 0) result.patch = decision.patch as Operation[];
    return result;
  }
}
