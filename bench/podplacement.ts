// `npm run bench -- podplacement [density] [hostile]` (or PP_BENCH_SCENARIOS=hostile; default: both). A run of
// some scenarios only keeps the other scenarios' figures in bench/results/podplacement.json.
// density: node density on the local cluster. 1,000 pods from 20 images (10 single-, 10 multi-architecture) over
// 100 kwok nodes, scheduled without the operator (baseline) and with it (separate process, warm cache), in the
// same run. Measures pod-created -> scheduled latency (bench-side watch, ms clock), throughput, registry manifest
// requests per distinct image, pod writes per distinct pod by the operator, and the operator's memory where it
// holds pods: 5,000 Pending pods held by another scheduling gate (placed, cached until they run), then 10,000 pods
// gated and in flight (their registry never answers; the operator runs with a 15-minute inspection deadline so they
// stay in flight while measured; the density pods' registry answers in milliseconds, so that deadline never fires
// there).
// hostile: fairness when 8 tenants' registries never answer (2 each), and fast release of pods whose image does not
// exist (see runHostile).
import { spawn, spawnSync } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startDevCluster } from '../src/devcluster/cluster.js';
import { freePort } from '../src/devcluster/processes.js';
import { defaultNodeSpecs } from '../src/devcluster/nodes.js';
import { startLocalRegistry } from '../src/devcluster/registry.js';
import { multiPlatformImage, singleImage } from '../src/devcluster/registry-images.js';
import { KubeClient, Pods, SharedInformerFactory, type KubeObject } from '../src/runtime/index.js';
import { startSilentRegistry } from '../test/support/silent-registry.js';
import type { BenchMetric, BenchResult } from './types.js';

const PODS = Number(process.env.PP_BENCH_PODS ?? 1000);
const IN_FLIGHT = Number(process.env.PP_BENCH_IN_FLIGHT ?? 10_000);
const HELD = Number(process.env.PP_BENCH_HELD ?? 5_000);
const OTHER_GATE = 'example.com/held-by-another-controller';
const OPERATOR_GATE = 'multiarch.openshift.io/scheduling-gate';
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

/** VmRSS and VmHWM (peak) of a process, in MiB. */
function rssMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 'NaN');
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** User + system CPU time of a process so far, in ms (/proc/<pid>/stat fields 14 and 15, in clock ticks). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}
/** USER_HZ: 100 on every Linux architecture the benchmark runs on (getconf CLK_TCK). */
const CLOCK_TICKS_PER_S = 100;

/** CPU ms each process spends while `work` runs. */
async function cpuDuring<T>(
  pids: Readonly<Record<string, number>>,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
  const result = await work();
  const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid) - (before[k] ?? 0)]));
  return { result, cpu };
}

/**
 * kube-apiserver's request counters (apiserver_request_total, summed over codes, by `VERB resource[/subresource]`)
 * and watch events sent (apiserver_watch_events_total, by kind, as `WATCH-EVENT kind`), read through kubectl so
 * the text format needs no client of its own. The difference of two readings says what a phase asked of it.
 */
