// `npm run bench -- dashboard`: the dashboard on a real API server holding 5,000 updating nodes (10 pools, 60
// operators: the update-status bench's cluster) and 10,000 gated pods, seen in headless Chromium.
// - first paint: from navigation to the Update view's progress bars, and to the Pod placement view's gated count,
//   opened by its link (`#placement`) and, besides, by a click on its tab after the Update view (the server's
//   informers already synced, as for a page opened while `tessera dashboard` runs);
// - change latency: from a write (a pod ungated; a node finishing its update) to the page showing it;
// - baseline: the API server's own time to list the same nodes and pods (paged by 500, as the informers list),
//   measured in the same run; ratios are against it;
// - memory: the dashboard process's RSS and heap once its caches hold everything.
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LiveDashboardData } from '../src/dashboard/live-data.js';
import { DashboardServer } from '../src/dashboard/server.js';
import { SCHEDULING_GATE } from '../src/podplacement/constants.js';
import type { KubeClient } from '../src/runtime/client.js';
import type { KubeObject } from '../src/runtime/object.js';
import { ResourceClient } from '../src/runtime/resource-client.js';
import { Namespaces, Nodes, Pods, type ResourceType } from '../src/runtime/resources.js';
import { launchBrowser } from '../test/support/browser.js';
import type { BenchMetric, BenchResult } from './types.js';
import { inBatches, startUpdatingCluster } from './updatestatus.js';

const PODS = 10_000;
const NAMESPACES = 20;
const CHANGES = 5;
const pageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/dashboard-page');

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Milliseconds to list every object of `type`, 500 per page. */
async function listTime(client: KubeClient, type: ResourceType): Promise<number> {
  const resources = new ResourceClient<KubeObject>(client, type);
  const started = performance.now();
  let token: string | undefined;
  do {
    const page = await resources.list({ limit: 500, continue: token });
    token = page.metadata?.continue || undefined;
  } while (token);
  return performance.now() - started;
}

