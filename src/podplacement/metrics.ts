// Prometheus metrics of pod placement, with the reference operator's names so dashboards and alerts carry over.
// Create one PodPlacementMetrics per registry; the webhook and the reconciler record through it.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The reference's buckets, in seconds. */
export const HISTOGRAM_BUCKETS = [
  0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 2, 4,
];

export class PodPlacementMetrics {
  readonly timeToProcessPod: Histogram;
  readonly timeToProcessGatedPod: Histogram;
  readonly timeToInspectImage: Histogram;
  readonly timeToInspectPodImages: Histogram;
  readonly processedPodsController: Counter;
  readonly failedImageInspection: Counter;
  readonly webhookPodsProcessed: Counter;
  readonly webhookPodsGated: Counter;
  readonly webhookResponseTime: Histogram;
  /**
   * Pods carrying the scheduling gate, counted from the controller's gated-pod cache when scraped (the webhook and
   * the controller may be separate processes, so neither can count it by increments). Registered only by a process
   * that has that cache: see countGatedPodsFrom.
   */
  readonly podsGated: Gauge;
  private gatedPodCount: (() => number | undefined) | undefined;
  /** Tessera extra (not in the reference): pod writes (PATCH) by the reconciler, to check "one write per pod". */
  readonly podWrites: Counter;
  /** Tessera extra: gating webhook failures, each answered by admitting the pod unchanged (it never denies). */
  readonly webhookErrors: Counter;
  /** Tessera extra: 1 while this webhook replica does not gate because the controller's Lease is not renewed. */
  readonly webhookGatingSuspended: Gauge;
  /** Tessera extra: pods this replica admitted without the gate that it would have gated, Lease not renewed. */
  readonly webhookPodsNotGatedControllerStale: Counter;
  /** Tessera extra: pods released without inspection because a controller process died inspecting them. */
  readonly podsReleasedUninspected: Counter;
  /** Tessera extra: failed writes of the in-flight inspection record (inspections went on unrecorded). */
  readonly inFlightRecordWriteFailures: Counter;

  private readonly registry: Registry;

  /**
   * Reports mto_ppo_pods_gated from `count` (the size of the gated-pod cache) at every scrape; while `count` gives
   * undefined (not the leader, cache not synced) the gauge reads 0.
   */
  countGatedPodsFrom(count: () => number | undefined): void {
    if (this.gatedPodCount === undefined) this.registry.registerMetric(this.podsGated);
    this.gatedPodCount = count;
  }

  constructor(registry: Registry) {
    const registers = [registry];
    const histogram = (name: string, help: string): Histogram =>
      new Histogram({ name, help, buckets: HISTOGRAM_BUCKETS, registers });
    this.timeToProcessPod = histogram(
      'mto_ppo_ctrl_time_to_process_pod_seconds',
      'Time the pod reconciler spends on any pod',
    );
    this.timeToProcessGatedPod = histogram(
      'mto_ppo_ctrl_time_to_process_gated_pod_seconds',
      'Time the pod reconciler spends on a pod that carries the scheduling gate',
    );
    this.timeToInspectImage = histogram(
      'mto_ppo_ctrl_time_to_inspect_image_seconds',
      'Time to inspect one image',
    );
    this.timeToInspectPodImages = histogram(
      'mto_ppo_ctrl_time_to_inspect_pod_images_seconds',
      'Time to inspect all the images of a pod',
    );
    this.processedPodsController = new Counter({
      name: 'mto_ppo_ctrl_processed_pods_total',
      help: 'Gated pods processed by the reconciler',
      registers,
    });
    this.failedImageInspection = new Counter({
      name: 'mto_ppo_ctrl_failed_image_inspection_total',
      help: 'Failed image inspections',
      registers,
    });
    this.webhookPodsProcessed = new Counter({
      name: 'mto_ppo_wh_pods_processed_total',
      help: 'Pods seen by the gating webhook',
      registers,
    });
    this.webhookPodsGated = new Counter({
      name: 'mto_ppo_wh_pods_gated_total',
      help: 'Pods gated by the webhook',
      registers,
    });
    this.webhookResponseTime = histogram(
      'mto_ppo_wh_response_time_seconds',
      'Response time of the gating webhook',
    );
    const gatedPodCount = (): number | undefined => this.gatedPodCount?.();
    this.podsGated = new Gauge({
      name: 'mto_ppo_pods_gated',
      help: "Pods currently gated (the controller's cache of gated pods)",
      registers: [],
      collect() {
        this.set(gatedPodCount() ?? 0);
      },
    });
    this.registry = registry;
    this.webhookErrors = new Counter({
      name: 'tessera_podplacement_webhook_errors_total',
      help: 'Gating webhook requests that failed internally; each pod was admitted unchanged (not gated)',
      registers,
    });
    this.webhookGatingSuspended = new Gauge({
      name: 'tessera_podplacement_webhook_gating_suspended',
      help: "1 while this webhook replica admits pods without the gate because the controller's Lease is not renewed",
      registers,
    });
    this.webhookPodsNotGatedControllerStale = new Counter({
      name: 'tessera_podplacement_webhook_pods_not_gated_controller_stale_total',
      help: "Pods admitted without the scheduling gate, that would have been gated, because the controller's Lease was not renewed",
      registers,
    });
    this.podsReleasedUninspected = new Counter({
      name: 'tessera_podplacement_pods_released_uninspected_total',
      help: 'Gated pods released without inspection because a controller process stopped while inspecting their images',
      registers,
    });
    this.inFlightRecordWriteFailures = new Counter({
      name: 'tessera_podplacement_inflight_record_write_failures_total',
      help: 'Failed writes of the record of pods being inspected; the inspections went on unrecorded',
      registers,
    });
    this.podWrites = new Counter({
      name: 'tessera_podplacement_pod_writes_total',
      help: 'Pod writes (merge patches) sent by the pod placement reconciler',
      registers,
    });
  }
}
