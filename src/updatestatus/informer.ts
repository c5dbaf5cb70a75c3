// The client side of the UpdateStatus informer contract (api/informers.ts; README "Update status informers"):
// how an informer writes its insights. The one module of src/updatestatus other areas may import (pod placement
// and NodePool status are informers), so it loads only the contract, not the assessment.
// InformerWriter applies an informer's whole contribution (server-side apply on the status subresource, its own
// field manager) when it changed or its heartbeat is due, starting at most one write per minWriteIntervalMs.
// InsightPublisher is the Runnable other controllers register: it recomputes the contribution when triggered and on
// the heartbeat.
import {
  type Clock,
  type KubeClient,
  type KubeObject,
  type Logger,
  type Runnable,
  ResourceClient,
  isAlreadyExists,
  ignoreNotFound,
  isNotFound,
  realClock,
  silentLogger,
  errorMessage,
} from '../runtime/index.js';
import { UpdateStatusError } from './errors.js';
import {
  HEARTBEAT_INTERVAL_MS,
  type InformerContribution,
  applyConfiguration,
  contributionUnchanged,
  contributionViolation,
  informerFieldManager,
  RESERVED_INFORMER_NAMES,
  keepAcquiredAt,
  storedContribution,
} from './api/informers.js';
import { GROUP, KIND, PLURAL, SINGLETON_NAME, VERSION } from './api/names.js';
import { WriteTurn } from './write-turn.js';
import type { UpdateStatus, UpdateStatusStatus } from './api/schema.js';

export {
  type InformerContribution,
  type InsightEntry,
  HEARTBEAT_INTERVAL_MS,
  INFORMER_BUDGETS,
  contributionViolation,
  hashedUid,
  isInformerName,
} from './api/informers.js';
export { WriteTurn, WRITE_TURN_LEASE, WRITE_TURN_NAMESPACE } from './write-turn.js';
export type {
  ControlPlaneInsight,
  ResourceRef,
  UpdateStatusStatus,
  WorkerPoolInsight,
} from './api/schema.js';

/** Field manager of the aggregator's writes (status.conditions, resources, Updating conditions). */
export const AGGREGATOR_FIELD_MANAGER = 'tessera-updatestatus';

type StoredStatus = UpdateStatus & KubeObject;

/** The writes an informer makes (a ResourceClient for UpdateStatuses in production). */
export type InformerStatusClient = Pick<ResourceClient<StoredStatus>, 'create' | 'get' | 'apply'>;

/** A ResourceClient for the UpdateStatus API (cluster-scoped). */
export function updateStatusClient(client: KubeClient): ResourceClient<StoredStatus> {
  return new ResourceClient<StoredStatus>(client, {
    group: GROUP,
    version: VERSION,
    plural: PLURAL,
    kind: KIND,
    namespaced: false,
  });
}

