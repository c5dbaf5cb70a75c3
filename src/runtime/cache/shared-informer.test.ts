// The informer's cache/handler semantics, driven through its ReflectorSink side (no API server involved; the
// list/watch side is covered by test/integration/runtime).
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../client.js';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../object.js';
import { ConfigMaps } from '../resources.js';
import { silentLogger, type Logger } from '../logging.js';
import {
  DefaultSharedInformer,
  type HandlerRegistration,
  type ResourceEventHandler,
} from './shared-informer.js';

interface Cm extends KubeObject {
  data?: Record<string, string>;
}

const cm = (ns: string, name: string, rv: string, team = 'a'): Cm => ({
  metadata: { namespace: ns, name, resourceVersion: rv, labels: { team } },
});

function newInformer(logger?: Logger): DefaultSharedInformer<Cm> {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new DefaultSharedInformer<Cm>({
    client: new KubeClient(kc),
    type: ConfigMaps,
    indexers: { team: (o) => [o.metadata?.labels?.team ?? ''] },
    logger,
  });
}

/** A logger that keeps warn/error records (message and fields). */
function capturingLogger(): { logger: Logger; records: { level: string; msg: string; fields: object }[] } {
  const records: { level: string; msg: string; fields: object }[] = [];
  const at =
    (level: string) =>
    (fields: object, msg?: string): void =>
      void records.push({ level, msg: msg ?? '', fields });
  const logger: Logger = {
    ...silentLogger,
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  } as Logger;
  return { logger, records };
}

/** A handler whose every call returns a promise the test settles: a listener that has fallen behind. */
function stalledHandler(): { names: string[]; release: () => void; handler: ResourceEventHandler<Cm> } {
  const names: string[] = [];
  let stalled = true;
  let resolveFirst: (() => void) | undefined;
  const handle = (o: Cm): Promise<void> => {
    names.push(o.metadata?.name ?? '');
    if (!stalled) return Promise.resolve();
    return new Promise<void>((resolve) => {
      resolveFirst = resolve;
    });
  };
  return {
    names,
    release: () => {
      stalled = false;
      resolveFirst?.();
    },
    handler: { onAdd: handle, onUpdate: (_o, n) => handle(n) },
  };
}

async function until(check: () => boolean): Promise<void> {
  for (let turns = 0; !check(); turns++) {
    if (turns > 10_000) throw new Error('condition not reached');
    await new Promise((r) => setImmediate(r));
  }
}

function recorder(): { log: string[]; handler: Parameters<DefaultSharedInformer<Cm>['addEventHandler']>[0] } {
  const log: string[] = [];
  return {
    log,
    handler: {
      onAdd: (o, initial) =>
        log.push(`add ${o.metadata?.name}@${o.metadata?.resourceVersion}${initial ? ' initial' : ''}`),
      onUpdate: (o, n) =>
        log.push(`update ${n.metadata?.name} ${o.metadata?.resourceVersion}->${n.metadata?.resourceVersion}`),
      onDelete: (o, unknown) =>
        log.push(
          `delete ${o.metadata?.name}@${o.metadata?.resourceVersion}${unknown ? ' final-state-unknown' : ''}`,
        ),
    },
  };
}

