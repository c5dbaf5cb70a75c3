import { describe, expect, it } from 'vitest';
import { Controller } from './controller.js';
import { TerminalError } from './errors.js';
import { Trigger } from './trigger.js';
import type { SharedInformer, ResourceEventHandler } from './cache/shared-informer.js';
import type { Logger } from './logging.js';
import type { KubeObject } from './object.js';
import type { ReconcileResult } from './requeue-policy.js';
import { ItemExponentialFailureRateLimiter } from './workqueue/rate-limiters.js';
import { FakeClock, flushAsync } from './testing/index.js';

interface Captured {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}

function capturingLogger(lines: Captured[]): Logger {
  const at = (level: string) => (obj: object, msg?: string) =>
    lines.push({ level, obj: obj as Record<string, unknown>, msg: msg ?? '' });
  const logger: Logger = {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    child: () => logger,
  };
  return logger;
}

interface Harness {
  clock: FakeClock;
  controller: Controller;
  calls: Array<{ key: string; at: number }>;
  logs: Captured[];
  stop: () => Promise<void>;
}

function harness(
  reconcile: (key: string, calls: number, signal: AbortSignal) => Promise<ReconcileResult | void>,
  workers = 3,
): Harness {
  const clock = new FakeClock(0);
  const calls: Array<{ key: string; at: number }> = [];
  const logs: Captured[] = [];
  const perKey = new Map<string, number>();
  const controller = new Controller<string>({
    name: 'test',
    workers,
    clock,
    logger: capturingLogger(logs),
    rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000),
    reconciler: {
      reconcile: (key, signal) => {
        const n = (perKey.get(key) ?? 0) + 1;
        perKey.set(key, n);
        calls.push({ key, at: clock.now() });
        return reconcile(key, n, signal);
      },
    },
  });
  const ac = new AbortController();
  const running = controller.start(ac.signal);
  return {
    clock,
    controller,
    calls,
    logs,
    stop: async () => {
      ac.abort();
      await running;
    },
  };
}

/** A synced informer with an empty cache whose events the test delivers by hand through `events()`. */
function handInformer(): {
  informer: SharedInformer<KubeObject>;
  events: () => ResourceEventHandler<KubeObject>;
} {
  let handler: ResourceEventHandler<KubeObject> = {};
  const informer = {
    addEventHandler: (h: ResourceEventHandler<KubeObject>) => {
      handler = h;
      return { hasSynced: () => true, remove: () => undefined };
    },
    getIndexer: () => ({ list: () => [] }),
    waitForSync: () => Promise.resolve(true),
  } as unknown as SharedInformer<KubeObject>;
  return { informer, events: () => handler };
}

