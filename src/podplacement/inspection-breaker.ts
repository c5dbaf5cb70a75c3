// The poison-pod breaker. An image that makes the controller crash while it is inspected (a parser bug, memory
// the budgets miss) would crash every controller process that inspects it again: a crash loop, and with it every
// covered namespace's new pods stay gated. So the controller writes down which pods it is inspecting *before* the
// registry step (inflight-record.ts, one ConfigMap in its namespace) and clears them after; a process that starts
// leading reads what the previous one left: those pods, if still gated (same uid), are released without inspection
// (fallback architecture if set, the image-inspect-error annotation and a Warning event say why), not inspected.
// Guarantees: at most one record write in flight, and every change made meanwhile rides on the next one, so the
// cost is about one ConfigMap write per batch of inspections, not per pod; only registry work is recorded (a cache
// answer cannot crash); a graceful stop clears the pods in flight (it is not a crash). Not guaranteed: a write
// that fails lets the inspection go on unrecorded (counted, logged); a process that lost its lease and writes
// late may overwrite a new leader's record (only the leader writes, and it stops within the renew deadline).
import {
  ConfigMaps,
  Pods,
  ResourceClient,
  isAlreadyExists,
  isNotFound,
  realClock,
  type Clock,
  type KubeClient,
  type KubeObject,
  type Logger,
  type Runnable,
  errorMessage,
  waitForAbort,
} from '../runtime/index.js';
import { ApiStatusError, InvalidArgumentError } from '../runtime/light.js';
import { SCHEDULING_GATE } from './constants.js';
import {
  INFLIGHT_RECORD_KEY,
  INFLIGHT_RECORD_NAME,
  decodeInFlightRecord,
  encodeInFlightRecord,
  inFlightRecordConfigMap,
  recordBudgetBytes,
  type InFlightEntry,
  type InFlightRecordConfigMap,
} from './inflight-record.js';
import type { PodPlacementMetrics } from './metrics.js';
import type { ImageArchitectures } from './placement-plan.js';
import type { Pod } from './pod-types.js';

/** The annotation and event text of a pod released without inspection. */
export const RELEASED_UNINSPECTED_MESSAGE =
  "released without inspection: the controller stopped while inspecting this pod's images (possible poison image)";

/** What to do with a pod about to be inspected. */
export type InspectionVerdict = 'inspect' | 'release-uninspected';

/** The inspection result that releases a pod without inspection: every image failed, `uninspected`. */
export function uninspected(images: readonly { image: string }[]): Map<string, ImageArchitectures> {
  return new Map(
    images.map(({ image }) => [image, { error: RELEASED_UNINSPECTED_MESSAGE, failure: 'uninspected' }]),
  );
}

export interface InspectionBreakerOptions {
  client: KubeClient;
  /** The operator namespace, where the record ConfigMap lives. */
  namespace: string;
  /** Most inspections in flight at once (the reconciler's workers); sizes the record's byte budget. */
  maxInFlight: number;
  clock?: Clock;
  logger: Logger;
  metrics?: PodPlacementMetrics;
  /**
   * Longest time the start waits for the record (retrying), in ms; then it goes on without the breaker, logged, so
   * a broken ConfigMap never stops placement. Default: 30,000.
   */
  loadTimeoutMs?: number;
  /** Longest wait at a graceful stop for the inspections in flight to end before the last write, in ms. Default: 5,000. */
  drainTimeoutMs?: number;
}