function apiserverCounters(kubeconfigPath: string): Map<string, number> {
  const out = spawnSync('kubectl', ['--kubeconfig', kubeconfigPath, 'get', '--raw', '/metrics'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const counts = new Map<string, number>();
  if (out.status !== 0) return counts;
  const label = (labels: string, key: string): string => {
    const at = labels.indexOf(`${key}="`);
    return at < 0 ? '' : labels.slice(at + key.length + 2, labels.indexOf('"', at + key.length + 2));
  };
  for (const line of out.stdout.split('\n')) {
    const metric = line.startsWith('apiserver_request_total{')
      ? 'request'
      : line.startsWith('apiserver_watch_events_total{')
        ? 'watch'
        : undefined;
    if (!metric) continue;
    const labels = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'));
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const key =
      metric === 'request'
        ? `${label(labels, 'verb')} ${label(labels, 'resource')}${label(labels, 'subresource') ? `/${label(labels, 'subresource')}` : ''}`
        : `WATCH-EVENT ${label(labels, 'resource') || label(labels, 'kind')}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

/** Per-pod difference of two apiserverCounters readings, largest first, without the rows under 0.05 per pod. */
function countersPerPod(
  before: Map<string, number>,
  after: Map<string, number>,
  pods: number,
): [string, number][] {
  return [...after]
    .map(([k, v]): [string, number] => [k, (v - (before.get(k) ?? 0)) / pods])
    .filter(([, v]) => v >= 0.05)
    .sort((a, b) => b[1] - a[1]);
}

/**
 * Waits until kube-apiserver has taken every write the pods cause (Events, status updates, the operator's
 * patches): until its pod and Event write counters stop moving for 2 s, at most 120 s. Scheduling comes before some of them
 * (the operator writes its Events after the patch, kwok marks pods Running), so a CPU window that ended at the last
 * pod scheduled would miss them on a slow machine.
 */
async function settled(kubeconfigPath: string): Promise<void> {
  // Writes of pods and Events only: node leases and heartbeats go on at their own pace.
  const writes = (): number =>
    writesPerPod(
      countersPerPod(new Map(), apiserverCounters(kubeconfigPath), 1).filter(([k]) =>
        / (pods|pods\/\w+|events)$/.test(k),
      ),
    );
  const deadline = Date.now() + 120_000;
  let last = writes();
  let still = 0;
  while (still < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1_000));
    const now = writes();
    still = now === last ? still + 1 : 0;
    last = now;
  }
}

/** Writes (POST, PUT, PATCH, DELETE) per pod in a countersPerPod table. */
function writesPerPod(rows: readonly [string, number][]): number {
  return rows
    .filter(([k]) => /^(POST|PUT|PATCH|DELETE|CREATE|UPDATE|APPLY) /.test(k))
    .reduce((n, [, v]) => n + v, 0);
}

/** Wall time of a bare `node -e 0` on this machine (median of 5), so a reader can tell a slow machine apart. */
function bareNodeStartMs(): number {
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    runs.push(performance.now() - t);
  }
  return runs.sort((a, b) => a - b)[2] ?? Number.NaN;
}

interface Pod {
  metadata: { name: string };
  spec: { nodeName?: string; schedulingGates?: { name: string }[] };
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

/** Names of `namespace`'s pods that no longer carry the operator's scheduling gate. */
async function watchReleased(
  client: KubeClient,
  namespace: string,
  signal: AbortSignal,
): Promise<Set<string>> {
  const released = new Set<string>();
  const factory = new SharedInformerFactory({ client });
  const informer = factory.informerFor<Pod & KubeObject>({ type: Pods, namespace });
  const note = (p: Pod): void => {
    if (!(p.spec.schedulingGates ?? []).some((g) => g.name === OPERATOR_GATE)) released.add(p.metadata.name);
  };
  informer.addEventHandler({ onAdd: note, onUpdate: (_o, p) => note(p) });
  void factory.start(signal);
  await informer.waitForSync(signal);
  return released;
}

/** tessera_events_dropped_total of the operator, summed over its reasons (0 before the first drop). */
async function eventsDropped(probePort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${probePort}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('tessera_events_dropped_total{') || line.startsWith('tessera_events_dropped_total '))
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}

/** RSS (VmRSS) and V8 heap used of the operator once it has settled, in MiB. */
async function settledMemory(pid: number, probePort: number): Promise<{ rss: number; heap: number }> {
  await new Promise((r) => setTimeout(r, 10_000));
  const text = await (await fetch(`http://127.0.0.1:${probePort}/metrics`)).text();
  const heap = Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1] ?? 'NaN') / 1024 / 1024;
  return { rss: rssMiB(pid).rss, heap };
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

// Wall-clock times, so a CPU profile of the operator (PP_BENCH_OPERATOR_NODE_OPTIONS=--cpu-prof) can be cut to
// one phase: the profile ends when the operator exits, which is logged too.
const log = (l: string): void =>
  void process.stderr.write(`[bench podplacement ${new Date().toISOString()}] ${l}\n`);

/** Creates a namespace and waits for its default service account (pods need it). */
async function createNamespace(
  client: KubeClient,
  name: string,
  labels: Record<string, string> = {},
): Promise<void> {
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name, labels } } });
  await until(
    async () => {
      try {
        await client.request({ method: 'GET', path: `/api/v1/namespaces/${name}/serviceaccounts/default` });
        return true;
      } catch {
        return false;
      }
    },
    30_000,
    `default SA in ${name}`,
  );
}