describe('Controller', () => {
  it('retries a failing key with growing backoff, logs the key, and forgets it after success', async () => {
    const h = harness(async (_key, n) => {
      if (n <= 3) throw new Error(`transient ${n}`);
    });
    await flushAsync();
    h.controller.enqueue('ns/a');
    await h.clock.advance(100);
    expect(h.calls.map((c) => c.at)).toEqual([0, 5, 15, 35]);
    expect(h.controller.queue.numRequeues('ns/a')).toBe(0);
    const errors = h.logs.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(3);
    expect(errors[0]?.obj).toMatchObject({ key: 'ns/a' });
    await h.stop();
  });

  it('re-runs a key after requeueAfterMs without counting a failure', async () => {
    const h = harness(async (_key, n) => (n === 1 ? { requeueAfterMs: 30_000 } : undefined));
    await flushAsync();
    h.controller.enqueue('k');
    await h.clock.advance(29_999);
    expect(h.calls).toHaveLength(1);
    await h.clock.advance(1);
    expect(h.calls.map((c) => c.at)).toEqual([0, 30_000]);
    expect(h.controller.queue.numRequeues('k')).toBe(0);
    await h.stop();
  });

  it('does not retry a TerminalError', async () => {
    const h = harness(async () => {
      throw new TerminalError('spec is invalid');
    });
    await flushAsync();
    h.controller.enqueue('k');
    await h.clock.advance(10_000);
    expect(h.calls).toHaveLength(1);
    expect(h.logs.some((l) => l.level === 'error' && l.obj.key === 'k' && /terminal/.test(l.msg))).toBe(true);
    await h.stop();
  });

  it('never reconciles one key on two workers, and reconciles again once if it changed meanwhile', async () => {
    const inFlight = new Set<string>();
    let overlap = 0;
    const gates: Array<() => void> = [];
    const h = harness(async (key) => {
      if (inFlight.has(key)) overlap++;
      inFlight.add(key);
      await new Promise<void>((resolve) => gates.push(resolve));
      inFlight.delete(key);
    }, 4);
    await flushAsync();
    h.controller.enqueue('a');
    await flushAsync();
    // 'a' is being reconciled; three more changes arrive, plus another key.
    h.controller.enqueue('a');
    h.controller.enqueue('a');
    h.controller.enqueue('b');
    h.controller.enqueue('a');
    await flushAsync();
    expect(h.calls.map((c) => c.key)).toEqual(['a', 'b']);
    while (gates.length > 0) {
      gates.shift()?.();
      await flushAsync();
    }
    expect(h.calls.map((c) => c.key).sort()).toEqual(['a', 'a', 'b']);
    expect(overlap).toBe(0);
    await h.stop();
  });

  it('lets every worker wait on its signal at once without a leak warning, and aborts them all on stop', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): number => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const workers = 16;
      let waiting = 0;
      let aborted = 0;
      const h = harness(async (_key, _n, signal) => {
        // Each reconcile waits on the signal twice at once, as a request inside a lock wait does.
        const gone = () =>
          new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        waiting++;
        await Promise.all([gone(), gone()]);
        aborted++;
      }, workers);
      await flushAsync();
      for (let i = 0; i < workers; i++) h.controller.enqueue(`key-${i}`);
      await flushAsync();
      expect(waiting).toBe(workers);
      // process.emitWarning reports on the next tick; a macrotask later it has been delivered if it was emitted.
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      await h.stop();
      expect(aborted).toBe(workers);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('on stop lets the in-flight reconcile finish, drops queued keys, and resolves start() afterwards', async () => {
    let release: (() => void) | undefined;
    let finished = false;
    const h = harness(async (key) => {
      if (key === 'slow') {
        await new Promise<void>((resolve) => (release = resolve));
        finished = true;
      }
    }, 1);
    await flushAsync();
    h.controller.enqueue('slow');
    h.controller.enqueue('queued');
    await flushAsync();
    let stopped = false;
    const stopping = h.stop().then(() => (stopped = true));
    await flushAsync();
    expect(stopped).toBe(false);
    release?.();
    await stopping;
    expect(finished).toBe(true);
    expect(h.calls.map((c) => c.key)).toEqual(['slow']);
  });

  it('reconciles a key once when an update maps the old and the new object to it, even on an idle worker', async () => {
    const { informer, events } = handInformer();
    const reconciled: string[] = [];
    const controller = new Controller<string>({
      name: 'mapped',
      clock: new FakeClock(0),
      workers: 2,
      reconciler: { reconcile: async (key) => void reconciled.push(key) },
    });
    controller.watch(informer, (o) => [`owner-of-${o.metadata?.name ?? ''}`]);
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    await flushAsync(); // both workers wait for a key
    const before = { metadata: { name: 'x', resourceVersion: '1' } };
    const after = { metadata: { name: 'x', resourceVersion: '2' } };
    events().onUpdate?.(before, after);
    await flushAsync();
    expect(reconciled).toEqual(['owner-of-x']);
    stop.abort();
    await running;
  });

  it('queues only the events a watch predicate lets through', async () => {
    const { informer, events } = handInformer();
    const reconciled: string[] = [];
    const controller = new Controller<string>({
      name: 'predicate',
      clock: new FakeClock(0),
      reconciler: { reconcile: async (key) => void reconciled.push(key) },
    });
    const obj = (name: string, generation: number): KubeObject => ({
      metadata: { namespace: 'ns', name, generation },
    });
    // Like controller-runtime's GenerationChangedPredicate: status-only updates are dropped.
    controller.watch(informer, undefined, {
      update: (o, n) => o.metadata?.generation !== n.metadata?.generation,
      delete: () => false,
    });
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    await flushAsync();
    events().onAdd?.(obj('added', 1), false);
    events().onUpdate?.(obj('status-only', 1), obj('status-only', 1));
    events().onUpdate?.(obj('spec', 1), obj('spec', 2));
    events().onDelete?.(obj('deleted', 1), false);
    await flushAsync();
    expect(reconciled).toEqual(['ns/added', 'ns/spec']);
    stop.abort();
    await running;
  });

  it('reconciles the keys a watched trigger maps each fire to, each once per fire', async () => {
    const renewed = new Trigger<string>();
    const reconciled: string[] = [];
    const controller = new Controller<string>({
      name: 'trigger',
      clock: new FakeClock(0),
      reconciler: { reconcile: async (key) => void reconciled.push(key) },
    });
    controller.watchTrigger(renewed, (name) => ['cluster', name, 'cluster']);
    // Fired before the first start: waits in the queue, as the first start would have queued it anyway.
    renewed.fire('before-start');
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    await flushAsync();
    renewed.fire('webhook');
    await flushAsync();
    expect(reconciled).toEqual(['cluster', 'before-start', 'cluster', 'webhook']);
    stop.abort();
    await running;
  });
});
