// Where the time of an UpdateStatus write goes: the API server's server-side apply of one informer's contribution,
// for CRD variants side by side on one API server (each variant under its own API group, so they share the load).
// Input: an UpdateStatus as the informers bench leaves it (`TESSERA_BENCH_UPDATESTATUS_DUMP=FILE npm run bench --
// updatestatus informers`). Usage: `npx tsx bench/tools/updatestatus-apply-cost.ts FILE [SECONDS]`.
// For each variant: the applies of each writer's contribution once (the managedFields the bench produces), then
// applies of the `nodes` contribution one at a time, then the four informers applying at once for SECONDS, then
// the four taking turns for SECONDS.
// With APPLY_COST_PPROF=DIR, kube-apiserver's CPU profile of each variant's concurrent phase is written to
// DIR/<variant>.pprof and DIR/<variant>-serialized.pprof (read it with `go tool pprof -top <kube-apiserver binary> FILE`).
import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { apiServerCpuProfile } from './apiserver-profile.js';
import { startDevCluster } from '../../src/devcluster/cluster.js';
import { KubeClient } from '../../src/runtime/client.js';
import { applyCrds } from '../../src/runtime/crds.js';
import type { KubeObject } from '../../src/runtime/object.js';
import { ResourceClient } from '../../src/runtime/resource-client.js';
import { updateStatusCrd } from '../../src/updatestatus/api/crd.js';
import { storedAggregate } from '../../src/updatestatus/api/aggregate.js';
import {
  applyConfiguration,
  informerFieldManager,
  storedContribution,
  type InformerContribution,
} from '../../src/updatestatus/api/informers.js';
import type { UpdateStatus } from '../../src/updatestatus/api/schema.js';

type Json = Record<string, unknown>;
type Variant = {
  readonly name: string;
  /** Changes the CRD's schema. */
  readonly edit: (schema: Json) => void;
  /** At most this many node insights per pool (the dump's when undefined). */
  readonly nodesPerPool?: number;
};

/** Every schema node, with the property name it hangs under. */
function walk(node: unknown, visit: (n: Json, key: string) => void, key = ''): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach((n) => walk(n, visit, key));
  visit(node as Json, key);
  for (const [k, v] of Object.entries(node as Json)) walk(v, visit, k);
}

const mapInsights = (schema: Json) =>
  walk(schema, (n, key) => {
    if (key === 'insights' && n.type === 'array') {
      n['x-kubernetes-list-type'] = 'map';
      n['x-kubernetes-list-map-keys'] = ['uid'];
    }
  });
const noCel = (schema: Json) => walk(schema, (n) => delete n['x-kubernetes-validations']);

// Tessera's CRD declares the insight lists atomic; `map` is the reference's (and Tessera's before) listMap by uid.
const VARIANTS: Variant[] = [
  { name: 'map', edit: mapInsights },
  { name: 'atomic', edit: () => {} },
  { name: 'atomic-no-cel', edit: noCel },
  { name: 'atomic-10-nodes-per-pool', edit: () => {}, nodesPerPool: 10 },
];

/** CPU seconds of process `pid` (/proc/<pid>/stat utime + stime, 100 ticks a second). */
const cpuSeconds = (pid: number | undefined) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

/**
 * etcd update transactions the API server has made for `group`'s UpdateStatuses: one per attempt of a write, so
 * more than one per apply means applies conflicted and were retried (etcd_requests_total).
 */
const etcdUpdates = async (group: string) => {
  const text = await client.requestText({ method: 'GET', path: '/metrics' }, 64 * 1024 * 1024);
  let n = 0;
  for (const line of text.split('\n'))
    if (
      line.startsWith('etcd_requests_total{') &&
      line.includes('operation="update"') &&
      line.includes(`group="${group}"`) &&
      line.includes('resource="updatestatuses"')
    )
      n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
};

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
};