async function succeeds(fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts `tessera podplacement operator` as a separate process (compiled JS as users run it; `npm run bench`
 * builds dist/ first), creates the ClusterPodPlacementConfig and waits for the gating webhook.
 */
async function startOperator(o: {
  client: KubeClient;
  kubeconfigPath: string;
  stateRoot: string;
  registryCaFile: string;
  /** Omitted: the operator's default. */
  workers?: number;
  extraArgs?: readonly string[];
  log: (l: string) => void;
  mkNs: (name: string, labels?: Record<string, string>) => Promise<void>;
}): Promise<{ child: ReturnType<typeof spawn>; pid: number; probePort: number }> {
  const opNs = 'tessera-podplacement';
  await o.mkNs(opNs, { 'multiarch.openshift.io/exclude-pod-placement': '' });
  const webhookPort = await freePort();
  const probePort = await freePort();
  const dist = path.join(root, 'dist', 'cli', 'main.js');
  // tsx only as a fallback (more memory).
  const override = process.env.PP_BENCH_OPERATOR_ENTRY;
  const entry = override
    ? [override]
    : existsSync(dist)
      ? [dist]
      : ['--import', 'tsx', path.join(root, 'src', 'cli', 'main.ts')];
  o.log(`operator entry: ${entry.join(' ')}`);
  const logFd = openSync(path.join(o.stateRoot, 'operator.log'), 'a');
  // The same V8 limits as deploy/podplacement/base/deployments.yaml (NODE_OPTIONS).
  const nodeFlags = (
    process.env.PP_BENCH_OPERATOR_NODE_OPTIONS ?? '--max-semi-space-size=4 --max-old-space-size=160'
  )
    .split(' ')
    .filter(Boolean);
  o.log(`operator node flags: ${nodeFlags.join(' ') || '(none)'}`);
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      ...entry,
      'podplacement',
      'operator',
      '--kubeconfig',
      o.kubeconfigPath,
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
      path.join(o.stateRoot, 'certs'),
      '--global-pull-secret-namespace',
      opNs,
      '--registry-ca',
      o.registryCaFile,
      ...(o.workers === undefined ? [] : ['--workers', String(o.workers)]),
      ...(o.extraArgs ?? []),
      // Extra operator flags for experiments, e.g. PP_BENCH_OPERATOR_ARGS='--max-inspections-per-namespace 16'.
      ...(process.env.PP_BENCH_OPERATOR_ARGS ?? '').split(' ').filter(Boolean),
    ],
    { cwd: root, stdio: ['ignore', logFd, logFd], env: { ...process.env, TESSERA_LOG_LEVEL: 'warn' } },
  );
  const cppcs = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';
  await until(
    () => succeeds(() => o.client.request({ method: 'GET', path: cppcs })),
    60_000,
    'CRDs installed by the operator',
  );
  await o.client.request({
    method: 'POST',
    path: cppcs,
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
    () =>
      succeeds(() =>
        o.client.request({
          method: 'GET',
          path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
        }),
      ),
    60_000,
    'webhook configuration',
  );
  return { child, pid: child.pid ?? 0, probePort };
}

/** Stops the operator before its API server, so it exits as it would in a cluster (and writes its profile). */
async function stopOperator(child: ReturnType<typeof spawn>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 60_000))]);
  log('operator exited');
}

/** Which scenarios to run: the command line's (`npm run bench -- podplacement hostile`), else PP_BENCH_SCENARIOS, else all. */
const SCENARIOS = ['density', 'hostile'] as const;
type Scenario = (typeof SCENARIOS)[number];

