// The webhook half's view of the controller: it reads the controller's leader Lease by name every poll interval
// and, when the record has not changed for the stale threshold, tells the gating webhook to stop gating
// (controller-liveness.ts decides). Each change of verdict is logged, recorded as an Event on the Lease and shown
// by the gauge tessera_podplacement_webhook_gating_suspended; every replica judges for itself, from its own
// monotonic clock. Reading is one GET by name per interval (3 replicas x 1 per 10 s by default). A read that fails
// keeps the last observation; reads failing for the whole threshold make the verdict "unknown", which gates.
import {
  Leases,
  ResourceClient,
  ignoreNotFound,
  realClock,
  type Clock,
  type EventRecorder,
  type KubeClient,
  type Lease,
  type Logger,
  type Runnable,
  errorMessage,
} from '../../runtime/index.js';
import { InvalidArgumentError } from '../../runtime/light.js';
import {
  NO_LEASE_VIEW,
  gatingSuspendedMessage,
  gatingVerdict,
  leasePollIntervalMs,
  observeControllerLease,
  type ControllerLeaseView,
  type GatingVerdict,
} from '../controller-liveness.js';
import type { PodPlacementMetrics } from '../metrics.js';

export const GATING_EVENT_REASONS = {
  suspended: 'PodPlacementGatingSuspended',
  resumed: 'PodPlacementGatingResumed',
} as const;

export interface ControllerLeaseWatchOptions {
  client: KubeClient;
  namespace: string;
  leaseName: string;
  /** Unchanged for this long (ms), the Lease is taken as not renewed and gating stops. */
  staleAfterMs: number;
  /** Timers (poll interval). Default: realClock. */
  clock?: Clock;
  /** Monotonic milliseconds for "unchanged since". Default: performance.now (never jumps with the wall clock). */
  monotonicNow?: () => number;
  /** Records the Warning/Normal events on the Lease (needs `create` on events in `namespace`). */
  events?: EventRecorder;
  metrics?: PodPlacementMetrics;
  logger: Logger;
}

export class ControllerLeaseWatch implements Runnable {
  readonly name = 'controller-lease-watch';
  private readonly leases: ResourceClient<Lease>;
  private readonly clock: Clock;
  private readonly now: () => number;
  private readonly pollMs: number;
  private view: ControllerLeaseView = NO_LEASE_VIEW;
  /** The verdict of the last poll; read by every admission request. */
  private verdict: GatingVerdict = { gate: true, why: 'unknown' };

  constructor(private readonly o: ControllerLeaseWatchOptions) {
    if (!Number.isInteger(o.staleAfterMs) || o.staleAfterMs < 1_000)
      throw new InvalidArgumentError(
        'controllerLeaseStaleAfterMs',
        `must be an integer of at least 1000 ms, got ${o.staleAfterMs}`,
      );
    this.leases = new ResourceClient<Lease>(o.client, Leases);
    this.clock = o.clock ?? realClock;
    this.now = o.monotonicNow ?? (() => performance.now());
    this.pollMs = leasePollIntervalMs(o.staleAfterMs);
  }

  /** True while the gating webhook must not gate. */
  gatingSuspended(): boolean {
    return !this.verdict.gate;
  }

  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.poll(signal);
      await this.clock.sleep(this.pollMs, signal);
    }
  }

  /** One read of the Lease and the verdict that follows. */
  private async poll(signal: AbortSignal): Promise<void> {
    try {
      const lease = await ignoreNotFound(
        this.leases.get({ namespace: this.o.namespace, name: this.o.leaseName }, signal),
      );
      this.view = observeControllerLease(this.view, lease?.spec, this.now());
    } catch (err) {
      if (signal.aborted) return;
      this.o.logger.warn(
        { lease: this.where(), err: errorMessage(err) },
        "cannot read the controller's Lease; keeping the last observation",
      );
    }
    this.decide(gatingVerdict(this.view, this.now(), this.o.staleAfterMs));
  }

  private decide(next: GatingVerdict): void {
    const before = this.verdict;
    this.verdict = next;
    if (before.gate === next.gate) return;
    this.o.metrics?.webhookGatingSuspended.set(next.gate ? 0 : 1);
    const regarding = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: this.o.namespace,
      name: this.o.leaseName,
    };
    if (!next.gate) {
      const message = gatingSuspendedMessage(next, this.where());
      this.o.logger.warn({ lease: this.where(), unchangedForMs: next.unchangedForMs }, message);
      this.o.events?.event(regarding, 'Warning', GATING_EVENT_REASONS.suspended, message);
      return;
    }
    const message =
      next.why === 'renewed'
        ? `the pod placement controller's Lease ${this.where()} is renewed again: new pods are gated again`
        : `the pod placement controller's Lease ${this.where()} cannot be read: gating new pods as usual`;
    this.o.logger.info({ lease: this.where(), why: next.why }, message);
    this.o.events?.event(regarding, 'Normal', GATING_EVENT_REASONS.resumed, message);
  }

  private where(): string {
    return `${this.o.namespace}/${this.o.leaseName}`;
  }
}
