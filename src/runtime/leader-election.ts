// Leader election on a coordination.k8s.io/v1 Lease. Guarantees, given a working clock:
//  - a candidate takes the lease only after it saw the holder's record unchanged for leaseDuration (local time);
//  - the leader renews every retryPeriod and steps down (aborting the signal given to onStartedLeading) when it
//    could not renew for renewDeadline < leaseDuration, so it has stopped before anyone else can take over;
//  - on shutdown the leader releases the lease (empty holder) so a successor starts at once.
// run() resolves after this candidate stopped leading (lost or signal) or the signal aborted while waiting.
import type { KubeClient } from './client.js';
import { realClock, type Clock } from './clock.js';
import { ApiStatusError, InvalidArgumentError, isNotFound } from './errors.js';
import { decideLease, observe, releasedSpec, type LeaseSpec, type ObservedLease } from './lease-decision.js';
import { silentLogger, type Logger } from './logging.js';
import type { KubeObject } from './object.js';
import { ResourceClient } from './resource-client.js';
import { Leases } from './resources.js';

export interface LeaderCallbacks {
  /** Called when this candidate becomes leader; `signal` aborts when it stops leading. */
  onStartedLeading(signal: AbortSignal): void;
  /** Called once after leading ends (lost, released or shut down). */
  onStoppedLeading?(): void;
  /** Called when the observed leader changes (including to this candidate). */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectionOptions {
  client: KubeClient;
  /** Lease name, e.g. `tessera-podplacement`. */
  leaseName: string;
  leaseNamespace: string;
  /** Unique per process; default: `<hostname>_<random>`. */
  identity?: string;
  /** How long others wait for a silent leader (ms). Default: 15,000. */
  leaseDurationMs?: number;
  /** The leader steps down if it could not renew for this long (ms). Must be < leaseDurationMs. Default: 10,000. */
  renewDeadlineMs?: number;
  /** Time between attempts to acquire or renew (ms). Default: 2,000. */
  retryPeriodMs?: number;
  /** Give the lease up when the signal aborts. Default: true. */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  clock?: Clock;
  logger?: Logger;
}

interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export class LeaderElector {
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly leases: ResourceClient<Lease>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private observed: ObservedLease = { fingerprint: '', observedAt: 0 };
  private lastLease: Lease | undefined;
  private leader = '';
  private leading = false;

  constructor(private readonly options: LeaderElectionOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (!options.leaseName) throw new InvalidArgumentError('leaseName', 'required');
    if (!options.leaseNamespace) throw new InvalidArgumentError('leaseNamespace', 'required');
    if (!(this.renewDeadlineMs < this.leaseDurationMs))
      throw new InvalidArgumentError('renewDeadlineMs', 'must be < leaseDurationMs');
    if (!(this.retryPeriodMs > 0 && this.retryPeriodMs < this.renewDeadlineMs))
      throw new InvalidArgumentError('retryPeriodMs', 'must be > 0 and < renewDeadlineMs');
    this.identity =
      options.identity ?? `${process.env.HOSTNAME ?? 'tessera'}_${Math.random().toString(36).slice(2, 10)}`;
    this.leases = new ResourceClient<Lease>(options.client, Leases);
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({
      lease: `${options.leaseNamespace}/${options.leaseName}`,
      identity: this.identity,
    });
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Identity of the last observed holder ('' if none). */
  getLeader(): string {
    return this.leader;
  }

  async run(signal: AbortSignal): Promise<void> {
    if (!(await this.acquire(signal))) return;
    const leading = new AbortController();
    this.leading = true;
    this.logger.info({}, 'became leader');
    try {
      this.options.callbacks.onStartedLeading(leading.signal);
    } catch (err) {
      this.logger.error({ err }, 'onStartedLeading threw');
    }
    await this.renewLoop(signal);
    this.leading = false;
    leading.abort();
    if (signal.aborted && (this.options.releaseOnCancel ?? true)) await this.release();
    try {
      this.options.callbacks.onStoppedLeading?.();
    } catch (err) {
      this.logger.error({ err }, 'onStoppedLeading threw');
    }
  }

  /** Polls until the lease is ours; false if the signal aborted first. */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.logger.info({}, 'waiting to acquire the lease');
    while (!signal.aborted) {
      const waitMs = await this.tryAcquireOrRenew(signal);
      if (waitMs === 0) return true;
      // Poll at 40-60% of retryPeriod (random, so candidates spread out) and exactly when the observed lease
      // would expire: we see a renewal well within a retry period after it happened, so a dead leader is replaced
      // within leaseDuration + retryPeriod of its last renewal, request latency and start-up included.
      const poll = this.retryPeriodMs * (0.4 + 0.2 * Math.random());
      await this.clock.sleep(Math.min(poll, waitMs + 5), signal);
    }
    return false;
  }

  /** Renews every retryPeriod; resolves when a renewal deadline was missed or the signal aborted. */
  private async renewLoop(signal: AbortSignal): Promise<void> {
    let lastRenew = this.clock.now();
    while (!signal.aborted) {
      await this.clock.sleep(this.retryPeriodMs, signal);
      if (signal.aborted) return;
      const attempt = AbortSignal.any([
        signal,
        AbortSignal.timeout(Math.max(1, lastRenew + this.renewDeadlineMs - this.clock.now())),
      ]);
      const waitMs = await this.tryAcquireOrRenew(attempt);
      if (waitMs === 0) {
        lastRenew = this.clock.now();
        continue;
      }
      if (this.clock.now() - lastRenew >= this.renewDeadlineMs || this.leader !== this.identity) {
        this.logger.warn(
          { leader: this.leader, sinceRenewMs: this.clock.now() - lastRenew },
          'lost the lease; stopping leader work',
        );
        return;
      }
    }
  }

  /** One round; returns 0 when we hold the lease, otherwise ms until it might be free. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<number> {
    const ref = { namespace: this.options.leaseNamespace, name: this.options.leaseName };
    try {
      let current: Lease | undefined;
      try {
        current = await this.leases.get(ref, signal);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const now = this.clock.now();
      this.observed = observe(this.observed, current?.spec, now);
      this.noteLeader(current?.spec?.holderIdentity ?? '');
      const decision = decideLease(current?.spec, this.observed, this.identity, this.leaseDurationMs, now);
      if (decision.action === 'wait') return decision.expiresInMs;
      let written: Lease;
      if (decision.action === 'create') {
        written = await this.leases.create(
          { metadata: { name: ref.name, namespace: ref.namespace }, spec: decision.spec },
          { signal },
        );
      } else {
        written = await this.leases.update({ ...current, spec: decision.spec }, { signal });
        if (decision.gained)
          this.logger.info({ previous: current?.spec?.holderIdentity ?? '' }, 'acquired the lease');
      }
      this.lastLease = written;
      this.observed = observe(this.observed, written.spec, this.clock.now());
      this.noteLeader(this.identity);
      return 0;
    } catch (err) {
      // A conflict means someone else wrote first: simply look again next round.
      const level = err instanceof ApiStatusError && err.statusCode === 409 ? 'debug' : 'warn';
      this.logger[level](
        { err: err instanceof Error ? err.message : String(err) },
        'lease acquire/renew attempt failed',
      );
      return this.retryPeriodMs;
    }
  }

  private async release(): Promise<void> {
    const lease = this.lastLease;
    if (!lease?.spec || lease.spec.holderIdentity !== this.identity) return;
    try {
      await this.leases.update(
        { ...lease, spec: releasedSpec(lease.spec, this.clock.now()) },
        { signal: AbortSignal.timeout(this.renewDeadlineMs) },
      );
      this.logger.info({}, 'released the lease');
    } catch (err) {
      this.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'could not release the lease; others will take it when it expires',
      );
    }
  }

  private noteLeader(identity: string): void {
    if (identity === this.leader) return;
    this.leader = identity;
    if (!identity) return;
    try {
      this.options.callbacks.onNewLeader?.(identity);
    } catch (err) {
      this.logger.error({ err }, 'onNewLeader threw');
    }
  }
}
