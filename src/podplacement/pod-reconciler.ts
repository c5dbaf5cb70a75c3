// Reconciles gated pods: inspects their images (concurrently, through the caching inspector), plans the placement
// (planPlacement) and writes it with ONE merge patch guarded by resourceVersion, then records the events.
// Failed inspections are classified (classifyRegistryFailure): permanent ones ungate at once, transient ones are
// retried with exponential backoff (our own label writes do not cut the wait short); attempt MAX_RETRY_COUNT
// always ungates. Fairness under hostile registries: a pod waits on registries at most the per-pod inspection
// deadline in total over its attempts (then it is ungated, naming the registry that did not answer), and a worker
// never waits for a busy tenant: registry inspections run under caps in total (below the worker count), per
// namespace and per registry host (inspection-slots.ts); a pod over one goes back to the queue and is woken when a
// slot is set aside for it, fairest namespace first, so any number of tenants with slow registries cannot occupy
// every worker or starve another tenant. Reads pods only from the gated-pods cache given by the caller. This file
// keeps the reconcile flow; the state between reconciles lives in inspection-slots.ts (who may wait on registries,
// and the held-back pods' wake line) and retry-schedule.ts (when a pod tries again, and its deadline budget).
import {
  isConflict,
  isNotFound,
  splitObjectKey,
  type Clock,
  type Logger,
  type ReconcileResult,
  type EventRecorder,
} from '../runtime/index.js';
import {
  Keyring,
  PolicyRefusalError,
  classifyRegistryFailure,
  isAbort,
  resolveShortName,
  type ImageInspector,
} from '../registry/index.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import { EVENT_MESSAGES, EVENT_REASONS, MAX_RETRY_COUNT } from './constants.js';
import type { PodPlacementMetrics } from './metrics.js';
import {
  imagesToInspect,
  inspectionFailures,
  planPlacement,
  type ImageArchitectures,
  type PlacementPlan,
  type PodMergePatch,
} from './placement-plan.js';
import {
  HELD_BACK_POLL_MS,
  HELD_BACK_RECHECK_MS,
  InspectionSlots,
  inspectionSlotCaps,
} from './inspection-slots.js';
import { RetrySchedule } from './retry-schedule.js';
import { hasSchedulingGate } from './pod-model.js';
import type { Pod } from './pod-types.js';
import type { PullSecretResolver } from './pull-secrets.js';
import { uninspected, type InspectionVerdict } from './inspection-breaker.js';

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
  /** The cluster's search registries for short names, in order (none: Docker Hub's normalisation). */
  searchRegistries?: () => readonly string[];
  pullSecrets: PullSecretResolver;
  events: EventRecorder;
  operatorNamespace: string;
  clock: Clock;
  logger: Logger;
  metrics?: PodPlacementMetrics;
  /** Wait before the 2nd attempt, in ms; doubles per attempt. Default: DEFAULT_RETRY_BASE_DELAY_MS (2,000). */
  retryBaseDelayMs?: number;
  /** Longest wait between attempts, in ms. Default: DEFAULT_RETRY_MAX_DELAY_MS (30,000). */
  retryMaxDelayMs?: number;
  /**
   * Longest time a pod waits for its images' registries, in ms, over all its attempts; then it is ungated
   * (fallback architecture if configured) with an event naming the registry that did not answer. Default:
   * DEFAULT_INSPECTION_DEADLINE_MS (15,000).
   */
  inspectionDeadlineMs?: number;
  /**
   * Pods inspected at once (waiting on registries), all namespaces together; keep it below the controller's
   * workers so pods the cache answers always find a worker. Default: defaultInspectionSlotCaps(DEFAULT_WORKERS) (6).
   */
  maxInspections?: number;
  /**
   * Pods of one namespace inspected at once; more wait in the queue, not in a worker. Default:
   * defaultInspectionSlotCaps(DEFAULT_WORKERS) (2).
   */
  maxInspectionsPerNamespace?: number;
  /**
   * Pods inspected at once per registry host named in their images, all namespaces together. Default:
   * defaultInspectionSlotCaps(DEFAULT_WORKERS) (4).
   */
  maxInspectionsPerRegistry?: number;
  /**
   * Puts a pod key back on the work queue at once; the reconciler calls it when a slot frees for a pod it held
   * back, so held-back pods neither poll nor wait longer than needed. Default: none (they poll).
   */
  wake?: (key: string) => void;
  /**
   * Delay before a pod held back by those caps is looked at again, in ms (a safety net when `wake` is given).
   * Default: HELD_BACK_RECHECK_MS (2,000) with `wake`, else HELD_BACK_POLL_MS (250).
   */
  saturatedRequeueMs?: number;
  /** Told about every applied plan (for tests, the bench and `npm start`'s summary). */
  onPlanned?: (key: string, plan: PlacementPlan) => void;
  /** Told about every image whose inspection failed (update insights group them by registry). Default: none. */
  onInspectionFailure?: (failure: { image: string; namespace: string; error: string }) => void;
  /**
   * Told before and after each registry step (inspection-breaker.ts), so a pod whose inspection kills the process
   * is released uninspected by the next one instead of being inspected again. Default: none.
   */
  breaker?: InspectionRecorder;
}

