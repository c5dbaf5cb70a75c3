// Soak: thousands of updates across namespaces while the test cuts the informer's connections repeatedly and
// restarts kube-apiserver once. At the end the informer's cache must equal a fresh list, and the last state each
// handler saw for every object must be that object's final state (deleted objects: seen deleted).
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/runtime/client.js';
import { DefaultSharedInformer } from '../../../src/runtime/cache/shared-informer.js';
import { isNotFound } from '../../../src/runtime/errors.js';
import { objectKey, type KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { ConfigMaps, Namespaces } from '../../../src/runtime/resources.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';

interface Cm extends KubeObject {
  data?: Record<string, string>;
}

const NAMESPACES = 5;
const OBJECTS_PER_NAMESPACE = 40;
const UPDATES = Number(process.env.TESSERA_SOAK_UPDATES ?? 5000);
const WRITERS = 8;
/** Connection cuts the run makes, spread evenly over the writes. */
const MIN_CUTS = 8;

function withServer(kc: KubeConfig, server: string): KubeConfig {
  const copy = new KubeConfig();
  copy.loadFromString(kc.exportConfig());
  const cluster = copy.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  copy.clusters = copy.clusters.map((c) => (c.name === cluster.name ? { ...c, server } : c));
  return copy;
}

/** Retries through cuts and the API server restart: by deadline, as a cold restart on a loaded machine is slow. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  return eventually(fn, {
    timeoutMs: 120_000,
    intervalMs: 100,
    what: 'a write through the cuts and restart',
  });
}

describe('informer soak against a real kube-apiserver', () => {
  let cluster: DevCluster;
  let proxy: TcpProxy;
  let direct: KubeClient;
  let viaProxy: KubeClient;
  const label = uniqueName('soak');

  beforeAll(async () => {
    cluster = await startTestCluster({
      name: uniqueName('rt-soak'),
      nodes: 'none',
      controllerManager: false,
      scheduler: false,
      kwok: false,
    });
    const kc = await cluster.kubeConfig();
    const url = new URL(cluster.server);
    proxy = await startTcpProxy(url.hostname, Number(url.port));
    direct = new KubeClient(kc);
    viaProxy = new KubeClient(withServer(kc, `https://127.0.0.1:${proxy.port}`));
  });

  afterAll(async () => {
    await viaProxy?.close();
    await direct?.close();
    await proxy?.close();
    await cluster?.stop({ wipe: true });
  });

  it(`converges after ${UPDATES} updates with broken watches and an apiserver restart`, async () => {
    const namespaces = new ResourceClient<KubeObject>(direct, Namespaces);
    const cms = new ResourceClient<Cm>(direct, ConfigMaps);
    const nsNames = Array.from({ length: NAMESPACES }, (_, i) => `${label}-${i}`);
    for (const ns of nsNames) await namespaces.create({ metadata: { name: ns } });
    const keys: Array<{ namespace: string; name: string }> = [];
    for (const ns of nsNames) {
      await Promise.all(
        Array.from({ length: OBJECTS_PER_NAMESPACE }, async (_, i) => {
          const name = `cm-${i}`;
          keys.push({ namespace: ns, name });
          await cms.create({ metadata: { namespace: ns, name, labels: { soak: label } }, data: { n: '0' } });
        }),
      );
    }
    // A ConfigMap without the label must never reach the cache (label selector honoured).
    await cms.create({ metadata: { namespace: nsNames[0] ?? '', name: 'unlabelled' }, data: { n: '0' } });

    const informer = new DefaultSharedInformer<Cm>({
      client: viaProxy,
      type: ConfigMaps,
      labelSelector: `soak=${label}`,
      minWatchTimeoutSeconds: 15,
      watchdogMs: 5_000,
      backoff: { initialMs: 100, maxMs: 2_000 },
    });
    /** The last state each handler saw, per key: the object, or 'deleted'. */
    const seenByHandler = [new Map<string, Cm | 'deleted'>(), new Map<string, Cm | 'deleted'>()];
    let outOfOrder = 0;
    for (const seen of seenByHandler) {
      informer.addEventHandler({
        onAdd: (obj) => seen.set(objectKey(obj), obj),
        onUpdate: (oldObj, newObj) => {
          const prev = seen.get(objectKey(newObj));
          if (
            prev !== undefined &&
            prev !== 'deleted' &&
            prev.metadata?.resourceVersion !== oldObj.metadata?.resourceVersion
          )
            outOfOrder++;
          seen.set(objectKey(newObj), newObj);
        },
        onDelete: (obj) => seen.set(objectKey(obj), 'deleted'),
      });
    }
    const stop = new AbortController();
    const running = informer.start(stop.signal);
    expect(await informer.waitForSync(AbortSignal.timeout(30_000))).toBe(true);

    // Writers: merge patches to random objects; every 50th operation deletes an object and re-creates it later.
    let next = 0;
    let restarted = false;
    const deleted = new Set<string>();
    // Connection cuts are spread over the writes: a writer at operation `op` waits until the cuts due by then have
    // happened, so the count does not depend on how fast this machine writes.
    let cuts = 0;
    const cutsDueAt = (op: number): number => Math.min(MIN_CUTS, Math.floor(op / (UPDATES / (MIN_CUTS + 1))));
    const writer = async (): Promise<void> => {
      for (let op = next++; op < UPDATES; op = next++) {
        while (cuts < cutsDueAt(op)) await new Promise((r) => setTimeout(r, 20));
        const target = keys[(op * 7919) % keys.length];
        if (!target) continue;
        const key = `${target.namespace}/${target.name}`;
        if (op % 50 === 25 && !deleted.has(key)) {
          deleted.add(key);
          await retrying(() =>
            cms.delete(target).catch((err: unknown) => {
              if (!isNotFound(err)) throw err;
            }),
          );
          continue;
        }
        if (deleted.has(key)) {
          deleted.delete(key);
          await retrying(() =>
            cms
              .create({ metadata: { ...target, labels: { soak: label } }, data: { n: String(op) } })
              .catch((err: unknown) => {
                if (!(err instanceof Error && /AlreadyExists/.test(err.message))) throw err;
              }),
          );
          continue;
        }
        await retrying(() =>
          cms.mergePatch(target, { data: { n: String(op) } }).catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          }),
        );
      }
    };
    let writing = true;
    const chaos = (async () => {
      // Until every writer is done: the last ones may be waiting for a cut.
      while (writing) {
        await new Promise((r) => setTimeout(r, 50));
        // A cut when one is due; it counts when it broke an open connection (the informer may be reconnecting).
        if (cuts < cutsDueAt(next) && proxy.breakConnections() > 0) cuts++;
        if (!restarted && next > UPDATES / 2) {
          restarted = true;
          await cluster.restartApiServer();
        }
      }
    })();
    await Promise.all(Array.from({ length: WRITERS }, () => writer())).finally(() => (writing = false));
    await chaos;
    expect(restarted).toBe(true);

    const fresh = new Map<string, Cm>();
    for (const ns of nsNames)
      for (const item of (await retrying(() => cms.list({ namespace: ns, labelSelector: `soak=${label}` })))
        .items)
        fresh.set(objectKey(item), item);
    const summary = (m: Map<string, Cm>): string[] =>
      [...m].map(([k, o]) => `${k}@${o.metadata?.resourceVersion}=${o.data?.n}`).sort();

    await eventually(
      async () => {
        const cached = new Map(
          informer
            .getIndexer()
            .list()
            .map((o) => [objectKey(o), o] as const),
        );
        expect(summary(cached)).toEqual(summary(fresh));
      },
      { timeoutMs: 60_000, what: 'informer cache to equal a fresh list' },
    );
    for (const seen of seenByHandler) {
      for (const { namespace, name } of keys) {
        const key = `${namespace}/${name}`;
        const final = fresh.get(key);
        const last = seen.get(key);
        if (final)
          expect(last === 'deleted' ? 'deleted' : `${last?.metadata?.resourceVersion}=${last?.data?.n}`).toBe(
            `${final.metadata?.resourceVersion}=${final.data?.n}`,
          );
        else expect(last).toBe('deleted');
      }
    }
    expect(informer.getIndexer().get(`${nsNames[0]}/unlabelled`)).toBeUndefined();
    expect(outOfOrder).toBe(0);
    expect(cuts).toBe(MIN_CUTS);
    expect(informer.stats.watches).toBeGreaterThan(cuts / 2);
    stop.abort();
    await running;
    console.log(`soak: ${UPDATES} ops, ${cuts} connection cuts, stats ${JSON.stringify(informer.stats)}`);
  }, 300_000);
});