export async function run(args: readonly string[] = []): Promise<BenchResult> {
  const fromEnv = (process.env.PP_BENCH_SCENARIOS ?? '').split(',').filter(Boolean);
  const wanted = args.length > 0 ? args : fromEnv.length > 0 ? fromEnv : SCENARIOS;
  const unknown = wanted.filter((w) => !(SCENARIOS as readonly string[]).includes(w));
  if (unknown.length > 0)
    throw new Error(`unknown podplacement scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
  const metrics: BenchMetric[] = [];
  const has = (s: Scenario): boolean => wanted.includes(s);
  if (has('density')) metrics.push(...(await runDensity()));
  if (has('hostile')) metrics.push(...(await runHostile()));
  return { metrics, partial: SCENARIOS.some((s) => !has(s)) };
}

/** 1,000 pods with and without the operator: latency overhead, throughput, registry requests, writes, memory. */
async function runDensity(): Promise<BenchMetric[]> {
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
    const mkNs = (name: string, labels: Record<string, string> = {}): Promise<void> =>
      createNamespace(client, name, labels);

    log(`baseline: ${PODS} pods without the operator`);
    await mkNs('baseline');
    const apiserverPid = cluster.processes['kube-apiserver']?.pid;
    if (apiserverPid === undefined) throw new Error('the dev cluster recorded no kube-apiserver process');
    const base = await burst(client, 'baseline', images);
    await mkNs('baseline-paced');
    const baseCountersBefore = apiserverCounters(cluster.kubeconfigPath);
    const { result: basePaced, cpu: basePacedCpu } = await cpuDuring(
      { apiserver: apiserverPid },
      async () => {
        const r = await burst(client, 'baseline-paced', images, PACED_PER_S);
        await settled(cluster.kubeconfigPath);
        return r;
      },
    );
    const baseRequests = countersPerPod(baseCountersBefore, apiserverCounters(cluster.kubeconfigPath), PODS);
    await client.request({ method: 'DELETE', path: '/api/v1/namespaces/baseline' });

    log('starting the operator (separate process)');
    const started = await startOperator({
      client,
      kubeconfigPath: cluster.kubeconfigPath,
      stateRoot,
      registryCaFile: registry.caFile,
      workers: 16,
      extraArgs: ['--inspection-deadline-ms', String(15 * 60_000)],
      log,
      mkNs,
    });
    operator = started.child;
    const { pid, probePort } = started;

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
    const droppedBefore = await eventsDropped(probePort);
    await mkNs('measured');
    const { result: withOp, cpu: burstCpu } = await cpuDuring(
      { apiserver: apiserverPid, operator: pid },
      async () => {
        const r = await burst(client, 'measured', images);
        await settled(cluster.kubeconfigPath);
        return r;
      },
    );
    const droppedDuringBurst = (await eventsDropped(probePort)) - droppedBefore;
    await mkNs('measured-paced');
    const opCountersBefore = apiserverCounters(cluster.kubeconfigPath);
    log('paced run with the operator: start');
    const { result: withOpPaced, cpu: pacedCpu } = await cpuDuring(
      { apiserver: apiserverPid, operator: pid },
      async () => {
        const r = await burst(client, 'measured-paced', images, PACED_PER_S);
        await settled(cluster.kubeconfigPath);
        return r;
      },
    );
    log('paced run with the operator: end');
    const opRequests = countersPerPod(opCountersBefore, apiserverCounters(cluster.kubeconfigPath), PODS);
    // What each pod asked of the API server, with and without the operator (the bench's own watches included).
    for (const [what, rows] of [
      ['without the operator', baseRequests],
      ['with the operator', opRequests],
    ] as const)
      log(
        `kube-apiserver per paced pod, ${what}: ${rows.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`,
      );
    const peakBurst = rssMiB(pid).peak;
    const manifestGets = registry
      .accessLog()
      .filter((e) => e.method === 'GET' && e.path.includes('/manifests/')).length;
    const metricsText = await (await fetch(`http://127.0.0.1:${probePort}/metrics`)).text();
    const counter = (name: string): number =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metricsText)?.[1] ?? 'NaN');
    const podWrites = counter('tessera_podplacement_pod_writes_total');
    const processed = counter('mto_ppo_ctrl_processed_pods_total');
    // Every pod of the warm-up, the burst and the paced run was gated by the operator.
    const distinctGatedPods = images.length + 2 * PODS;

    const idle = await settledMemory(pid, probePort);

    log(`creating ${HELD} pods held Pending by another scheduling gate`);
    await mkNs('held');
    const heldAc = new AbortController();
    const released = await watchReleased(client, 'held', heldAc.signal);
    await inBatches(HELD, async (i) => {
      await client.request({
        method: 'POST',
        path: '/api/v1/namespaces/held/pods',
        body: {
          metadata: { name: `held-${i}` },
          spec: {
            schedulingGates: [{ name: OTHER_GATE }],
            containers: [{ name: 'c', image: images[i % images.length] }],
          },
        },
      });
    });
    await until(() => released.size >= HELD, 600_000, `${HELD} held pods placed by the operator`);
    heldAc.abort();
    const withHeld = await settledMemory(pid, probePort);

    log(`creating ${IN_FLIGHT} pods gated and in flight (their registry never answers)`);
    const silent = await startSilentRegistry();
    await mkNs('in-flight');
    await inBatches(IN_FLIGHT, async (i) => {
      await client.request({
        method: 'POST',
        path: '/api/v1/namespaces/in-flight/pods',
        body: {
          metadata: { name: `in-flight-${i}` },
          spec: { containers: [{ name: 'c', image: `${silent.host}/tenant/app-${i % 100}:1` }] },
        },
      });
    });
    const gatedList = await client.request<{ items: Pod[] }>({
      method: 'GET',
      path: '/api/v1/namespaces/in-flight/pods',
    });
    const stillGated = gatedList.items.filter((p) =>
      (p.spec.schedulingGates ?? []).some((g) => g.name === OPERATOR_GATE),
    ).length;
    const inFlight = await settledMemory(pid, probePort);
    await silent.close();
    const peakWholeRun = rssMiB(pid).peak;
    if (stillGated < IN_FLIGHT)
      throw new Error(`only ${stillGated} of ${IN_FLIGHT} in-flight pods were gated`);

    const p = (xs: number[], q: number) => percentile(xs, q);
    const perPod = (ms: number | undefined): number => (ms ?? Number.NaN) / PODS;
    const metrics: BenchMetric[] = [
      {
        name: 'bare_node_start_ms',
        value: bareNodeStartMs(),
        unit: 'ms',
        baseline: "node -e 0, median of 5: this machine's speed, beside the figures below",
      },
      {
        name: 'operator_cpu_ms_per_pod_paced',
        value: perPod(pacedCpu['operator']),
        unit: 'ms',
        baseline: `user + system CPU of the operator (webhook and controller) over the ${PODS} paced pods`,
      },
      {
        name: 'apiserver_cpu_ms_per_pod_paced',
        value: perPod(pacedCpu['apiserver']),
        unit: 'ms',
        baseline:
          "kube-apiserver CPU over the same paced pods (admission, storage, watches, the operator's calls)",
      },
      {
        name: 'apiserver_cpu_ms_per_pod_paced_without_operator',
        value: perPod(basePacedCpu['apiserver']),
        unit: 'ms',
        baseline: 'kube-apiserver CPU over the paced pods of the run without the operator',
      },
      {
        name: 'operator_cpu_ratio_vs_apiserver_paced',
        value: (pacedCpu['operator'] ?? Number.NaN) / (pacedCpu['apiserver'] ?? Number.NaN),
        unit: 'ratio',
        goal: { op: '<=', value: 0.5 },
        baseline: 'operator CPU / kube-apiserver CPU, same paced pods, same run',
      },
      {
        name: 'apiserver_writes_per_pod_paced',
        value: writesPerPod(opRequests),
        unit: 'writes',
        baseline:
          'POST/PUT/PATCH/DELETE requests kube-apiserver served per paced pod with the operator (events included)',
      },
      {
        name: 'apiserver_writes_per_pod_paced_without_operator',
        value: writesPerPod(baseRequests),
        unit: 'writes',
        baseline: 'the same over the paced pods of the run without the operator',
      },
      {
        name: 'apiserver_event_writes_per_pod_paced',
        value: opRequests.filter(([k]) => /^(POST|PATCH|PUT) events$/.test(k)).reduce((n, [, v]) => n + v, 0),
        unit: 'writes',
        baseline: 'Event creates and updates per paced pod with the operator (core/v1 and events.k8s.io)',
      },
      {
        name: 'operator_cpu_ms_per_pod_burst',
        value: perPod(burstCpu['operator']),
        unit: 'ms',
        baseline: `over the ${PODS}-pod burst`,
      },
      {
        name: 'operator_cpu_ratio_vs_apiserver_burst',
        value: (burstCpu['operator'] ?? Number.NaN) / (burstCpu['apiserver'] ?? Number.NaN),
        unit: 'ratio',
        baseline: 'operator CPU / kube-apiserver CPU, same burst, same run',
      },
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
        goal: { op: '>=', value: 0.95 },
        baseline: 'same pods without the operator, same run',
      },
      {
        name: 'events_dropped_during_burst',
        value: droppedDuringBurst,
        unit: 'events',
        goal: { op: '==', value: 0 },
        baseline: `tessera_events_dropped_total (spam filter and full queue) over the ${PODS}-pod burst`,
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
        name: 'api_writes_per_distinct_pod_by_operator',
        value: podWrites / distinctGatedPods,
        unit: 'writes',
        goal: { op: '<=', value: 1 },
        baseline: `pod PATCHes by the operator / ${distinctGatedPods} distinct pods it gated (warm-up, burst, paced; events not counted)`,
      },
      {
        name: 'reconcile_passes_per_distinct_pod',
        value: processed / distinctGatedPods,
        unit: 'passes',
        baseline: 'gated-pod reconcile passes / distinct pods',
      },
      { name: 'operator_peak_rss_mib', value: peakBurst, unit: 'MiB', baseline: 'during the bursts' },
      { name: 'operator_rss_idle_after_bursts_mib', value: idle.rss, unit: 'MiB' },
      {
        name: 'operator_rss_growth_with_5k_pending_pods_held_by_another_gate_mib',
        value: withHeld.rss - idle.rss,
        unit: 'MiB',
        baseline: `${HELD} placed pods kept Pending by ${OTHER_GATE}, over the settled RSS before them`,
      },
      {
        name: 'operator_heap_growth_with_5k_pending_pods_held_by_another_gate_mib',
        value: withHeld.heap - idle.heap,
        unit: 'MiB',
      },
      {
        name: 'operator_rss_with_10k_gated_pods_in_flight_mib',
        value: inFlight.rss,
        unit: 'MiB',
        goal: { op: '<=', value: 200 },
        baseline: `${IN_FLIGHT} gated pods waiting on a registry that never answers, plus the ${HELD} held pods; V8 limits as deployed`,
      },
      {
        name: 'operator_rss_growth_with_10k_gated_pods_in_flight_mib',
        value: inFlight.rss - withHeld.rss,
        unit: 'MiB',
      },
      {
        name: 'operator_heap_used_with_10k_gated_pods_in_flight_mib',
        value: inFlight.heap,
        unit: 'MiB',
      },
      { name: 'operator_peak_rss_whole_run_mib', value: peakWholeRun, unit: 'MiB' },
    ];
    // A run without held or in-flight pods (PP_BENCH_HELD=0, PP_BENCH_IN_FLIGHT=0: the CPU figures only) has no
    // memory figures for them.
    return metrics.filter(
      (m) =>
        !(HELD === 0 && m.name.includes('5k_pending')) &&
        !(IN_FLIGHT === 0 && (m.name.includes('10k_gated') || m.name === 'operator_peak_rss_whole_run_mib')),
    );
  } finally {
    if (operator) await stopOperator(operator);
    await registry.stop().catch(() => undefined);
    await client.close();
    await cluster.stop({ wipe: true });
  }
}

