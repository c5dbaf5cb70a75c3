// Leader election on a coordination.k8s.io/v1 Lease. Guarantees, given a working clock:
//  - a candidate takes the lease only after it saw the holder's record unchanged for leaseDuration (local time);
//  - the leader renews every retryPeriod and steps down (aborting the signal given to onStartedLeading) at the latest
//    renewDeadline after the start of its last successful renewal: the deadline is hard (sleeps are cut short and
//    an in-flight request is aborted at it), and renewDeadline < leaseDuration, so it has stopped before anyone
//    else can take over;
//  - on shutdown the leader releases the lease (empty holder) so a successor starts at once.
// run() resolves after this candidate stopped leading (lost or signal) or the signal aborted while waiting.
import os from 'node:os';
import type { KubeClient } from './client.js';
import { realClock, type Clock } from './clock.js';
import { ApiStatusError, InvalidArgumentError, ignoreNotFound, errorMessage } from './errors.js';
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

/** The Lease operations the elector uses; a ResourceClient<Lease> has them (tests pass an in-memory store). */
export type LeaseClient = Pick<ResourceClient<Lease>, 'get' | 'create' | 'update'>;

export interface LeaderElectionOptions {
  /** API access for the Lease. Give this or `leases`. */
  client?: KubeClient;
  /** Lease reads/writes to use instead of a ResourceClient over `client`. */
  leases?: LeaseClient;
  /** Lease name, e.g. `tessera-podplacement`. */
  leaseName: string;
  leaseNamespace: string;
  /** Unique per process; default: `<hostname>_<random>`. */
  identity?: string;
  /** How long others wait for a silent leader (ms). Must be > renewDeadlineMs. Default: 15,000. */
  leaseDurationMs?: number;
  /**
   * The leader steps down if it could not renew for this long (ms), counted from the start of its last successful
   * renewal. Must be < leaseDurationMs and > retryPeriodMs * 1.2. Default: 10,000.
   */
  renewDeadlineMs?: number;
  /** Time between attempts to acquire or renew (ms). Must be > 0. Default: 2,000. */
  retryPeriodMs?: number;
  /** Give the lease up when the signal aborts. Default: true. */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  clock?: Clock;
  logger?: Logger;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** client-go's JitterFactor: renewDeadline must leave room for more than one jittered retry period. */
export const LEADER_ELECTION_JITTER_FACTOR = 1.2;

/**
 * Checks the timings like client-go's NewLeaderElector: each > 0, leaseDuration > renewDeadline (the leader stops
 * before others may take over) and renewDeadline > retryPeriod * 1.2 (room for a retry). Throws
 * InvalidArgumentError naming the offending field.
 */
export function validateLeaderElectionTimings(t: {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}): void {
  for (const field of ['leaseDurationMs', 'renewDeadlineMs', 'retryPeriodMs'] as const) {
    const v = t[field];
    if (!(Number.isFinite(v) && v > 0))
      throw new InvalidArgumentError(field, `must be a number of milliseconds > 0, got ${v}`);
  }
  if (!(t.leaseDurationMs > t.renewDeadlineMs))
    throw new InvalidArgumentError(
      'leaseDurationMs',
      `must be greater than renewDeadlineMs (${t.leaseDurationMs} <= ${t.renewDeadlineMs}); otherwise a cut-off ` +
        'leader could still be leading when another candidate takes the lease',
    );
  if (!(t.renewDeadlineMs > t.retryPeriodMs * LEADER_ELECTION_JITTER_FACTOR))
    throw new InvalidArgumentError(
      'renewDeadlineMs',
      `must be greater than retryPeriodMs * ${LEADER_ELECTION_JITTER_FACTOR} ` +
        `(${t.renewDeadlineMs} <= ${t.retryPeriodMs * LEADER_ELECTION_JITTER_FACTOR}); lower retryPeriodMs or raise renewDeadlineMs`,
    );
}

export class LeaderElector {
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly leases: LeaseClient;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private observed: ObservedLease = { fingerprint: '', observedAt: 0 };
  private lastLease: Lease | undefined;
  private leader = '';
  private leading = false;
  /** Local time at which the last successful acquire/renew attempt began (0 before the first). */
  private lastRenewAt = 0;

