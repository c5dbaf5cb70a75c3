// `npm run bench -- podplacement`: node density on the local cluster. 1,000 pods from 20 images (10 single-, 10
// multi-architecture) over 100 kwok nodes, scheduled without the operator (baseline) and with it (separate
// process, warm cache), in the same run. Measures pod-created -> scheduled latency (bench-side watch, ms clock),
// throughput, registry manifest requests per distinct image, pod writes per pod by the operator, and the
// operator's RSS: peak during the burst, then with 10,000 already-placed pods in the cluster.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startDevCluster } from '../src/devcluster/cluster.js';
import { defaultNodeSpecs } from '../src/devcluster/nodes.js';
import { startLocalRegistry } from '../src/devcluster/registry.js';
import { multiPlatformImage, singleImage } from '../src/devcluster/registry-images.js';
import { KubeClient, Pods, SharedInformerFactory, type KubeObject } from '../src/runtime/index.js';
import type { BenchMetric, BenchResult } from './types.js';

const PODS = Number(process.env.PP_BENCH_PODS ?? 1000);
const PLACED = Number(process.env.PP_BENCH_PLACED ?? 10_000);
const WORKERS_PER_ARCH = 25;
const CONCURRENCY = 50;
/** Creation rate of the latency runs: below what the 2-core control plane absorbs, so no backlog forms. */
const PACED_PER_S = Number(process.env.PP_BENCH_PACED_PER_S ?? 20);
const ARCHS = ['amd64', 'arm64', 'ppc64le', 's390x'];
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/** VmRSS and VmHWM (peak) of a process, in MiB. */
function rssMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 'NaN');
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

interface Pod {
  metadata: { name: string };
  spec: { nodeName?: string };
}

/** Records each pod's first time with spec.nodeName (bench clock), through the runtime's informer. */
async function watchScheduled(
  client: KubeClient,
  namespace: string,
  signal: AbortSignal,
): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const factory = new SharedInformerFactory({ client });
  const informer = factory.informerFor<Pod & KubeObject>({ type: Pods, namespace });
  const note = (p: Pod): void => {
    if (p.spec?.nodeName && !seen.has(p.metadata.name)) seen.set(p.metadata.name, performance.now());
  };
  informer.addEventHandler({ onAdd: note, onUpdate: (_o, p) => note(p) });
  void factory.start(signal);
  await informer.waitForSync(signal);
  return seen;
}

async function inBatches(count: number, fn: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < count; i += CONCURRENCY)
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count - i) }, (_, j) => fn(i + j)));
}

async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Creates PODS pods (image i % 20) and measures create-sent -> scheduled per pod. */
/**
 * Creates PODS pods (image i % 20) in `namespace` and measures create-sent -> scheduled per pod. With
 * `ratePerS` the creations are paced (latency without a backlog); without, they go CONCURRENCY at a time
 * (throughput).
 */
