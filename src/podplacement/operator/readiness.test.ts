import { describe, expect, it } from 'vitest';
import type { ConfigCaches } from './config-caches.js';
import { ReconcilerReadiness, WebhookReadiness, serviceHasReadyEndpoint } from './readiness.js';
import { flushAsync } from '../../runtime/testing/index.js';

describe('serviceHasReadyEndpoint', () => {
  it('is false without slices or endpoints', () => {
    expect(serviceHasReadyEndpoint([])).toBe(false);
    expect(serviceHasReadyEndpoint([{ endpoints: [] }, {}])).toBe(false);
  });

  it('is false when every endpoint says it is not ready', () => {
    expect(serviceHasReadyEndpoint([{ endpoints: [{ conditions: { ready: false } }] }])).toBe(false);
  });

  it('is true for a ready endpoint, or one that does not say (unset means ready)', () => {
    expect(
      serviceHasReadyEndpoint([
        { endpoints: [{ conditions: { ready: false } }] },
        { endpoints: [{ conditions: { ready: true } }] },
      ]),
    ).toBe(true);
    expect(serviceHasReadyEndpoint([{ endpoints: [{}] }])).toBe(true);
  });
});

const synced = (value: boolean) => ({ hasSynced: () => value });

describe('ReconcilerReadiness', () => {
  it('is ready only while it runs (as a leader) and its caches have synced, and reports each change', async () => {
    let changes = 0;
    const caches = [synced(true), synced(true)];
    const readiness = new ReconcilerReadiness(caches, () => changes++);
    expect(readiness.ready()).toBe(false);
    const stop = new AbortController();
    const running = readiness.start(stop.signal);
    // Set synchronously: leader runnables all start before any reconcile runs.
    expect(readiness.ready()).toBe(true);
    expect(changes).toBe(1);
    stop.abort();
    await running;
    expect(readiness.ready()).toBe(false);
  });

  it('is not ready while a cache has not synced', () => {
    const readiness = new ReconcilerReadiness([synced(true), synced(false)], () => undefined);
    void readiness.start(AbortSignal.abort());
    expect(readiness.ready()).toBe(false);
  });
});

describe('WebhookReadiness', () => {
  it('is ready once the local server listens and the config caches synced', async () => {
    let changes = 0;
    let cachesSynced = false;
    const configs = { hasSynced: () => cachesSynced } as ConfigCaches;
    const readiness = new WebhookReadiness(configs, () => changes++);
    let listen: () => void = () => undefined;
    readiness.follow({ ready: () => new Promise<void>((resolve) => (listen = resolve)) });
    expect(readiness.ready()).toBe(false);
    listen();
    await flushAsync();
    expect(changes).toBe(1);
    expect(readiness.local()).toBe(false);
    cachesSynced = true;
    expect(readiness.local()).toBe(true);
    expect(readiness.ready()).toBe(true);
  });
});

describe('WebhookReadiness.follow', () => {
  it('leaves a webhook server that cannot listen to the manager, without an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const listening = Promise.reject(new Error('listen EADDRINUSE: address already in use :::9443'));
      listening.catch(() => undefined); // as WebhookServer does for its own promise
      let changes = 0;
      const readiness = new WebhookReadiness({ hasSynced: () => true } as never, () => void changes++);
      readiness.follow({ ready: () => listening });
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
      expect(changes).toBe(0);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