  constructor(private readonly options: LeaderElectionOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (!options.leaseName) throw new InvalidArgumentError('leaseName', 'required');
    if (!options.leaseNamespace) throw new InvalidArgumentError('leaseNamespace', 'required');
    validateLeaderElectionTimings({
      leaseDurationMs: this.leaseDurationMs,
      renewDeadlineMs: this.renewDeadlineMs,
      retryPeriodMs: this.retryPeriodMs,
    });
    this.identity =
      options.identity ?? `${os.hostname() || 'tessera'}_${Math.random().toString(36).slice(2, 10)}`;
    if (options.leases) this.leases = options.leases;
    else if (options.client) this.leases = new ResourceClient<Lease>(options.client, Leases);
    else throw new InvalidArgumentError('client', 'give client (or leases)');
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({
      lease: `${options.leaseNamespace}/${options.leaseName}`,
      identity: this.identity,
    });
  }

  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Local clock time (ms) at which the last successful acquire or renewal began; 0 before the first. While leading,
   * this candidate stops leading no later than lastRenewTime() + renewDeadlineMs.
   */
  lastRenewTime(): number {
    return this.lastRenewAt;
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
      const startedAt = this.clock.now();
      const waitMs = await this.tryAcquireOrRenew(signal);
      if (waitMs === 0) {
        this.lastRenewAt = startedAt;
        return true;
      }
      // Poll at 40-60% of retryPeriod (random, so candidates spread out) and exactly when the observed lease
      // would expire: we see a renewal well within a retry period after it happened, so a dead leader is replaced
      // within leaseDuration + retryPeriod of its last renewal, request latency and start-up included.
      const poll = this.retryPeriodMs * (0.4 + 0.2 * Math.random());
      await this.clock.sleep(Math.min(poll, waitMs + 5), signal);
    }
    return false;
  }

  /**
   * Renews every retryPeriod (retrying failures every retryPeriod); resolves when the renew deadline passed or the
   * lease went to someone else, or the signal aborted. The deadline is counted from the *start* of the last
   * successful attempt, which is no later than the server's write, so others (who wait leaseDuration from when
   * they saw that write) cannot take over before it. Sleeps never run past it and a request still in flight at
   * the deadline is abandoned (its signal aborts).
   */
  private async renewLoop(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (signal.aborted) return;
      const deadline = this.lastRenewAt + this.renewDeadlineMs;
      if (this.clock.now() >= deadline) return this.stepDown('renew deadline passed');
      await this.clock.sleep(Math.min(this.retryPeriodMs, deadline - this.clock.now()), signal);
      if (signal.aborted) return;
      if (this.clock.now() >= deadline) return this.stepDown('renew deadline passed');
      const startedAt = this.clock.now();
      if (await this.renewBefore(deadline, signal)) {
        this.lastRenewAt = startedAt;
        continue;
      }
      if (!signal.aborted && this.leader !== this.identity)
        return this.stepDown('another candidate holds the lease');
    }
  }

  /** One renewal attempt, abandoned at `deadline`; true only if it succeeded before then. */
  private async renewBefore(deadline: number, signal: AbortSignal): Promise<boolean> {
    const attempt = new AbortController();
    const abort = (): void => attempt.abort();
    signal.addEventListener('abort', abort, { once: true });
    const timer = this.clock.setTimer(abort, deadline - this.clock.now());
    const abandoned = new Promise<'abandoned'>((resolve) =>
      attempt.signal.addEventListener('abort', () => resolve('abandoned'), { once: true }),
    );
    try {
      // tryAcquireOrRenew never rejects; if abandoned it finishes in the background and its result is ignored.
      const result = await Promise.race([this.tryAcquireOrRenew(attempt.signal), abandoned]);
      return result === 0 && !attempt.signal.aborted;
    } finally {
      timer.cancel();
      signal.removeEventListener('abort', abort);
      attempt.abort();
    }
  }

  private stepDown(why: string): void {
    this.logger.warn(
      { leader: this.leader, why, sinceRenewMs: this.clock.now() - this.lastRenewAt },
      'lost the lease; stopping leader work',
    );
  }

  /** One round; returns 0 when we hold the lease, otherwise ms until it might be free. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<number> {
    const ref = { namespace: this.options.leaseNamespace, name: this.options.leaseName };
    try {
      const current = await ignoreNotFound(this.leases.get(ref, signal));
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
      this.logger[level]({ err: errorMessage(err) }, 'lease acquire/renew attempt failed');
      return this.retryPeriodMs;
    }
  }

  private async release(): Promise<void> {
    const lease = this.lastLease;
    if (!lease?.spec || lease.spec.holderIdentity !== this.identity) return;
    const giveUp = new AbortController();
    const timer = this.clock.setTimer(() => giveUp.abort(), this.renewDeadlineMs);
    try {
      await this.leases.update(
        { ...lease, spec: releasedSpec(lease.spec, this.clock.now()) },
        { signal: giveUp.signal },
      );
      this.logger.info({}, 'released the lease');
    } catch (err) {
      this.logger.warn(
        { err: errorMessage(err) },
        'could not release the lease; others will take it when it expires',
      );
    } finally {
      timer.cancel();
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