describe('DefaultSharedInformer', () => {
  it('syncs on the first list and delivers it as initial adds', async () => {
    const inf = newInformer();
    const r = recorder();
    const reg = inf.addEventHandler(r.handler);
    expect(inf.hasSynced()).toBe(false);
    const waiting = inf.waitForSync();
    inf.replace([cm('n1', 'a', '1'), cm('n2', 'b', '2')], '2');
    expect(await waiting).toBe(true);
    expect(reg.hasSynced()).toBe(true);
    expect(r.log).toEqual(['add a@1 initial', 'add b@2 initial']);
  });

  it('hands (old, new) to updates and the final object to deletes', () => {
    const inf = newInformer();
    const r = recorder();
    inf.addEventHandler(r.handler);
    inf.replace([cm('n1', 'a', '1')], '1');
    inf.apply('MODIFIED', cm('n1', 'a', '5'));
    inf.apply('ADDED', cm('n1', 'c', '6'));
    inf.apply('DELETED', cm('n1', 'a', '7'));
    expect(r.log.slice(1)).toEqual(['update a 1->5', 'add c@6', 'delete a@7']);
    expect(inf.getIndexer().listKeys()).toEqual(['n1/c']);
  });

  it('drops a watch delete of an object the cache never had (no onDelete without a prior add)', () => {
    const inf = newInformer();
    const r = recorder();
    inf.addEventHandler(r.handler);
    inf.replace([cm('n1', 'a', '1')], '1');
    r.log.length = 0;
    inf.apply('DELETED', cm('n1', 'ghost', '2'));
    inf.apply('DELETED', cm('n1', 'a', '3'));
    inf.apply('DELETED', cm('n1', 'a', '4'));
    expect(r.log).toEqual(['delete a@3']);
    expect(inf.getIndexer().listKeys()).toEqual([]);
  });

  it('after a relist reports only changes, and deletions it could only infer as final-state-unknown', () => {
    const inf = newInformer();
    const r = recorder();
    inf.addEventHandler(r.handler);
    inf.replace([cm('n1', 'a', '1'), cm('n1', 'b', '2'), cm('n1', 'c', '3')], '3');
    r.log.length = 0;
    inf.replace([cm('n1', 'a', '1'), cm('n1', 'b', '9'), cm('n1', 'd', '10')], '10');
    expect(r.log).toEqual(['update b 2->9', 'add d@10', 'delete c@3 final-state-unknown']);
  });

  it('replays the cache to a handler added after sync', () => {
    const inf = newInformer();
    inf.replace([cm('n1', 'a', '1')], '1');
    const r = recorder();
    const reg = inf.addEventHandler(r.handler);
    expect(reg.hasSynced()).toBe(true);
    expect(r.log).toEqual(['add a@1 initial']);
  });

  it('keeps namespace and custom indexes in step with changes', () => {
    const inf = newInformer();
    inf.replace([cm('n1', 'a', '1', 'red'), cm('n2', 'b', '2', 'red'), cm('n1', 'c', '3', 'blue')], '3');
    const idx = inf.getIndexer();
    expect(
      idx
        .byIndex('namespace', 'n1')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(idx.indexKeys('team', 'red').sort()).toEqual(['n1/a', 'n2/b']);
    inf.apply('MODIFIED', cm('n1', 'a', '4', 'blue'));
    inf.apply('DELETED', cm('n2', 'b', '5', 'red'));
    expect(idx.indexKeys('team', 'red')).toEqual([]);
    expect(idx.indexKeys('team', 'blue').sort()).toEqual(['n1/a', 'n1/c']);
    expect(() => idx.byIndex('nope', 'x')).toThrow(/no index named nope/);
  });

  it('isolates a throwing handler from the others', () => {
    const inf = newInformer();
    const r = recorder();
    inf.addEventHandler({
      onAdd: () => {
        throw new Error('bad handler');
      },
    });
    inf.addEventHandler(r.handler);
    inf.replace([cm('n1', 'a', '1')], '1');
    inf.apply('ADDED', cm('n1', 'b', '2'));
    expect(r.log).toEqual(['add a@1 initial', 'add b@2']);
  });

  it('stops delivering to a removed handler', () => {
    const inf = newInformer();
    const r = recorder();
    const reg = inf.addEventHandler(r.handler);
    inf.replace([], '1');
    reg.remove();
    inf.apply('ADDED', cm('n1', 'b', '2'));
    expect(r.log).toEqual([]);
  });

  describe('each handler has its own buffer', () => {
    it('keeps delivering to the other handlers, in order, while one handler has not finished', async () => {
      const inf = newInformer();
      const slow = stalledHandler();
      const fast = recorder();
      const slowReg = inf.addEventHandler(slow.handler, { name: 'slow-controller' });
      inf.addEventHandler(fast.handler);
      inf.replace([], '1');
      for (let i = 0; i < 2000; i++) inf.apply('ADDED', cm('n1', `cm-${i}`, String(i + 2)));
      expect(fast.log).toHaveLength(2000);
      expect(slow.names).toEqual(['cm-0']);
      expect(slowReg.pendingEvents()).toBe(1999);
      slow.release();
      await until(() => slowReg.pendingEvents() === 0);
      expect(slow.names).toEqual(Array.from({ length: 2000 }, (_, i) => `cm-${i}`));
    });

    it('yields to the event loop while it drains a long buffer', async () => {
      const inf = newInformer();
      const slow = stalledHandler();
      const reg = inf.addEventHandler(slow.handler);
      inf.replace([], '1');
      for (let i = 0; i < 3000; i++) inf.apply('ADDED', cm('n1', `cm-${i}`, String(i + 2)));
      slow.release();
      // Microtasks only: without a turn of the event loop, no more than one batch (256) is delivered. Yielding
      // between batches is what lets timers (the watch's watchdog, other handlers' work) run while a backlog drains.
      for (let i = 0; i < 10_000; i++) await Promise.resolve();
      expect(slow.names.length).toBeGreaterThan(1);
      expect(slow.names.length).toBeLessThanOrEqual(257);
      await until(() => reg.pendingEvents() === 0);
      expect(slow.names).toHaveLength(3000);
    });

    it('reports a handler synced only once it has finished with the initial list', async () => {
      const inf = newInformer();
      const slow = stalledHandler();
      const reg = inf.addEventHandler(slow.handler);
      inf.replace([cm('n1', 'a', '1'), cm('n1', 'b', '2')], '2');
      expect(inf.hasSynced()).toBe(true);
      expect(reg.hasSynced()).toBe(false);
      slow.release();
      await until(() => reg.hasSynced());
      expect(slow.names).toEqual(['a', 'b']);
    });

    it('names a handler that falls behind, and a rejected promise does not stop its next events', async () => {
      const { logger, records } = capturingLogger();
      const inf = newInformer(logger);
      const slow = stalledHandler();
      inf.addEventHandler(slow.handler, { name: 'controller podplacement' });
      let failures = 0;
      const seen: string[] = [];
      inf.addEventHandler({
        onAdd: (o) => {
          seen.push(o.metadata?.name ?? '');
          return failures++ === 0 ? Promise.reject(new Error('first event fails')) : Promise.resolve();
        },
      });
      inf.replace([], '1');
      for (let i = 0; i < 1001; i++) inf.apply('ADDED', cm('n1', `cm-${i}`, String(i + 2)));
      const behind = records.filter((r) => r.msg.includes('falling behind')).map((r) => r.fields);
      expect(behind).toContainEqual({ handler: 'controller podplacement', pendingEvents: 1000 });
      await until(() => seen.length === 1001);
      expect(records.some((r) => r.level === 'error' && r.msg.includes('event handler failed'))).toBe(true);
      slow.release();
    });
  });

  describe('handlers that add, remove or cause events while they run', () => {
    it('a handler removing its own registration does not take the event from the next handler', () => {
      const inf = newInformer();
      inf.replace([], '1');
      const once: HandlerRegistration = inf.addEventHandler({ onAdd: () => once.remove() });
      const next = recorder();
      inf.addEventHandler(next.handler);
      inf.apply('ADDED', cm('n1', 'a', '2'));
      expect(next.log).toEqual(['add a@2']);
    });

    it('a handler added from inside a handler gets each object once', () => {
      const inf = newInformer();
      inf.replace([], '1');
      const late = recorder();
      let added = false;
      inf.addEventHandler({
        onAdd: () => {
          if (!added) inf.addEventHandler(late.handler);
          added = true;
        },
      });
      inf.apply('ADDED', cm('n1', 'a', '2'));
      expect(late.log).toEqual(['add a@2 initial']);
    });

    it('a handler added from inside onDelete never hears of an object it was not given', () => {
      const inf = newInformer();
      inf.replace([cm('n1', 'a', '1')], '1');
      const late = recorder();
      inf.addEventHandler({ onDelete: () => void inf.addEventHandler(late.handler) });
      inf.apply('DELETED', cm('n1', 'a', '2'));
      expect(late.log).toEqual([]);
    });

    it('a handler added while the first list is delivered gets all of it before it reports synced', () => {
      const inf = newInformer();
      const late = recorder();
      let reg: HandlerRegistration | undefined;
      inf.addEventHandler({ onAdd: () => void (reg ??= inf.addEventHandler(late.handler)) });
      inf.replace([cm('n1', 'a', '1'), cm('n1', 'b', '2')], '2');
      expect(reg?.hasSynced()).toBe(true);
      expect(late.log.sort()).toEqual(['add a@1 initial', 'add b@2 initial']);
    });

    it('an async handler never runs two events at once, even when it causes an event itself', async () => {
      const inf = newInformer();
      inf.replace([], '1');
      let running = 0;
      let mostAtOnce = 0;
      const finish: (() => void)[] = [];
      const seen: string[] = [];
      const reg = inf.addEventHandler({
        onAdd: (o) => {
          seen.push(o.metadata?.name ?? '');
          mostAtOnce = Math.max(mostAtOnce, ++running);
          // As a fake client delivering its watch synchronously would.
          if (o.metadata?.name === 'a') inf.apply('ADDED', cm('n1', 'b', '3'));
          return new Promise<void>((resolve) =>
            finish.push(() => {
              running--;
              resolve();
            }),
          );
        },
      });
      inf.apply('ADDED', cm('n1', 'a', '2'));
      expect(mostAtOnce).toBe(1);
      expect(reg.pendingEvents()).toBe(1);
      finish.shift()?.();
      await until(() => seen.length === 2);
      expect(seen).toEqual(['a', 'b']);
      expect(mostAtOnce).toBe(1);
    });

    it('warns about a handler that stays about 1,000 events behind once, not at every event', async () => {
      const { logger, records } = capturingLogger();
      const inf = newInformer(logger);
      inf.replace([], '1');
      const finish: (() => void)[] = [];
      inf.addEventHandler({ onAdd: () => new Promise<void>((resolve) => finish.push(resolve)) });
      let n = 0;
      const add = (): void => inf.apply('ADDED', cm('n1', `cm-${n}`, String(++n + 1)));
      for (let i = 0; i < 1001; i++) add();
      for (let i = 0; i < 500; i++) {
        finish.shift()?.();
        await new Promise((r) => setImmediate(r));
        add();
      }
      expect(records.filter((r) => r.msg.includes('falling behind'))).toHaveLength(1);
    });
  });
});

describe('an async handler that falls behind: its buffer holds one event per object', () => {
  /** A handler whose promises the test settles one at a time; records what it is given. */
  function gatedHandler(): { log: string[]; next: () => void; handler: ResourceEventHandler<Cm> } {
    const r = recorder();
    const waiting: (() => void)[] = [];
    const hold = (): Promise<void> => new Promise((resolve) => waiting.push(resolve));
    return {
      log: r.log,
      next: () => waiting.shift()?.(),
      handler: {
        onAdd: (o, i) => (r.handler.onAdd?.(o, i), hold()),
        onUpdate: (o, n) => (r.handler.onUpdate?.(o, n), hold()),
        onDelete: (o, u) => (r.handler.onDelete?.(o, u), hold()),
      },
    };
  }

  async function drainAll(reg: HandlerRegistration, next: () => void): Promise<void> {
    for (let turns = 0; reg.pendingEvents() > 0; turns++) {
      if (turns > 10_000) throw new Error('buffer never drained');
      next();
      await new Promise((r) => setImmediate(r));
    }
    next();
  }

  it('stays at one event per object however often the objects change, and ends with their current state', async () => {
    const inf = newInformer();
    const slow = gatedHandler();
    const reg = inf.addEventHandler(slow.handler);
    inf.replace([cm('n1', 'busy', '1')], '1');
    // The handler holds its first event; 100,000 updates of 10 objects arrive meanwhile.
    let rv = 2;
    for (let i = 0; i < 100_000; i++) inf.apply('MODIFIED', cm('n1', `obj-${i % 10}`, String(rv++)));
    expect(reg.pendingEvents()).toBeLessThanOrEqual(11); // 10 objects + the synced marker
    await drainAll(reg, slow.next);
    expect(slow.log[0]).toBe('add busy@1 initial');
    // Each object: one add (the first event was an add, as the cache had never seen it) with its newest state.
    const rest = slow.log.slice(1).sort();
    expect(rest).toEqual(Array.from({ length: 10 }, (_, k) => `add obj-${k}@${100_001 - 10 + k + 1}`).sort());
    expect(reg.hasSynced()).toBe(true);
  });

  it('merges updates into one (oldest old, newest new), and update then delete into the delete', async () => {
    const inf = newInformer();
    inf.replace([cm('n1', 'a', '1'), cm('n1', 'b', '2'), cm('n1', 'hold', '3')], '3');
    const slow = gatedHandler();
    const reg = inf.addEventHandler(slow.handler);
    // Replayed: hold first (running), a and b wait.
    await drainAll(reg, slow.next);
    slow.log.length = 0;
    inf.apply('MODIFIED', cm('n1', 'hold', '4')); // runs now, and holds the handler
    inf.apply('MODIFIED', cm('n1', 'a', '5'));
    inf.apply('MODIFIED', cm('n1', 'b', '6'));
    inf.apply('MODIFIED', cm('n1', 'a', '7'));
    inf.apply('DELETED', cm('n1', 'b', '8'));
    expect(reg.pendingEvents()).toBe(2);
    await drainAll(reg, slow.next);
    expect(slow.log).toEqual(['update hold 3->4', 'update a 1->7', 'delete b@8']);
  });

  it('drops an add and its delete that the handler never saw, and keeps a delete then a re-create apart', async () => {
    const inf = newInformer();
    inf.replace([cm('n1', 'old', '1'), cm('n1', 'hold', '2')], '2');
    const slow = gatedHandler();
    const reg = inf.addEventHandler(slow.handler);
    await drainAll(reg, slow.next);
    slow.log.length = 0;
    inf.apply('MODIFIED', cm('n1', 'hold', '3')); // holds the handler
    inf.apply('ADDED', cm('n1', 'brief', '4'));
    inf.apply('DELETED', cm('n1', 'brief', '5'));
    inf.apply('DELETED', cm('n1', 'old', '6'));
    inf.apply('ADDED', cm('n1', 'old', '7')); // re-created: a new object of the same name
    inf.apply('MODIFIED', cm('n1', 'old', '8'));
    expect(reg.pendingEvents()).toBe(2);
    await drainAll(reg, slow.next);
    expect(slow.log).toEqual(['update hold 2->3', 'delete old@6', 'add old@8']);
  });

  it('keeps each object in the place of its first waiting event, and the synced marker after the initial list', async () => {
    const inf = newInformer();
    const slow = gatedHandler();
    const reg = inf.addEventHandler(slow.handler);
    inf.replace([cm('n1', 'a', '1'), cm('n1', 'b', '2'), cm('n1', 'c', '3')], '3');
    inf.apply('MODIFIED', cm('n1', 'c', '4'));
    inf.apply('ADDED', cm('n1', 'd', '5'));
    inf.apply('MODIFIED', cm('n1', 'b', '6'));
    expect(reg.hasSynced()).toBe(false);
    await drainAll(reg, slow.next);
    expect(slow.log).toEqual(['add a@1 initial', 'add b@6 initial', 'add c@4 initial', 'add d@5']);
    expect(reg.hasSynced()).toBe(true);
  });
});
