// `npm run bench -- updatestatus [command|controller|informers|informers-no-turns|informers-listmap ...]` (all
// without a name):
// - command: `tessera upgrade status --details=all --mock-clusterversion` on a synthetic cluster scaled from a
//   shared oc snapshot (5,000 nodes in 10 pools, 60 operators; then 10,000 nodes): whole command (read + parse +
//   assess + render) against the floor of only reading and parsing the same files. Each measurement runs in a fresh
//   child process so peak RSS belongs to that work alone; times are medians.
// - controller: the update status controller on a real API server, 100 node changes/s on 5,000 nodes.
// - informers: the same with three informers writing at once (the controller's, pod placement's, NodePools'),
//   taking write turns through their Lease as deployed (src/updatestatus/write-turn.ts).
// - informers-no-turns: informers again with writers that apply at once (metrics `informers_noturns_*`, no goals).
// - informers-listmap: informers again with the CRD as it was (insight lists a map keyed by uid), to compare under
//   the same load (metrics `informers_listmap_*`, no goals).
// TESSERA_BENCH_UPDATESTATUS_DUMP=FILE writes the informers' final UpdateStatus there, managedFields included (the
// input of bench/tools/updatestatus-apply-cost.ts).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse, stringify } from 'yaml';
import { assessUpdateStatus, snapshotNow } from '../src/updatestatus/assess.js';
import type { ClusterOperator, MachineConfig, MachineConfigPool, Node } from '../src/updatestatus/inputs.js';
import { Annotations } from '../src/updatestatus/nodestate.js';
import { renderUpdateStatus } from '../src/updatestatus/render.js';
import { loadSnapshot, parseYaml, snapshotPaths } from '../src/updatestatus/snapshot.js';
import { fixturePath } from '../test/support/fixtures.js';
import { type DevCluster, startDevCluster } from '../src/devcluster/cluster.js';
import { apiServerCpuProfile } from './tools/apiserver-profile.js';
import { SharedInformerFactory } from '../src/runtime/cache/informer-factory.js';
import { KubeClient } from '../src/runtime/client.js';
import type { KubeObject } from '../src/runtime/object.js';
import { ResourceClient } from '../src/runtime/resource-client.js';
import { Nodes, Namespaces } from '../src/runtime/resources.js';
import { UpdateStatuses } from '../src/updatestatus/api/install.js';
import { updateStatusCrd } from '../src/updatestatus/api/crd.js';
import { applyCrds } from '../src/runtime/crds.js';
import type { UpdateStatus } from '../src/updatestatus/api/schema.js';
import { createUpdateStatusController } from '../src/updatestatus/controller.js';
import { InsightPublisher, WRITE_TURN_NAMESPACE } from '../src/updatestatus/informer.js';
import { Manager } from '../src/runtime/manager.js';
import { realClock } from '../src/runtime/clock.js';
import { createLogger } from '../src/runtime/logging.js';
import { RegistryFailureWindow, podPlacementContribution } from '../src/podplacement/update-insights.js';
import { installNodePoolCrds } from '../src/nodepool/api/install.js';
import type { NodePool } from '../src/nodepool/api/types.js';
import { NodePools } from '../src/nodepool/resources.js';
import { addNodePoolUpdateInsights } from '../src/nodepool/management/update-insights.js';
import {
  ClusterOperators,
  ClusterVersions,
  MachineConfigPools,
  MachineConfigs,
  installOpenShiftDevCrds,
} from '../src/updatestatus/api/dev-crds.js';
import type { BenchMetric, BenchResult } from './types.js';

const SOURCE_CASE = '4.16.0-ec2-control-plane-updated-pdb-prohibits-draining';
const POOLS = 10;
const OPERATORS = 60;
const RUNS = 9;

interface Measurement {
  readonly ms: number;
  readonly maxRssMb: number;
  readonly outputBytes: number;
}