export async function run(): Promise<BenchResult> {
  const { cluster, client, workers, finishNode } = await startUpdatingCluster('bench-dashboard');
  const stop = new AbortController();
  setMaxListeners(64, stop.signal);
  let informers: Promise<void> | undefined;
  let server: DashboardServer | undefined;
  const browser = await launchBrowser();
  try {
    const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `bench-${i}`);
    const nsClient = new ResourceClient<KubeObject>(client, Namespaces);
    for (const name of namespaces) await nsClient.create({ metadata: { name } });
    const pods = new ResourceClient<KubeObject>(client, Pods);
    const podNames = Array.from({ length: PODS }, (_, i) => ({
      namespace: namespaces[i % NAMESPACES] ?? 'bench-0',
      name: `pod-${String(i).padStart(5, '0')}`,
    }));
    await inBatches(podNames, 50, ({ namespace, name }) =>
      pods.create({
        metadata: { namespace, name },
        spec: {
          schedulingGates: [{ name: SCHEDULING_GATE }],
          containers: [{ name: 'app', image: `registry-${name.length % 7}.example/app/web:1` }],
        },
      } as KubeObject),
    );

    const listNodesMs = median([
      await listTime(client, Nodes),
      await listTime(client, Nodes),
      await listTime(client, Nodes),
    ]);
    const listPodsMs = median([
      await listTime(client, Pods),
      await listTime(client, Pods),
      await listTime(client, Pods),
    ]);

    const data = new LiveDashboardData({ client });
    server = new DashboardServer({ data, pageDir, port: 0 });
    const url = (await server.start()).replace('127.0.0.1', 'localhost');
    const syncStarted = performance.now();
    informers = data.start(stop.signal);
    await data.waitForSync(stop.signal);
    const syncMs = performance.now() - syncStarted;
    global.gc?.();
    const memory = process.memoryUsage();
    // The server's own share of a first paint: computing each view from the caches (no reuse: a new page size).
    const computeMs = (name: 'update' | 'placement', i: number): number => {
      const started = performance.now();
      data.view(name, new URLSearchParams({ gatedLimit: String(90 + i), insightsLimit: String(90 + i) }));
      return performance.now() - started;
    };
    const viewUpdateMs = median([0, 1, 2].map((i) => computeMs('update', i)));
    const viewPlacementMs = median([0, 1, 2].map((i) => computeMs('placement', i)));

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const firstPaint = async (
      how: 'Update' | 'Pod placement link' | 'Pod placement tab',
    ): Promise<number> => {
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(how === 'Pod placement link' ? `${url}#placement` : url);
      if (how === 'Update') await page.getByTestId('progress-Control plane').waitFor();
      else {
        if (how === 'Pod placement tab') await page.getByRole('tab', { name: 'Pod placement' }).click();
        await page
          .getByTestId('gated-summary')
          .getByText(`${PODS} pods gated`)
          .waitFor()
          .catch(async (err: unknown) => {
            throw new Error(
              `the placement view never showed ${PODS} gated pods: ${await page.textContent('body')}`,
              {
                cause: err,
              },
            );
          });
      }
      const ms = performance.now() - started;
      await page.close();
      return ms;
    };
    const updatePaint = median([
      await firstPaint('Update'),
      await firstPaint('Update'),
      await firstPaint('Update'),
    ]);
    const placementPaint = median([
      await firstPaint('Pod placement link'),
      await firstPaint('Pod placement link'),
      await firstPaint('Pod placement link'),
    ]);
    const placementByTabPaint = median([
      await firstPaint('Pod placement tab'),
      await firstPaint('Pod placement tab'),
      await firstPaint('Pod placement tab'),
    ]);

    const page = await context.newPage();
    await page.goto(url);
    await page.getByRole('tab', { name: 'Pod placement' }).click();
    await page.getByTestId('gated-summary').getByText(`${PODS} pods gated`).waitFor();
    const podLatencies: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const pod = podNames[i] ?? { namespace: 'bench-0', name: 'pod-00000' };
      const started = performance.now();
      await pods.mergePatch(pod, { spec: { schedulingGates: null } });
      await page
        .getByTestId('gated-summary')
        .getByText(`${PODS - i - 1} pods gated`)
        .waitFor();
      podLatencies.push(performance.now() - started);
    }
    await page.getByRole('tab', { name: 'Update' }).click();
    const updated = async (): Promise<string> =>
      (await page.getByTestId('progress-Pool worker').textContent()) ?? '';
    const nodeLatencies: number[] = [];
    // Nodes of the `worker` pool (the update-status bench puts node-N in it when N is a multiple of 9).
    const workerNodes = workers.filter((name) => Number(name.slice('node-'.length)) % 9 === 0);
    for (let i = 0; i < CHANGES; i++) {
      const before = await updated();
      const started = performance.now();
      await finishNode(workerNodes[i] ?? '');
      await page.waitForFunction(
        ([selector, text]) =>
          (
            globalThis as unknown as {
              document: { querySelector(s: string): { textContent: string | null } | null };
            }
          ).document.querySelector(selector)?.textContent !== text,
        ['[data-testid="progress-Pool worker"]', before] as const,
      );
      nodeLatencies.push(performance.now() - started);
    }

    const baseline = 'API server list of 5,000 nodes + 10,000 pods (500 per page), same run';
    const listMs = listNodesMs + listPodsMs;
    const metrics: BenchMetric[] = [
      { name: 'dashboard.apiserver_list_ms', value: listMs, unit: 'ms' },
      { name: 'dashboard.informer_sync_ms', value: syncMs, unit: 'ms', baseline },
      {
        name: 'dashboard.first_paint_update_ms',
        value: updatePaint,
        unit: 'ms',
        goal: { op: '<=', value: 1_000 },
      },
      { name: 'dashboard.first_paint_update_vs_list', value: updatePaint / listMs, unit: 'ratio', baseline },
      {
        name: 'dashboard.first_paint_placement_ms',
        value: placementPaint,
        unit: 'ms',
        goal: { op: '<=', value: 1_000 },
      },
      {
        name: 'dashboard.first_paint_placement_vs_list',
        value: placementPaint / listMs,
        unit: 'ratio',
        baseline,
      },
      // The same view reached through the Update view: its first paint plus the switch.
      { name: 'dashboard.first_paint_placement_by_tab_ms', value: placementByTabPaint, unit: 'ms' },
      {
        name: 'dashboard.change_latency_pod_ms',
        value: median(podLatencies),
        unit: 'ms',
        goal: { op: '<=', value: 1_000 },
      },
      {
        name: 'dashboard.change_latency_node_ms',
        value: median(nodeLatencies),
        unit: 'ms',
        goal: { op: '<=', value: 1_000 },
      },
      { name: 'dashboard.view_update_compute_ms', value: viewUpdateMs, unit: 'ms' },
      { name: 'dashboard.view_placement_compute_ms', value: viewPlacementMs, unit: 'ms' },
      { name: 'dashboard.rss_mb', value: memory.rss / 1024 / 1024, unit: 'MiB' },
      { name: 'dashboard.heap_used_mb', value: memory.heapUsed / 1024 / 1024, unit: 'MiB' },
    ];
    return { metrics };
  } finally {
    await browser.close();
    stop.abort();
    await informers;
    await server?.close();
    await client.close();
    await cluster.stop({ wipe: true });
  }
}
