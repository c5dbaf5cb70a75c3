import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  ApiStatusError,
  silentLogger,
  type EventRecorder,
  type KubeClient,
  type RequestOptions,
} from '../runtime/index.js';
import type { ImageInspection, ImageInspector, InspectOptions } from '../registry/index.js';
import { clusterConfig, pod } from './builders.js';
import { ANNOTATIONS, ARCH_LABEL, EVENT_REASONS } from './constants.js';
import { INFLIGHT_RECORD_KEY, INFLIGHT_RECORD_NAME } from './inflight-record.js';
import { InspectionBreaker, RELEASED_UNINSPECTED_MESSAGE } from './inspection-breaker.js';
import { PodPlacementMetrics } from './metrics.js';
import { GIVE_UP_MESSAGES, type PodMergePatch } from './placement-plan.js';
import { PodReconciler } from './pod-reconciler.js';
import type { Pod } from './pod-types.js';
import { PullSecretResolver } from './pull-secrets.js';
import { FakeClock, flushAsync } from '../runtime/testing/index.js';

const NS = 'op';
const CM_PATH = `/api/v1/namespaces/${NS}/configmaps`;

const notFound = (o: RequestOptions) =>
  new ApiStatusError(o.method, o.path, 404, 'NotFound', 'absent', undefined);

/** An API server with the record ConfigMap and some pods; writes can be held to observe coalescing. */
function fakeApi(initial: { record?: string; pods?: Pod[]; forbidden?: boolean } = {}) {
  let record: string | undefined = initial.record;
  const pods = new Map((initial.pods ?? []).map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, p]));
  /** Record texts in the order they were written. */
  const writes: string[] = [];
  let hold: Promise<void> | undefined;
  let releaseHold: (() => void) | undefined;
  const client = {
    request: async (o: RequestOptions): Promise<unknown> => {
      if (initial.forbidden) throw new ApiStatusError(o.method, o.path, 403, 'Forbidden', 'no', undefined);
      const podMatch = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(o.path);
      if (podMatch && o.method === 'GET') {
        const p = pods.get(`${podMatch[1]}/${podMatch[2]}`);
        if (!p) throw notFound(o);
        return p;
      }
      if (o.path === `${CM_PATH}/${INFLIGHT_RECORD_NAME}` && o.method === 'GET') {
        if (record === undefined) throw notFound(o);
        return {
          metadata: { name: INFLIGHT_RECORD_NAME, namespace: NS },
          data: { [INFLIGHT_RECORD_KEY]: record },
        };
      }
      const writing =
        (o.method === 'PUT' && o.path === `${CM_PATH}/${INFLIGHT_RECORD_NAME}`) ||
        (o.method === 'POST' && o.path === CM_PATH);
      if (writing) {
        if (o.method === 'PUT' && record === undefined) throw notFound(o);
        if (o.method === 'POST' && record !== undefined)
          throw new ApiStatusError(o.method, o.path, 409, 'AlreadyExists', 'exists', undefined);
        const text = (o.body as { data: Record<string, string> }).data[INFLIGHT_RECORD_KEY] ?? '';
        writes.push(text);
        if (hold) await hold;
        record = text;
        return o.body;
      }
      throw new ApiStatusError(o.method, o.path, 403, 'Forbidden', 'not granted', undefined);
    },
  } as unknown as KubeClient;
  return {
    client,
    writes,
    record: () => record,
    holdWrites() {
      hold = new Promise((resolve) => (releaseHold = resolve));
    },
    releaseWrites() {
      hold = undefined;
      releaseHold?.();
    },
  };
}

function breakerOn(api: ReturnType<typeof fakeApi>, registry = new Registry()) {
  const breaker = new InspectionBreaker({
    client: api.client,
    namespace: NS,
    maxInFlight: 8,
    clock: new FakeClock(),
    logger: silentLogger,
    metrics: new PodPlacementMetrics(registry),
  });
  const stop = new AbortController();
  const running = breaker.start(stop.signal);
  return { breaker, stop: async () => (stop.abort(), await running), registry };
}

const gatedPod = (name: string, uid: string, images = ['r/poison:1']): Pod => {
  const p = pod(name, 'tenant')
    .withImages(...images)
    .withGate()
    .withResourceVersion('3')
    .build();
  return { ...p, metadata: { ...p.metadata, uid } };
};

