// `npm run bench -- nodepool`: the NodePool side at scale. One real management cluster with 500 NodePools
// (25 hosted clusters x 20); the bench plays the Node Tuning Operator by writing status ConfigMaps itself, and
// watches the NodePools independently of the controller to time each status change -> NodePool condition, and to
// count NodePool writes (MODIFIED events) per status change and for timestamp-only (heartbeat) changes.
// Reconciles are counted per phase (a status change should cost one). BENCH_NODEPOOL_WORKERS=n overrides the
// controller's default number of workers; BENCH_NODEPOOL_COMPARE_WORKERS=8,64,8,64 adds one burst per entry, by a
// fresh controller with that many workers, so settings are compared in one run. The burst floor (the same writes
// without a controller or any watch, measured before the controller starts and again after it stopped) shows what
// this machine's API server allows any controller; the burst goal is relative to it. A third floor round writes, in
// each NodePool, the controller's own conditions instead of one small one (burst_p99_vs_floor_same_writes_ratio):
// the NodePool write a controller cannot avoid. `[bench nodepool] ...
// at monotonic N us` lines on stderr mark the floor and burst phases on the clock of a `--cpu-prof` profile.
import { performance } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { startDevCluster } from '../src/devcluster/cluster.js';
import {
  ConfigMaps,
  KubeClient,
  type KubeObject,
  type Logger,
  Namespaces,
  ResourceClient,
  SharedInformerFactory,
} from '../src/runtime/index.js';
import type {
  ConfigMap,
  HostedControlPlane,
  NodePool,
  NodePoolCondition,
  PerformanceProfileStatus,
} from '../src/nodepool/api/types.js';
import { ANNOTATIONS, APPLIED_SUCCESSFULLY_CONDITION, DATA_KEYS, LABELS } from '../src/nodepool/constants.js';
import { performanceProfileManifest } from '../src/demo/hosted-cluster-pair.js';
import { installNodePoolCrds } from '../src/nodepool/api/install.js';
import { hostedControlPlaneNamespace } from '../src/nodepool/names.js';
import { createNodePoolController } from '../src/nodepool/management/nodepool-controller.js';
import { nextProfileStatus, type ProfileState } from '../src/nodepool/tuning/profile-status.js';
import { HostedControlPlanes, NodePools } from '../src/nodepool/resources.js';
import { desiredStatusConfigMap } from '../src/nodepool/status-configmap.js';
import type { BenchMetric, BenchResult } from './types.js';

const CLUSTERS = 25;
const POOLS_PER_CLUSTER = 20;
const PACED_PER_SECOND = 50;
const NS = 'clusters';

