// Writers of the one UpdateStatus take turns (README "Update status informers": write turns).
// Every write is a server-side apply that the API server runs against the whole object (about 250 ms of its CPU
// with 5,000 nodes). Two applies in flight at once conflict in etcd, and the API server runs the loser again from
// its decode, so four writers at once cost it about three times the CPU per apply (bench/tools/
// updatestatus-apply-cost.ts: 3.8 etcd updates per apply at once, 1.0 taking turns), and under load the retries
// feed on themselves. A turn is a Lease held for the length of one write. It is advisory: a writer that cannot
// take it (no namespace, no RBAC, a holder that does not let go within maxWaitMs) writes without it, as before.
import { randomUUID } from 'node:crypto';
import {
  type Clock,
  type KubeClient,
  type Lease,
  type LeaseClient,
  type Logger,
  type ObservedLease,
  ApiStatusError,
  Leases,
  ResourceClient,
  decideLease,
  errorMessage,
  ignoreNotFound,
  isAlreadyExists,
  isConflict,
  isNotFound,
  observe,
  realClock,
  releasedSpec,
  silentLogger,
} from '../runtime/index.js';

/** The Lease every writer of the UpdateStatus takes its turn with: in the update status controller's namespace. */
export const WRITE_TURN_NAMESPACE = 'tessera-update-status';
export const WRITE_TURN_LEASE = 'updatestatus-write-turn';
/**
 * How long a turn is held at most: a holder that has not let go by then (it crashed mid-write) is passed over.
 * Longer than a write under load (3-4 s measured at load 5 on 2 cores).
 */
export const WRITE_TURN_HOLD_MS = 15_000;
/** How long a writer waits for its turn before it writes without one. */
export const WRITE_TURN_MAX_WAIT_MS = 5_000;
/** After the Lease could not be used (no namespace, no RBAC), writes go without turns for this long. */
const UNAVAILABLE_BACKOFF_MS = 5 * 60_000;
/** Polling while another writer holds the turn: from FIRST_POLL_MS, doubling, at most MAX_POLL_MS. */
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 100;

export interface WriteTurnOptions {
  /** Reads and writes the Lease (a ResourceClient for Leases in production). */
  readonly leases: LeaseClient;
  /** Who takes the turn (shown as the Lease's holder): the writer's name; a random suffix makes it unique. */
  readonly writer: string;
  readonly namespace?: string;
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly maxWaitMs?: number;
  readonly holdMs?: number;
}

/** Counts for metrics and tests. */
export interface WriteTurnStats {
  /** Writes made in a turn. */
  taken: number;
  /** Writes made without one: the wait ran out, or the Lease could not be used. */
  without: number;
  /** Total time spent waiting for turns (ms). */
  waitedMs: number;
}

/**
 * One writer's side of the write turn: `run(write)` runs `write` in a turn when it can get one. One run at a time
 * per instance (a second would find itself the holder and write at once): each writer has its own WriteTurn.
 */
export class WriteTurn {
  readonly identity: string;
  readonly stats: WriteTurnStats = { taken: 0, without: 0, waitedMs: 0 };
  private observed: ObservedLease = { fingerprint: '', observedAt: 0 };
  private unavailableUntil = -Infinity;
  /** Why the Lease could not be used last time, so that a lasting cause is logged once. */
  private lastUnusable = '';
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(private readonly options: WriteTurnOptions) {
    this.identity = `${options.writer}-${randomUUID().slice(0, 8)}`;
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
  }

  /** A turn for `writer` on `client`'s cluster, with the contract's Lease. */
  static forClient(
    client: KubeClient,
    writer: string,
    options: Pick<WriteTurnOptions, 'clock' | 'logger'> = {},
  ): WriteTurn {
    return new WriteTurn({ ...options, leases: new ResourceClient<Lease>(client, Leases), writer });
  }

  async run<T>(write: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const started = this.clock.now();
    const held = await this.take(signal);
    this.stats.waitedMs += this.clock.now() - started;
    if (held) {
      this.stats.taken++;
      this.lastUnusable = '';
    } else this.stats.without++;
    try {
      return await write();
    } finally {
      if (held) await this.release(held);
    }
  }

