// Records Kubernetes Events for objects, as events.k8s.io/v1 (default) or core/v1 Events. event() never blocks and
// never throws: the correlator (spam filter, aggregation, dedup) decides, and writes happen in the background on a
// small pool of concurrent writers, with failures logged. A repeat becomes a patch of the existing Event (core/v1
// count/lastTimestamp, events.k8s.io series). Writes of one Event are never concurrent (its create finishes before
// its patch starts), and a repeat that is still queued replaces the queued write instead of adding one, as
// client-go's correlator folds repeats into counts. The queue is bounded in bytes; what it drops is counted
// (`tessera_events_dropped_total`). Call flush() to wait for pending writes (tests, shutdown).
import os from 'node:os';
import { Counter, type Registry } from 'prom-client';
import type { KubeClient } from './client.js';
import { realClock, type Clock } from './clock.js';
import { isNotFound } from './errors.js';
import {
  EventCorrelator,
  type EventCorrelatorOptions,
  type EventRecord,
  type EventType,
  type ObjectReference,
} from './event-correlator.js';
import { microTime } from './lease-decision.js';
import { silentLogger, type Logger } from './logging.js';
import type { KubeObject } from './object.js';
import { ResourceClient } from './resource-client.js';
import { CoreEvents, Events } from './resources.js';
import { metaTime } from './conditions.js';

export interface EventRecorder {
  /** Emits an event about `regarding` (an object or a reference). Fire-and-forget. */
  event(
    regarding: KubeObject | ObjectReference,
    type: EventType,
    reason: string,
    message: string,
    action?: string,
  ): void;
}

export interface EventRecorderOptions extends EventCorrelatorOptions {
  client: KubeClient;
  /** reportingController / source.component, e.g. `tessera-podplacement`. */
  component: string;
  /** reportingInstance / source.host. Default: the hostname. */
  instance?: string;
  /** Default: 'events.k8s.io/v1'. */
  api?: 'events.k8s.io/v1' | 'v1';
  /** Events written at once. Default: 8 (a 1,000-pod burst writes a few thousand events in seconds). */
  concurrency?: number;
  /**
   * Bytes of queued events (messages and references, estimated) before new events are dropped and counted.
   * Default: 16 MiB, about 8,000 events with 1 KiB messages.
   */
  maxPendingBytes?: number;
  /** Where `tessera_events_dropped_total` is registered. Default: none (drops are still logged). */
  registry?: Registry;
  clock?: Clock;
  logger?: Logger;
}

/** Bytes one queued event is assumed to hold besides its strings (object headers, numbers). */
const EVENT_OVERHEAD_BYTES = 256;

interface QueuedWrite {
  kind: 'create' | 'update';
  event: EventRecord;
  bytes: number;
}