/** The part of InspectionBreaker the reconciler uses. */
export interface InspectionRecorder {
  beginInspection(key: string, uid: string, signal: AbortSignal): Promise<InspectionVerdict>;
  endInspection(key: string): void;
}

// Re-exported for the callers that know it from here (the wiring, the bench).
export { DEFAULT_INSPECTION_DEADLINE_MS } from './retry-schedule.js';

/** One image of a pod to inspect (imagesToInspect). */
type ImageToInspect = ReturnType<typeof imagesToInspect>[number];

/**
 * Registry hosts `images` are looked up on, each once: for a short name, every search registry it may be tried on
 * (`searchRegistries`, the cluster's containerRuntimeSearchRegistries), so a slow search registry holds back only its
 * own slots. References that do not parse name none (they fail permanently).
 */
export function registryHostsOf(
  images: readonly { image: string }[],
  searchRegistries: readonly string[] = [],
): string[] {
  const hosts = new Set<string>();
  for (const { image } of images) {
    try {
      for (const candidate of resolveShortName(image, searchRegistries).candidates)
        hosts.add(candidate.registry.toLowerCase());
    } catch {
      // An invalid reference is never sent anywhere.
    }
  }
  return [...hosts];
}

export class PodReconciler {
  /** When each pod whose inspection failed tries again, and each pod's registry wait so far. */
  private readonly schedule: RetrySchedule;
  private readonly saturatedRequeueMs: number;
  /** Registry inspections in flight (in total, per namespace, per host) and the pods waiting for one. */
  private readonly slots: InspectionSlots;

