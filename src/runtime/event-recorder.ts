// Records Kubernetes Events for objects, as events.k8s.io/v1 (default) or core/v1 Events. event() never blocks and
// never throws: the correlator (spam filter, aggregation, dedup) decides, and writes happen in the background, one
// at a time, with failures logged. A repeat becomes a patch of the existing Event (core/v1 count/lastTimestamp,
// events.k8s.io series). Call flush() to wait for pending writes (tests, shutdown).
import os from 'node:os';
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
  /** Pending writes kept before new events are dropped. Default: 1000. */
  maxPending?: number;
  clock?: Clock;
  logger?: Logger;
}

export class KubeEventRecorder implements EventRecorder {
  private readonly correlator: EventCorrelator;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly instance: string;
  private readonly events: ResourceClient<KubeObject>;
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;

  constructor(private readonly options: EventRecorderOptions) {
    this.correlator = new EventCorrelator(options.component, options);
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ component: 'events' });
    this.instance = options.instance ?? os.hostname();
    this.events = new ResourceClient(
      options.client,
      (options.api ?? 'events.k8s.io/v1') === 'v1' ? CoreEvents : Events,
    );
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
      return;
    }
    if (this.pending >= (this.options.maxPending ?? 1000)) {
      this.logger.warn({ reason }, 'too many pending events; dropping');
      return;
    }
    this.pending++;
    const { action: kind, event } = result;
    this.chain = this.chain.then(() => this.write(kind, event)).finally(() => this.pending--);
  }

  /** Resolves when every event emitted so far has been written (or failed). */
  flush(): Promise<void> {
    return this.chain;
  }

  private async write(kind: 'create' | 'update', event: EventRecord): Promise<void> {
    const v1 = this.options.api === 'v1';
    try {
      if (kind === 'update') {
        const patch = v1
          ? { count: event.count, lastTimestamp: metaTime(event.lastTimestamp), message: event.message }
          : { series: { count: event.count, lastObservedTime: microTime(event.lastTimestamp) } };
        try {
          await this.events.mergePatch({ namespace: event.namespace, name: event.name }, patch);
          return;
        } catch (err) {
          if (!isNotFound(err)) throw err;
          // The Event expired on the server: write it anew.
        }
      }
      await this.events.create(v1 ? this.coreEvent(event) : this.newEvent(event));
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
