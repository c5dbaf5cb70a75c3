// When a gated pod may next be inspected, and how much of its registry wait it has left. A transient inspection
// failure sets the pod's next attempt an exponentially growing delay later (our own label writes wake the pod, so
// the reconciler asks before inspecting again); the per-pod deadline is a budget over all attempts, so a registry
// that keeps a pod waiting costs it at most the deadline in total however transient failures split its waits.
// State is per pod key and dropped when the pod is ungated or leaves the gated-pods cache (`forget`).
import { InvalidArgumentError } from '../runtime/light.js';

/** Wait before a pod's 2nd inspection attempt, in ms; doubles per attempt. */
export const DEFAULT_RETRY_BASE_DELAY_MS = 2_000;
/** Longest wait between two inspection attempts of a pod, in ms. */
export const DEFAULT_RETRY_MAX_DELAY_MS = 30_000;
/** Longest time a pod waits for its images' registries, in ms, over all its attempts. */
export const DEFAULT_INSPECTION_DEADLINE_MS = 15_000;

export interface RetryScheduleOptions {
  /** Default: DEFAULT_RETRY_BASE_DELAY_MS. */
  retryBaseDelayMs?: number;
  /** Default: DEFAULT_RETRY_MAX_DELAY_MS. */
  retryMaxDelayMs?: number;
  /** An integer >= 1. Default: DEFAULT_INSPECTION_DEADLINE_MS. */
  inspectionDeadlineMs?: number;
}

export class RetrySchedule {
  /** The per-pod inspection deadline, in ms, over all its attempts. */
  readonly deadlineMs: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  /** Earliest time (clock ms) of the next attempt for pods whose last inspection failed. */
  private readonly notBefore = new Map<string, number>();
  /** Time (ms) each still-gated pod (by key, for its uid) has spent waiting on registries over its attempts. */
  private readonly waited = new Map<string, { uid: string; ms: number }>();

  constructor(o: RetryScheduleOptions = {}) {
    this.baseDelayMs = o.retryBaseDelayMs ?? DEFAULT_RETRY_BASE_DELAY_MS;
    this.maxDelayMs = o.retryMaxDelayMs ?? DEFAULT_RETRY_MAX_DELAY_MS;
    this.deadlineMs = o.inspectionDeadlineMs ?? DEFAULT_INSPECTION_DEADLINE_MS;
    if (!Number.isInteger(this.deadlineMs) || this.deadlineMs < 1)
      throw new InvalidArgumentError(
        'inspectionDeadlineMs',
        `must be an integer >= 1, got ${this.deadlineMs}`,
      );
  }

  /** Delay after the `failures`-th failed attempt. */
  delayAfter(failures: number): number {
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.max(0, failures - 1));
  }

  /** Time (ms) until `podKey`'s next attempt is due at clock time `now`; 0 when it is due. */
  dueInMs(podKey: string, now: number): number {
    const due = this.notBefore.get(podKey);
    return due !== undefined && due > now ? due - now : 0;
  }

  /** Schedules `podKey`'s next attempt after its `failures`-th failed one, from clock time `now`; returns the delay. */
  retryLater(podKey: string, failures: number, now: number): number {
    const delay = this.delayAfter(failures);
    this.notBefore.set(podKey, now + delay);
    return delay;
  }

  /** Time (ms) the pod `podKey` with `uid` has waited on registries so far (0 for a new pod of that name). */
  waitedMs(podKey: string, uid: string): number {
    const before = this.waited.get(podKey);
    return before?.uid === uid ? before.ms : 0;
  }

  /** Time (ms) the pod may still wait on registries: the deadline less what it has waited. */
  budgetMs(podKey: string, uid: string): number {
    return Math.max(0, this.deadlineMs - this.waitedMs(podKey, uid));
  }

  /** Adds `ms` of registry waiting to the pod `podKey` with `uid`. */
  addWait(podKey: string, uid: string, ms: number): void {
    this.waited.set(podKey, { uid, ms: this.waitedMs(podKey, uid) + ms });
  }

  /** The pod is ungated or gone: its schedule and budget go. */
  forget(podKey: string): void {
    this.notBefore.delete(podKey);
    this.waited.delete(podKey);
  }

  /** Pods with a schedule or a budget in use (for tests: state does not outlive the pods). */
  tracked(): number {
    return new Set([...this.notBefore.keys(), ...this.waited.keys()]).size;
  }
}
