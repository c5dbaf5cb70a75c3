// A leader cut off from the API server must stop its leader work by its last renewal + renewDeadline, before
// another candidate can take the lease (lease duration), so a partition never yields two active leaders.
// In-process electors with short timings; the first one talks to kube-apiserver through a proxy the test shuts
// down. The timings give the leader three renewal attempts per deadline (robust on a loaded machine) and put the
// deadline between two retry ticks, so a loop that slept a full retryPeriod past it would overshoot by 1 s.
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/runtime/client.js';
import { LeaderElector } from '../../../src/runtime/leader-election.js';
import { eventually, testKubeConfig, useTestNamespace } from '../../support/cluster.js';
import { startTcpProxy } from '../../support/tcp-proxy.js';

describe('leader election under a network partition', () => {
  const ns = useTestNamespace('rt-partition');
  const clients: KubeClient[] = [];
  afterAll(async () => {
    for (const c of clients) await c.close();
  });

  it('the cut-off leader steps down before the other candidate takes over', async () => {
    const kc = testKubeConfig();
    const url = new URL(kc.getCurrentCluster()?.server ?? '');
    const proxy = await startTcpProxy(url.hostname, Number(url.port));
    const proxied = new KubeConfig();
    proxied.loadFromString(kc.exportConfig());
    const current = proxied.getCurrentCluster();
    proxied.clusters = proxied.clusters.map((c) =>
      c.name === current?.name ? { ...c, server: `https://127.0.0.1:${proxy.port}` } : c,
    );
    const viaProxy = new KubeClient(proxied, { requestTimeoutMs: 1_000 });
    const direct = new KubeClient(kc);
    clients.push(viaProxy, direct);

    const timeline: Array<{ who: string; what: string; at: number }> = [];
    const timings = { leaseDurationMs: 7_000, renewDeadlineMs: 5_000, retryPeriodMs: 1_500 };
    const elector = (who: string, client: KubeClient): LeaderElector =>
      new LeaderElector({
        client,
        leaseName: 'partition',
        leaseNamespace: ns.name,
        identity: who,
        ...timings,
        callbacks: {
          onStartedLeading: (signal) => {
            timeline.push({ who, what: 'start', at: Date.now() });
            signal.addEventListener('abort', () =>
              timeline.push({ who, what: 'abort-signal', at: Date.now() }),
            );
          },
          onStoppedLeading: () => timeline.push({ who, what: 'stop', at: Date.now() }),
        },
      });
    const stopA = new AbortController();
    const stopB = new AbortController();
    const a = elector('a', viaProxy);
    const runA = a.run(stopA.signal);
    await eventually(async () => expect(a.isLeader()).toBe(true), { what: 'a to lead' });
    const b = elector('b', direct);
    const runB = b.run(stopB.signal);
    // b has read the lease a holds (observed state, not a pause) and so keeps waiting.
    await eventually(async () => expect(b.getLeader()).toBe('a'), {
      what: 'b to observe a holding the lease',
    });
    expect(b.isLeader()).toBe(false);

    const cutAt = Date.now();
    await proxy.close(); // a can no longer reach the API server at all
    await eventually(async () => expect(b.isLeader()).toBe(true), {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: 'b to take over',
    });
    await runA; // a's run() ends once it stepped down
    const aStopped = timeline.find((e) => e.who === 'a' && e.what === 'abort-signal')?.at ?? Infinity;
    const bStarted = timeline.find((e) => e.who === 'b' && e.what === 'start')?.at ?? 0;
    const aLastRenew = a.lastRenewTime();
    console.log(
      `partition: a renewed last ${cutAt - aLastRenew} ms before the cut, stopped ${aStopped - aLastRenew} ms ` +
        `after that renewal (deadline ${timings.renewDeadlineMs} ms); b started ${bStarted - aStopped} ms later`,
    );
    expect(aStopped).toBeLessThan(bStarted);
    // No renewal can succeed through a closed proxy: the last one began before the cut.
    expect(aLastRenew).toBeGreaterThan(0);
    expect(aLastRenew).toBeLessThanOrEqual(cutAt);
    // The stop is not before the renew deadline (a partition shorter than it costs no leadership). How soon after
    // the deadline it comes is the fake-clock unit tests' to pin down (leader-election.test.ts): a wall-clock bound
    // here would measure the machine's load, not the elector.
    expect(aStopped - aLastRenew).toBeGreaterThanOrEqual(timings.renewDeadlineMs);
    expect(timeline.filter((e) => e.who === 'a' && e.what === 'start')).toHaveLength(1);
    expect(timeline.filter((e) => e.who === 'a' && e.what === 'stop')).toHaveLength(1);
    stopA.abort();
    stopB.abort();
    await runB;
  }, 60_000);
});
