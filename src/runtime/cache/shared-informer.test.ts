// The informer's cache/handler semantics, driven through its ReflectorSink side (no API server involved; the
// list/watch side is covered by test/integration/runtime).
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../client.js';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../object.js';
import { ConfigMaps } from '../resources.js';
import { DefaultSharedInformer } from './shared-informer.js';

interface Cm extends KubeObject {
  data?: Record<string, string>;
}

const cm = (ns: string, name: string, rv: string, team = 'a'): Cm => ({
  metadata: { namespace: ns, name, resourceVersion: rv, labels: { team } },
});

function newInformer(): DefaultSharedInformer<Cm> {
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
  });
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
});