const dump = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as UpdateStatus & KubeObject;
const seconds = Number(process.argv[3] ?? 10);
const writers = ['cpi', 'nodes', 'podplacement', 'nodepools'];
const cluster = await startDevCluster({
  name: 'us-apply-cost',
  nodes: 'none',
  // The API server alone, so that its CPU time is the applies' (less a background rate measured while idle).
  controllerManager: false,
  scheduler: false,
  kwok: false,
  apiServerProfiling: Boolean(process.env.APPLY_COST_PPROF),
  stateRoot: mkdtempSync(path.join(os.tmpdir(), 'tessera-us-apply-cost-')),
});
const client = new KubeClient(await cluster.kubeConfig());
try {
  const setups = VARIANTS.map((v, i) => {
    const group = `v${i}.updatestatus.bench`;
    const crd = updateStatusCrd() as unknown as Json & { spec: Json & { versions: Json[] } };
    crd.metadata = { name: `updatestatuses.${group}` };
    crd.spec.group = group;
    v.edit((crd.spec.versions[0] as { schema: { openAPIV3Schema: Json } }).schema.openAPIV3Schema);
    const type = {
      group,
      version: 'v1alpha1',
      plural: 'updatestatuses',
      kind: 'UpdateStatus',
      namespaced: false,
    };
    return { variant: v, crd, group, client: new ResourceClient<UpdateStatus & KubeObject>(client, type) };
  });
  await applyCrds(
    client,
    setups.map((s) => s.crd as unknown as KubeObject),
    { fieldManager: 'bench' },
  );
  let tick = 0;
  /** The contribution of `name`, changed a little each time (one insight's acquiredAt), so every apply writes. */
  const body = (group: string, name: string, nodesPerPool = Infinity) => {
    const stored = storedContribution(dump.status, name);
    let nodes = 0;
    const c: InformerContribution = {
      ...stored,
      ...(stored.workerPools
        ? {
            workerPools: stored.workerPools.map((p) => {
              nodes = 0;
              return {
                ...p,
                insights: p.insights.filter((e) => e.insight.type !== 'Node' || ++nodes <= nodesPerPool),
              };
            }),
          }
        : {}),
    };
    const t = new Date(Date.UTC(2026, 0, 1) + ++tick * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const changed: InformerContribution = {
      ...c,
      ...(c.controlPlane
        ? { controlPlane: c.controlPlane.map((e, i) => (i === 0 ? { ...e, acquiredAt: t } : e)) }
        : {}),
      ...(c.workerPools
        ? {
            workerPools: c.workerPools.map((p, j) =>
              j === 0
                ? { ...p, insights: p.insights.map((e, i) => (i === 0 ? { ...e, acquiredAt: t } : e)) }
                : p,
            ),
          }
        : {}),
    };
    return { ...applyConfiguration(changed, t), apiVersion: `${group}/v1alpha1` } as UpdateStatus &
      KubeObject;
  };
  for (const s of setups) {
    await s.client.create({ metadata: { name: 'cluster' }, spec: {} } as UpdateStatus & KubeObject);
    await s.client.apply(
      {
        apiVersion: `${s.group}/v1alpha1`,
        kind: 'UpdateStatus',
        metadata: { name: 'cluster' },
        spec: {},
        status: storedAggregate(dump.status),
      } as UpdateStatus & KubeObject,
      { fieldManager: 'tessera-updatestatus', force: true, subresource: 'status' },
    );
    for (const w of writers)
      await s.client.apply(body(s.group, w, s.variant.nodesPerPool), {
        fieldManager: informerFieldManager(w),
        force: true,
        subresource: 'status',
      });
  }
  const results: Record<string, Json> = {};
  for (const s of setups) {
    const got = await s.client.get({ name: 'cluster' });
    const managed = (got.metadata as { managedFields?: { manager: string; fieldsV1: unknown }[] })
      .managedFields;
    results[s.variant.name] = {
      statusKiB: Buffer.byteLength(JSON.stringify(got.status)) / 1024,
      managedFieldsKiB: Buffer.byteLength(JSON.stringify(managed)) / 1024,
      managedFieldsKiBBy: Object.fromEntries(
        (managed ?? []).map((m) => [
          m.manager,
          Math.round(Buffer.byteLength(JSON.stringify(m)) / 102.4) / 10,
        ]),
      ),
    };
  }
  // One at a time, the variants interleaved: the `nodes` informer's apply (the largest), with the API server's CPU
  // time for it (less sensitive to the machine's other load than the wall time).
  const apiServerPid = cluster.processes['kube-apiserver']?.pid;
  const idleCpu0 = cpuSeconds(apiServerPid);
  const idleT0 = performance.now();
  await new Promise((r) => setTimeout(r, 5_000));
  const idleCpuPerMs = (cpuSeconds(apiServerPid) - idleCpu0) / (performance.now() - idleT0);
  const sequential: Record<string, number[]> = Object.fromEntries(setups.map((s) => [s.variant.name, []]));
  const smallCpuMs: Record<string, number[]> = Object.fromEntries(setups.map((s) => [s.variant.name, []]));
  const cpuMs: Record<string, number[]> = Object.fromEntries(setups.map((s) => [s.variant.name, []]));
  for (let round = 0; round < 15; round++)
    for (const s of setups) {
      const b = body(s.group, 'nodes', s.variant.nodesPerPool);
      const cpu0 = cpuSeconds(apiServerPid);
      const t0 = performance.now();
      await s.client.apply(b, {
        fieldManager: informerFieldManager('nodes'),
        force: true,
        subresource: 'status',
      });
      const wallMs = performance.now() - t0;
      sequential[s.variant.name]?.push(wallMs);
      cpuMs[s.variant.name]?.push((cpuSeconds(apiServerPid) - cpu0 - idleCpuPerMs * wallMs) * 1000);
      // A small contribution (pod placement's) applied to the same large object.
      const small = body(s.group, 'podplacement', s.variant.nodesPerPool);
      const smallCpu0 = cpuSeconds(apiServerPid);
      const smallT0 = performance.now();
      await s.client.apply(small, {
        fieldManager: informerFieldManager('podplacement'),
        force: true,
        subresource: 'status',
      });
      smallCpuMs[s.variant.name]?.push(
        (cpuSeconds(apiServerPid) - smallCpu0 - idleCpuPerMs * (performance.now() - smallT0)) * 1000,
      );
    }
  /**
   * Four writers on one variant for `seconds`, each applying as soon as its last apply returned; `serialized`: they
   * take turns (one apply in flight at a time), as writers that coordinate would.
   */
  const fourWriters = async (s: (typeof setups)[number], serialized: boolean, pprofFile?: string) => {
    const latencies: number[] = [];
    const start = performance.now();
    const until = start + seconds * 1000;
    const cpu0 = cpuSeconds(apiServerPid);
    const etcdUpdates0 = await etcdUpdates(s.group);
    const profile = pprofFile
      ? apiServerCpuProfile(cluster, seconds).then((p) => writeFileSync(pprofFile, p))
      : Promise.resolve();
    let turn: Promise<unknown> = Promise.resolve();
    await Promise.all([
      profile,
      ...writers.map(async (w) => {
        while (performance.now() < until) {
          const b = body(s.group, w, s.variant.nodesPerPool);
          const t0 = performance.now();
          const apply = () =>
            s.client.apply(b, { fieldManager: informerFieldManager(w), force: true, subresource: 'status' });
          if (serialized) await (turn = turn.then(apply));
          else await apply();
          latencies.push(performance.now() - t0);
        }
      }),
    ]);
    const prefix = serialized ? 'serialized4' : 'concurrent4';
    return {
      [`${prefix}AppliesPerS`]: latencies.length / seconds,
      // Against the sequential figure: applies that overlap on one object conflict in etcd, and the API server
      // retries each conflicting one from its decode (GuaranteedUpdate), so CPU per apply grows with overlap.
      [`${prefix}ApiServerCpuMsPerApply`]:
        ((cpuSeconds(apiServerPid) - cpu0 - idleCpuPerMs * (performance.now() - start)) * 1000) /
        latencies.length,
      [`${prefix}EtcdUpdatesPerApply`]: ((await etcdUpdates(s.group)) - etcdUpdates0) / latencies.length,
      [`${prefix}ApplyMsP50`]: percentile(latencies, 50),
      [`${prefix}ApplyMsP99`]: percentile(latencies, 99),
    };
  };
  const pprofDir = process.env.APPLY_COST_PPROF;
  for (const s of setups)
    Object.assign(
      results[s.variant.name] ?? {},
      {
        sequentialNodesApplyMsMedian: percentile(sequential[s.variant.name] ?? [], 50),
        sequentialNodesApplyApiServerCpuMsMean:
          (cpuMs[s.variant.name] ?? []).reduce((a, b) => a + b, 0) / (cpuMs[s.variant.name]?.length ?? 1),
        sequentialSmallApplyApiServerCpuMsMean:
          (smallCpuMs[s.variant.name] ?? []).reduce((a, b) => a + b, 0) /
          (smallCpuMs[s.variant.name]?.length ?? 1),
      },
      await fourWriters(s, false, pprofDir && path.join(pprofDir, `${s.variant.name}.pprof`)),
      await fourWriters(s, true, pprofDir && path.join(pprofDir, `${s.variant.name}-serialized.pprof`)),
    );
  process.stdout.write(
    JSON.stringify(
      { loadAverage1m: os.loadavg()[0], idleApiServerCores: idleCpuPerMs * 1000, variants: results },
      (_k, v: unknown) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v),
      2,
    ) + '\n',
  );
} finally {
  await client.close();
  await cluster.stop({ wipe: true });
}