type Doc = Record<string, unknown>;

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Writes a snapshot case with `nodeCount` nodes in POOLS pools and OPERATORS operators; returns its -cv path. */
export async function writeSyntheticCase(dir: string, nodeCount: number): Promise<string> {
  const src = snapshotPaths(fixturePath(`oc-upgrade-status/${SOURCE_CASE}-cv.yaml`));
  const read = async (file: string) => parse(await readFile(file, 'utf8')) as Doc;
  const [cv, coList, mcpList, mcList, nodeList] = await Promise.all([
    read(src.clusterVersion),
    read(src.clusterOperators),
    read(src.machineConfigPools),
    read(src.machineConfigs),
    read(src.nodes),
  ]);
  const operators = coList.items as ClusterOperator[];
  const scaledOperators = Array.from({ length: OPERATORS }, (_, i) => {
    const base = clone(operators[i % operators.length] as ClusterOperator) as Doc & { metadata: Doc };
    if (i >= operators.length) base.metadata.name = `${String(base.metadata.name)}-${i}`;
    return base;
  });

  const pools = mcpList.items as (MachineConfigPool & Doc)[];
  const master = pools.find((p) => p.metadata?.name === 'master');
  const worker = pools.find((p) => p.metadata?.name === 'worker');
  if (!master || !worker) throw new Error(`${SOURCE_CASE} lacks a master or worker pool`);
  const workerNodes = (nodeList.items as Node[]).filter(
    (n) =>
      n.metadata?.labels?.['node-role.kubernetes.io/worker'] !== undefined &&
      n.metadata?.labels?.['node-role.kubernetes.io/master'] === undefined,
  );
  const masterNodes = (nodeList.items as Node[]).filter(
    (n) => n.metadata?.labels?.['node-role.kubernetes.io/master'] !== undefined,
  );

  const machineConfigs = [...(mcList.items as MachineConfig[])];
  const outPools: Doc[] = [clone(master) as Doc];
  const nodes: Doc[] = masterNodes.map((n) => slim(clone(n) as Doc));
  const workerPoolNames = Array.from({ length: POOLS - 1 }, (_, i) => (i === 0 ? 'worker' : `worker-${i}`));
  const perPool = Math.ceil((nodeCount - nodes.length) / workerPoolNames.length);
  for (const name of workerPoolNames) {
    const pool = clone(worker) as Doc & { metadata: Doc; spec: Doc };
    pool.metadata.name = name;
    if (name !== 'worker')
      pool.spec.nodeSelector = { matchLabels: { [`node-role.kubernetes.io/${name}`]: '' } };
    outPools.push(pool);
    for (let i = 0; i < perPool && nodes.length < nodeCount; i++) {
      const node = slim(clone(workerNodes[(i + name.length) % workerNodes.length] as Doc)) as Doc & {
        metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
      };
      node.metadata.name = `${name}-node-${String(i).padStart(5, '0')}`;
      if (name !== 'worker') {
        node.metadata.labels = { ...node.metadata.labels, [`node-role.kubernetes.io/${name}`]: '' };
        delete node.metadata.labels['node-role.kubernetes.io/worker'];
      }
      nodes.push(node);
    }
  }
  // Custom pools render their own configs; give each the worker configs' versions under its own names.
  for (const node of nodes as Node[]) {
    for (const key of [Annotations.currentConfig, Annotations.desiredConfig]) {
      const config = node.metadata?.annotations?.[key];
      if (config && !machineConfigs.some((m) => m.metadata?.name === config)) {
        machineConfigs.push({ metadata: { name: config, annotations: {} } });
      }
    }
  }

  const base = path.join(dir, `scaled-${nodeCount}`);
  const list = (items: unknown[]) => ({ apiVersion: 'v1', kind: 'List', items });
  writeFileSync(`${base}-cv.yaml`, stringify(cv));
  writeFileSync(`${base}-co.yaml`, stringify(list(scaledOperators)));
  writeFileSync(`${base}-mcp.yaml`, stringify(list(outPools)));
  writeFileSync(`${base}-mc.yaml`, stringify(list(machineConfigs)));
  writeFileSync(`${base}-node.yaml`, stringify(list(nodes)));
  return `${base}-cv.yaml`;
}

/** Image lists dominate node size and nothing reads them; real dumps vary, so leave them out. */
function slim(node: Doc): Doc {
  const status = node.status as Doc | undefined;
  if (status) delete status.images;
  return node;
}

async function child(mode: 'command' | 'parse', cvPath: string): Promise<void> {
  const started = performance.now();
  let outputBytes = 0;
  if (mode === 'parse') {
    const paths = snapshotPaths(cvPath);
    const files = [
      paths.clusterVersion,
      paths.clusterOperators,
      paths.machineConfigPools,
      paths.machineConfigs,
      paths.nodes,
    ];
    const docs = await Promise.all(files.map(async (f) => parseYaml(await readFile(f, 'utf8'))));
    outputBytes = docs.length;
  } else {
    const { snapshot } = await loadSnapshot(cvPath);
    const text = renderUpdateStatus(assessUpdateStatus(snapshot, snapshotNow(snapshot)), 'all');
    outputBytes = Buffer.byteLength(text);
  }
  const ms = performance.now() - started;
  const measurement: Measurement = { ms, maxRssMb: process.resourceUsage().maxRSS / 1024, outputBytes };
  process.stdout.write(JSON.stringify(measurement));
}

function measure(mode: 'command' | 'parse', cvPath: string): Measurement {
  const runs: Measurement[] = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', mode, cvPath],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      },
    );
    runs.push(JSON.parse(out) as Measurement);
  }
  const byTime = [...runs].sort((a, b) => a.ms - b.ms);
  const median = byTime[Math.floor(byTime.length / 2)] as Measurement;
  return { ...median, maxRssMb: Math.max(...runs.map((r) => r.maxRssMb)) };
}

const CONTROLLER_NODES = 5_000;
const CHANGES_PER_SECOND = 100;
const CHANGE_SECONDS = 10;