export class KubeEventRecorder implements EventRecorder {
  private readonly correlator: EventCorrelator;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly instance: string;
  private readonly events: ResourceClient<KubeObject>;
  private readonly concurrency: number;
  private readonly maxPendingBytes: number;
  private readonly droppedTotal: Counter<'reason'> | undefined;
  /** Queued writes by Event name, in first-queued order; at most one per Event. */
  private readonly queued = new Map<string, QueuedWrite>();
  /** Events being written now: their next write waits in `queued` until this one ends. */
  private readonly writing = new Set<string>();
  private queuedBytes = 0;
  private dropped = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: EventRecorderOptions) {
    this.correlator = new EventCorrelator(options.component, options);
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ component: 'events' });
    this.instance = options.instance ?? os.hostname();
    this.events = new ResourceClient(
      options.client,
      (options.api ?? 'events.k8s.io/v1') === 'v1' ? CoreEvents : Events,
    );
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.maxPendingBytes = options.maxPendingBytes ?? 16 * 1024 * 1024;
    this.droppedTotal = options.registry ? droppedCounter(options.registry) : undefined;
  }

  event(
    regarding: KubeObject | ObjectReference,
    type: EventType,
    reason: string,
    message: string,
    action?: string,
  ): void {
    const ref = toReference(regarding);
    const result = this.correlator.correlate(
      { regarding: ref, type, reason, message, action },
      this.clock.now(),
    );
    if (result.action === 'drop') {
      this.logger.debug(
        { reason, object: `${ref.namespace ?? ''}/${ref.name ?? ''}` },
        'event dropped by spam filter',
      );
      this.countDrop('spam-filter');
      return;
    }
    this.enqueue(result.action, result.event);
  }

  /** Events dropped since start (spam filter or a full queue). */
  droppedEvents(): number {
    return this.dropped;
  }

  /** Resolves when every event emitted so far has been written (or failed). */
  flush(): Promise<void> {
    if (this.queued.size === 0 && this.writing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private enqueue(kind: 'create' | 'update', event: EventRecord): void {
    const previous = this.queued.get(event.name);
    if (previous) {
      // Not written yet: write the newest state once. A queued create stays a create (with the newer count).
      this.queuedBytes -= previous.bytes;
      previous.event = event;
      previous.bytes = estimateBytes(event);
      this.queuedBytes += previous.bytes;
      return;
    }
    const bytes = estimateBytes(event);
    if (this.queuedBytes + bytes > this.maxPendingBytes) {
      this.logger.warn(
        { reason: event.reason, queuedBytes: this.queuedBytes },
        'event queue is full; dropping event',
      );
      this.countDrop('queue-full');
      return;
    }
    this.queued.set(event.name, { kind, event, bytes });
    this.queuedBytes += bytes;
    this.pump();
  }

  /** Starts writers while there is room and a queued Event that is not being written. */
  private pump(): void {
    if (this.writing.size >= this.concurrency) return;
    for (const [name, write] of this.queued) {
      if (this.writing.size >= this.concurrency) return;
      if (this.writing.has(name)) continue;
      this.queued.delete(name);
      this.queuedBytes -= write.bytes;
      this.writing.add(name);
      void this.write(write.kind, write.event).finally(() => {
        this.writing.delete(name);
        this.pump();
        if (this.queued.size === 0 && this.writing.size === 0) {
          const waiters = this.idleWaiters;
          this.idleWaiters = [];
          for (const resolve of waiters) resolve();
        }
      });
    }
  }

  private countDrop(reason: 'spam-filter' | 'queue-full'): void {
    this.dropped++;
    this.droppedTotal?.inc({ reason });
  }

  private async write(kind: 'create' | 'update', event: EventRecord): Promise<void> {
    const v1 = this.options.api === 'v1';
    try {
      if (kind === 'update') {
        const patch = v1
          ? { count: event.count, lastTimestamp: metaTime(event.lastTimestamp), message: event.message }
          : { series: { count: event.count, lastObservedTime: microTime(event.lastTimestamp) } };
        try {
          await this.events.mergePatch({ namespace: event.namespace, name: event.name }, patch, {
            discardAnswer: true,
          });
          return;
        } catch (err) {
          if (!isNotFound(err)) throw err;
          // The Event expired on the server: write it anew.
        }
      }
      // The written Event is not used: its answer is not parsed.
      await this.events.create(v1 ? this.coreEvent(event) : this.newEvent(event), { discardAnswer: true });
    } catch (err) {
      this.logger.warn(
        { err: err instanceof Error ? err.message : String(err), reason: event.reason },
        'could not write event',
      );
    }
  }

  private coreEvent(e: EventRecord): KubeObject {
    return {
      metadata: { name: e.name, namespace: e.namespace },
      involvedObject: e.regarding,
      reason: e.reason,
      message: e.message,
      type: e.type,
      count: e.count,
      firstTimestamp: metaTime(e.firstTimestamp),
      lastTimestamp: metaTime(e.lastTimestamp),
      source: { component: this.options.component, host: this.instance },
      reportingComponent: this.options.component,
      reportingInstance: this.instance,
      action: e.action ?? e.reason,
    } as KubeObject;
  }

  private newEvent(e: EventRecord): KubeObject {
    const body: Record<string, unknown> = {
      metadata: { name: e.name, namespace: e.namespace },
      eventTime: microTime(e.firstTimestamp),
      regarding: e.regarding,
      reason: e.reason,
      note: e.message.slice(0, 1024),
      type: e.type,
      action: e.action ?? e.reason,
      reportingController: this.options.component,
      reportingInstance: this.instance.slice(0, 128),
    };
    if (e.count > 1) body.series = { count: e.count, lastObservedTime: microTime(e.lastTimestamp) };
    return body as KubeObject;
  }
}

function estimateBytes(e: EventRecord): number {
  const r = e.regarding;
  return (
    EVENT_OVERHEAD_BYTES +
    2 *
      (e.message.length +
        e.reason.length +
        e.name.length +
        e.namespace.length +
        (e.action?.length ?? 0) +
        (r.name?.length ?? 0) +
        (r.namespace?.length ?? 0) +
        (r.kind?.length ?? 0) +
        (r.apiVersion?.length ?? 0) +
        (r.uid?.length ?? 0))
  );
}

function droppedCounter(registry: Registry): Counter<'reason'> {
  const name = 'tessera_events_dropped_total';
  return (
    (registry.getSingleMetric(name) as Counter<'reason'> | undefined) ??
    new Counter({
      name,
      help: 'Events not written: dropped by the spam filter or because the write queue was full',
      labelNames: ['reason'],
      registers: [registry],
    })
  );
}

function toReference(obj: KubeObject | ObjectReference): ObjectReference {
  if ('metadata' in obj && obj.metadata) {
    const o = obj as KubeObject;
    return {
      apiVersion: o.apiVersion,
      kind: o.kind,
      namespace: o.metadata?.namespace,
      name: o.metadata?.name,
      uid: o.metadata?.uid,
      resourceVersion: o.metadata?.resourceVersion,
    };
  }
  return obj as ObjectReference;
}