/** Hostile tenants (namespaces), each with HOSTILE_PODS pods on 2 silent registries of its own (issue #20). */
const HOSTILE_NAMESPACES = Number(process.env.PP_BENCH_HOSTILE_NAMESPACES ?? 8);
const HOSTILE_PODS = 8;
const ORDINARY_PODS = Number(process.env.PP_BENCH_ORDINARY_PODS ?? 100);
const MISSING_IMAGE_PODS = 10;

/** Creates `count` pods named `prefix-i` at `ratePerS`; resolves with each pod's create-sent time. */
async function createPaced(
  client: KubeClient,
  namespace: string,
  prefix: string,
  count: number,
  image: string,
  ratePerS: number,
): Promise<Map<string, number>> {
  const createdAt = new Map<string, number>();
  const t0 = performance.now();
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = t0 + (i * 1000) / ratePerS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const name = `${prefix}-${i}`;
    createdAt.set(name, performance.now());
    pending.push(
      client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${namespace}/pods`,
        body: { metadata: { name }, spec: { containers: [{ name: 'c', image }] } },
      }),
    );
  }
  await Promise.all(pending);
  return createdAt;
}

/** create-sent -> scheduled of every pod in `createdAt`, sorted (NaN for pods never scheduled). */
function latencies(createdAt: Map<string, number>, scheduledAt: Map<string, number>): number[] {
  return [...createdAt].map(([name, t]) => (scheduledAt.get(name) ?? Number.NaN) - t).sort((a, b) => a - b);
}

/**
 * Fairness under hostile registries (issues #10, #20): ORDINARY_PODS pods in one namespace, paced, with the
 * operator at its defaults (8 workers, 15 s per-pod deadline), first alone, then while HOSTILE_NAMESPACES other
 * namespaces with HOSTILE_PODS pods each wait on 2 registries that never answer (on OpenShift any user can create
 * projects). The hostile pods may delay only themselves. Also: pods whose image does
 * not exist are released at once (issue #14), not after the transient retry budget.
 */
async function runHostile(): Promise<BenchMetric[]> {
  const stateRoot = mkdtempSync(path.join(os.tmpdir(), 'bench-pp-hostile-'));
  const cluster = await startDevCluster({
    name: 'bench-podplacement-hostile',
    stateRoot,
    nodes: defaultNodeSpecs(5),
    log,
  });
  const registry = await startLocalRegistry({ stateDir: path.join(stateRoot, 'registry'), auth: 'none' });
  const silent = await startSilentRegistry();
  const silent2 = await startSilentRegistry();
  let operator: ReturnType<typeof spawn> | undefined;
  const client = new KubeClient(await cluster.kubeConfig());
  const watches = new AbortController();
  // One informer factory per watched namespace (13) lives on this signal until the end: not a leak, so Node's
  // warning at 11 listeners is raised to what the scenario holds.
  setMaxListeners(32, watches.signal);
  try {
    await registry.pushImage(
      'ordinary',
      '1',
      multiPlatformImage({ platforms: ARCHS.map((architecture) => ({ architecture })) }),
    );
    const image = `${registry.host}/ordinary:1`;
    const mkNs = (name: string, labels: Record<string, string> = {}): Promise<void> =>
      createNamespace(client, name, labels);
    log('hostile: starting the operator with its default workers and deadline');
    operator = (
      await startOperator({
        client,
        kubeconfigPath: cluster.kubeconfigPath,
        stateRoot,
        registryCaFile: registry.caFile,
        log,
        mkNs,
      })
    ).child;

    const hostileNamespaces = Array.from({ length: HOSTILE_NAMESPACES }, (_, i) => `hostile-${i}`);
    const namespaces = [
      'warmup',
      'ordinary-alone',
      ...hostileNamespaces,
      'ordinary-with-hostile',
      'ordinary-alone-after',
      'missing',
    ];
    const scheduled = new Map<string, Map<string, number>>();
    for (const ns of namespaces) {
      await mkNs(ns);
      scheduled.set(ns, await watchScheduled(client, ns, watches.signal));
    }
    const seen = (ns: string): Map<string, number> => scheduled.get(ns) ?? new Map<string, number>();

    // Warm the cache, the connections and the JIT of every component with a short paced batch.
    const WARMUP_PODS = 30;
    await createPaced(client, 'warmup', 'w', WARMUP_PODS, image, PACED_PER_S);
    await until(() => seen('warmup').size >= WARMUP_PODS, 120_000, 'warm-up pods scheduled');

    log(`hostile: ${ORDINARY_PODS} ordinary pods alone`);
    const alone = await createPaced(client, 'ordinary-alone', 'o', ORDINARY_PODS, image, PACED_PER_S);
    await until(
      () => seen('ordinary-alone').size >= ORDINARY_PODS,
      300_000,
      'ordinary pods (alone) scheduled',
    );

    log(
      `hostile: ${HOSTILE_NAMESPACES} namespaces x ${HOSTILE_PODS} pods on 2 registries that never answer, then ${ORDINARY_PODS} ordinary pods`,
    );
    const hostileCreated = new Map<string, number>();
    for (const ns of hostileNamespaces)
      for (const [i, host] of [silent.host, silent2.host].entries()) {
        const created = await createPaced(client, ns, `h${i}`, HOSTILE_PODS / 2, `${host}/${ns}/app:1`, 100);
        for (const [name, t] of created) hostileCreated.set(`${ns}/${name}`, t);
      }
    await until(
      () => silent.connections() > 0 && silent2.connections() > 0,
      60_000,
      'the operator connected to both silent registries',
    );
    const withHostile = await createPaced(
      client,
      'ordinary-with-hostile',
      'o',
      ORDINARY_PODS,
      image,
      PACED_PER_S,
    );
    await until(
      () => seen('ordinary-with-hostile').size >= ORDINARY_PODS,
      300_000,
      'ordinary pods (with hostile) scheduled',
    );
    const hostileScheduled = (): number => hostileNamespaces.reduce((n, ns) => n + seen(ns).size, 0);
    const hostileTotal = HOSTILE_NAMESPACES * HOSTILE_PODS;
    const hostileDoneWhenOrdinaryDone = hostileScheduled();
    await until(() => hostileScheduled() >= hostileTotal, 900_000, 'hostile pods released and scheduled');

    // The same batch once more without hostile pods: how much two identical runs differ on this machine.
    log(`hostile: ${ORDINARY_PODS} ordinary pods alone again`);
    const aloneAfter = await createPaced(
      client,
      'ordinary-alone-after',
      'o',
      ORDINARY_PODS,
      image,
      PACED_PER_S,
    );
    await until(
      () => seen('ordinary-alone-after').size >= ORDINARY_PODS,
      300_000,
      'ordinary pods (alone, after) scheduled',
    );

    log(`hostile: ${MISSING_IMAGE_PODS} pods whose image does not exist`);
    const missingCreated = await createPaced(
      client,
      'missing',
      'm',
      MISSING_IMAGE_PODS,
      `${registry.host}/does-not-exist:1`,
      5,
    );
    await until(() => seen('missing').size >= MISSING_IMAGE_PODS, 120_000, 'missing-image pods scheduled');
    const missingManifestGets = registry
      .accessLog()
      .filter((e) => e.method === 'GET' && e.path.startsWith('/v2/does-not-exist/manifests/')).length;

    const aloneL = latencies(alone, seen('ordinary-alone'));
    const withL = latencies(withHostile, seen('ordinary-with-hostile'));
    const afterL = latencies(aloneAfter, seen('ordinary-alone-after'));
    for (const [what, xs] of [
      ['alone', aloneL],
      ['with hostile', withL],
      ['alone again', afterL],
    ] as const) {
      const q = (n: number): number => Math.round(percentile(xs, n));
      log(`hostile: ordinary ${what}: p50 ${q(50)} ms, p90 ${q(90)} ms, p99 ${q(99)} ms, max ${q(100)} ms`);
    }
    const hostileSeen = new Map<string, number>();
    for (const ns of hostileNamespaces) for (const [name, t] of seen(ns)) hostileSeen.set(`${ns}/${name}`, t);
    const hostileL = latencies(hostileCreated, hostileSeen);
    const missingL = latencies(missingCreated, seen('missing'));
    const p = percentile;
    return [
      {
        name: 'hostile_p99_scheduled_ordinary_alone_ms',
        value: p(aloneL, 99),
        unit: 'ms',
        baseline: `${ORDINARY_PODS} pods paced ${PACED_PER_S}/s, warm cache, no hostile pods`,
      },
      {
        name: 'hostile_p99_scheduled_ordinary_with_hostile_ms',
        value: p(withL, 99),
        unit: 'ms',
        baseline: `same, while ${HOSTILE_NAMESPACES} other namespaces x ${HOSTILE_PODS} pods wait on 2 registries that never answer`,
      },
      {
        name: 'hostile_p99_scheduled_ordinary_alone_again_ms',
        value: p(afterL, 99),
        unit: 'ms',
        baseline: 'the alone batch repeated after the hostile pods were released (run-to-run spread)',
      },
      {
        name: 'hostile_p99_ratio_vs_alone_again',
        value: p(withL, 99) / p(afterL, 99),
        unit: 'ratio',
        baseline: 'the alone batch repeated after the hostile pods were released, same run',
      },
      {
        name: 'hostile_p50_scheduled_ordinary_alone_ms',
        value: p(aloneL, 50),
        unit: 'ms',
      },
      {
        name: 'hostile_p50_scheduled_ordinary_with_hostile_ms',
        value: p(withL, 50),
        unit: 'ms',
      },
      {
        name: 'hostile_p99_ratio_vs_without_hostile',
        value: p(withL, 99) / p(aloneL, 99),
        unit: 'ratio',
        goal: { op: '<=', value: 2 },
        baseline: 'same ordinary pods without the hostile ones, same run',
      },
      {
        name: 'hostile_pods_scheduled_when_ordinary_done',
        value: hostileDoneWhenOrdinaryDone,
        unit: 'pods',
        baseline: `of ${HOSTILE_NAMESPACES * HOSTILE_PODS}; they wait on the per-pod deadline, the ordinary pods do not wait on them`,
      },
      {
        name: 'hostile_pods_max_create_to_scheduled_s',
        value: (hostileL.at(-1) ?? Number.NaN) / 1000,
        unit: 's',
        baseline: `${HOSTILE_NAMESPACES * HOSTILE_PODS} pods, 15 s per-pod deadline, 6 inspected at a time (8 workers less a quarter)`,
      },
      {
        name: 'missing_image_max_create_to_scheduled_ms',
        value: missingL.at(-1) ?? Number.NaN,
        unit: 'ms',
        goal: { op: '<=', value: 2000 },
        baseline: `${MISSING_IMAGE_PODS} pods whose image does not exist (permanent error: no retries)`,
      },
      {
        name: 'missing_image_manifest_requests_per_pod',
        value: missingManifestGets / MISSING_IMAGE_PODS,
        unit: 'requests',
        baseline: 'same image for every pod: the negative cache (1 s) may spare some',
      },
    ];
  } finally {
    watches.abort();
    operator?.kill('SIGTERM');
    await Promise.all([silent.close(), silent2.close()]);
    await registry.stop().catch(() => undefined);
    await client.close();
    await cluster.stop({ wipe: true });
  }
}