const live = new AbortController().signal;

describe('InspectionBreaker: the record of pods in flight', () => {
  it('puts a pod on the record before its registry step starts, and takes it off after', async () => {
    const api = fakeApi();
    const { breaker, stop } = breakerOn(api);
    expect(await breaker.beginInspection('tenant/a', 'uid-a', live)).toBe('inspect');
    expect(api.record()).toBe('tenant/a uid-a\n');
    breaker.endInspection('tenant/a');
    await flushAsync();
    expect(api.record()).toBe('');
    await stop();
  });

  it('batches: pods that begin while a write is in flight ride on one next write', async () => {
    const api = fakeApi({ record: '' });
    const { breaker, stop } = breakerOn(api);
    await flushAsync();
    api.holdWrites();
    const first = breaker.beginInspection('tenant/p0', 'u0', live);
    await flushAsync();
    const rest = Array.from({ length: 7 }, (_, i) =>
      breaker.beginInspection(`tenant/p${i + 1}`, `u${i + 1}`, live),
    );
    await flushAsync();
    expect(api.writes).toEqual(['tenant/p0 u0\n']); // one write in flight, the others wait for the next
    api.releaseWrites();
    await Promise.all([first, ...rest]);
    expect(api.writes).toHaveLength(2);
    expect(api.writes[1]?.split('\n').filter(Boolean)).toHaveLength(8);
    for (let i = 0; i < 8; i++) breaker.endInspection(`tenant/p${i}`);
    await stop();
    expect(api.record()).toBe('');
  });

  it('a graceful stop clears the pods in flight: a SIGTERM is not a crash', async () => {
    const api = fakeApi();
    const { breaker, stop } = breakerOn(api);
    await breaker.beginInspection('tenant/a', 'uid-a', live);
    const stopped = stop();
    breaker.endInspection('tenant/a'); // the aborted inspection ends
    await stopped;
    expect(api.record()).toBe('');
  });

  it('a crash leaves the record: the next process releases those pods still gated, and only them', async () => {
    const api = fakeApi({
      record: [
        'tenant/poison uid-p', // still gated, same pod: released uninspected
        'tenant/recreated uid-old', // the name now belongs to another pod: inspected
        'tenant/gone uid-g', // deleted
        'tenant/placed uid-d', // no longer gated
        'not a pod line',
        '',
      ].join('\n'),
      pods: [
        gatedPod('poison', 'uid-p'),
        gatedPod('recreated', 'uid-new'),
        { ...gatedPod('placed', 'uid-d'), spec: { containers: [{ name: 'c', image: 'r/a:1' }] } },
      ],
    });
    const registry = new Registry();
    const { breaker, stop } = breakerOn(api, registry);
    expect(await breaker.beginInspection('tenant/poison', 'uid-p', live)).toBe('release-uninspected');
    expect(await breaker.beginInspection('tenant/recreated', 'uid-new', live)).toBe('inspect');
    expect(api.writes[0]).toBe('tenant/poison uid-p\n'); // rewritten at start to what is still to release
    // A retried release (say, a conflict) is still not an inspection.
    expect(await breaker.beginInspection('tenant/poison', 'uid-p', live)).toBe('release-uninspected');
    expect(await registry.metrics()).toContain('tessera_podplacement_pods_released_uninspected_total 2');
    breaker.endInspection('tenant/recreated');
    await stop();
    // Stopped cleanly before the poison pod was released: it stays on the record for the next process.
    expect(api.record()).toBe('tenant/poison uid-p\n');
  });

  it('an inspection that does not end even when stopped stays on the record: it may be the poison', async () => {
    const api = fakeApi();
    const clock = new FakeClock();
    const breaker = new InspectionBreaker({
      client: api.client,
      namespace: NS,
      maxInFlight: 8,
      clock,
      logger: silentLogger,
    });
    const stop = new AbortController();
    const running = breaker.start(stop.signal);
    await breaker.beginInspection('tenant/stuck', 'uid-s', live);
    stop.abort();
    await flushAsync();
    clock.step(5_000); // the drain timeout
    await running;
    expect(api.record()).toBe('tenant/stuck uid-s\n');
  });

  it('cannot read the record (forbidden): inspections go on unrecorded instead of waiting forever', async () => {
    const api = fakeApi({ forbidden: true });
    const { breaker, stop } = breakerOn(api);
    expect(await breaker.beginInspection('tenant/a', 'uid-a', live)).toBe('inspect');
    expect(api.writes).toEqual([]);
    await stop();
  });

  it('refuses a worker count whose record would not fit its budget', () => {
    expect(
      () =>
        new InspectionBreaker({
          client: fakeApi().client,
          namespace: NS,
          maxInFlight: 5_000,
          logger: silentLogger,
        }),
    ).toThrow(/workers/);
  });
});

