// The Manager's start-up steps: run after the probe server listens and before any runnable starts, retried until
// they succeed (the process stays live and unready instead of exiting), and /readyz names the step until it has.
// No API server: the manager here has no informer, and its client is never used.
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from './logging.js';
import { Manager } from './manager.js';
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
    manager.add({ name: 'cache-user', start: async () => void started.push('cache-user') });
    manager.add({
      name: 'controller',
      needsLeaderElection: true,
      start: async () => void started.push('controller'),
    });
    const stop = new AbortController();
    stops.push(stop);
    const running = manager.start(stop.signal);

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
    manager.add({ name: 'cache-user', start: async () => void started.push('cache-user') });
    const stop = new AbortController();
    stops.push(stop);
    const running = manager.start(stop.signal);
    await inStep;
    stop.abort();
    await running;
    expect(started).toEqual([]);
  });
});
