import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  ApiStatusError,
  silentLogger,
  type AdmissionRequest,
  type EventRecorder,
  type KubeClient,
  type LeaseSpec,
  type ObjectReference,
  type RequestOptions,
} from '../../runtime/index.js';
import { clusterConfig, pod } from '../builders.js';
import { GatingWebhook } from '../gating-webhook.js';
import { PodPlacementMetrics } from '../metrics.js';
import { ControllerLeaseWatch, GATING_EVENT_REASONS } from './controller-lease-watch.js';
import { FakeClock, flushAsync } from '../../runtime/testing/index.js';

const NS = 'op';
const LEASE = 'ppc-controllers';
const STALE_MS = 60_000;
const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${LEASE}`;

/** An API server holding one Lease; `failing` answers every read with 503. */
function fakeApi(): { client: KubeClient; lease: { spec: LeaseSpec | undefined }; failing: { on: boolean } } {
  const lease: { spec: LeaseSpec | undefined } = { spec: undefined };
  const failing = { on: false };
  const client = {
    request: (opts: RequestOptions): Promise<unknown> => {
      if (opts.method !== 'GET' || opts.path !== LEASE_PATH)
        return Promise.reject(new ApiStatusError(opts.method, opts.path, 403, 'Forbidden', 'no', undefined));
      if (failing.on)
        return Promise.reject(
          new ApiStatusError('GET', opts.path, 503, 'ServiceUnavailable', 'down', undefined),
        );
      if (!lease.spec)
        return Promise.reject(new ApiStatusError('GET', opts.path, 404, 'NotFound', 'absent', undefined));
      return Promise.resolve({ metadata: { name: LEASE, namespace: NS }, spec: { ...lease.spec } });
    },
  } as unknown as KubeClient;
  return { client, lease, failing };
}

interface Recorded {
  kind: string | undefined;
  name: string | undefined;
  type: string;
  reason: string;
  message: string;
}

function setup() {
  const clock = new FakeClock();
  const api = fakeApi();
  const registry = new Registry();
  const metrics = new PodPlacementMetrics(registry);
  const events: Recorded[] = [];
  const recorder: EventRecorder = {
    event: (regarding, type, reason, message) =>
      void events.push({
        kind: regarding.kind,
        name: (regarding as ObjectReference).name,
        type,
        reason,
        message,
      }),
  };
  const watch = new ControllerLeaseWatch({
    client: api.client,
    namespace: NS,
    leaseName: LEASE,
    staleAfterMs: STALE_MS,
    clock,
    monotonicNow: () => clock.now(),
    events: recorder,
    metrics,
    logger: silentLogger,
  });
  const hook = new GatingWebhook({
    clusterConfig: () => clusterConfig(),
    podPlacementConfigs: () => [],
    operatorNamespace: NS,
    clock,
    logger: silentLogger,
    metrics,
    gatingSuspended: () => watch.gatingSuspended(),
  });
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  /** Moves time on poll by poll, letting each read and its verdict happen. */
  const advance = async (ms: number, renew = false): Promise<void> => {
    running ??= watch.start(stop.signal); // the first read sees the Lease the test set up
    await flushAsync();
    for (let left = ms; left > 0; left -= 1_000) {
      if (renew && api.lease.spec) api.lease.spec = { ...api.lease.spec, renewTime: String(clock.now()) };
      clock.step(Math.min(1_000, left));
      await flushAsync();
    }
  };
  const admit = (): { gated: boolean; label: unknown } => {
    const request: AdmissionRequest = {
      uid: 'u',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      operation: 'CREATE',
      namespace: 'tenant',
      userInfo: {},
      object: pod('p', 'tenant').withImages('r/a:1').build(),
    };
    const text = JSON.stringify(hook.handle(request).patch ?? []);
    const labels = (hook.handle(request).patch ?? []).find((o) => o.path === '/metadata/labels');
    return {
      gated: text.includes('schedulingGates'),
      label: (labels as { value?: Record<string, string> } | undefined)?.value?.[
        'multiarch.openshift.io/scheduling-gate'
      ],
    };
  };
  const close = async (): Promise<void> => {
    stop.abort();
    await running;
  };
  return { api, registry, events, watch, advance, admit, close };
}

describe('ControllerLeaseWatch: the webhook stops gating while the controller does not renew its Lease', () => {
  it('gates while the controller renews, for far longer than the threshold', async () => {
    const t = setup();
    t.api.lease.spec = { holderIdentity: 'c-0', leaseDurationSeconds: 15, renewTime: '0' };
    await t.advance(3 * STALE_MS, true);
    expect(t.admit()).toEqual({ gated: true, label: 'gated' });
    expect(t.events).toEqual([]);
    await t.close();
  });

  it('admits pods ungated once the Lease is unchanged for the threshold, says so, and resumes on renewal', async () => {
    const t = setup();
    t.api.lease.spec = { holderIdentity: 'c-0', leaseDurationSeconds: 15, renewTime: 'frozen' };
    await t.advance(STALE_MS - 15_000);
    expect(t.admit().gated).toBe(true);
    await t.advance(15_000);
    expect(t.watch.gatingSuspended()).toBe(true);
    expect(t.admit()).toEqual({ gated: false, label: 'not-set' });
    const text = await t.registry.metrics();
    expect(text).toContain('tessera_podplacement_webhook_gating_suspended 1');
    expect(text).toMatch(/tessera_podplacement_webhook_pods_not_gated_controller_stale_total [1-9]/);
    expect(t.events).toEqual([
      expect.objectContaining({
        kind: 'Lease',
        name: LEASE,
        type: 'Warning',
        reason: GATING_EVENT_REASONS.suspended,
      }),
    ]);
    expect(t.events[0]?.message).toContain('held by c-0) has not been renewed for');

    t.api.lease.spec = { ...t.api.lease.spec, renewTime: 'renewed' };
    await t.advance(STALE_MS / 5);
    expect(t.admit()).toEqual({ gated: true, label: 'gated' });
    expect(await t.registry.metrics()).toContain('tessera_podplacement_webhook_gating_suspended 0');
    expect(t.events.map((e) => `${e.type} ${e.reason}`)).toEqual([
      `Warning ${GATING_EVENT_REASONS.suspended}`,
      `Normal ${GATING_EVENT_REASONS.resumed}`,
    ]);
    await t.close();
  });

  it('keeps gating while no Lease exists (a controller run without leader election never creates one)', async () => {
    const t = setup();
    await t.advance(STALE_MS * 3);
    expect(t.admit()).toEqual({ gated: true, label: 'gated' });
    await t.close();
  });

  it('keeps gating when it cannot read the Lease at all (an API or RBAC problem is not a dead controller)', async () => {
    const t = setup();
    t.api.failing.on = true;
    await t.advance(2 * STALE_MS);
    expect(t.admit().gated).toBe(true);
    expect(t.events).toEqual([]);
    await t.close();
  });

  it('refuses a threshold below one second, naming the option', () => {
    expect(
      () =>
        new ControllerLeaseWatch({
          client: fakeApi().client,
          namespace: NS,
          leaseName: LEASE,
          staleAfterMs: 10,
          logger: silentLogger,
        }),
    ).toThrow(/controllerLeaseStaleAfterMs/);
  });
});
