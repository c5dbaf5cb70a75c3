// `npm run bench -- updatestatus`: `tessera upgrade status --details=all --mock-clusterversion` on a synthetic
// cluster scaled from a shared oc snapshot (5,000 nodes in 10 pools, 60 operators; then 10,000 nodes): whole
// command (read + parse + assess + render) against the floor of only reading and parsing the same files.
// Each measurement runs in a fresh child process so peak RSS belongs to that work alone; times are medians.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
import { startDevCluster } from '../src/devcluster/cluster.js';
import { SharedInformerFactory } from '../src/runtime/cache/informer-factory.js';
import { KubeClient } from '../src/runtime/client.js';
import type { KubeObject } from '../src/runtime/object.js';
import { ResourceClient } from '../src/runtime/resource-client.js';
import { Nodes } from '../src/runtime/resources.js';
import { UpdateStatuses, installUpdateStatusCrd } from '../src/updatestatus/api/install.js';
import type { UpdateStatus } from '../src/updatestatus/api/schema.js';
import { createUpdateStatusController } from '../src/updatestatus/controller.js';
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

async function inBatches<T>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

/**
 * The controller on a real API server: 5,000 nodes in 10 pools, all updating; then 100 nodes per second finish
 * their update for 10 s. Latency: from each batch's last write to the first UpdateStatus showing the batch in
 * the pools' counts. Writes: status writes per second over the changing period.
 */
export async function controllerBench(): Promise<BenchMetric[]> {
  const cluster = await startDevCluster({
    name: 'bench-updatestatus',
    nodes: 'none',
    stateRoot: mkdtempSync(path.join(os.tmpdir(), 'tessera-bench-us-')),
  });
  const client = new KubeClient(await cluster.kubeConfig());
  const stop = new AbortController();
  // Seven informers and the controller listen on this one signal.
  setMaxListeners(32, stop.signal);
  const running: Promise<void>[] = [];
  try {
    await installOpenShiftDevCrds(client);
    await installUpdateStatusCrd(client);
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

    const workers = nodeNames.filter((_, i) => i >= 3);
    const latencies: number[] = [];
    const writesBefore = stats.writes;
    const changeStart = performance.now();
    let expected = await updatedCount();
    for (let second = 0; second < CHANGE_SECONDS; second++) {
      const batchStart = performance.now();
      const batch = workers.slice(second * CHANGES_PER_SECOND, (second + 1) * CHANGES_PER_SECOND);
      await inBatches(batch, 25, (name) => {
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
      });
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

export async function run(): Promise<BenchResult> {
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
    metrics.push(...(await controllerBench()));
    return { metrics };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child' && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const mode = process.argv[3] === 'parse' ? 'parse' : 'command';
  await child(mode, process.argv[4] ?? '');
}
