// The Manager's start-up steps: run after the probe server listens and before any runnable starts, retried until
// they succeed (the process stays live and unready instead of exiting), and /readyz names the step until it has.
// No API server: the manager here has no informer, and its client is never used.
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from './logging.js';
import { Manager } from './manager.js';
import { ConfigMaps } from './resources.js';
import type { Runnable } from './runnable.js';
import { FakeClock } from './testing/index.js';

function unusedKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u', token: 'unused' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

function newManager(clock: FakeClock): Manager {
  return new Manager({
    kubeConfig: unusedKubeConfig(),
    probes: { host: '127.0.0.1', port: 0, debugPort: false },
    handleSignals: false,
    logger: silentLogger,
    clock,
  });
}

async function get(manager: Manager, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${manager.probePort()}${path}`);
  return { status: response.status, body: await response.text() };
}

const stops: AbortController[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

/** A runnable that records its name in `started` when it starts (a controller when `leader`). */
function recorder(started: string[], name: string, leader = false): Runnable {
  return { name, needsLeaderElection: leader, start: async () => void started.push(name) };
}

/** Starts `manager` until the test ends (or `stop` aborts). */
function run(manager: Manager): { stop: AbortController; running: Promise<void> } {
  const stop = new AbortController();
  stops.push(stop);
  return { stop, running: manager.start(stop.signal) };
}

describe('Manager start-up steps', () => {
  it('run before any runnable, are retried after a failure, and keep /readyz unready until done', async () => {
    const clock = new FakeClock();
    const manager = newManager(clock);
    const started: string[] = [];
    let attempts = 0;
    let finish = (): void => {};
    const finished = new Promise<void>((resolve) => (finish = resolve));
    manager.addStartupStep({
      name: 'install-crds',
      run: async () => {
        attempts++;
        if (attempts === 1) throw new Error('CRD not established yet');
        await finished;
      },
    });
    manager.add(recorder(started, 'cache-user'));
    manager.add(recorder(started, 'controller', true));
    const { stop, running } = run(manager);

    // The first attempt failed; the retry waits on the manager's clock.
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
    expect(attempts).toBe(1);
    expect((await get(manager, '/healthz')).status).toBe(200);
    const unready = await get(manager, '/readyz');
    expect(unready.status).toBe(500);
    expect(unready.body).toContain('start-up step install-crds has not completed');
    expect(started).toEqual([]);

    clock.step(60_000);
    await vi.waitFor(() => expect(attempts).toBe(2));
    expect((await get(manager, '/readyz')).status).toBe(500);
    expect(started).toEqual([]);

    finish();
    await vi.waitFor(() => expect(started.sort()).toEqual(['cache-user', 'controller']));
    expect(await get(manager, '/readyz')).toEqual({ status: 200, body: 'ok\n' });
    stop.abort();
    await running;
  });

  it('stop during a step: start() resolves without starting any runnable', async () => {
    const manager = newManager(new FakeClock());
    const started: string[] = [];
    let entered = (): void => {};
    const inStep = new Promise<void>((resolve) => (entered = resolve));
    manager.addStartupStep({
      name: 'never-done',
      run: (signal) =>
        new Promise<void>((_resolve, reject) => {
          entered();
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        }),
    });
    manager.add(recorder(started, 'cache-user'));
    const { stop, running } = run(manager);
    await inStep;
    stop.abort();
    await running;
    expect(started).toEqual([]);
  });

  it('a runnable a step adds starts with the others, once the last step is done', async () => {
    const manager = newManager(new FakeClock());
    const started: string[] = [];
    manager.addStartupStep({
      name: 'discover',
      run: async () => manager.add(recorder(started, 'found-by-discovery', true)),
    });
    manager.add(recorder(started, 'cache-user'));
    const { stop, running } = run(manager);
    await vi.waitFor(() => expect(started.sort()).toEqual(['cache-user', 'found-by-discovery']));
    stop.abort();
    await running;
  });
});

describe('Manager.cluster', () => {
  it("runs another cluster's informers without letting them gate /readyz or the leader's controllers", async () => {
    const manager = newManager(new FakeClock());
    // Nothing answers on this cluster's address: its informer never syncs.
    const hosted = manager.cluster(unusedKubeConfig(), { name: 'hosted' });
    const configMaps = hosted.informers.informerFor({ type: ConfigMaps });
    const started: string[] = [];
    manager.add(recorder(started, 'controller', true));
    const { stop, running } = run(manager);
    await vi.waitFor(() => expect(started).toEqual(['controller']));
    expect(await get(manager, '/readyz')).toEqual({ status: 200, body: 'ok\n' });
    expect(configMaps.hasSynced()).toBe(false);
    stop.abort();
    // start() resolves only once every runnable stopped, the cluster's informers included.
    await running;
  });
});