  /**
   * The Lease as this writer took it, or undefined when it goes without a turn. Every call to the API server is
   * abandoned at the deadline too (a Lease read that hangs, or is told to retry after a while, must not hold the
   * write up for the client's 30 s timeout and its retries). A take abandoned in flight may still have been stored:
   * this writer renews it at its next turn (heldByMe), others pass it over after holdMs.
   */
  private async take(signal?: AbortSignal): Promise<Lease | undefined> {
    if (this.clock.now() < this.unavailableUntil) return undefined;
    const ref = { namespace: this.namespace, name: WRITE_TURN_LEASE };
    const maxWaitMs = this.options.maxWaitMs ?? WRITE_TURN_MAX_WAIT_MS;
    const deadline = this.clock.now() + maxWaitMs;
    const attempt = new AbortController();
    const abandon = (): void => attempt.abort();
    if (signal?.aborted) abandon();
    signal?.addEventListener('abort', abandon, { once: true });
    const timer = this.clock.setTimer(abandon, maxWaitMs);
    let pollMs = FIRST_POLL_MS;
    try {
      for (;;) {
        const now = this.clock.now();
        let op = 'get';
        try {
          const current = await ignoreNotFound(this.options.leases.get(ref, attempt.signal));
          this.observed = observe(this.observed, current?.spec, now);
          const holdMs = this.options.holdMs ?? WRITE_TURN_HOLD_MS;
          const decision = decideLease(current?.spec, this.observed, this.identity, holdMs, now);
          op = decision.action;
          if (decision.action === 'create')
            return await this.options.leases.create(
              { metadata: ref, spec: decision.spec },
              { signal: attempt.signal },
            );
          if (decision.action === 'update')
            return await this.options.leases.update(
              { ...current, metadata: current?.metadata ?? ref, spec: decision.spec },
              { signal: attempt.signal },
            );
        } catch (err) {
          if (signal?.aborted) throw err;
          if (attempt.signal.aborted) {
            this.logger.debug(
              { writer: this.options.writer, op, err: errorMessage(err) },
              'writing without a turn: the Lease did not answer in time',
            );
            return undefined;
          }
          // Another writer took it between our read and write (or deleted it: an update's 404): look again.
          if (!isConflict(err) && !isAlreadyExists(err) && !(op === 'update' && isNotFound(err))) {
            this.goWithout(err);
            return undefined;
          }
        }
        const left = deadline - this.clock.now();
        if (left <= 0) return undefined;
        await this.clock.sleep(Math.min(pollMs, left), attempt.signal);
        if (attempt.signal.aborted && !signal?.aborted) return undefined;
        pollMs = Math.min(pollMs * 2, MAX_POLL_MS);
      }
    } finally {
      timer.cancel();
      signal?.removeEventListener('abort', abandon);
    }
  }

  /** Gives the turn back, unless another writer took it meanwhile; abandoned after maxWaitMs (it then expires). */
  private async release(held: Lease): Promise<void> {
    if (!held.spec) return;
    const giveUp = new AbortController();
    const timer = this.clock.setTimer(() => giveUp.abort(), this.options.maxWaitMs ?? WRITE_TURN_MAX_WAIT_MS);
    try {
      await this.options.leases.update(
        { ...held, spec: releasedSpec(held.spec, this.clock.now()) },
        { signal: giveUp.signal },
      );
    } catch {
      // Taken by another writer after it expired, or gone: there is nothing of ours to give back. Not answered in
      // time: the others take it when it expires.
    } finally {
      timer.cancel();
    }
  }

  /** This write goes without a turn; when the Lease cannot be used at all (403, 404), the next ones for a while too. */
  private goWithout(err: unknown): void {
    const status = err instanceof ApiStatusError ? err.statusCode : undefined;
    if (status !== 403 && status !== 404) {
      this.logger.debug({ writer: this.options.writer, err: errorMessage(err) }, 'writing without a turn');
      return;
    }
    this.unavailableUntil = this.clock.now() + UNAVAILABLE_BACKOFF_MS;
    const why =
      status === 403
        ? `not allowed to use Lease ${this.namespace}/${WRITE_TURN_LEASE} (grant get, create and update on it; deploy/updatestatus/rbac.yaml does for Tessera's writers)`
        : `namespace ${this.namespace} does not exist (the update status controller's; install it, or writers go without turns)`;
    if (why === this.lastUnusable) return;
    this.lastUnusable = why;
    this.logger.info(
      { writer: this.options.writer, err: why },
      'writing the UpdateStatus without taking turns for 5 minutes; concurrent writes cost the API server more',
    );
  }

  private get namespace(): string {
    return this.options.namespace ?? WRITE_TURN_NAMESPACE;
  }
}