export class InspectionBreaker implements Runnable {
  readonly name = 'inspection-breaker';
  readonly needsLeaderElection = true;
  private readonly configMaps: ResourceClient<InFlightRecordConfigMap>;
  private readonly pods: ResourceClient<Pod & KubeObject>;
  private readonly clock: Clock;
  private readonly budgetBytes: number;
  /** Pods being inspected now, key -> uid. */
  private readonly inFlight = new Map<string, string>();
  /**
   * Pods that were in flight when a previous process stopped and are still gated, key -> uid. Kept (in memory and in
   * the record) for the whole leadership term, so a release that must be retried is still not an inspection; the
   * next start drops those no longer gated.
   */
  private readonly poisoned = new Map<string, string>();
  /** Resolves once the record is loaded (or given up on); beginInspection waits for it. */
  private readonly loaded: Promise<void>;
  private markLoaded!: () => void;
  /** Off: the record could not be read; inspections go on unrecorded. */
  private disabled = false;
  private stopping = false;
  private exists = false;
  /** The write in progress (resolves true when it succeeded); never rejects. */
  private writing: Promise<boolean> = Promise.resolve(true);
  /** The write queued behind it; every change made before it starts rides on it. */
  private queued: Promise<boolean> | undefined;
  private onDrained: (() => void) | undefined;

  constructor(private readonly o: InspectionBreakerOptions) {
    if (!Number.isInteger(o.maxInFlight) || o.maxInFlight < 1 || o.maxInFlight > 1_000)
      throw new InvalidArgumentError('workers', `must be an integer from 1 to 1000, got ${o.maxInFlight}`);
    this.configMaps = new ResourceClient<InFlightRecordConfigMap>(o.client, ConfigMaps);
    this.pods = new ResourceClient<Pod & KubeObject>(o.client, Pods);
    this.clock = o.clock ?? realClock;
    this.budgetBytes = recordBudgetBytes(o.maxInFlight);
    this.loaded = new Promise((resolve) => (this.markLoaded = resolve));
  }

  async start(signal: AbortSignal): Promise<void> {
    try {
      await this.recover(signal);
    } finally {
      this.markLoaded();
    }
    await waitForAbort(signal);
    await this.stop();
  }

  /**
   * Call before the registry step for pod `key` (uid `uid`). Resolves once the pod is on the record (or the write
   * failed), or at once with 'release-uninspected' for a pod a previous process died inspecting. Every call that
   * resolved 'inspect' must be followed by endInspection(key).
   */
  async beginInspection(key: string, uid: string, signal: AbortSignal): Promise<InspectionVerdict> {
    await abortable(this.loaded, signal);
    if (this.poisoned.get(key) === uid && uid !== '') {
      this.o.metrics?.podsReleasedUninspected.inc();
      this.o.logger.warn({ pod: key }, RELEASED_UNINSPECTED_MESSAGE);
      return 'release-uninspected';
    }
    if (this.disabled || this.stopping || signal.aborted) return 'inspect';
    this.inFlight.set(key, uid);
    await abortable(this.sync(), signal);
    return 'inspect';
  }

  /** Call when the registry step for `key` ended, however it ended. */
  endInspection(key: string): void {
    if (!this.inFlight.delete(key)) return;
    if (this.inFlight.size === 0) this.onDrained?.();
    if (!this.disabled && !this.stopping) void this.sync();
  }

  /** Pods on the record now (for tests and logs). */
  recorded(): InFlightEntry[] {
    return this.entries();
  }

  private entries(): InFlightEntry[] {
    return [...this.poisoned, ...this.inFlight].map(([key, uid]) => ({ key, uid }));
  }

  /** Reads what the previous process left, keeps the pods still gated, and rewrites the record to just those. */
  private async recover(signal: AbortSignal): Promise<void> {
    const giveUpAt = this.clock.now() + (this.o.loadTimeoutMs ?? 30_000);
    let delayMs = 200;
    for (;;) {
      try {
        const left = await this.read(signal);
        for (const entry of left) {
          if (await this.stillGated(entry, signal)) this.poisoned.set(entry.key, entry.uid);
        }
        if (left.length > 0) {
          this.o.logger.warn(
            { pods: [...this.poisoned.keys()], recorded: left.length },
            'the previous controller process stopped while inspecting these pods; they are released without inspection',
          );
          await this.sync();
        }
        return;
      } catch (err) {
        if (signal.aborted) return;
        const forbidden = err instanceof ApiStatusError && err.statusCode === 403;
        if (forbidden || this.clock.now() + delayMs > giveUpAt) {
          this.disabled = true;
          this.o.logger.error(
            { configMap: this.where(), err: errorMessage(err) },
            'cannot read the record of pods in flight: pods whose inspection stops a controller process are ' +
              `not recognised after a restart (check the controller's RBAC: get, update configmaps/${INFLIGHT_RECORD_NAME})`,
          );
          return;
        }
        await this.clock.sleep(delayMs, signal);
        delayMs = Math.min(delayMs * 2, 5_000);
      }
    }
  }

