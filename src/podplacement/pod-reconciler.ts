// Reconciles gated pods: inspects their images (concurrently, through the caching inspector), plans the placement
// (planPlacement) and writes it with ONE merge patch guarded by resourceVersion, then records the events.
// Failed inspections are retried with exponential backoff (our own label writes do not cut the wait short);
// attempt MAX_RETRY_COUNT always ungates. Reads pods only from the gated-pods cache given by the caller.
import { isConflict, isNotFound } from '../runtime/index.js';
import type { Clock } from '../runtime/index.js';
import type { Logger } from '../runtime/index.js';
import type { ReconcileResult } from '../runtime/index.js';
import { isAbort, type ImageInspector } from '../registry/index.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import { EVENT_MESSAGES, EVENT_REASONS, MAX_RETRY_COUNT } from './constants.js';
import type { EventRecorder } from '../runtime/index.js';
import type { PodPlacementMetrics } from './metrics.js';
import {
  imagesToInspect,
  inspectionFailures,
  planPlacement,
  type ImageArchitectures,
  type PlacementPlan,
  type PodMergePatch,
} from './placement-plan.js';
import { hasSchedulingGate } from './pod-model.js';
import type { Pod } from './pod-types.js';
import type { PullSecretResolver } from './pull-secrets.js';

/** Writes a merge patch to a pod; consumer-owned so tests and benches can count writes. */
export type PodPatcher = (
  namespace: string,
  name: string,
  patch: PodMergePatch,
  signal: AbortSignal,
) => Promise<unknown>;

export interface PodReconcilerOptions {
  /** The gated pod `namespace/name` from the cache, or undefined. */
  getPod: (key: string) => Pod | undefined;
  patchPod: PodPatcher;
  clusterConfig: () => ClusterPodPlacementConfig | undefined;
  /** PodPlacementConfigs of a namespace (cached). */
  podPlacementConfigs: (namespace: string) => readonly PodPlacementConfig[];
  inspector: ImageInspector;
  pullSecrets: PullSecretResolver;
  events: EventRecorder;
  operatorNamespace: string;
  clock: Clock;
  logger: Logger;
  metrics?: PodPlacementMetrics;
  /** Wait before the 2nd attempt, in ms; doubles per attempt. Default: 2,000. */
  retryBaseDelayMs?: number;
  /** Longest wait between attempts, in ms. Default: 30,000. */
  retryMaxDelayMs?: number;
  /** Told about every applied plan (for tests, the bench and `npm start`'s summary). */
  onPlanned?: (key: string, plan: PlacementPlan) => void;
}

export class PodReconciler {
  /** Earliest time (clock ms) of the next attempt for pods whose last inspection failed. */
  private readonly notBefore = new Map<string, number>();
  private readonly baseDelay: number;
  private readonly maxDelay: number;

  constructor(private readonly o: PodReconcilerOptions) {
    this.baseDelay = o.retryBaseDelayMs ?? 2_000;
    this.maxDelay = o.retryMaxDelayMs ?? 30_000;
  }

  /** Delay after the `failures`-th failed attempt. */
  retryDelayMs(failures: number): number {
    return Math.min(this.maxDelay, this.baseDelay * 2 ** Math.max(0, failures - 1));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const started = this.o.clock.now();
    const pod = this.o.getPod(key);
    if (!pod || !hasSchedulingGate(pod)) {
      this.notBefore.delete(key);
      return;
    }
    const due = this.notBefore.get(key);
    if (due !== undefined && due > started) return { requeueAfterMs: due - started };

    this.o.metrics?.processedPodsController.inc();
    const namespace = pod.metadata?.namespace ?? '';
    const ctx = {
      clusterConfig: this.o.clusterConfig(),
      podPlacementConfigs: this.o.podPlacementConfigs(namespace),
      operatorNamespace: this.o.operatorNamespace,
    };
    const failures = inspectionFailures(pod);
    if (failures === 0)
      this.o.events.event(pod, 'Normal', EVENT_REASONS.schedGateAdded, EVENT_MESSAGES.schedGateAdded);
    const inspection = await this.inspect(pod, imagesToInspect(pod, ctx), signal);
    const plan = planPlacement({ pod, inspection, ...ctx, attempt: failures + 1 });
    if (plan.action === 'none') return;

    try {
      this.o.metrics?.podWrites.inc();
      await this.o.patchPod(namespace, pod.metadata?.name ?? '', plan.patch, signal);
    } catch (err) {
      if (isNotFound(err)) return;
      // A stale cache copy: the watch brings the new one; retry shortly with the rate limiter.
      if (!isConflict(err) && plan.action === 'ungate') {
        this.o.events.event(
          pod,
          'Warning',
          EVENT_REASONS.schedGateRemovalFailed,
          EVENT_MESSAGES.schedGateRemovalFailed,
        );
      }
      throw err;
    }
    for (const e of plan.events) this.o.events.event(pod, e.type, e.reason, e.message);
    this.o.onPlanned?.(key, plan);
    const seconds = (this.o.clock.now() - started) / 1000;
    this.o.metrics?.timeToProcessPod.observe(seconds);
    this.o.metrics?.timeToProcessGatedPod.observe(seconds);
    if (plan.action === 'retry') {
      const delay = this.retryDelayMs(failures + 1);
      this.notBefore.set(key, this.o.clock.now() + delay);
      this.o.logger.info(
        { pod: key, attempt: failures + 1, of: MAX_RETRY_COUNT, retryInMs: delay, error: plan.error },
        'image inspection failed; will retry',
      );
      return { requeueAfterMs: delay };
    }
    this.notBefore.delete(key);
    this.o.metrics?.podsGated.dec();
    this.o.logger.debug(
      { pod: key, outcome: plan.outcome, architectures: plan.architectures },
      'pod ungated',
    );
  }

  private async inspect(
    pod: Pod,
    images: { image: string; pullAlways: boolean }[],
    signal: AbortSignal,
  ): Promise<Map<string, ImageArchitectures>> {
    const result = new Map<string, ImageArchitectures>();
    if (images.length === 0) return result;
    const started = this.o.clock.now();
    const keyring = await this.o.pullSecrets.keyringFor(pod, signal);
    await Promise.all(
      images.map(async ({ image, pullAlways }) => {
        const t0 = this.o.clock.now();
        try {
          const got = await this.o.inspector.inspect(image, { keyring, signal, bypassCache: pullAlways });
          result.set(image, { archs: got.architectures });
        } catch (err) {
          if (isAbort(err) || signal.aborted) throw err;
          this.o.metrics?.failedImageInspection.inc();
          result.set(image, { error: err instanceof Error ? err.message : String(err) });
        } finally {
          this.o.metrics?.timeToInspectImage.observe((this.o.clock.now() - t0) / 1000);
        }
      }),
    );
    this.o.metrics?.timeToInspectPodImages.observe((this.o.clock.now() - started) / 1000);
    return result;
  }
}
