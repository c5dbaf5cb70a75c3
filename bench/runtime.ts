// `npm run bench -- runtime`: the controller runtime's hot paths.
//  - Work queue: add/get/done cycles per second (goal >= 200,000/s), plain and with Prometheus metrics.
//  - Informer: watch events processed per second on one core (goal >= 5,000/s). A private kube-apiserver holds
//    ConfigMaps (~1 KB each; they are written ~3x faster than pods, so all updates stay in the apiserver's watch
//    cache); after N updates, a watch from the pre-update resourceVersion replays them from the watch cache. The
//    baseline is the same raw watch stream decoded without a store; the informer adds cache, indexes and a
//    handler. Rates are per wall second and per CPU second of this (single-threaded) process.
//  - Memory per cached object relative to the JSON of what is cached (goal <= 1.5x), on realistic pods as served,
//    for the default informer transform (managedFields dropped, equal strings shared); extra figures: over the
//    JSON as served, without string sharing, and objects cached whole.
import v8 from 'node:v8';
import vm from 'node:vm';
import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { startDevCluster, type DevCluster } from '../src/devcluster/cluster.js';
import { DefaultSharedInformer } from '../src/runtime/cache/shared-informer.js';
import { KubeClient } from '../src/runtime/client.js';
import type { KubeList, KubeObject } from '../src/runtime/object.js';
import { ResourceClient } from '../src/runtime/resource-client.js';
import { ConfigMaps, Namespaces, Pods, type ResourceType } from '../src/runtime/resources.js';
import { compactForCache, stripManagedFields } from '../src/runtime/cache/transforms.js';
import { WorkQueue } from '../src/runtime/workqueue/queue.js';
import { prometheusWorkQueueMetrics } from '../src/runtime/workqueue/prometheus-metrics.js';
import type { BenchMetric, BenchResult } from './types.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const PODS = Number(process.env.TESSERA_BENCH_PODS ?? 2000);
const CONFIGMAPS = 500;
// Updates must be written within the watch cache's freshness window (75 s) to be replayed from it.
const UPDATES = Number(process.env.TESSERA_BENCH_UPDATES ?? 8000);
const QUEUE_CYCLES = 2_000_000;
const ServiceAccounts: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'serviceaccounts',
  kind: 'ServiceAccount',
  namespaced: true,
};

async function queueCycles(withMetrics: boolean): Promise<number> {
  const q = new WorkQueue<string>(
    withMetrics ? { name: 'bench', metricsProvider: prometheusWorkQueueMetrics(new Registry()) } : {},
  );
  const keys = Array.from({ length: 1024 }, (_, i) => `ns/obj-${i}`);
  // Warm-up, then measure batches of 1024 adds followed by 1024 get/done pairs, as workers drain a busy queue.
  const round = async (): Promise<void> => {
    for (const k of keys) q.add(k);
    for (let i = 0; i < keys.length; i++) {
      const k = await q.get();
      if (k !== undefined) q.done(k);
    }
  };
  for (let i = 0; i < 50; i++) await round();
  const rounds = Math.ceil(QUEUE_CYCLES / keys.length);
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) await round();
  const seconds = (performance.now() - t0) / 1000;
  return (rounds * keys.length) / seconds;
}

function pod(ns: string, i: number): KubeObject {
  return {
    metadata: {
      namespace: ns,
      name: `pod-${i}`,
      labels: { app: `app-${i % 20}`, tier: 'backend', 'bench.tessera.dev/seq': '0' },
      annotations: { 'tessera.dev/note': `pod number ${i}` },
    },
    spec: {
      containers: [
        {
          name: 'main',
          image: `quay.io/example/app-${i % 20}:v1.${i % 7}`,
          args: ['--port=8080', '--verbose'],
          ports: [{ containerPort: 8080, name: 'http' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
          env: [{ name: 'MODE', value: 'bench' }],
        },
        {
          name: 'sidecar',
          image: 'quay.io/example/proxy:2.4',
          resources: { requests: { cpu: '10m', memory: '32Mi' } },
        },
      ],
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'example.com/dedicated', operator: 'Exists', effect: 'NoSchedule' }],
    },
  } as KubeObject;
}

async function pool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < items.length; i = next++) await fn(items[i] as T);
    }),
  );
}