interface Pool {
  readonly key: string;
  readonly name: string;
  readonly hcpNs: string;
  readonly profile: string;
  status?: PerformanceProfileStatus;
  mirror?: ConfigMap;
  statusCm?: ConfigMap;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

async function inBatches<T>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

/** Runs `fn` over `items` with at most `concurrency` calls in flight. */
async function pooled<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) await fn(items[i] as T);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Reconciles counted so far in a controller's registry. */
async function reconcilesIn(registry: Registry): Promise<number> {
  const metric = await registry.getSingleMetric('controller_runtime_reconcile_total')?.get();
  return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

/**
 * Logs a phase boundary on the monotonic clock a V8 CPU profile (`--cpu-prof`) uses, in microseconds, so a profile
 * of the bench can be cut to one phase.
 */
function mark(what: string): void {
  process.stderr.write(`[bench nodepool] ${what} at monotonic ${process.hrtime.bigint() / 1000n} us\n`);
}

async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function run(): Promise<BenchResult> {
  const cluster = await startDevCluster({
    name: `bench-nodepool-${process.pid}`,
    nodes: 'none',
    scheduler: false,
    kwok: false,
    controllerManager: false,
    log: (l) => process.stderr.write(`[bench cluster] ${l}\n`),
  });
  const client = new KubeClient(await cluster.kubeConfig(), { userAgent: 'tessera-bench' });
  // The controller has its own connections, as in production (another process than the NTO the bench plays): its
  // writes do not queue behind the bench's 500 status ConfigMap updates in one connection pool.
  const controllerClient = new KubeClient(await cluster.kubeConfig(), { userAgent: 'tessera-nodepool' });
  const stop = new AbortController();
  const running: Promise<void>[] = [];
  try {
    await installNodePoolCrds(client, 'management');
    const namespaces = new ResourceClient<KubeObject>(client, Namespaces);
    const configMaps = new ResourceClient<ConfigMap>(client, ConfigMaps);
    const nodePools = new ResourceClient<NodePool>(client, NodePools);
    const hcps = new ResourceClient<HostedControlPlane>(client, HostedControlPlanes);

    const pools: Pool[] = [];
    await namespaces.create({ metadata: { name: NS } });
    for (let c = 0; c < CLUSTERS; c++) {
      const hc = `hc${c}`;
      const hcpNs = hostedControlPlaneNamespace(NS, hc);
      await namespaces.create({ metadata: { name: hcpNs } });
      await hcps.create({
        metadata: {
          name: hc,
          namespace: hcpNs,
          annotations: { [ANNOTATIONS.hostedClusterOnHCP]: `${NS}/${hc}` },
        },
        spec: {},
      });
      for (let p = 0; p < POOLS_PER_CLUSTER; p++) {
        const name = `${hc}-np${p}`;
        pools.push({ key: `${NS}/${name}`, name, hcpNs, profile: `pp-${name}` });
      }
    }
    const clusterOf = (pool: Pool): string => pool.name.slice(0, pool.name.indexOf('-np'));
    await inBatches(pools, 25, async (pool) => {
      await configMaps.create({
        metadata: { name: `${pool.profile}-tuning`, namespace: NS },
        data: { [DATA_KEYS.tuning]: performanceProfileManifest(pool.profile, pool.name) },
      });
      await nodePools.create({
        metadata: { name: pool.name, namespace: NS },
        spec: { clusterName: clusterOf(pool), tuningConfig: [{ name: `${pool.profile}-tuning` }] },
      });
    });

    // Baseline, same cluster, before the controller runs: the bench itself writes every NodePool status once,
    // with as many requests in flight as the controller has workers. This is the API server's own pace.
    const baselineLatencies: number[] = [];
    const baselineStart = performance.now();
    await pooled(pools, 4, async (pool) => {
      const t0 = performance.now();
      await nodePools.mergePatch(
        { namespace: NS, name: pool.name },
        {
          status: {
            conditions: [
              {
                type: 'BenchBaseline',
                status: 'True',
                reason: 'Bench',
                lastTransitionTime: new Date().toISOString(),
              },
            ],
          },
        },
        { subresource: 'status' },
      );
      baselineLatencies.push(performance.now() - t0);
    });
    const baselinePerSecond = pools.length / ((performance.now() - baselineStart) / 1000);
    baselineLatencies.sort((a, b) => a - b);

    // The floor of a burst on this machine, before the controller runs: the same number of ConfigMap updates at
    // once, each followed by its NodePool status write as soon as it returns, as a controller with no watch delay,
    // no queue and no work of its own would write. Every burst latency below includes these two writes (and two
    // watch deliveries this floor leaves out), so no controller's burst p99 can be under this floor's here.
    const floorPayload = 'x'.repeat(2048);
    await inBatches(pools, 25, async (pool) => {
      await configMaps.create({
        metadata: { name: `floor-${pool.name}`, namespace: NS },
        data: { status: `${floorPayload}0` },
      });
    });
    const floorCondition = (): NodePoolCondition => ({
      type: 'BenchBaseline',
      status: 'False',
      reason: 'BenchFloor',
      lastTransitionTime: new Date().toISOString(),
    });
    /**
     * One floor round (no controller or watch running): each latency is one ConfigMap write then its NodePool's,
     * which sets the conditions `conditionsOf` gives (by default one condition of the bench's own).
     */
    const measureFloor = async (
      round: number,
      conditionsOf: (pool: Pool) => NodePoolCondition[] = () => [floorCondition()],
    ): Promise<number[]> => {
      mark(`floor ${round} start`);
      const latencies = await Promise.all(
        pools.map(async (pool) => {
          const t0 = performance.now();
          await configMaps.mergePatch(
            { namespace: NS, name: `floor-${pool.name}` },
            { data: { status: `${floorPayload}${round}` } },
          );
          await nodePools.mergePatch(
            { namespace: NS, name: pool.name },
            { status: { conditions: conditionsOf(pool) } },
            { subresource: 'status' },
          );
          return performance.now() - t0;
        }),
      );
      mark(`floor ${round} end`);
      return latencies.sort((a, b) => a - b);
    };
    const floorLatencies = await measureFloor(1);

    // Independent observer: every NodePool MODIFIED event, and the summary condition it carries.
    const observerFactory = new SharedInformerFactory({ client });
    const observed = observerFactory.informerFor<NodePool>({ type: NodePools, namespace: NS });
    const summaryOf = (np: NodePool): string => {
      const c = np.status?.conditions?.find((x) => x.type === APPLIED_SUCCESSFULLY_CONDITION);
      return c ? `${c.status}/${c.reason ?? ''}` : '';
    };
    let modified = 0;
    const waiters = new Map<string, { want: string; t0: number; done: (ms: number) => void }>();
    observed.addEventHandler({
      onUpdate: (_old, np) => {
        modified++;
        const key = `${np.metadata.namespace ?? ''}/${np.metadata.name ?? ''}`;
        const w = waiters.get(key);
        if (w && summaryOf(np) === w.want) {
          waiters.delete(key);
          w.done(performance.now() - w.t0);
        }
      },
    });
    // The observer and the controller stop before the second floor round, which runs with nothing watching.
    const observerStop = new AbortController();
    const controllerStop = new AbortController();
    stop.signal.addEventListener('abort', () => {
      observerStop.abort();
      controllerStop.abort();
    });
    const observerRunning = observerFactory.start(observerStop.signal);
    running.push(observerRunning);
    await observerFactory.waitForCacheSync(stop.signal);

    const registry = new Registry();
    // When the controller's NodePool status write for a key last returned (from its info log line), to split each
    // burst latency into the controller's part and the watch delivery to the observer.
    const nodePoolWrittenAt = new Map<string, number>();
    const noop = (): void => undefined;
    const writeRecorder: Logger = {
      error: noop,
      warn: noop,
      debug: noop,
      trace: noop,
      info: (obj, msg) => {
        const key = (obj as { nodePool?: unknown }).nodePool;
        if (msg === 'updated NodePool performance-profile conditions' && typeof key === 'string')
          nodePoolWrittenAt.set(key, performance.now());
      },
      child: () => writeRecorder,
    };
    const reconciles = (): Promise<number> => reconcilesIn(registry);
    const started = performance.now();
    // Cluster-wide, as deployed: users' ConfigMaps are cached only in namespaces whose NodePools name them.
    const controller = createNodePoolController({
      management: controllerClient,
      registry,
      staleAfterMs: 0,
      logger: writeRecorder,
      ...(process.env.BENCH_NODEPOOL_WORKERS ? { workers: Number(process.env.BENCH_NODEPOOL_WORKERS) } : {}),
    });
    const controllerRunning = controller.start(controllerStop.signal);
    running.push(controllerRunning);
    const current = (pool: Pool): string => {
      const np = observed.getIndexer().get(pool.key);
      return np ? summaryOf(np) : '';
    };
    // The controller mirrors each PerformanceProfile and reports "not reported yet" until a status exists.
    await waitFor('initial NodePool conditions', () => pools.every((p) => current(p).startsWith('Unknown/')));
    const mirrors = await configMaps.list({ labelSelector: `${LABELS.ppConfigMap}=true` });
    const mirrorByPool = new Map(
      mirrors.items.map((m) => [m.metadata.annotations?.[ANNOTATIONS.nodePool] ?? '', m]),
    );
    const initialMs = performance.now() - started;
    const initialReconciles = await reconciles();

    const now = (): number => Date.now();
    const statusFor = (pool: Pool, state: ProfileState, heartbeatOnly = false): PerformanceProfileStatus => {
      const next = nextProfileStatus({
        previous: pool.status,
        state,
        profileName: pool.profile,
        nodePoolName: pool.name,
        now: now(),
        heartbeatIntervalMs: heartbeatOnly ? 1 : 0,
      });
      pool.status = next.status;
      return next.status;
    };

    // Phase 0: NTO reports every profile Available (creates the status ConfigMaps).
    await inBatches(pools, 25, async (pool) => {
      const mirror = mirrorByPool.get(pool.key);
      if (!mirror) throw new Error(`bench: no mirrored PerformanceProfile ConfigMap for ${pool.key}`);
      pool.mirror = mirror;
      pool.statusCm = await configMaps.create(
        desiredStatusConfigMap(mirror, pool.profile, statusFor(pool, { kind: 'Available' })),
      );
    });
    await waitFor('all NodePools Available', () => pools.every((p) => current(p) === 'True/AsExpected'));
    await new Promise((r) => setTimeout(r, 500));

    /** How long the bench's own status ConfigMap writes took (the part of each latency the controller cannot help). */
    const statusWriteMs: number[] = [];
    const change = async (pool: Pool, state: ProfileState, want: string): Promise<number> => {
      const mirror = pool.mirror;
      const existing = pool.statusCm;
      if (!mirror || !existing) throw new Error(`bench: ${pool.key} has no status ConfigMap`);
      const desired = desiredStatusConfigMap(mirror, pool.profile, statusFor(pool, state));
      const latency = new Promise<number>((resolve) =>
        waiters.set(pool.key, { want, t0: performance.now(), done: resolve }),
      );
      const t0 = performance.now();
      pool.statusCm = await configMaps.update({ ...existing, data: desired.data });
      statusWriteMs.push(performance.now() - t0);
      return latency;
    };

    // Phase 1: paced meaningful changes, Available -> Degraded, one per NodePool.
    const degraded: ProfileState = {
      kind: 'Degraded',
      reason: 'TunedProfileDegraded',
      message: 'Tuned n Degraded Reason: bench.\n',
    };
    const modifiedBefore = modified;
    const reconcilesBeforePaced = await reconciles();
    const paced: Promise<number>[] = [];
    for (const pool of pools) {
      paced.push(change(pool, degraded, 'False/TunedProfileDegraded'));
      await new Promise((r) => setTimeout(r, 1000 / PACED_PER_SECOND));
    }
    const pacedLatencies = (await Promise.all(paced)).sort((a, b) => a - b);
    await new Promise((r) => setTimeout(r, 1000));
    const pacedWrites = modified - modifiedBefore;

    const pacedReconciles = (await reconciles()) - reconcilesBeforePaced;

    // Phase 2: all 500 back to Available at once.
    statusWriteMs.length = 0;
    const reconcilesBeforeBurst = await reconciles();
    mark('burst start');
    const burstStart = performance.now();
    const burst = await Promise.all(
      pools.map((pool) => change(pool, { kind: 'Available' }, 'True/AsExpected')),
    );
    const burstMs = performance.now() - burstStart;
    mark('burst end');
    const burstLatencies = burst.sort((a, b) => a - b);
    const burstStatusWrites = statusWriteMs.sort((a, b) => a - b);
    const burstControllerMs = pools
      .map((p) => (nodePoolWrittenAt.get(p.key) ?? Number.NaN) - burstStart)
      .sort((a, b) => a - b);
    await new Promise((r) => setTimeout(r, 1000));

    const burstReconciles = (await reconciles()) - reconcilesBeforeBurst;

    // Phase 3: timestamp-only changes (NTO heartbeats) on every status ConfigMap.
    const reconcilesBefore = await reconciles();
    const modifiedBeforeHb = modified;
    await new Promise((r) => setTimeout(r, 1100)); // heartbeats land in a later second than the last write
    await inBatches(pools, 25, async (pool) => {
      const mirror = pool.mirror;
      const existing = pool.statusCm;
      if (!mirror || !existing) return;
      const desired = desiredStatusConfigMap(
        mirror,
        pool.profile,
        statusFor(pool, { kind: 'Available' }, true),
      );
      pool.statusCm = await configMaps.update({ ...existing, data: desired.data });
    });
    await waitFor(
      'controller to reconcile every heartbeat',
      async () => (await reconciles()) - reconcilesBefore >= pools.length,
    );
    await new Promise((r) => setTimeout(r, 1000));
    const heartbeatWrites = modified - modifiedBeforeHb;
    const heartbeatReconciles = (await reconciles()) - reconcilesBefore;

    const histogram = await registry.getSingleMetric('controller_runtime_reconcile_time_seconds')?.get();
    const sumOf = (suffix: string): number =>
      (histogram?.values ?? [])
        .filter(
          (v) =>
            (v as { metricName?: string }).metricName ===
            `controller_runtime_reconcile_time_seconds${suffix}`,
        )
        .reduce((sum, v) => sum + v.value, 0);
    const reconcileCount = sumOf('_count');
    const reconcileMeanMs = reconcileCount > 0 ? (sumOf('_sum') / reconcileCount) * 1000 : Number.NaN;
    controllerStop.abort();
    await controllerRunning;

    // BENCH_NODEPOOL_COMPARE_WORKERS=8,64,8,64: one more burst per entry, each by a fresh controller with that many
    // workers, in turn, so settings are compared under the same load (this machine is shared).
    const workerVariants = (process.env.BENCH_NODEPOOL_COMPARE_WORKERS ?? '')
      .split(',')
      .filter(Boolean)
      .map(Number);
    const variantBursts: { workers: number; p99: number }[] = [];
    for (const [round, workers] of workerVariants.entries()) {
      const variantRegistry = new Registry();
      const variantStop = new AbortController();
      stop.signal.addEventListener('abort', () => variantStop.abort());
      const variant = createNodePoolController({
        management: controllerClient,
        registry: variantRegistry,
        staleAfterMs: 0,
        logger: writeRecorder,
        workers,
      });
      const variantRunning = variant.start(variantStop.signal);
      running.push(variantRunning);
      // Its first pass looks at every NodePool (no writes: the conditions are current); the burst follows it.
      await waitFor(
        `first pass with ${workers} workers`,
        async () => (await reconcilesIn(variantRegistry)) >= pools.length,
      );
      for (let seen = -1, now = 0; seen !== now; now = await reconcilesIn(variantRegistry)) {
        seen = now;
        await new Promise((r) => setTimeout(r, 300));
      }
      const toDegraded = round % 2 === 0;
      mark(`burst with ${workers} workers start`);
      const latencies = await Promise.all(
        pools.map((pool) =>
          toDegraded
            ? change(pool, degraded, 'False/TunedProfileDegraded')
            : change(pool, { kind: 'Available' }, 'True/AsExpected'),
        ),
      );
      mark(`burst with ${workers} workers end`);
      variantBursts.push({
        workers,
        p99: percentile(
          latencies.sort((a, b) => a - b),
          99,
        ),
      });
      variantStop.abort();
      await variantRunning;
    }

    // The controller's own conditions as the burst left them, for the third floor round.
    const controllerConditions = new Map(
      pools.map((p) => [
        p.key,
        (observed.getIndexer().get(p.key)?.status?.conditions ?? []).filter(
          (c) => c.type !== 'BenchBaseline',
        ),
      ]),
    );
    observerStop.abort();
    await observerRunning;
    const floorAfterLatencies = await measureFloor(2);
    // The same floor, but each NodePool write carries what the controller's writes carry: its five conditions (each
    // with a new message and transition time, as a status change rewrites them) beside the bench's own. Round 1 and 2
    // write one small condition, a lighter NodePool write than any the controller can make.
    const floorSameWritesLatencies = await measureFloor(3, (pool) => {
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      return [
        ...(controllerConditions.get(pool.key) ?? []).map((c) => ({
          ...c,
          message: `${c.message ?? ''} (floor)`,
          lastTransitionTime: now,
        })),
        floorCondition(),
      ];
    });
    // The floor brackets the bursts in time (before the controller starts, after it stopped): the machine's load
    // drifts between the two.
    const floorP99 = (percentile(floorLatencies, 99) + percentile(floorAfterLatencies, 99)) / 2;

    const metrics: BenchMetric[] = [
      {
        name: 'p50_status_to_condition_ms',
        value: percentile(pacedLatencies, 50),
        unit: 'ms',
        baseline: `${pools.length} NodePools, ${PACED_PER_SECOND} status changes/s`,
      },
      {
        name: 'p99_status_to_condition_ms',
        value: percentile(pacedLatencies, 99),
        unit: 'ms',
        goal: { op: '<=', value: 1000 },
        baseline: `${pools.length} NodePools, ${PACED_PER_SECOND} status changes/s`,
      },
      {
        name: 'nodepool_writes_per_status_change',
        value: pacedWrites / pools.length,
        unit: 'writes',
        goal: { op: '==', value: 1 },
      },
      {
        name: 'nodepool_writes_for_timestamp_only_changes',
        value: heartbeatWrites,
        unit: 'writes',
        goal: { op: '==', value: 0 },
        baseline: `${pools.length} heartbeat-only status updates`,
      },
      {
        name: 'burst_p50_status_to_condition_ms',
        value: percentile(burstLatencies, 50),
        unit: 'ms',
        baseline: `${pools.length} status changes at once`,
      },
      {
        name: 'burst_p99_status_to_condition_ms',
        value: percentile(burstLatencies, 99),
        unit: 'ms',
        baseline: `${pools.length} status changes at once; its goal is relative to the floor of the same writes (burst_p99_vs_floor_same_writes_ratio)`,
      },
      { name: 'burst_all_reflected_ms', value: burstMs, unit: 'ms' },
      {
        name: 'burst_floor_p99_ms',
        value: percentile(floorLatencies, 99),
        unit: 'ms',
        baseline: `no controller: ${pools.length} ConfigMap updates at once, each followed at once by its NodePool status write (same run, before the controller starts)`,
      },
      {
        name: 'burst_floor_after_p99_ms',
        value: percentile(floorAfterLatencies, 99),
        unit: 'ms',
        baseline: 'the same floor once the controller and every watch stopped (same run, after the bursts)',
      },
      {
        name: 'burst_p99_vs_floor_ratio',
        value: percentile(burstLatencies, 99) / floorP99,
        unit: 'ratio',
        baseline:
          'burst p99 over the light floor p99 (mean of the rounds before and after the controller ran: one small condition per NodePool write, lighter than any write the controller makes), same run; the goal is on burst_p99_vs_floor_same_writes_ratio',
      },
      {
        name: 'burst_floor_same_writes_p99_ms',
        value: percentile(floorSameWritesLatencies, 99),
        unit: 'ms',
        baseline:
          'a third floor round after the second, each NodePool write carrying the controller’s five conditions',
      },
      {
        name: 'burst_p99_vs_floor_same_writes_ratio',
        value: percentile(burstLatencies, 99) / percentile(floorSameWritesLatencies, 99),
        unit: 'ratio',
        // Issue #21's floor: "the same 500 ConfigMap and NodePool writes with no controller at all".
        goal: { op: '<=', value: 1.25 },
        baseline: 'burst p99 over the third floor round (NodePool writes of the controller’s size)',
      },
      {
        name: 'burst_p99_vs_floor_before_ratio',
        value: percentile(burstLatencies, 99) / percentile(floorLatencies, 99),
        unit: 'ratio',
        baseline: 'burst p99 over the first floor round only (how this ratio was measured before)',
      },
      ...variantBursts.flatMap(({ workers, p99 }, round): BenchMetric[] => [
        {
          name: `compare_round${round + 1}_burst_p99_with_${workers}_workers_ms`,
          value: p99,
          unit: 'ms',
          baseline: 'BENCH_NODEPOOL_COMPARE_WORKERS: a fresh controller per round, after the main phases',
        },
        {
          name: `compare_round${round + 1}_burst_p99_vs_floor_with_${workers}_workers_ratio`,
          value: p99 / floorP99,
          unit: 'ratio',
        },
      ]),
      {
        name: 'burst_p99_status_to_nodepool_write_ms',
        value: percentile(burstControllerMs, 99),
        unit: 'ms',
        baseline: 'until the controller’s NodePool status write returned (the rest is watch delivery)',
      },
      {
        name: 'burst_status_configmap_write_p99_ms',
        value: percentile(burstStatusWrites, 99),
        unit: 'ms',
        baseline: `the bench's own ${pools.length} status ConfigMap updates at once: part of every burst latency`,
      },
      {
        name: 'burst_throughput_ratio_vs_direct_writes',
        value: pools.length / (burstMs / 1000) / baselinePerSecond,
        unit: 'ratio',
        baseline: `bench writing ${pools.length} NodePool statuses directly, 4 in flight, same run: ${baselinePerSecond.toFixed(1)}/s`,
      },
      { name: 'direct_nodepool_status_write_p50_ms', value: percentile(baselineLatencies, 50), unit: 'ms' },
      { name: 'direct_nodepool_status_write_p99_ms', value: percentile(baselineLatencies, 99), unit: 'ms' },
      {
        name: 'initial_sync_all_nodepools_ms',
        value: initialMs,
        unit: 'ms',
        baseline: `${pools.length} NodePools, mirrors created`,
      },
      { name: 'nodepool_count', value: pools.length, unit: 'count' },
      {
        name: 'tuning_configmap_namespaces_watched',
        value: controller.tuningNamespaces().length,
        unit: 'count',
        goal: { op: '==', value: 1 },
        baseline: `${CLUSTERS + 1} namespaces with ConfigMaps, NodePools in one`,
      },
      { name: 'reconciles_total', value: reconcileCount, unit: 'count' },
      {
        name: 'reconciles_per_nodepool',
        value: reconcileCount / pools.length,
        unit: 'count',
        baseline: 'initial sync, status creation, paced change, burst change, heartbeat',
      },
      {
        name: 'initial_sync_reconciles_per_nodepool',
        value: initialReconciles / pools.length,
        unit: 'count',
      },
      { name: 'reconciles_per_paced_status_change', value: pacedReconciles / pools.length, unit: 'count' },
      {
        name: 'reconciles_per_burst_status_change',
        value: burstReconciles / pools.length,
        unit: 'count',
        goal: { op: '==', value: 1 },
        baseline: 'one status change per NodePool, all at once',
      },
      {
        name: 'reconciles_per_heartbeat',
        value: heartbeatReconciles / pools.length,
        unit: 'count',
      },
      {
        name: 'reconcile_mean_ms',
        value: reconcileMeanMs,
        unit: 'ms',
        baseline: 'includes the NodePool status write',
      },
    ];
    return { metrics };
  } finally {
    stop.abort();
    await Promise.allSettled(running);
    await client.close();
    await controllerClient.close();
    await cluster.stop({ wipe: true });
  }
}