  constructor(private readonly o: PodReconcilerOptions) {
    this.schedule = new RetrySchedule(o);
    this.saturatedRequeueMs = o.saturatedRequeueMs ?? (o.wake ? HELD_BACK_RECHECK_MS : HELD_BACK_POLL_MS);
    this.slots = new InspectionSlots({
      ...inspectionSlotCaps(o),
      clock: o.clock,
      wake: o.wake,
      // A woken pod normally comes back within milliseconds; one that does not (its queue stopped) loses its turn.
      reservationTtlMs: Math.max(this.saturatedRequeueMs, this.schedule.deadlineMs),
    });
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const started = this.o.clock.now();
    const pod = this.o.getPod(key);
    if (!pod || !hasSchedulingGate(pod)) {
      this.schedule.forget(key);
      this.slots.forget(key, splitObjectKey(key).namespace);
      return;
    }
    const dueInMs = this.schedule.dueInMs(key, started);
    if (dueInMs > 0) return { requeueAfterMs: dueInMs };

    const namespace = pod.metadata?.namespace ?? '';
    const ctx = {
      clusterConfig: this.o.clusterConfig(),
      podPlacementConfigs: this.o.podPlacementConfigs(namespace),
      operatorNamespace: this.o.operatorNamespace,
    };
    const failures = inspectionFailures(pod);
    const images = imagesToInspect(pod, ctx);
    // Pull secrets are read by name through a brief cache, so reading them before a slot costs a held-back pod
    // little; it tells whether the cache answers every image, and then the pod needs no registry slot at all.
    const keyring = images.length > 0 ? await this.o.pullSecrets.keyringFor(pod, signal) : Keyring.empty;
    const needsRegistry = images.some(
      ({ image, pullAlways, probeOperatorBundle }) =>
        pullAlways || !(this.o.inspector.isCached?.(image, keyring, { probeOperatorBundle }) ?? false),
    );
    let release: (() => void) | undefined;
    if (needsRegistry) {
      const slot = this.slots.tryAcquire(
        key,
        namespace,
        registryHostsOf(images, this.o.searchRegistries?.() ?? []),
      );
      if ('saturated' in slot) {
        // Not this worker's job to wait for a busy tenant or registry: back to the queue until woken.
        this.o.logger.debug(
          { pod: key, saturated: slot.saturated, retryInMs: this.saturatedRequeueMs },
          'registry inspections at their limit; pod requeued',
        );
        return { requeueAfterMs: this.saturatedRequeueMs };
      }
      release = slot.release;
    } else {
      // The cache answers now: a turn it was waiting for (or was given) goes to the next pod.
      this.slots.forget(key, namespace);
    }
    this.o.metrics?.processedPodsController.inc();
    if (failures === 0)
      this.o.events.event(pod, 'Normal', EVENT_REASONS.schedGateAdded, EVENT_MESSAGES.schedGateAdded);
    let inspection: Map<string, ImageArchitectures>;
    try {
      // The deadline is per pod, over all its attempts: a registry that keeps a pod waiting costs it at most
      // inspectionDeadlineMs in total, however its waits are split by transient failures.
      const uid = pod.metadata?.uid ?? '';
      const t0 = this.o.clock.now();
      try {
        const budgetMs = this.schedule.budgetMs(key, uid);
        inspection = needsRegistry
          ? await this.inspectRecorded(key, uid, images, keyring, signal, budgetMs)
          : await this.inspect(images, keyring, signal, budgetMs);
      } finally {
        if (images.length > 0) this.schedule.addWait(key, uid, this.o.clock.now() - t0);
      }
    } finally {
      release?.();
    }
    if (this.o.onInspectionFailure)
      for (const [image, result] of inspection)
        // Not a registry's failure when the operator did not ask it (update insights group these by registry).
        if ('error' in result && result.failure !== 'uninspected' && result.failure !== 'refused')
          this.o.onInspectionFailure({ image, namespace, error: result.error });
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
      const delay = this.schedule.retryLater(key, failures + 1, this.o.clock.now());
      this.o.logger.info(
        { pod: key, attempt: failures + 1, of: MAX_RETRY_COUNT, retryInMs: delay, error: plan.error },
        'image inspection failed; will retry',
      );
      return { requeueAfterMs: delay };
    }
    this.schedule.forget(key);
    this.o.logger.debug(
      { pod: key, outcome: plan.outcome, architectures: plan.architectures },
      'pod ungated',
    );
  }

  /** Inspections in flight for pods of `namespace` (for tests and metrics). */
  inspectionsInFlight(namespace: string): number {
    return this.slots.inFlight(namespace);
  }

  /** inspect(), with the pod on the breaker's record for the registry step (or released uninspected). */
  private async inspectRecorded(
    key: string,
    uid: string,
    images: ImageToInspect[],
    keyring: Keyring,
    signal: AbortSignal,
    deadlineMs: number,
  ): Promise<Map<string, ImageArchitectures>> {
    const breaker = this.o.breaker;
    if (breaker === undefined) return this.inspect(images, keyring, signal, deadlineMs);
    if ((await breaker.beginInspection(key, uid, signal)) === 'release-uninspected')
      return uninspected(images);
    try {
      return await this.inspect(images, keyring, signal, deadlineMs);
    } finally {
      breaker.endInspection(key);
    }
  }

  private async inspect(
    images: ImageToInspect[],
    keyring: Keyring,
    signal: AbortSignal,
    deadlineMs: number,
  ): Promise<Map<string, ImageArchitectures>> {
    const result = new Map<string, ImageArchitectures>();
    if (images.length === 0) return result;
    const started = this.o.clock.now();
    // A shared registry request goes on past the deadline for other waiters (and fills the cache); only this
    // pod stops waiting.
    const deadline = new AbortController();
    const timer = this.o.clock.setTimer(() => deadline.abort(), deadlineMs);
    const attemptSignal = AbortSignal.any([signal, deadline.signal]);
    try {
      await Promise.all(
        images.map(async ({ image, pullAlways, probeOperatorBundle }) => {
          const t0 = this.o.clock.now();
          try {
            const got = await this.o.inspector.inspect(image, {
              keyring,
              signal: attemptSignal,
              bypassCache: pullAlways,
              probeOperatorBundle,
            });
            result.set(image, { archs: got.architectures });
          } catch (err) {
            if (signal.aborted) throw err;
            this.o.metrics?.failedImageInspection.inc();
            result.set(image, this.failureOf(image, err, deadline.signal.aborted));
          } finally {
            this.o.metrics?.timeToInspectImage.observe((this.o.clock.now() - t0) / 1000);
          }
        }),
      );
    } finally {
      timer.cancel();
    }
    this.o.metrics?.timeToInspectPodImages.observe((this.o.clock.now() - started) / 1000);
    return result;
  }

  /** The failure recorded for one image: what happened, in words that name the cause, and its class. */
  private failureOf(image: string, err: unknown, deadlinePassed: boolean): ImageArchitectures {
    if (deadlinePassed && (isAbort(err) || !(err instanceof Error) || err.name === 'AbortError')) {
      const hosts = registryHostsOf([{ image }], this.o.searchRegistries?.() ?? []);
      const host =
        hosts.length === 0
          ? 'registry of the image'
          : `${hosts.length > 1 ? 'registries' : 'registry'} ${hosts.join(', ')}`;
      return {
        error: `${host} did not answer within ${formatSeconds(this.schedule.deadlineMs)} (image ${image})`,
        failure: 'deadline',
      };
    }
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof PolicyRefusalError) return { error: message, failure: 'refused' };
    return classifyRegistryFailure(err) === 'permanent'
      ? { error: `permanent error, not retried: ${message}`, failure: 'permanent' }
      : { error: message, failure: 'transient' };
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
