// Writes (merge patch, JSON patch, server-side apply, status subresource, retryOnConflict), events and conditions
// against the real API server, and a Manager end to end: informer -> controller -> reconcile, probes and metrics.
import { afterAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { KubeClient } from '../../../src/runtime/client.js';
import { setStatusCondition, type Condition } from '../../../src/runtime/conditions.js';
import { ApiStatusError, isConflict } from '../../../src/runtime/errors.js';
import { KubeEventRecorder } from '../../../src/runtime/event-recorder.js';
import { createLogger } from '../../../src/runtime/logging.js';
import { Manager } from '../../../src/runtime/manager.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { ConfigMaps, CoreEvents, Events, type ResourceType } from '../../../src/runtime/resources.js';
import { retryOnConflict } from '../../../src/runtime/retry.js';
import { eventually, testKubeConfig, useTestNamespace } from '../../support/cluster.js';

interface Cm extends KubeObject {
  data?: Record<string, string>;
  metadata?: KubeObject['metadata'] & { managedFields?: Array<{ manager?: string; operation?: string }> };
}
interface Svc extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { loadBalancer?: { ingress?: Array<{ ip: string }> }; conditions?: Condition[] };
}
const Services: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'services',
  kind: 'Service',
  namespaced: true,
};

describe('writes, events and the manager against kube-apiserver', () => {
  const ns = useTestNamespace('rt-writes');
  const client = new KubeClient(testKubeConfig());
  afterAll(() => client.close());

  it('merge patch, JSON patch with a resourceVersion test, and server-side apply with a field manager', async () => {
    const cms = new ResourceClient<Cm>(client, ConfigMaps);
    const ref = { namespace: ns.name, name: 'writes' };
    const created = await cms.create({ metadata: { ...ref }, data: { a: '1' } });
    const merged = await cms.mergePatch(ref, { data: { b: '2', a: null } });
    expect(merged.data).toEqual({ b: '2' });
    const patched = await cms.jsonPatch(ref, [
      { op: 'test', path: '/metadata/resourceVersion', value: merged.metadata?.resourceVersion },
      { op: 'add', path: '/data/c', value: '3' },
    ]);
    expect(patched.data).toEqual({ b: '2', c: '3' });
    const stale = await cms
      .jsonPatch(ref, [
        { op: 'test', path: '/metadata/resourceVersion', value: created.metadata?.resourceVersion },
        { op: 'add', path: '/data/d', value: '4' },
      ])
      .catch((err: unknown) => err);
    expect(stale).toBeInstanceOf(ApiStatusError);
    const applied = await cms.apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...ref }, data: { owned: 'yes' } },
      { fieldManager: 'tessera-test' },
    );
    expect(applied.data).toMatchObject({ owned: 'yes', b: '2' });
    expect(
      applied.metadata?.managedFields?.some((f) => f.manager === 'tessera-test' && f.operation === 'Apply'),
    ).toBe(true);
    // Another manager changing an applied field conflicts unless forced.
    const conflict = await cms
      .apply({ metadata: { ...ref }, data: { owned: 'no' } }, { fieldManager: 'someone-else' })
      .catch((e: unknown) => e);
    expect(isConflict(conflict)).toBe(true);
    const forced = await cms.apply(
      { metadata: { ...ref }, data: { owned: 'no' } },
      { fieldManager: 'someone-else', force: true },
    );
    expect(forced.data?.owned).toBe('no');
  });

  it('retryOnConflict completes concurrent read-modify-write updates without losing any', async () => {
    const cms = new ResourceClient<Cm>(client, ConfigMaps);
    const ref = { namespace: ns.name, name: 'counter' };
    await cms.create({ metadata: { ...ref }, data: { n: '0' } });
    let conflicts = 0;
    const increment = (): Promise<Cm> =>
      retryOnConflict(
        async () => {
          const cur = await cms.get(ref);
          try {
            return await cms.update({ ...cur, data: { n: String(Number(cur.data?.n ?? '0') + 1) } });
          } catch (err) {
            if (isConflict(err)) conflicts++;
            throw err;
          }
        },
        { steps: 50 },
      );
    await Promise.all(Array.from({ length: 8 }, () => increment()));
    expect((await cms.get(ref)).data?.n).toBe('8');
    expect(conflicts).toBeGreaterThan(0);
  });

  it('writes the status subresource with conditions whose transition time moves only on status change', async () => {
    const svcs = new ResourceClient<Svc>(client, Services);
    const ref = { namespace: ns.name, name: 'lb' };
    const svc = await svcs.create({
      metadata: { ...ref },
      spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
    });
    const t0 = Date.UTC(2026, 0, 1);
    const c1 = setStatusCondition(
      svc.status?.conditions,
      {
        type: 'Example',
        status: 'False',
        reason: 'Waiting',
        message: 'no ip',
        observedGeneration: svc.metadata?.generation,
      },
      t0,
    );
    const s1 = await svcs.updateStatus({ ...svc, status: { ...svc.status, conditions: c1.conditions } });
    const c2 = setStatusCondition(
      s1.status?.conditions,
      {
        type: 'Example',
        status: 'True',
        reason: 'Assigned',
        message: 'ip set',
        observedGeneration: svc.metadata?.generation,
      },
      t0 + 60_000,
    );
    const s2 = await svcs.mergePatch(
      ref,
      { status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] }, conditions: c2.conditions } },
      { subresource: 'status' },
    );
    expect(s2.status?.loadBalancer?.ingress).toMatchObject([{ ip: '192.0.2.1' }]);
    expect(s2.status?.conditions?.[0]).toMatchObject({
      status: 'True',
      reason: 'Assigned',
      lastTransitionTime: '2026-01-01T00:01:00Z',
    });
    // Writing spec through the main resource must not touch status, and vice versa.
    const spec = await svcs.mergePatch(ref, {
      metadata: { labels: { x: 'y' } },
      status: { loadBalancer: { ingress: [] } },
    });
    expect(spec.status?.loadBalancer?.ingress).toMatchObject([{ ip: '192.0.2.1' }]);
  });

  it('records events.k8s.io and core/v1 events, folding repeats into counts', async () => {
    const cms = new ResourceClient<Cm>(client, ConfigMaps);
    const target = await cms.create({ metadata: { namespace: ns.name, name: 'evented' } });
    const modern = new KubeEventRecorder({ client, component: 'tessera-test', instance: 'it' });
    const legacy = new KubeEventRecorder({ client, component: 'tessera-legacy', instance: 'it', api: 'v1' });
    for (let i = 0; i < 3; i++) {
      modern.event(target, 'Normal', 'Observed', 'seen it');
      legacy.event(target, 'Warning', 'Observed', 'seen it');
    }
    await modern.flush();
    await legacy.flush();
    const events = await new ResourceClient<
      KubeObject & { series?: { count: number }; reportingController?: string; regarding?: { name?: string } }
    >(client, Events).list({ namespace: ns.name });
    const mine = events.items.filter((e) => e.reportingController === 'tessera-test');
    expect(mine).toHaveLength(1);
    expect(mine[0]?.series?.count).toBe(3);
    expect(mine[0]?.regarding?.name).toBe('evented');
    const core = await new ResourceClient<KubeObject & { count?: number; source?: { component?: string } }>(
      client,
      CoreEvents,
    ).list({ namespace: ns.name });
    const legacyEvents = core.items.filter((e) => e.source?.component === 'tessera-legacy');
    expect(legacyEvents.map((e) => e.count)).toEqual([3]);
  });

  it('writes every event of a 1,000-object burst (3,000 events), none dropped', async () => {
    // The pod placement operator emits a few events per pod; a 1,000-pod burst must not lose any of them.
    const recorder = new KubeEventRecorder({ client, component: 'tessera-burst', instance: 'it', api: 'v1' });
    const reasons = ['Gated', 'ArchitecturesFound', 'Ungated'];
    for (let i = 0; i < 1000; i++) {
      const pod = { apiVersion: 'v1', kind: 'Pod', namespace: ns.name, name: `burst-${i}`, uid: `uid-${i}` };
      for (const reason of reasons) recorder.event(pod, 'Normal', reason, `${reason} burst-${i}`);
    }
    await recorder.flush();
    expect(recorder.droppedEvents()).toBe(0);
    const written = new Set<string>();
    let cont: string | undefined;
    do {
      const page = await client.request<{
        items: Array<{
          reason?: string;
          involvedObject?: { name?: string };
          source?: { component?: string };
        }>;
        metadata?: { continue?: string };
      }>({
        method: 'GET',
        path: `/api/v1/namespaces/${ns.name}/events`,
        query: { limit: 500, continue: cont },
      });
      for (const e of page.items)
        if (e.source?.component === 'tessera-burst') written.add(`${e.involvedObject?.name}/${e.reason}`);
      cont = page.metadata?.continue || undefined;
    } while (cont);
    expect(written.size).toBe(3000);
  });

  it('runs a controller from an informer, serves probes and client-go metrics, and stops cleanly', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        cb();
      },
    });
    const mgr = new Manager({
      kubeConfig: testKubeConfig(),
      name: 'it-manager',
      probes: { host: '127.0.0.1', port: 0 },
      handleSignals: false,
      logger: createLogger({ level: 'info', destination: sink }),
    });
    const reconciled: string[] = [];
    const cms = mgr.informers.informerFor<Cm>({ type: ConfigMaps, namespace: ns.name });
    const ctrl = mgr.newController({
      name: 'it-configmaps',
      workers: 2,
      reconciler: {
        async reconcile(key) {
          reconciled.push(key);
          if (key.endsWith('/fails')) throw new Error('always failing');
        },
      },
    });
    ctrl.watch(cms);
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    const url = (p: string): string => `http://127.0.0.1:${mgr.probePort()}${p}`;
    await eventually(async () => expect((await fetch(url('/readyz'))).status).toBe(200), {
      timeoutMs: 30_000,
      what: 'readyz',
    });
    expect((await fetch(url('/healthz'))).status).toBe(200);
    const writer = new ResourceClient<Cm>(client, ConfigMaps);
    await writer.create({ metadata: { namespace: ns.name, name: 'hello' } });
    await writer.create({ metadata: { namespace: ns.name, name: 'fails' } });
    await eventually(async () => expect(reconciled).toContain(`${ns.name}/hello`), {
      what: 'reconcile of hello',
    });
    await eventually(
      async () => expect(reconciled.filter((k) => k === `${ns.name}/fails`).length).toBeGreaterThan(2),
      { what: 'retries of fails' },
    );
    expect(
      lines.some((l) => l.includes('"key":"' + ns.name + '/fails"') && l.includes('reconcile failed')),
    ).toBe(true);

    const metrics = await (await fetch(url('/metrics'))).text();
    expect(metrics).toMatch(/workqueue_adds_total\{name="it-configmaps"\} \d+/);
    expect(metrics).toMatch(/workqueue_retries_total\{name="it-configmaps"\} [1-9]/);
    expect(metrics).toContain('workqueue_queue_duration_seconds_bucket');
    expect(metrics).toContain('workqueue_work_duration_seconds_bucket');
    expect(metrics).toContain('workqueue_depth');
    expect(metrics).toContain('process_cpu_user_seconds_total');
    expect(metrics).toMatch(
      /controller_runtime_reconcile_total\{controller="it-configmaps",result="error"\} [1-9]/,
    );

    expect(await (await fetch(url('/debug/loglevel'), { method: 'PUT', body: 'debug' })).text()).toBe(
      'debug\n',
    );
    expect(mgr.getLogLevel()).toBe('debug');
    expect((await fetch(url('/debug/loglevel'), { method: 'PUT', body: 'loud' })).status).toBe(400);

    stop.abort();
    await running;
    expect(lines.some((l) => l.includes('manager stopped'))).toBe(true);
    await expect(fetch(url('/healthz'))).rejects.toThrow();
  });
});
