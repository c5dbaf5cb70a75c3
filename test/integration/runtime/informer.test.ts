// Informer behaviour on a live watch. A watch whose connection silently stops delivering (no FIN/RST, as with a
// dead NAT entry) must be detected by the reflector's watchdog and restarted, so updates keep reaching the cache
// instead of stalling forever; label and field selectors are passed to list and watch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { DefaultSharedInformer } from '../../../src/runtime/cache/shared-informer.js';
import { KubeClient } from '../../../src/runtime/client.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { ConfigMaps } from '../../../src/runtime/resources.js';
import { eventually, testKubeConfig, useTestNamespace } from '../../support/cluster.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';

interface Cm extends KubeObject {
  data?: Record<string, string>;
}

describe('informer against kube-apiserver', () => {
  const ns = useTestNamespace('rt-watchdog');
  let proxy: TcpProxy;
  let viaProxy: KubeClient;
  const direct = new KubeClient(testKubeConfig());

  beforeAll(async () => {
    const kc = testKubeConfig();
    const url = new URL(kc.getCurrentCluster()?.server ?? '');
    proxy = await startTcpProxy(url.hostname, Number(url.port));
    const proxied = new KubeConfig();
    proxied.loadFromString(kc.exportConfig());
    const current = proxied.getCurrentCluster();
    proxied.clusters = proxied.clusters.map((c) =>
      c.name === current?.name ? { ...c, server: `https://127.0.0.1:${proxy.port}` } : c,
    );
    viaProxy = new KubeClient(proxied);
  });
  afterAll(async () => {
    await viaProxy.close();
    await direct.close();
    await proxy.close();
  });

  it('restarts a silently stalled watch and catches up', async () => {
    const cms = new ResourceClient<Cm>(direct, ConfigMaps);
    await cms.create({ metadata: { namespace: ns.name, name: 'watched' }, data: { v: '0' } });
    const informer = new DefaultSharedInformer<Cm>({
      client: viaProxy,
      type: ConfigMaps,
      namespace: ns.name,
      watchdogMs: 2_000,
      backoff: { initialMs: 50, maxMs: 500 },
    });
    const stop = new AbortController();
    const running = informer.start(stop.signal);
    expect(await informer.waitForSync(AbortSignal.timeout(30_000))).toBe(true);
    await cms.mergePatch({ namespace: ns.name, name: 'watched' }, { data: { v: '1' } });
    await eventually(async () => expect(informer.getIndexer().get(`${ns.name}/watched`)?.data?.v).toBe('1'), {
      what: 'first update',
    });

    expect(proxy.freezeConnections()).toBeGreaterThan(0);
    await cms.mergePatch({ namespace: ns.name, name: 'watched' }, { data: { v: '2' } });
    await eventually(async () => expect(informer.getIndexer().get(`${ns.name}/watched`)?.data?.v).toBe('2'), {
      timeoutMs: 15_000,
      what: 'update after the stall',
    });
    expect(informer.stats.watchdogRestarts).toBeGreaterThan(0);
    stop.abort();
    await running;
  }, 60_000);

  it('honours label and field selectors', async () => {
    const cms = new ResourceClient<Cm>(direct, ConfigMaps);
    await cms.create({ metadata: { namespace: ns.name, name: 'sel-a', labels: { pick: 'yes' } } });
    await cms.create({ metadata: { namespace: ns.name, name: 'sel-b', labels: { pick: 'yes' } } });
    await cms.create({ metadata: { namespace: ns.name, name: 'sel-c', labels: { pick: 'no' } } });
    const informer = new DefaultSharedInformer<Cm>({
      client: direct,
      type: ConfigMaps,
      namespace: ns.name,
      labelSelector: 'pick=yes',
      fieldSelector: 'metadata.name!=sel-b',
    });
    const stop = new AbortController();
    const running = informer.start(stop.signal);
    expect(await informer.waitForSync(AbortSignal.timeout(30_000))).toBe(true);
    expect(informer.getIndexer().listKeys()).toEqual([`${ns.name}/sel-a`]);
    await cms.create({ metadata: { namespace: ns.name, name: 'sel-d', labels: { pick: 'yes' } } });
    await cms.mergePatch({ namespace: ns.name, name: 'sel-c' }, { metadata: { labels: { pick: 'yes' } } });
    await eventually(
      async () =>
        expect(informer.getIndexer().listKeys().sort()).toEqual([
          `${ns.name}/sel-a`,
          `${ns.name}/sel-c`,
          `${ns.name}/sel-d`,
        ]),
      { what: 'selected objects' },
    );
    // Leaving the selection looks like a deletion to the informer.
    await cms.mergePatch({ namespace: ns.name, name: 'sel-a' }, { metadata: { labels: { pick: 'no' } } });
    await eventually(async () => expect(informer.getIndexer().get(`${ns.name}/sel-a`)).toBeUndefined(), {
      what: 'sel-a to leave',
    });
    stop.abort();
    await running;
  });
});