async function burst(
  client: KubeClient,
  namespace: string,
  images: readonly string[],
  ratePerS?: number,
): Promise<{ latencies: number[]; seconds: number }> {
  const ac = new AbortController();
  const scheduledAt = await watchScheduled(client, namespace, ac.signal);
  const createdAt = new Map<string, number>();
  const t0 = performance.now();
  const create = async (i: number): Promise<void> => {
    const name = `p-${i}`;
    createdAt.set(name, performance.now());
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${namespace}/pods`,
      body: {
        metadata: { name, labels: { bench: 'pp' } },
        spec: { containers: [{ name: 'c', image: images[i % images.length] }] },
      },
    });
  };
  if (ratePerS) {
    const pending: Promise<void>[] = [];
    for (let i = 0; i < PODS; i++) {
      const due = t0 + (i * 1000) / ratePerS;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(create(i));
    }
    await Promise.all(pending);
  } else {
    await inBatches(PODS, create);
  }
  let lastLog = 0;
  await until(
    () => {
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        process.stderr.write(`[bench podplacement] ${namespace}: ${scheduledAt.size}/${PODS} scheduled\n`);
      }
      return scheduledAt.size >= PODS;
    },
    600_000,
    `${PODS} pods scheduled in ${namespace}`,
  );
  const last = Math.max(...scheduledAt.values());
  ac.abort();
  const latencies = [...createdAt]
    .map(([name, t]) => (scheduledAt.get(name) ?? Number.NaN) - t)
    .sort((a, b) => a - b);
  return { latencies, seconds: (last - t0) / 1000 };
}

export async function run(): Promise<BenchResult> {
  const log = (l: string): void => void process.stderr.write(`[bench podplacement] ${l}\n`);
  const stateRoot = mkdtempSync(path.join(os.tmpdir(), 'bench-pp-'));
  const cluster = await startDevCluster({
    name: 'bench-podplacement',
    stateRoot,
    nodes: defaultNodeSpecs(WORKERS_PER_ARCH),
    log,
  });
  const registry = await startLocalRegistry({ stateDir: path.join(stateRoot, 'registry'), auth: 'none' });
  let operator: ReturnType<typeof spawn> | undefined;
  const client = new KubeClient(await cluster.kubeConfig());
  try {
    // 20 images: 10 single-architecture (cycling the four), 10 multi-architecture (2-4 architectures).
    const images: string[] = [];
    for (let i = 0; i < 10; i++) {
      await registry.pushImage(
        `single-${i}`,
        '1',
        singleImage({ platform: { architecture: ARCHS[i % 4] ?? 'amd64' }, salt: `s${i}` }),
      );
      images.push(`${registry.host}/single-${i}:1`);
      const platforms = ARCHS.slice(0, 2 + (i % 3)).map((architecture) => ({ architecture }));
      await registry.pushImage(`multi-${i}`, '1', multiPlatformImage({ platforms, salt: `m${i}` }));
      images.push(`${registry.host}/multi-${i}:1`);
    }
    const mkNs = async (name: string, labels: Record<string, string> = {}): Promise<void> => {
      await client.request({
        method: 'POST',
        path: '/api/v1/namespaces',
        body: { metadata: { name, labels } },
      });
      await until(
        async () => {
          try {
            await client.request({
              method: 'GET',
              path: `/api/v1/namespaces/${name}/serviceaccounts/default`,
            });
            return true;
          } catch {
            return false;
          }
        },
        30_000,
        `default SA in ${name}`,
      );
    };

    log(`baseline: ${PODS} pods without the operator`);
    await mkNs('baseline');
    const base = await burst(client, 'baseline', images);
    await mkNs('baseline-paced');
    const basePaced = await burst(client, 'baseline-paced', images, PACED_PER_S);
    await client.request({ method: 'DELETE', path: '/api/v1/namespaces/baseline' });

    log('starting the operator (separate process)');
    const opNs = 'tessera-podplacement';
    await mkNs(opNs, { 'multiarch.openshift.io/exclude-pod-placement': '' });
    const webhookPort = await freePort();
    const probePort = await freePort();
    const dist = path.join(root, 'dist', 'cli', 'main.js');
    // Compiled JS as users run it (`npm run bench` builds dist/ first); tsx only as a fallback (more memory).
    const override = process.env.PP_BENCH_OPERATOR_ENTRY;
    const entry = override
      ? [override]
      : existsSync(dist)
        ? [dist]
        : ['--import', 'tsx', path.join(root, 'src', 'cli', 'main.ts')];
    log(`operator entry: ${entry.join(' ')}`);
    const logFd = openSync(path.join(stateRoot, 'operator.log'), 'a');
    // The same V8 limits as deploy/podplacement/base/deployments.yaml (NODE_OPTIONS).
    const nodeFlags = (
      process.env.PP_BENCH_OPERATOR_NODE_OPTIONS ?? '--max-semi-space-size=4 --max-old-space-size=160'
    )
      .split(' ')
      .filter(Boolean);
    log(`operator node flags: ${nodeFlags.join(' ') || '(none)'}`);
    operator = spawn(
      process.execPath,
      [
        ...nodeFlags,
        ...entry,
        'podplacement',
        'operator',
        '--kubeconfig',
        cluster.kubeconfigPath,
        '--namespace',
        opNs,
        '--webhook-host',
        '127.0.0.1',
        '--webhook-port',
        String(webhookPort),
        '--webhook-url',
        `https://127.0.0.1:${webhookPort}`,
        '--probe-port',
        String(probePort),
        '--no-leader-elect',
        '--install-crds',
        '--cert-dir',
        path.join(stateRoot, 'certs'),
        '--global-pull-secret-namespace',
        opNs,
        '--registry-ca',
        registry.caFile,
        '--workers',
        '16',
      ],
      { cwd: root, stdio: ['ignore', logFd, logFd], env: { ...process.env, TESSERA_LOG_LEVEL: 'warn' } },
    );
    const pid = operator.pid ?? 0;
    await until(
      async () => {
        try {
          await client.request({
            method: 'GET',
            path: '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs',
          });
          return true;
        } catch {
          return false;
        }
      },
      60_000,
      'CRDs installed by the operator',
    );
    await client.request({
      method: 'POST',
      path: '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs',
      body: {
        apiVersion: 'multiarch.openshift.io/v1beta1',
        kind: 'ClusterPodPlacementConfig',
        metadata: { name: 'cluster' },
        spec: {
          namespaceSelector: {
            matchExpressions: [
              { key: 'multiarch.openshift.io/exclude-pod-placement', operator: 'DoesNotExist' },
            ],
          },
        },
      },
    });
    await until(
      async () => {
        try {
          await client.request({
            method: 'GET',
            path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
          });
          return true;
        } catch {
          return false;
        }
      },
      60_000,
      'webhook configuration',
    );

    // Warm the cache: one pod per image.
    await mkNs('warmup');
    const warm = await (async () => {
      const ac = new AbortController();
      const seen = await watchScheduled(client, 'warmup', ac.signal);
      await Promise.all(
        images.map((image, i) =>
          client.request({
            method: 'POST',
            path: '/api/v1/namespaces/warmup/pods',
            body: { metadata: { name: `w-${i}` }, spec: { containers: [{ name: 'c', image }] } },
          }),
        ),
      );
      await until(() => seen.size >= images.length, 120_000, 'warm-up pods scheduled');
      ac.abort();
      return seen.size;
    })();
    log(`cache warmed with ${warm} pods; measuring ${PODS} pods with the operator`);
    const manifestsBefore = registry
      .accessLog()
      .filter((e) => e.method === 'GET' && e.path.includes('/manifests/')).length;
    const allBefore = registry.accessLog().length;
    await mkNs('measured');
    const withOp = await burst(client, 'measured', images);
    await mkNs('measured-paced');
    const withOpPaced = await burst(client, 'measured-paced', images, PACED_PER_S);
    const peakBurst = rssMiB(pid).peak;
    const manifestGets = registry
      .accessLog()
      .filter((e) => e.method === 'GET' && e.path.includes('/manifests/')).length;
    const metricsText = await (await fetch(`http://127.0.0.1:${probePort}/metrics`)).text();
    const counter = (name: string): number =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metricsText)?.[1] ?? 'NaN');
    const podWrites = counter('tessera_podplacement_pod_writes_total');
    const processed = counter('mto_ppo_ctrl_processed_pods_total');

    log(`creating ${PLACED} already-placed pods`);
    await mkNs('placed');
    const workers = defaultNodeSpecs(WORKERS_PER_ARCH).filter((n) => n.role === 'worker');
    await inBatches(PLACED, async (i) => {
      const node = workers[i % workers.length];
      await client.request({
        method: 'POST',
        path: '/api/v1/namespaces/placed/pods',
        body: {
          metadata: { name: `placed-${i}` },
          spec: { nodeName: node?.name, containers: [{ name: 'c', image: images[i % images.length] }] },
        },
      });
    });
    await new Promise((r) => setTimeout(r, 10_000));
    const after = rssMiB(pid);
    const finalMetrics = await (await fetch(`http://127.0.0.1:${probePort}/metrics`)).text();
    const heapUsedMiB =
      Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(finalMetrics)?.[1] ?? 'NaN') / 1024 / 1024;

    const p = (xs: number[], q: number) => percentile(xs, q);
    const metrics: BenchMetric[] = [
      {
        name: 'p50_scheduled_latency_baseline_ms',
        value: p(basePaced.latencies, 50),
        unit: 'ms',
        baseline: `paced ${PACED_PER_S} pods/s`,
      },
      {
        name: 'p99_scheduled_latency_baseline_ms',
        value: p(basePaced.latencies, 99),
        unit: 'ms',
        baseline: `paced ${PACED_PER_S} pods/s`,
      },
      {
        name: 'p50_scheduled_latency_with_operator_ms',
        value: p(withOpPaced.latencies, 50),
        unit: 'ms',
        baseline: `paced ${PACED_PER_S} pods/s, warm cache`,
      },
      {
        name: 'p99_scheduled_latency_with_operator_ms',
        value: p(withOpPaced.latencies, 99),
        unit: 'ms',
        baseline: `paced ${PACED_PER_S} pods/s, warm cache`,
      },
      {
        name: 'p99_scheduling_overhead_ms',
        value: p(withOpPaced.latencies, 99) - p(basePaced.latencies, 99),
        unit: 'ms',
        goal: { op: '<=', value: 100 },
        baseline: 'same pods without the operator, same run (paced)',
      },
      {
        name: 'p50_scheduling_overhead_ms',
        value: p(withOpPaced.latencies, 50) - p(basePaced.latencies, 50),
        unit: 'ms',
        baseline: 'same pods without the operator, same run (paced)',
      },
      {
        name: 'p99_scheduled_latency_burst_baseline_ms',
        value: p(base.latencies, 99),
        unit: 'ms',
        baseline: `${CONCURRENCY} concurrent creates`,
      },
      {
        name: 'p99_scheduled_latency_burst_with_operator_ms',
        value: p(withOp.latencies, 99),
        unit: 'ms',
        baseline: `${CONCURRENCY} concurrent creates`,
      },
      { name: 'throughput_baseline_pods_per_s', value: PODS / base.seconds, unit: 'pods/s' },
      { name: 'throughput_with_operator_pods_per_s', value: PODS / withOp.seconds, unit: 'pods/s' },
      {
        name: 'throughput_ratio_vs_baseline',
        value: base.seconds / withOp.seconds,
        unit: 'ratio',
        goal: { op: '>=', value: 0.8 },
        baseline: 'same pods without the operator, same run',
      },
      {
        name: 'registry_manifest_requests_per_distinct_image',
        value: manifestGets / images.length,
        unit: 'requests',
        goal: { op: '<=', value: 1 },
        baseline: '20 distinct images, anonymous credentials, whole run (warm-up included)',
      },
      {
        name: 'registry_requests_during_measured_burst',
        value: registry.accessLog().length - allBefore,
        unit: 'requests',
      },
      {
        name: 'registry_manifest_requests_during_measured_burst',
        value: manifestGets - manifestsBefore,
        unit: 'requests',
      },
      {
        name: 'api_writes_per_pod_by_operator',
        value: podWrites / processed,
        unit: 'writes',
        goal: { op: '<=', value: 1 },
        baseline: 'pod PATCHes / gated pods processed (events not counted)',
      },
      { name: 'operator_peak_rss_mib', value: peakBurst, unit: 'MiB' },
      {
        name: 'operator_rss_with_10k_placed_pods_mib',
        value: after.rss,
        unit: 'MiB',
        goal: { op: '<=', value: 200 },
      },
      { name: 'operator_peak_rss_whole_run_mib', value: after.peak, unit: 'MiB' },
      { name: 'operator_heap_used_with_10k_placed_pods_mib', value: heapUsedMiB, unit: 'MiB' },
    ];
    return { metrics };
  } finally {
    operator?.kill('SIGTERM');
    await registry.stop().catch(() => undefined);
    await client.close();
    await cluster.stop({ wipe: true });
  }
}