function percentile(sorted: readonly number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

export async function inBatches<T>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

/** A dev cluster in the middle of an update: 5,000 nodes in 10 pools (master + 9 worker pools), all updating. */
export interface UpdatingCluster {
  readonly cluster: DevCluster;
  readonly client: KubeClient;
  readonly nodes: ResourceClient<KubeObject>;
  /** The worker nodes, in the order the change batches take them. */
  readonly workers: readonly string[];
  /** Marks `name` (a worker node) updated: its current config becomes its pool's new one. */
  readonly finishNode: (name: string) => Promise<unknown>;
}

/**
 * How the UpdateStatus CRD declares each informer's insight list: `atomic` as Tessera's CRD does, or `map` keyed by
 * uid as the reference API and Tessera before it (one managedFields entry per field of every insight), to compare.
 */
export type InsightListType = 'atomic' | 'map';

/** Tessera's UpdateStatus CRD with the insight lists declared as `listType`. */
function updateStatusCrdWith(listType: InsightListType): KubeObject {
  const crd = updateStatusCrd() as unknown as KubeObject;
  if (listType === 'atomic') return crd;
  const visit = (node: unknown, key: string): void => {
    if (node === null || typeof node !== 'object') return;
    const schema = node as Record<string, unknown>;
    if (key === 'insights' && schema.type === 'array') {
      schema['x-kubernetes-list-type'] = 'map';
      schema['x-kubernetes-list-map-keys'] = ['uid'];
    }
    for (const [k, v] of Object.entries(schema)) visit(v, k);
  };
  visit(crd, '');
  return crd;
}

/** CPU seconds process `pid` has used (/proc/<pid>/stat utime + stime), NaN where /proc cannot tell. */
function processCpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime are fields 14 and 15, in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

export async function startUpdatingCluster(
  name: string,
  insightLists: InsightListType = 'atomic',
): Promise<UpdatingCluster> {
  const cluster = await startDevCluster({
    name,
    nodes: 'none',
    apiServerProfiling: Boolean(process.env.TESSERA_BENCH_APISERVER_PPROF),
    stateRoot: mkdtempSync(path.join(os.tmpdir(), 'tessera-bench-us-')),
  });
  const client = new KubeClient(await cluster.kubeConfig());
  try {
    await installOpenShiftDevCrds(client);
    await applyCrds(client, [updateStatusCrdWith(insightLists)], { fieldManager: 'tessera-updatestatus' });
    const pools = Array.from({ length: POOLS }, (_, i) =>
      i === 0 ? 'master' : i === 1 ? 'worker' : `pool-${i}`,
    );
    const cv = {
      metadata: { name: 'version' },
      status: {
        desired: { version: '4.16.1' },
        history: [
          {
            state: 'Partial',
            startedTime: new Date(Date.now() - 3_600_000).toISOString(),
            version: '4.16.1',
            image: 'new',
          },
          {
            state: 'Completed',
            startedTime: '2024-01-01T00:00:00Z',
            completionTime: '2024-01-01T01:00:00Z',
            version: '4.16.0',
            image: 'old',
          },
        ],
        conditions: [
          { type: 'Progressing', status: 'True', lastTransitionTime: new Date().toISOString() },
          { type: 'Failing', status: 'False', lastTransitionTime: new Date().toISOString() },
        ],
      },
    };
    await new ResourceClient<KubeObject>(client, ClusterVersions).create(cv);
    await inBatches(
      Array.from({ length: OPERATORS }, (_, i) => i),
      20,
      (i) =>
        new ResourceClient<KubeObject>(client, ClusterOperators).create({
          metadata: {
            name: `operator-${i}`,
            annotations: { 'include.release.openshift.io/self-managed-high-availability': 'true' },
          },
          status: {
            versions: [{ name: 'operator', version: '4.16.1' }],
            conditions: [
              { type: 'Available', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' },
              { type: 'Progressing', status: 'False', lastTransitionTime: '2024-01-01T00:00:00Z' },
            ],
          },
        } as KubeObject),
    );
    const mcs = new ResourceClient<KubeObject>(client, MachineConfigs);
    const mcps = new ResourceClient<KubeObject>(client, MachineConfigPools);
    for (const pool of pools) {
      for (const [suffix, version] of [
        ['old', '4.16.0'],
        ['new', '4.16.1'],
      ] as const) {
        await mcs.create({
          metadata: {
            name: `rendered-${pool}-${suffix}`,
            annotations: { [Annotations.releaseImageVersion]: version },
          },
        });
      }
      await mcps.create({
        metadata: { name: pool },
        spec: {
          configuration: { name: `rendered-${pool}-new` },
          nodeSelector: { matchLabels: { [`node-role.kubernetes.io/${pool}`]: '' } },
        },
      } as KubeObject);
    }
    const nodeNames = Array.from(
      { length: CONTROLLER_NODES },
      (_, i) => `node-${String(i).padStart(5, '0')}`,
    );
    const poolOf = (i: number) => pools[i < 3 ? 0 : 1 + (i % (POOLS - 1))] ?? 'worker';
    const nodes = new ResourceClient<KubeObject>(client, Nodes);
    await inBatches(
      nodeNames.map((name, i) => ({ name, pool: poolOf(i) })),
      50,
      ({ name, pool }) =>
        nodes.create({
          metadata: {
            name,
            labels: { [`node-role.kubernetes.io/${pool}`]: '' },
            annotations: {
              [Annotations.currentConfig]: `rendered-${pool}-old`,
              [Annotations.desiredConfig]: `rendered-${pool}-new`,
              [Annotations.state]: 'Working',
            },
          },
        }),
    );

    const finishNode = (name: string) => {
      const pool = poolOf(nodeNames.indexOf(name));
      return nodes.mergePatch(
        { name },
        {
          metadata: {
            annotations: {
              [Annotations.currentConfig]: `rendered-${pool}-new`,
              [Annotations.state]: 'Done',
            },
          },
        },
      );
    };
    return { cluster, client, nodes, workers: nodeNames.filter((_, i) => i >= 3), finishNode };
  } catch (err) {
    await client.close();
    await cluster.stop({ wipe: true });
    throw err;
  }
}

/**
 * The controller on a real API server: 5,000 nodes in 10 pools, all updating; then 100 nodes per second finish
 * their update for 10 s. Latency: from each batch's last write to the first UpdateStatus showing the batch in
 * the pools' counts. Writes: status writes per second over the changing period.
 */
export async function controllerBench(): Promise<BenchMetric[]> {
  const { cluster, client, workers, finishNode } = await startUpdatingCluster('bench-updatestatus');
  const stop = new AbortController();
  // Seven informers and the controller listen on this one signal.
  setMaxListeners(32, stop.signal);
  const running: Promise<void>[] = [];
  try {
    const informers = new SharedInformerFactory({ client });
    const { controller, stats } = createUpdateStatusController({
      client,
      informers,
      minWriteIntervalMs: 1_000,
    });
    running.push(informers.start(stop.signal), controller.start(stop.signal));
    const statuses = new ResourceClient<UpdateStatus & KubeObject>(client, UpdateStatuses);
    const updatedCount = async (): Promise<number> => {
      const obj = await statuses.get({ name: 'cluster' }).catch(() => undefined);
      let sum = 0;
      for (const wp of obj?.status?.workerPools ?? []) {
        const mcp = wp.informers?.[0]?.insights?.find((i) => i.insight.type === 'MachineConfigPool')?.insight
          .machineConfigPool;
        const count = (t: string) => mcp?.summaries?.find((x) => x.type === t)?.count ?? 0;
        sum += count('Total') - count('Outdated');
      }
      return sum;
    };
    // Initial convergence: every worker node known and still updating.
    const initialDeadline = Date.now() + 120_000;
    while (Date.now() < initialDeadline) {
      const obj = await statuses.get({ name: 'cluster' }).catch(() => undefined);
      const total = (obj?.status?.workerPools ?? []).reduce((n, wp) => {
        const mcp = wp.informers?.[0]?.insights?.find((i) => i.insight.type === 'MachineConfigPool')?.insight
          .machineConfigPool;
        return n + (mcp?.summaries?.find((x) => x.type === 'Total')?.count ?? 0);
      }, 0);
      if (total === CONTROLLER_NODES - 3) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 1_500));

    const latencies: number[] = [];
    const writesBefore = stats.writes;
    const changeStart = performance.now();
    let expected = await updatedCount();
    for (let second = 0; second < CHANGE_SECONDS; second++) {
      const batchStart = performance.now();
      const batch = workers.slice(second * CHANGES_PER_SECOND, (second + 1) * CHANGES_PER_SECOND);
      await inBatches(batch, 25, finishNode);
      const written = performance.now();
      expected += batch.length;
      while ((await updatedCount()) < expected && performance.now() - written < 10_000) {
        await new Promise((r) => setTimeout(r, 25));
      }
      latencies.push(performance.now() - written);
      const rest = 1_000 - (performance.now() - batchStart);
      if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    }
    const seconds = (performance.now() - changeStart) / 1000;
    const writesPerSecond = (stats.writes - writesBefore) / seconds;
    const sorted = [...latencies].sort((a, b) => a - b);
    return [
      {
        name: 'controller_p99_reflect_ms_5k_nodes_100_changes_per_s',
        value: percentile(sorted, 99),
        unit: 'ms',
        goal: { op: '<=', value: 2_000 },
        baseline: 'from the last node patch of a batch to UpdateStatus counting it',
      },
      { name: 'controller_max_reflect_ms', value: sorted[sorted.length - 1] ?? Number.NaN, unit: 'ms' },
      {
        name: 'controller_status_writes_per_s',
        value: writesPerSecond,
        unit: 'writes/s',
        goal: { op: '<=', value: 1 },
      },
      { name: 'controller_reconciles', value: stats.reconciles, unit: 'count' },
      {
        name: 'controller_assessments',
        value: stats.assessments,
        unit: 'count',
        baseline: 'reconciles that assessed the cluster (the others came within the write interval)',
      },
      { name: 'controller_assess_ms_total', value: stats.assessMs, unit: 'ms' },
      { name: 'controller_write_ms_per_write', value: stats.writeMs / Math.max(1, stats.writes), unit: 'ms' },
    ];
  } finally {
    stop.abort();
    await Promise.all(running);
    await client.close();
    await cluster.stop({ wipe: true });
  }
}

const NODEPOOLS = 24;
const NODEPOOL_CHANGES_PER_SECOND = 5;
const INFORMERS_CHANGE_SECONDS = 20;
const NODEPOOL_NAMESPACE = 'clusters';

/**
 * `turns`: every writer takes its write turn (the default, as deployed); `no-turns`: writers apply at once;
 * `listmap`: turns, with the CRD before insight lists were atomic.
 */
type InformersVariant = 'turns' | 'no-turns' | 'listmap';

type Kind = 'nodes' | 'nodepools' | 'podplacement';

/**
 * Three informers writing at once on a real API server while 100 nodes per second finish their update on 5,000:
 * Tessera's update status controller (its `cpi` and `nodes` informers and the aggregator), pod placement's informer
 * (its InsightPublisher, fed by the failure window as the pod reconciler feeds it: a new registry starts failing
 * every second) and the NodePool informer (on a Manager, as `tessera nodepool run` registers it: 24 NodePools,
 * 5 of them changing their update target every second; 19 get pools, the API's 32 minus the 9 MachineConfigPool
 * pools minus the 4 it leaves spare). Every informer's input changes every second, so each would write every second
 * if nothing held it back. Latency: from a change (the last write of a batch, or the recorded failure) to a watcher
 * of the UpdateStatus seeing it. Writes: counted by each writer, and the object's versions seen by the watcher.
 */
export async function informersBench(variant: InformersVariant = 'turns'): Promise<BenchMetric[]> {
  const insightLists: InsightListType = variant === 'listmap' ? 'map' : 'atomic';
  const { cluster, client, workers, finishNode } = await startUpdatingCluster(
    `bench-updatestatus-informers-${variant}`,
    insightLists,
  );
  const stop = new AbortController();
  setMaxListeners(64, stop.signal);
  const running: Promise<void>[] = [];
  try {
    await installNodePoolCrds(client, 'management');
    // The write turn's Lease lives in the update status controller's namespace, as deploy/updatestatus creates it;
    // without it (`no-turns`) every writer writes at once, as before the write turn.
    if (variant !== 'no-turns')
      await new ResourceClient<KubeObject>(client, Namespaces).create({
        metadata: { name: WRITE_TURN_NAMESPACE },
      });
    await new ResourceClient<KubeObject>(client, Namespaces).create({
      metadata: { name: NODEPOOL_NAMESPACE },
    });
    const nodePools = new ResourceClient<NodePool & KubeObject>(client, NodePools);
    const nodePoolNames = Array.from({ length: NODEPOOLS }, (_, i) => `np-${String(i).padStart(2, '0')}`);
    /** What HyperShift writes while a NodePool rolls out a release. */
    const setTarget = async (name: string, minor: number) => {
      const np = await nodePools.get({ namespace: NODEPOOL_NAMESPACE, name });
      await nodePools.updateStatus({
        ...np,
        status: {
          version: '4.16.0',
          conditions: [
            {
              type: 'UpdatingVersion',
              status: 'True',
              reason: 'AsExpected',
              message: `Updating version in progress. Target version: 4.16.${minor}`,
              lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
            },
          ],
        } as NodePool['status'],
      });
    };
    for (const name of nodePoolNames) {
      await nodePools.create({
        metadata: { name, namespace: NODEPOOL_NAMESPACE },
        spec: { clusterName: 'hc1' },
      } as NodePool & KubeObject);
      await setTarget(name, 1);
    }

    // Warnings (a refused write, say) go to stderr: a writer that fails shows up as latency, and this says why.
    const logger = createLogger({
      level: 'warn',
      destination: process.stderr,
      format: 'text',
      name: 'bench',
    });
    // Writer 1: Tessera's update status controller.
    const informers = new SharedInformerFactory({ client });
    const { controller, stats } = createUpdateStatusController({
      client,
      informers,
      minWriteIntervalMs: 1_000,
      logger,
    });
    // Writer 2: pod placement's informer, fed by a simulated tracker.
    const failures: RegistryFailureWindow = new RegistryFailureWindow(
      realClock,
      () => [],
      () => podPlacement.trigger(),
    );
    const podPlacement: InsightPublisher = new InsightPublisher({
      client,
      informer: 'podplacement',
      reservedName: true,
      logger,
      contribution: () => podPlacementContribution([], failures.current(), Date.now()),
    });
    // Writer 3: the NodePool informer on its own Manager.
    const manager = new Manager({
      kubeConfig: await cluster.kubeConfig(),
      name: 'bench-nodepool',
      leaderElection: false,
      probes: false,
      handleSignals: false,
      logger,
    });
    const nodePoolInformer = addNodePoolUpdateInsights(manager);

    // The watcher: every version of the UpdateStatus, checked against the changes not seen yet.
    const watched = new SharedInformerFactory({ client });
    const statusInformer = watched.informerFor<UpdateStatus & KubeObject>({ type: UpdateStatuses });
    const pending: { kind: Kind; since: number; seen: (s: UpdateStatus) => boolean }[] = [];
    const latencies: Record<Kind, number[]> = { nodes: [], nodepools: [], podplacement: [] };
    let versions = 0;
    const check = (obj: UpdateStatus) => {
      const at = performance.now();
      for (const p of [...pending])
        if (p.seen(obj)) {
          latencies[p.kind].push(at - p.since);
          pending.splice(pending.indexOf(p), 1);
        }
    };
    statusInformer.addEventHandler({
      onAdd: (o) => check(o),
      onUpdate: (_old, o) => {
        versions++;
        check(o);
      },
    });
    const watchFor = (kind: Kind, seen: (s: UpdateStatus) => boolean) => {
      pending.push({ kind, since: performance.now(), seen });
      const current = statusInformer.getIndexer().get('cluster');
      if (current) check(current);
    };
    running.push(
      informers.start(stop.signal),
      controller.start(stop.signal),
      podPlacement.start(stop.signal),
      manager.start(stop.signal),
      watched.start(stop.signal),
    );

    const updatedOf = (s: UpdateStatus) =>
      (s.status?.workerPools ?? []).reduce((n, wp) => {
        const mcp = wp.informers
          ?.find((i) => i.name === 'nodes')
          ?.insights?.find((i) => i.insight.type === 'MachineConfigPool')?.insight.machineConfigPool;
        const count = (t: string) => mcp?.summaries?.find((x) => x.type === t)?.count ?? 0;
        return n + count('Total') - count('Outdated');
      }, 0);
    const totalOf = (s: UpdateStatus) =>
      (s.status?.workerPools ?? []).reduce((n, wp) => {
        const mcp = wp.informers
          ?.find((i) => i.name === 'nodes')
          ?.insights?.find((i) => i.insight.type === 'MachineConfigPool')?.insight.machineConfigPool;
        return n + (mcp?.summaries?.find((x) => x.type === 'Total')?.count ?? 0);
      }, 0);
    // A change counts as seen when the UpdateStatus shows it or a later change of the same thing (a NodePool's
    // newer target, a registry that started failing later): one superseded before a write is not waited for.
    const nodePoolTarget = (s: UpdateStatus, name: string) =>
      Math.max(
        -1,
        ...((s.status?.workerPools ?? [])
          .find((p) => p.name === name)
          ?.informers?.find((i) => i.name === 'nodepools')
          ?.insights?.map((i) =>
            Number(/updating to 4\.16\.(\d+)/.exec(i.insight.health?.impact.summary ?? '')?.[1] ?? -1),
          ) ?? []),
      );
    const newestFailingRegistry = (s: UpdateStatus) =>
      Math.max(
        -1,
        ...(s.status?.controlPlane?.informers
          ?.find((i) => i.name === 'podplacement')
          ?.insights?.map((i) =>
            Number(/from reg-(\d+)\.example\.com/.exec(i.insight.health?.impact.summary ?? '')?.[1] ?? -1),
          ) ?? []),
      );
    /**
     * A registry starts failing: what pod placement's informer reports at once (the counts of registries it already
     * reports are refreshed on its 15 s resync, by design). Each new one fails more often than the ones before, so
     * it is among the 16 shown.
     */
    const registryFails = (index: number) => {
      const registry = `reg-${index}.example.com`;
      for (let i = 0; i < 10 + index; i++)
        failures.record({
          image: `${registry}/app:${i}`,
          namespace: `tenant-${i % 7}`,
          error: 'connection refused',
        });
    };
    registryFails(0);

    // Initial convergence: all four informers registered, every worker node counted, the NodePool pools written.
    const nodePoolPools = nodePoolNames.slice(0, 32 - (POOLS - 1) - 4);
    const initialDeadline = Date.now() + 180_000;
    for (;;) {
      const s = statusInformer.getIndexer().get('cluster');
      const registered = (s?.status?.informers ?? []).map((r) => r.name).sort();
      if (
        s &&
        registered.join() === 'cpi,nodepools,nodes,podplacement' &&
        totalOf(s) === CONTROLLER_NODES - 3 &&
        nodePoolPools.every((n) => nodePoolTarget(s, n) === 1)
      )
        break;
      if (Date.now() > initialDeadline)
        throw new Error(`informers did not converge: registered ${registered.join()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 1_500));

    const before = {
      ...stats.writesBy,
      writes: stats.writes,
      writeMs: stats.writeMs,
      podplacement: podPlacement.writes,
      nodepools: nodePoolInformer.writes,
      versions,
    };
    const current = statusInformer.getIndexer().get('cluster');
    let expectedUpdated = current ? updatedOf(current) : 0;
    const apiServerPid = cluster.processes['kube-apiserver']?.pid;
    const apiServerCpuBefore = processCpuSeconds(apiServerPid);
    const changeStart = performance.now();
    const eluBefore = performance.eventLoopUtilization();
    const cpuBefore = process.cpuUsage();
    // TESSERA_BENCH_APISERVER_PPROF=FILE: kube-apiserver's CPU profile over the changes, for where its time goes.
    const profileTo = process.env.TESSERA_BENCH_APISERVER_PPROF;
    const profiled = profileTo
      ? apiServerCpuProfile(cluster, INFORMERS_CHANGE_SECONDS).then((p) => writeFileSync(profileTo, p))
      : Promise.resolve();
    for (let second = 0; second < INFORMERS_CHANGE_SECONDS; second++) {
      const batchStart = performance.now();
      // Nodes: 100 finish their update.
      const batch = workers.slice(second * CHANGES_PER_SECOND, (second + 1) * CHANGES_PER_SECOND);
      const nodesDone = inBatches(batch, 25, finishNode).then(() => {
        expectedUpdated += batch.length;
        const want = expectedUpdated;
        watchFor('nodes', (s) => updatedOf(s) >= want);
      });
      // NodePools: 5 of those with pools get a new target.
      const minor = second + 2;
      const changed = Array.from(
        { length: NODEPOOL_CHANGES_PER_SECOND },
        (_, i) => nodePoolPools[(second * NODEPOOL_CHANGES_PER_SECOND + i) % nodePoolPools.length] ?? '',
      );
      const nodePoolsDone = Promise.all(changed.map((n) => setTarget(n, minor))).then(() =>
        watchFor('nodepools', (s) => changed.every((n) => nodePoolTarget(s, n) >= minor)),
      );
      // Pod placement: a registry starts failing.
      registryFails(second + 1);
      watchFor('podplacement', (s) => newestFailingRegistry(s) >= second + 1);
      await Promise.all([nodesDone, nodePoolsDone]);
      const rest = 1_000 - (performance.now() - batchStart);
      if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    }
    const seconds = (performance.now() - changeStart) / 1000;
    await profiled;
    const apiServerCores = (processCpuSeconds(apiServerPid) - apiServerCpuBefore) / seconds;
    // This process runs every writer, the watcher and the change generator on one thread: how busy it was, and its
    // CPU, tell whether it or the API server (the rest of the machine) held the writes back.
    const elu = performance.eventLoopUtilization(eluBefore).utilization;
    const cpu = process.cpuUsage(cpuBefore);
    const loadAverage = os.loadavg()[0] ?? Number.NaN;
    // What is still pending after 10 s more counts as its wait so far (a miss is not dropped).
    const drainDeadline = performance.now() + 10_000;
    while (pending.length > 0 && performance.now() < drainDeadline)
      await new Promise((r) => setTimeout(r, 50));
    for (const p of pending) latencies[p.kind].push(performance.now() - p.since);

    // Against the goal of at most one write a second: the most writes 1 s apart that fit in the change period is
    // floor(seconds) + 1, so n over that is 1 for a writer at its limit (n over the period itself read 1.0003,
    // 20 writes 1 s apart in 19.99 s).
    const rate = (n: number) => n / (Math.floor(seconds) + 1);
    // What every write carries: the status, and the managedFields of its five field managers.
    const last = await new ResourceClient<UpdateStatus & KubeObject>(client, UpdateStatuses).get({
      name: 'cluster',
    });
    // For looking into the object the writers produce (kubectl's --show-managed-fields view, managedFields kept).
    const dumpTo = process.env.TESSERA_BENCH_UPDATESTATUS_DUMP;
    if (dumpTo) writeFileSync(dumpTo, JSON.stringify(last, null, 2));
    const objectBytes = {
      status: Buffer.byteLength(JSON.stringify(last.status)),
      managedFields: Buffer.byteLength(
        JSON.stringify((last.metadata as { managedFields?: unknown } | undefined)?.managedFields ?? []),
      ),
    };
    const p99 = (kind: Kind) =>
      percentile(
        [...latencies[kind]].sort((a, b) => a - b),
        99,
      );
    const all = [...latencies.nodes, ...latencies.nodepools, ...latencies.podplacement].sort((a, b) => a - b);
    const perInformerGoal = { op: '<=', value: 1 } as const;
    const metrics: BenchMetric[] = [
      {
        name: 'informers_p99_change_to_status_ms',
        value: percentile(all, 99),
        unit: 'ms',
        goal: { op: '<=', value: 2_000 },
        baseline: 'any change (node, NodePool, registry failure) to a watcher seeing it in the UpdateStatus',
      },
      {
        name: 'informers_p99_node_change_to_status_ms',
        value: p99('nodes'),
        unit: 'ms',
        goal: { op: '<=', value: 2_000 },
        baseline: '100 node changes/s on 5,000 nodes, with two more informers writing',
      },
      { name: 'informers_p99_nodepool_change_to_status_ms', value: p99('nodepools'), unit: 'ms' },
      { name: 'informers_p99_podplacement_change_to_status_ms', value: p99('podplacement'), unit: 'ms' },
      { name: 'informers_max_change_to_status_ms', value: all[all.length - 1] ?? Number.NaN, unit: 'ms' },
      {
        name: 'informers_writes_per_s_cpi',
        value: rate(stats.writesBy.cpi - before.cpi),
        unit: 'writes/s',
        goal: perInformerGoal,
      },
      {
        name: 'informers_writes_per_s_nodes',
        value: rate(stats.writesBy.nodes - before.nodes),
        unit: 'writes/s',
        goal: perInformerGoal,
      },
      {
        name: 'informers_writes_per_s_podplacement',
        value: rate(podPlacement.writes - before.podplacement),
        unit: 'writes/s',
        goal: perInformerGoal,
      },
      {
        name: 'informers_writes_per_s_nodepools',
        value: rate(nodePoolInformer.writes - before.nodepools),
        unit: 'writes/s',
        goal: perInformerGoal,
      },
      {
        name: 'informers_writes_per_s_aggregator',
        value: rate(stats.writesBy.aggregate - before.aggregate),
        unit: 'writes/s',
      },
      {
        name: 'informers_status_versions_per_s',
        value: rate(versions - before.versions),
        unit: 'versions/s',
        baseline: 'new versions of the UpdateStatus a watcher saw: all writers together',
      },
      {
        name: 'informers_controller_write_ms_per_write',
        value: (stats.writeMs - before.writeMs) / Math.max(1, stats.writes - before.writes),
        unit: 'ms',
        baseline:
          'one server-side apply of the UpdateStatus status, as the API server answers it under this load',
      },
      { name: 'informers_bench_process_event_loop_utilization', value: elu, unit: 'ratio' },
      {
        name: 'informers_bench_process_cpu_cores',
        value: (cpu.user + cpu.system) / 1e6 / seconds,
        unit: 'cores',
        baseline:
          'CPU of the process running the writers, the watcher and the changes, over the change period',
      },
      {
        name: 'informers_load_average_1m',
        value: loadAverage,
        unit: 'load',
        baseline: 'the whole machine, at the end',
      },
      { name: 'informers_status_kib', value: objectBytes.status / 1024, unit: 'KiB' },
      { name: 'informers_managed_fields_kib', value: objectBytes.managedFields / 1024, unit: 'KiB' },
      {
        name: 'informers_apiserver_cpu_cores',
        value: apiServerCores,
        unit: 'cores',
        baseline:
          'kube-apiserver over the change period: the status writes, 100 node patches/s, NodePools, watches',
      },
    ];
    if (variant === 'turns') return metrics;
    // The same run with the CRD as it was, or with writers that do not take turns, for comparison under the same
    // load: the figures, without goals.
    const [prefix, what] =
      variant === 'listmap'
        ? ['informers_listmap_', 'insight lists a map keyed by uid (the CRD before)']
        : ['informers_noturns_', 'writers that do not take turns (before the write turn)'];
    return metrics.map(({ goal: _goal, ...m }) => ({
      ...m,
      name: m.name.replace(/^informers_/, prefix),
      baseline: `${what}${m.baseline ? `; ${m.baseline}` : ''}`,
    }));
  } finally {
    stop.abort();
    await Promise.all(running);
    await client.close();
    await cluster.stop({ wipe: true });
  }
}

const SCENARIOS = ['command', 'controller', 'informers', 'informers-no-turns', 'informers-listmap'] as const;

/**
 * `npm run bench -- updatestatus [command|controller|informers|informers-no-turns|informers-listmap ...]`: all
 * without a name.
 */
export async function run(args: readonly string[] = []): Promise<BenchResult> {
  const unknown = args.filter((a) => !(SCENARIOS as readonly string[]).includes(a));
  if (unknown.length > 0)
    throw new Error(
      `unknown updatestatus scenario ${unknown.join(', ')}; choose from ${SCENARIOS.join(', ')}`,
    );
  const wanted = (name: (typeof SCENARIOS)[number]) => args.length === 0 || args.includes(name);
  const metrics: BenchMetric[] = [];
  if (wanted('command')) metrics.push(...(await commandBench()));
  if (wanted('controller')) metrics.push(...(await controllerBench()));
  if (wanted('informers')) metrics.push(...(await informersBench()));
  if (wanted('informers-no-turns')) metrics.push(...(await informersBench('no-turns')));
  if (wanted('informers-listmap')) metrics.push(...(await informersBench('listmap')));
  return { metrics, partial: args.length > 0 };
}

async function commandBench(): Promise<BenchMetric[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-bench-updatestatus-'));
  try {
    const cv5k = await writeSyntheticCase(dir, 5_000);
    const cv10k = await writeSyntheticCase(dir, 10_000);
    const parse5k = measure('parse', cv5k);
    const command5k = measure('command', cv5k);
    const parse10k = measure('parse', cv10k);
    const command10k = measure('command', cv10k);
    const metrics: BenchMetric[] = [
      { name: 'command_ms_5k_nodes', value: command5k.ms, unit: 'ms' },
      { name: 'parse_floor_ms_5k_nodes', value: parse5k.ms, unit: 'ms' },
      {
        name: 'beyond_parse_ms_5k_nodes',
        value: command5k.ms - parse5k.ms,
        unit: 'ms',
        goal: { op: '<=', value: 300 },
        baseline: 'reading and parsing the same snapshot files, same run',
      },
      { name: 'peak_rss_mb_5k_nodes', value: command5k.maxRssMb, unit: 'MB' },
      {
        name: 'beyond_parse_peak_rss_mb_5k_nodes',
        value: command5k.maxRssMb - parse5k.maxRssMb,
        unit: 'MB',
        goal: { op: '<=', value: 150 },
        baseline: 'peak RSS of only parsing the same files, same run',
      },
      {
        name: 'ratio_to_parse_floor_5k_nodes',
        value: command5k.ms / parse5k.ms,
        unit: 'ratio',
        goal: { op: '<=', value: 3 },
        baseline: 'reading and parsing the same snapshot files, same run',
      },
      { name: 'command_ms_10k_nodes', value: command10k.ms, unit: 'ms' },
      { name: 'parse_floor_ms_10k_nodes', value: parse10k.ms, unit: 'ms' },
      {
        name: 'growth_ratio_10k_over_5k',
        value: command10k.ms / command5k.ms,
        unit: 'ratio',
        goal: { op: '<=', value: 2.2 },
        baseline: 'the 5,000-node command time, same run',
      },
      { name: 'output_bytes_5k_nodes', value: command5k.outputBytes, unit: 'bytes' },
    ];
    return metrics;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child' && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const mode = process.argv[3] === 'parse' ? 'parse' : 'command';
  await child(mode, process.argv[4] ?? '');
}