  private async read(signal: AbortSignal): Promise<InFlightEntry[]> {
    let cm: InFlightRecordConfigMap;
    try {
      cm = await this.configMaps.get({ namespace: this.o.namespace, name: INFLIGHT_RECORD_NAME }, signal);
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
    this.exists = true;
    const decoded = decodeInFlightRecord(cm.data?.[INFLIGHT_RECORD_KEY], this.budgetBytes);
    if (decoded.invalid > 0 || decoded.truncated)
      this.o.logger.warn(
        {
          configMap: this.where(),
          invalidLines: decoded.invalid,
          truncated: decoded.truncated,
          budgetBytes: this.budgetBytes,
        },
        'the record of pods in flight has invalid lines or exceeds its budget; those were ignored',
      );
    return decoded.entries;
  }

  /** Whether the recorded pod still exists with that uid and still carries the gate. */
  private async stillGated(entry: InFlightEntry, signal: AbortSignal): Promise<boolean> {
    const slash = entry.key.indexOf('/');
    try {
      const pod = await this.pods.get(
        { namespace: entry.key.slice(0, slash), name: entry.key.slice(slash + 1) },
        signal,
      );
      return (
        pod.metadata?.uid === entry.uid &&
        (pod.spec?.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE)
      );
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Resolves (true on success) once a write that started after this call has finished. */
  private sync(): Promise<boolean> {
    if (this.queued) return this.queued;
    const queued = this.writing.then(() => {
      this.queued = undefined;
      this.writing = this.write();
      return this.writing;
    });
    this.queued = queued;
    return queued;
  }

  /** Writes the record as it is now; never rejects. */
  private async write(): Promise<boolean> {
    const body = inFlightRecordConfigMap(this.o.namespace, encodeInFlightRecord(this.entries()));
    const ref = { namespace: this.o.namespace, name: INFLIGHT_RECORD_NAME };
    try {
      if (this.exists) {
        try {
          await this.configMaps.update(body);
        } catch (err) {
          if (!isNotFound(err)) throw err;
          await this.configMaps.create(body);
        }
      } else {
        try {
          await this.configMaps.create(body);
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          await this.configMaps.update(body);
        }
      }
      this.exists = true;
      return true;
    } catch (err) {
      this.o.metrics?.inFlightRecordWriteFailures.inc();
      this.o.logger.warn(
        { configMap: `${ref.namespace}/${ref.name}`, err: errorMessage(err) },
        'could not write the record of pods in flight; inspections go on unrecorded',
      );
      return false;
    }
  }

  /** A graceful stop: once the aborted inspections ended, the record keeps only pods still to be released. */
  private async stop(): Promise<void> {
    this.stopping = true;
    if (this.disabled) return;
    if (this.inFlight.size > 0) {
      const drained = new Promise<void>((resolve) => (this.onDrained = resolve));
      let timer: { cancel(): void } | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = this.clock.setTimer(resolve, this.o.drainTimeoutMs ?? 5_000);
      });
      await Promise.race([drained, timeout]);
      timer?.cancel();
    }
    // An inspection that did not end even when aborted stays on the record: it may be the poison.
    await this.sync();
  }

  private where(): string {
    return `${this.o.namespace}/${INFLIGHT_RECORD_NAME}`;
  }
}

/** `promise`, or undefined as soon as `signal` aborts. */
async function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((resolve) => {
        onAbort = () => resolve(undefined);
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