function heapUsed(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** Fills `informer` from a list; a separate function so no stale reference to the list outlives it. */
async function fill(
  client: KubeClient,
  ns: string,
  informer: DefaultSharedInformer<KubeObject>,
): Promise<{ servedBytes: number; heldBytes: number }> {
  let servedBytes = 0;
  const list = await client.request<KubeList<KubeObject>>({
    method: 'GET',
    path: `/api/v1/namespaces/${ns}/pods`,
  });
  for (const item of list.items) {
    item.apiVersion = 'v1';
    item.kind = 'Pod';
    servedBytes += Buffer.byteLength(JSON.stringify(item));
  }
  informer.replace(list.items, list.metadata?.resourceVersion ?? '');
  let heldBytes = 0;
  for (const held of informer.getIndexer().list()) heldBytes += Buffer.byteLength(JSON.stringify(held));
  return { servedBytes, heldBytes };
}

interface MemoryFigures {
  /** Heap held by the informer over the JSON of what it holds (managedFields dropped or not). */
  ratioToHeld: number;
  /** The same heap over the JSON as served (with managedFields). */
  ratioToServed: number;
  bytesPerObject: number;
  heldJsonBytesPerObject: number;
  servedJsonBytesPerObject: number;
}

/**
 * The heap an informer holds for `ns`'s pods: heap with the filled informer minus heap once it is released. The
 * difference is what the cache holds (objects, keys, indexes), not allocations that outlive a request (response
 * buffers, compiled code), which a before/after-fill difference would count at random.
 */
async function memoryPerObject(
  client: KubeClient,
  ns: string,
  transform: ((o: KubeObject) => KubeObject) | undefined,
): Promise<MemoryFigures> {
  let informer: DefaultSharedInformer<KubeObject> | undefined = new DefaultSharedInformer<KubeObject>({
    client,
    type: Pods,
    namespace: ns,
    transform,
  });
  const { servedBytes, heldBytes } = await fill(client, ns, informer);
  const n = informer.getIndexer().size();
  const withInformer = heapUsed();
  informer = undefined;
  const held = withInformer - heapUsed();
  return {
    ratioToHeld: held / heldBytes,
    ratioToServed: held / servedBytes,
    bytesPerObject: held / n,
    heldJsonBytesPerObject: heldBytes / n,
    servedJsonBytesPerObject: servedBytes / n,
  };
}

async function replayRate(
  client: KubeClient,
  ns: string,
  fromRv: string,
  expected: number,
  informer?: DefaultSharedInformer<KubeObject>,
): Promise<{ wallRate: number; cpuRate: number }> {
  let count = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const stream = await client.watch<KubeObject>(`/api/v1/namespaces/${ns}/configmaps`, {
    watch: 1,
    resourceVersion: fromRv,
    allowWatchBookmarks: true,
    timeoutSeconds: 120,
  });
  for await (const event of stream.events) {
    if (event.type === 'ERROR') throw new Error(`watch replay failed: ${JSON.stringify(event.object)}`);
    if (event.type === 'BOOKMARK') continue;
    if (informer) informer.apply(event.type, event.object);
    if (++count >= expected) break;
  }
  stream.close();
  if (count < expected) throw new Error(`watch replay delivered ${count} of ${expected} events`);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { wallRate: count / seconds, cpuRate: count / ((cpu.user + cpu.system) / 1e6) };
}

export async function run(): Promise<BenchResult> {
  const metrics: BenchMetric[] = [];
  const plain = await queueCycles(false);
  const instrumented = await queueCycles(true);
  metrics.push({
    name: 'workqueue_add_get_done_cycles_per_s',
    value: plain,
    unit: 'cycles/s',
    goal: { op: '>=', value: 200_000 },
  });
  metrics.push({
    name: 'workqueue_cycles_per_s_with_prometheus_metrics',
    value: instrumented,
    unit: 'cycles/s',
    goal: { op: '>=', value: 200_000 },
  });
  metrics.push({
    name: 'workqueue_metrics_throughput_ratio',
    value: instrumented / plain,
    unit: 'ratio',
    baseline: 'same queue without metrics, same run',
  });

  let cluster: DevCluster | undefined;
  try {
    cluster = await startDevCluster({
      name: `bench-runtime-${randomBytes(3).toString('hex')}`,
      nodes: 'none',
      controllerManager: false,
      scheduler: false,
      kwok: false,
    });
    const client = new KubeClient(await cluster.kubeConfig(), { requestTimeoutMs: 120_000 });

    // Informer throughput on a watch replay of ConfigMap updates.
    const evNs = 'bench-events';
    await new ResourceClient(client, Namespaces).create({ metadata: { name: evNs } });
    const cms = new ResourceClient<KubeObject>(client, ConfigMaps);
    const payload = 'x'.repeat(600);
    await pool(
      Array.from({ length: CONFIGMAPS }, (_, i) => i),
      24,
      (i) =>
        cms.create({
          metadata: { namespace: evNs, name: `cm-${i}`, labels: { app: `app-${i % 20}`, seq: '0' } },
          data: { payload, index: String(i) },
        } as KubeObject),
    );
    const cmList = await cms.list({ namespace: evNs });
    const fromRv = cmList.metadata?.resourceVersion ?? '';
    const writeStart = performance.now();
    await pool(
      Array.from({ length: UPDATES }, (_, i) => i),
      32,
      (i) =>
        cms.mergePatch(
          { namespace: evNs, name: `cm-${i % CONFIGMAPS}` },
          { metadata: { labels: { seq: String(i + 1) } } },
        ),
    );
    const writeRate = UPDATES / ((performance.now() - writeStart) / 1000);
    const raw = await replayRate(client, evNs, fromRv, UPDATES);
    const informer = new DefaultSharedInformer<KubeObject>({
      client,
      type: ConfigMaps,
      namespace: evNs,
      transform: compactForCache,
      indexers: { app: (o) => [o.metadata?.labels?.app ?? ''] },
    });
    informer.replace(
      cmList.items.map((o) => ({ ...o, apiVersion: 'v1', kind: 'ConfigMap' })),
      fromRv,
    );
    let handled = 0;
    informer.addEventHandler({ onUpdate: () => void handled++, onAdd: () => void handled++ });
    const inf = await replayRate(client, evNs, fromRv, UPDATES, informer);
    if (handled < UPDATES) throw new Error(`handler saw ${handled} of ${UPDATES} events`);
    metrics.push({
      name: 'informer_events_per_cpu_second',
      value: inf.cpuRate,
      unit: 'events/s',
      goal: { op: '>=', value: 5_000 },
      baseline: `${UPDATES} ConfigMap updates replayed by a real kube-apiserver watch; CPU time of this single-threaded process (cache, 2 indexes, 1 handler, default transform: managedFields dropped, strings shared)`,
    });
    metrics.push({
      name: 'informer_events_per_wall_second',
      value: inf.wallRate,
      unit: 'events/s',
      baseline: 'includes waiting for kube-apiserver on the same 2-core machine',
    });
    metrics.push({
      name: 'raw_watch_events_per_cpu_second',
      value: raw.cpuRate,
      unit: 'events/s',
      baseline: 'same replay, decoded without store or handlers',
    });
    metrics.push({ name: 'raw_watch_events_per_wall_second', value: raw.wallRate, unit: 'events/s' });
    metrics.push({
      name: 'informer_vs_raw_watch_cpu_throughput_ratio',
      value: inf.cpuRate / raw.cpuRate,
      unit: 'ratio',
      baseline: 'raw watch stream without store, same run',
    });
    metrics.push({
      name: 'apiserver_configmap_writes_per_s',
      value: writeRate,
      unit: 'writes/s',
      baseline: 'merge patches, 32 in flight (context for the figures above)',
    });

    // Memory on pods.
    const ns = 'bench';
    await new ResourceClient(client, Namespaces).create({ metadata: { name: ns } });
    await new ResourceClient(client, ServiceAccounts).create({
      metadata: { namespace: ns, name: 'default' },
    });
    const pods = new ResourceClient<KubeObject>(client, Pods);
    await pool(
      Array.from({ length: PODS }, (_, i) => i),
      24,
      (i) => pods.create(pod(ns, i)),
    );
    // Warm-up: the first multi-megabyte response leaves one-time allocations (HTTP/TLS buffers, code).
    await memoryPerObject(client, ns, compactForCache);
    const compact = await memoryPerObject(client, ns, compactForCache);
    const stripped = await memoryPerObject(client, ns, stripManagedFields);
    const whole = await memoryPerObject(client, ns, undefined);
    metrics.push({
      name: 'informer_memory_per_object_vs_held_json',
      value: compact.ratioToHeld,
      unit: 'ratio',
      goal: { op: '<=', value: 1.5 },
      baseline: `JSON of the objects the default informer holds (managedFields dropped: ${Math.round(compact.heldJsonBytesPerObject)} B/pod), ${PODS} realistic pods; heap measured as the difference between holding the filled informer and releasing it`,
    });
    metrics.push({ name: 'informer_memory_per_object', value: compact.bytesPerObject, unit: 'bytes' });
    metrics.push({
      name: 'informer_memory_per_object_vs_served_json',
      value: compact.ratioToServed,
      unit: 'ratio',
      baseline: `JSON as served, with managedFields (${Math.round(compact.servedJsonBytesPerObject)} B/pod)`,
    });
    metrics.push({
      name: 'informer_memory_vs_held_json_without_string_sharing',
      value: stripped.ratioToHeld,
      unit: 'ratio',
      baseline:
        'same pods, managedFields dropped but equal strings not shared (the default before string sharing)',
    });
    metrics.push({
      name: 'informer_memory_vs_held_json_whole_objects',
      value: whole.ratioToHeld,
      unit: 'ratio',
      baseline: 'same pods cached whole (no transform), over their JSON',
    });
    await client.close();
  } finally {
    await cluster?.stop({ wipe: true });
  }
  return { metrics };
}