/** RFC 3339 in whole seconds, as Kubernetes writes times (heartbeats, acquiredAt). */
export function heartbeatTimeOf(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Server-side apply of `body` on the status subresource of UpdateStatus `cluster`, creating the object first
 * when it does not exist (the status subresource cannot create it).
 */
export async function applyCreatingObject(
  statuses: InformerStatusClient,
  body: UpdateStatus,
  fieldManager: string,
  signal?: AbortSignal,
): Promise<StoredStatus> {
  const apply = () =>
    statuses.apply(body as StoredStatus, { fieldManager, force: true, subresource: 'status', signal });
  try {
    return await apply();
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    await statuses.create({ metadata: { name: SINGLETON_NAME }, spec: {} } as StoredStatus, {
      fieldManager,
      signal,
    });
  } catch (err) {
    if (isNotFound(err))
      throw new UpdateStatusError(
        'TESSERA_UPDATESTATUS_NOT_AVAILABLE',
        `the ${PLURAL}.${GROUP} API is not served; install its CRD (deploy/crds) or run the update status controller, which installs it`,
        { cause: err },
      );
    if (!isAlreadyExists(err)) throw err;
  }
  return apply();
}

/** What one write attempt did. */
export type InformerWriteOutcome =
  | { readonly kind: 'written'; readonly stored: StoredStatus }
  /** Nothing changed and the heartbeat is not due yet: look again within `heartbeatDueInMs`. */
  | { readonly kind: 'unchanged'; readonly heartbeatDueInMs: number }
  /** A write is needed but the last one was less than minWriteIntervalMs ago. */
  | { readonly kind: 'throttled'; readonly retryAfterMs: number };

export interface InformerWriterOptions {
  /** The informer's name (a DNS-1123 label). */
  readonly name: string;
  readonly clock?: Clock;
  /** Least time between two writes (ms). Default: 1,000. */
  readonly minWriteIntervalMs?: number;
  /** True only for Tessera's own informers, which may use the reserved names (cpi, nodes, podplacement...). */
  readonly reservedName?: boolean;
  /** Takes turns with the UpdateStatus's other writers (write-turn.ts). Default: none (writes at once). */
  readonly turn?: WriteTurn;
}

/** Writes one informer's contribution by the contract. */
export class InformerWriter {
  /**
   * When the last write started. The interval counts from the start, not the end: a slow API server (a second per
   * apply under load) then delays the next write by nothing more than the interval, rather than by the interval
   * plus the write, and there is still at most one write per interval and never two at once.
   */
  private lastWriteAt = -Infinity;
  /**
   * The last contribution written, and this informer's entries as the API server returned them. They differ when
   * another field manager owns part of them (e.g. a pre-contract write under `tessera-updatestatus`, or an entry
   * someone else applied under this informer's name): an apply cannot remove what others own, so writing again
   * changes nothing, and only a change of the contribution or a due heartbeat is worth a write.
   */
  private lastWritten:
    { readonly contribution: InformerContribution; readonly result: InformerContribution } | undefined;
  private readonly clock: Clock;

  constructor(
    private readonly statuses: InformerStatusClient,
    private readonly options: InformerWriterOptions,
  ) {
    this.clock = options.clock ?? realClock;
    if (RESERVED_INFORMER_NAMES.includes(options.name) && options.reservedName !== true)
      throw new UpdateStatusError(
        'TESSERA_UPDATESTATUS_INFORMER_CONTRACT',
        `informer name ${options.name} is reserved for Tessera's own informer; choose another name`,
      );
  }

  get name(): string {
    return this.options.name;
  }

  /**
   * Writes `contribution` unless `stored` (the object as last observed) already holds it with a heartbeat that
   * is not due. Refuses a contribution that breaks the contract (names the budget it exceeds). With a turn, `fresh`
   * computes the contribution again once the turn is taken (what changed while waiting for it is written too).
   */
  async write(
    computed: InformerContribution,
    stored: StoredStatus | undefined,
    signal?: AbortSignal,
    fresh?: () => InformerContribution | undefined,
  ): Promise<InformerWriteOutcome> {
    const own = storedContribution(stored?.status, computed.name);
    const contribution = this.checked(keepAcquiredAt(own, computed));
    const now = this.clock.now();
    const registration = stored?.status?.informers?.find((r) => r.name === contribution.name);
    const heartbeatAt = registration ? Date.parse(registration.heartbeatTime) : NaN;
    const heartbeatDueInMs = Number.isNaN(heartbeatAt) ? 0 : heartbeatAt + HEARTBEAT_INTERVAL_MS - now;
    const asLastWritten =
      this.lastWritten !== undefined &&
      contributionUnchanged(this.lastWritten.contribution, contribution) &&
      contributionUnchanged(this.lastWritten.result, own);
    if (heartbeatDueInMs > 0 && (asLastWritten || contributionUnchanged(own, contribution)))
      return { kind: 'unchanged', heartbeatDueInMs };
    const wait = this.lastWriteAt + (this.options.minWriteIntervalMs ?? 1_000) - now;
    if (wait > 0) return { kind: 'throttled', retryAfterMs: wait };
    let sent = contribution;
    const apply = () => {
      const latest = this.options.turn && fresh?.();
      if (latest) sent = this.checked(keepAcquiredAt(own, latest));
      return applyCreatingObject(
        this.statuses,
        applyConfiguration(sent, heartbeatTimeOf(now)),
        informerFieldManager(sent.name),
        signal,
      );
    };
    const written = await (this.options.turn ? this.options.turn.run(apply, signal) : apply());
    this.lastWriteAt = now;
    this.lastWritten = { contribution: sent, result: storedContribution(written.status, sent.name) };
    return { kind: 'written', stored: written };
  }

  /** `contribution`, if it is this informer's and within the contract; refused with the reason otherwise. */
  private checked(contribution: InformerContribution): InformerContribution {
    if (contribution.name !== this.options.name)
      throw new UpdateStatusError(
        'TESSERA_UPDATESTATUS_INFORMER_CONTRACT',
        `informer ${this.options.name} was given the contribution of ${contribution.name}`,
      );
    const violation = contributionViolation(contribution);
    if (violation !== undefined)
      throw new UpdateStatusError(
        'TESSERA_UPDATESTATUS_INFORMER_CONTRACT',
        `informer ${contribution.name} would break the UpdateStatus informer contract: ${violation}; nothing was written`,
      );
    return contribution;
  }
}

export interface InsightPublisherOptions {
  readonly client: KubeClient;
  /** The informer's name (a DNS-1123 label), e.g. `podplacement`. */
  readonly informer: string;
  /** See InformerWriterOptions.reservedName. */
  readonly reservedName?: boolean;
  /**
   * The contribution as of now, from the caller's caches; undefined while it cannot tell (e.g. its caches have
   * not synced): nothing is written then, so its previous insights age into stale as the contract says. `stored`
   * is the status as last observed (undefined when there is none yet): an informer with worker pools sees which
   * pools others hold, so it stays within the 32 pools the API allows in all.
   */
  readonly contribution: (stored: UpdateStatusStatus | undefined) => InformerContribution | undefined;
  /** Look again at least this often even without a trigger (ms). Default: 15,000. */
  readonly resyncMs?: number;
  readonly minWriteIntervalMs?: number;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Runnable name. Default: `<informer>-update-insights`. */
  readonly name?: string;
  /** Takes turns with the UpdateStatus's other writers. Default: a WriteTurn on `client` with the contract's Lease. */
  readonly turn?: WriteTurn;
}

/**
 * A Runnable that keeps an informer's insights in the UpdateStatus: on trigger() and every resyncMs it computes
 * the contribution and writes it when it changed or its heartbeat is due. Runs on the leader (one writer per
 * informer). A cluster without the UpdateStatus API is logged once and looked at again on the next resync.
 */
export class InsightPublisher implements Runnable {
  readonly name: string;
  readonly needsLeaderElection = true;
  private readonly writer: InformerWriter;
  private readonly statuses: ResourceClient<StoredStatus>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private wake: (() => void) | undefined;
  private pending = false;
  private lastError = '';
  private stored: StoredStatus | undefined;
  /** Writes made, for tests and metrics. */
  writes = 0;

  constructor(private readonly options: InsightPublisherOptions) {
    this.name = options.name ?? `${options.informer}-update-insights`;
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
    this.statuses = updateStatusClient(options.client);
    this.writer = new InformerWriter(this.statuses, {
      name: options.informer,
      clock: this.clock,
      minWriteIntervalMs: options.minWriteIntervalMs,
      reservedName: options.reservedName,
      turn:
        options.turn ??
        WriteTurn.forClient(options.client, options.informer, { clock: this.clock, logger: this.logger }),
    });
  }

  /** Asks for a look soon (coalesced: many triggers, one look). */
  trigger(): void {
    this.pending = true;
    this.wake?.();
  }

  async start(signal: AbortSignal): Promise<void> {
    const resyncMs = this.options.resyncMs ?? 15_000;
    while (!signal.aborted) {
      this.pending = false;
      let waitMs = resyncMs;
      try {
        waitMs = Math.min(waitMs, await this.publishOnce(signal));
        if (this.lastError !== '')
          this.logger.info({ informer: this.options.informer }, 'update insights written again');
        this.lastError = '';
      } catch (err) {
        if (signal.aborted) break;
        const message = errorMessage(err);
        // Logged when the cause changes, not on every attempt.
        if (message !== this.lastError) {
          // A cluster without the UpdateStatus API is normal (not every cluster runs update status): info.
          const unserved =
            err instanceof UpdateStatusError && err.code === 'TESSERA_UPDATESTATUS_NOT_AVAILABLE';
          this.logger[unserved ? 'info' : 'warn'](
            { informer: this.options.informer, err: message },
            'cannot write update insights; trying again',
          );
        }
        this.lastError = message;
        this.stored = undefined;
      }
      if (this.pending || signal.aborted) continue;
      await this.sleepUnlessTriggered(Math.max(waitMs, 0), signal);
    }
  }

  /** One look: returns how long until the next one is needed. */
  async publishOnce(signal?: AbortSignal): Promise<number> {
    // The object is read only when this publisher has not seen it yet (or after an error); after that, its own
    // writes' responses keep it current, and the heartbeat bounds how stale the comparison can be.
    this.stored ??= await ignoreNotFound(this.statuses.get({ name: SINGLETON_NAME }, signal));
    const contribution = this.options.contribution(this.stored?.status);
    // Not ready to tell yet (caches syncing): look again soon rather than a resync later.
    if (contribution === undefined) return Math.min(this.options.resyncMs ?? 15_000, 1_000);
    const outcome = await this.writer.write(contribution, this.stored, signal, () =>
      this.options.contribution(this.stored?.status),
    );
    switch (outcome.kind) {
      case 'written':
        this.writes++;
        this.stored = outcome.stored;
        return this.options.resyncMs ?? 15_000;
      case 'throttled':
        return outcome.retryAfterMs;
      case 'unchanged':
        return outcome.heartbeatDueInMs;
    }
  }

  private async sleepUnlessTriggered(ms: number, signal: AbortSignal): Promise<void> {
    const woken = new AbortController();
    const abort = () => woken.abort();
    signal.addEventListener('abort', abort, { once: true });
    this.wake = abort;
    try {
      await this.clock.sleep(ms, woken.signal);
    } finally {
      this.wake = undefined;
      signal.removeEventListener('abort', abort);
    }
  }
}