/** An inspector that must never be called for the poison pod (it would hang, as a silent registry does). */
class HangingInspector implements ImageInspector {
  calls = 0;
  inspect(_image: string, options?: InspectOptions): Promise<ImageInspection> {
    this.calls++;
    return new Promise((_resolve, reject) =>
      options?.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
    );
  }
}

describe('PodReconciler with the breaker: a pod that was in flight when the process died', () => {
  it('is released without inspection, with the fallback architecture, the annotation and a Warning event', async () => {
    const poison = gatedPod('poison', 'uid-p');
    const api = fakeApi({ record: 'tenant/poison uid-p\n', pods: [poison] });
    const { breaker, stop } = breakerOn(api);
    const patches: PodMergePatch[] = [];
    const events: { type: string; reason: string; message: string }[] = [];
    const recorder: EventRecorder = {
      event: (_o, type, reason, message) => void events.push({ type, reason, message }),
    };
    const inspector = new HangingInspector();
    const reconciler = new PodReconciler({
      getPod: (key) => (key === 'tenant/poison' ? poison : undefined),
      patchPod: async (_ns, _name, patch) => void patches.push(patch),
      clusterConfig: () => clusterConfig({ fallbackArchitecture: 'amd64' }),
      podPlacementConfigs: () => [],
      inspector,
      pullSecrets: new PullSecretResolver({
        getSecret: async () => undefined,
        globalSecret: () => undefined,
      }),
      events: recorder,
      operatorNamespace: NS,
      clock: new FakeClock(),
      logger: silentLogger,
      breaker,
    });
    await reconciler.reconcile('tenant/poison', live);
    expect(inspector.calls).toBe(0);
    expect(patches).toHaveLength(1);
    const patch = patches[0];
    expect(patch?.spec?.schedulingGates).toEqual([]);
    expect(patch?.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toBe(RELEASED_UNINSPECTED_MESSAGE);
    expect(
      patch?.spec?.affinity?.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    ).toEqual([{ matchExpressions: [{ key: ARCH_LABEL, operator: 'In', values: ['amd64'] }] }]);
    expect(events).toContainEqual({
      type: 'Warning',
      reason: EVENT_REASONS.inspectionError,
      message: `${GIVE_UP_MESSAGES.uninspected}: ${RELEASED_UNINSPECTED_MESSAGE}`,
    });
    expect(events.some((e) => e.reason === EVENT_REASONS.fallbackPredicateSet)).toBe(true);
    await stop();
  });

  it('another pod is inspected as usual, on the record while it is', async () => {
    const other = gatedPod('other', 'uid-o', ['r/slow:1']);
    const api = fakeApi({ pods: [other] });
    const { breaker, stop } = breakerOn(api);
    const inspector = new HangingInspector();
    const reconciler = new PodReconciler({
      getPod: () => other,
      patchPod: async () => undefined,
      clusterConfig: () => clusterConfig(),
      podPlacementConfigs: () => [],
      inspector,
      pullSecrets: new PullSecretResolver({
        getSecret: async () => undefined,
        globalSecret: () => undefined,
      }),
      events: { event: () => undefined },
      operatorNamespace: NS,
      clock: new FakeClock(),
      logger: silentLogger,
      breaker,
    });
    const abort = new AbortController();
    const running = reconciler.reconcile('tenant/other', abort.signal).catch(() => undefined);
    for (let i = 0; i < 10 && inspector.calls === 0; i++) await flushAsync();
    expect(inspector.calls).toBe(1);
    expect(api.record()).toBe('tenant/other uid-o\n'); // written before the registry step began
    abort.abort();
    await running;
    await flushAsync();
    expect(api.record()).toBe('');
    await stop();
  });
});
