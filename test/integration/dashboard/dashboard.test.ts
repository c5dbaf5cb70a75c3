// The dashboard in a real browser (Debian's Chromium through playwright-core) against a private local control plane:
// the update simulator moves the Update view's progress bars and plot, a gated pod appears in the Pod placement view
// and leaves it when ungated, a NodePool turning Degraded changes its row. Markup put in everything tenants write
// (annotations, image references, event and condition messages) is shown as text and never runs; requests with a
// foreign Host are refused; axe-core finds no serious or critical violation; the views are reachable by keyboard;
// the browser console stays free of errors. Screenshots go to a temporary folder, or to docs/screenshots/ for the
// README with TESSERA_UPDATE_SCREENSHOTS=1 (a test run never changes tracked files otherwise).
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveDashboardData } from '../../../src/dashboard/live-data.js';
import { DashboardServer } from '../../../src/dashboard/server.js';
import { runSimulation } from '../../../src/demo/update-simulation/driver.js';
import type { SimulatedState } from '../../../src/demo/update-simulation/timeline.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { installNodePoolCrds } from '../../../src/nodepool/api/install.js';
import { APPLIED_SUCCESSFULLY_CONDITION, mirroredConditionType } from '../../../src/nodepool/constants.js';
import { NodePools } from '../../../src/nodepool/resources.js';
import { ANNOTATIONS, LABELS, SCHEDULING_GATE } from '../../../src/podplacement/constants.js';
import { KubeClient } from '../../../src/runtime/client.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { CoreEvents, Namespaces, Pods } from '../../../src/runtime/resources.js';
import { ClusterOperators } from '../../../src/updatestatus/api/dev-crds.js';
import { launchBrowser } from '../../support/browser.js';
import { startTestCluster, uniqueName } from '../../support/cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const pageDir = path.join(root, 'dist/dashboard-page');
const screenshots =
  process.env.TESSERA_UPDATE_SCREENSHOTS === '1'
    ? path.join(root, 'docs/screenshots')
    : mkdtempSync(path.join(os.tmpdir(), 'tessera-dashboard-screenshots-'));
const TO = '4.16.1';

/** Markup that would run if it were ever rendered as HTML: each payload calls alert(), which the test watches for. */
const XSS = {
  img: '<img src=x onerror="alert(\'img\')">',
  script: '<script>alert("script")</script>',
};

/** The newest modification time under `dir` (ms). */
function newest(dir: string): number {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** `npm test` does not run `npm run build`: build the page here when it is missing or older than its sources. */
async function ensurePageBuilt(): Promise<void> {
  const index = path.join(pageDir, 'index.html');
  const sources = Math.max(
    newest(path.join(root, 'src/dashboard/page')),
    statSync(path.join(root, 'src/dashboard/view-types.ts')).mtimeMs,
  );
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const vite = path.join(root, 'node_modules/vite/bin/vite.js');
  await promisify(execFile)(
    process.execPath,
    [vite, 'build', '--config', 'src/dashboard/page/vite.config.ts'],
    {
      cwd: root,
    },
  );
}

function rawRequest(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: '/api/views/placement', headers: { host } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
  });
}

describe('tessera dashboard in a browser', () => {
  let cluster: DevCluster;
  let client: KubeClient;
  let server: DashboardServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let port: number;
  const stop = new AbortController();
  // One signal stops every informer of the dashboard.
  setMaxListeners(64, stop.signal);
  let informers: Promise<void>;
  const consoleErrors: string[] = [];
  const dialogs: string[] = [];
  const namespace = uniqueName('dash');

  beforeAll(async () => {
    [cluster] = await Promise.all([
      startTestCluster({ name: uniqueName('dashboard'), nodes: 'default' }),
      ensurePageBuilt(),
    ]);
    client = new KubeClient(await cluster.kubeConfig());
    await installNodePoolCrds(client, 'management');
    const namespaces = new ResourceClient<KubeObject>(client, Namespaces);
    await namespaces.create({ metadata: { name: namespace } });
    await namespaces.create({ metadata: { name: 'clusters' } });
    const data = new LiveDashboardData({ client });
    server = new DashboardServer({ data, pageDir, port: 0 });
    port = Number(new URL(await server.start()).port);
    informers = data.start(stop.signal);
    await data.waitForSync(stop.signal);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(`http://localhost:${port}/`);
    await page.getByTestId('connection').getByText('Live').waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    stop.abort();
    await informers;
    await server?.close();
    await client?.close();
    await cluster?.stop({ wipe: true });
  });

  /** The Update view's control-plane completion, as the page's progress bar says it. */
  async function controlPlaneCompletion(): Promise<number> {
    const value = await page
      .getByTestId('progress-Control plane')
      .getByRole('progressbar')
      .getAttribute('aria-valuenow');
    return Number(value);
  }

  it('says what is missing while the cluster has no ClusterVersion and no NodePools', async () => {
    await page.getByText('Update: nothing to show on this cluster').waitFor();
    await page.getByRole('tab', { name: 'NodePools' }).click();
    await page.getByText('NodePools: nothing to show on this cluster').waitFor();
    await page.getByRole('tab', { name: 'Update' }).click();
  });

  it('moves the progress bars and the completion plot as the simulated update runs', async () => {
    const seen: number[] = [];
    let shot = false;
    await runSimulation({
      client,
      to: TO,
      stepMs: 0,
      stepSeconds: 60,
      signal: stop.signal,
      onStep: async (_step: number, state: SimulatedState) => {
        const operators = state.clusterOperators;
        const updated = operators.filter((co) =>
          co.status?.versions?.some((v) => v.name === 'operator' && v.version === TO),
        ).length;
        const expected = Math.round((1000 * updated) / operators.length) / 10;
        // Wait for the page to show this step (observed state, no sleeps).
        await expect.poll(controlPlaneCompletion, { timeout: 20_000, interval: 50 }).toBe(expected);
        seen.push(expected);
        const workersMoving = [...state.nodePhases].some(
          ([node, phase]) =>
            state.nodePools.get(node) === 'worker' && phase !== 'Pending' && phase !== 'Completed',
        );
        if (!shot && workersMoving) {
          shot = true;
          await page.screenshot({ path: path.join(screenshots, 'dashboard-update.png'), fullPage: true });
        }
      },
    });
    expect(seen[0]).toBeLessThan(100);
    expect(seen.at(-1)).toBe(100);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    // Every worker ends updated, and the plot holds a point per change.
    await expect
      .poll(() =>
        page.getByTestId('progress-Pool worker').getByRole('progressbar').getAttribute('aria-valuenow'),
      )
      .toBe('100');
    const points = Number(await page.getByTestId('completion-plot').getAttribute('data-points'));
    expect(points).toBeGreaterThan(5);
    await expect
      .poll(() => page.getByTestId('nodes-worker').locator('[data-phase="Updated"]').count())
      .toBeGreaterThan(0);
    expect(await page.getByTestId('nodes-worker').locator('[data-phase="Pending"]').count()).toBe(0);
  });

  it('shows a degraded operator as a health insight in oc words, its message as text', async () => {
    const cos = new ResourceClient<KubeObject & { status?: { conditions?: unknown[] } }>(
      client,
      ClusterOperators,
    );
    const dns = await cos.get({ name: 'dns' });
    const conditions = (dns.status?.conditions ?? []).filter(
      (c) => (c as { type?: string }).type !== 'Degraded',
    );
    await cos.mergePatch(
      { name: 'dns' },
      {
        status: {
          conditions: [
            ...conditions,
            {
              type: 'Degraded',
              status: 'True',
              reason: 'Broken',
              message: `dns is sad ${XSS.img} ${XSS.script}`,
              lastTransitionTime: new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
            },
          ],
        },
      },
    );
    const row = page.getByTestId('insights').getByRole('row').filter({ hasText: 'dns' });
    await row.first().waitFor();
    await row.first().getByRole('button', { name: 'Details' }).click();
    await row.first().getByText(`dns is sad ${XSS.img} ${XSS.script}`).waitFor();
  });

  it('lists a gated pod (oldest, explain on a click) and drops it once it is ungated; markup stays text', async () => {
    await page.getByRole('tab', { name: 'Pod placement' }).click();
    const pods = new ResourceClient<KubeObject>(client, Pods);
    const name = 'gated-web';
    const pod = await pods.create({
      metadata: {
        name,
        namespace,
        labels: { [LABELS.imageInspectError]: '' },
        annotations: { [ANNOTATIONS.imageInspectError]: `unauthorized ${XSS.img} ${XSS.script}` },
      },
      spec: {
        schedulingGates: [{ name: SCHEDULING_GATE }],
        containers: [{ name: 'web', image: `registry.example:5000/app/web:1` }],
      },
    } as KubeObject);
    const events = new ResourceClient<KubeObject>(client, CoreEvents);
    await events.create({
      metadata: { name: uniqueName('ev'), namespace },
      involvedObject: { kind: 'Pod', namespace, name, uid: pod.metadata?.uid },
      reason: 'ArchAwareSchedGateAdded',
      message: `gated ${XSS.img} ${XSS.script}`,
      type: 'Normal',
      source: { component: 'multiarch-tuning-operator' },
      firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    } as KubeObject);

    await page.getByTestId('gated-summary').getByText(`the oldest, ${namespace}/${name}`).waitFor();
    await page
      .getByRole('grid', { name: 'Inspection failures by registry' })
      .getByRole('row')
      .filter({ hasText: 'registry.example:5000' })
      .waitFor();
    await page.getByText(`unauthorized ${XSS.img} ${XSS.script}`).first().waitFor();
    await page.screenshot({ path: path.join(screenshots, 'dashboard-placement.png'), fullPage: true });

    await page.getByTestId('gated-pods').getByRole('button', { name }).click();
    const explanation = page.getByTestId('explanation');
    await explanation.getByText('still on (waiting for image inspection)').waitFor();
    await expect.poll(() => explanation.textContent()).toContain(`gated ${XSS.img} ${XSS.script}`);
    await page.getByRole('button', { name: 'Close' }).click();

    await pods.mergePatch({ namespace, name }, { spec: { schedulingGates: null } });
    await page.getByTestId('gated-summary').getByText('No pod is waiting for image inspection.').waitFor();
  });

  it('changes a NodePool row when the NodePool turns Degraded; its messages stay text', async () => {
    await page.getByRole('tab', { name: 'NodePools' }).click();
    const nodePools = new ResourceClient<KubeObject>(client, NodePools);
    await nodePools.create({
      metadata: { name: 'workers', namespace: 'clusters' },
      spec: { clusterName: 'hc1', replicas: 1 },
    } as KubeObject);
    const at = (ms: number) => new Date(Date.now() - ms).toISOString().replace(/\.\d+Z$/, 'Z');
    const status = (degraded: boolean) => ({
      status: {
        conditions: [
          {
            type: APPLIED_SUCCESSFULLY_CONDITION,
            status: degraded ? 'False' : 'True',
            reason: degraded ? 'TunedProfileDegraded' : 'AsExpected',
            message: degraded ? `Tuned degraded ${XSS.img}` : '',
            lastTransitionTime: at(degraded ? 0 : 600_000),
          },
          {
            type: mirroredConditionType('Degraded'),
            status: degraded ? 'True' : 'False',
            reason: degraded ? 'TunedProfileDegraded' : 'AsExpected',
            message: degraded ? `profile failed ${XSS.script}` : '',
            lastTransitionTime: at(degraded ? 0 : 600_000),
          },
        ],
      },
    });
    const card = page.getByTestId('nodepool-clusters-workers');
    await nodePools.mergePatch({ namespace: 'clusters', name: 'workers' }, status(false), {
      subresource: 'status',
    });
    await expect.poll(() => card.getAttribute('data-state')).toBe('applied');
    await nodePools.mergePatch({ namespace: 'clusters', name: 'workers' }, status(true), {
      subresource: 'status',
    });
    await expect.poll(() => card.getAttribute('data-state')).toBe('degraded');
    await card.getByText(`profile failed ${XSS.script}`).waitFor();
    await card.getByText(`Tuned degraded ${XSS.img}`).waitFor();
    await page.screenshot({ path: path.join(screenshots, 'dashboard-nodepools.png'), fullPage: true });
  });

  it('ran none of the markup: no dialog, no injected element, no console error', async () => {
    expect(dialogs).toEqual([]);
    for (const tab of ['Update', 'Pod placement', 'NodePools']) {
      await page.getByRole('tab', { name: tab }).click();
      expect(await page.locator('img[src="x"], script:not([src])').count()).toBe(0);
    }
    expect(consoleErrors).toEqual([]);
  });

  it('refuses requests whose Host is not its own (DNS rebinding)', async () => {
    expect(await rawRequest(port, `attacker.example:${port}`)).toBe(421);
    expect(await rawRequest(port, `localhost:${port}`)).toBe(200);
    // A browser tab on a rebinding name is refused too (the request reaches the server with the foreign Host).
    const answer = await page.request.get(`http://127.0.0.1:${port}/api/views/update`, {
      headers: { host: `rebind.attacker.example:${port}` },
    });
    expect(answer.status()).toBe(421);
  });

  it('has no serious or critical accessibility violations (axe-core) in any view', async () => {
    const axeSource = createRequire(import.meta.url)('axe-core').source as string;
    for (const tab of ['Update', 'Pod placement', 'NodePools']) {
      await page.getByRole('tab', { name: tab }).click();
      // Evaluated through the DevTools protocol, which the page's CSP does not govern.
      await page.evaluate(axeSource);
      const violations = await page.evaluate(async () => {
        const axe = (
          globalThis as unknown as {
            axe: { run: () => Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> };
          }
        ).axe;
        const result = await axe.run();
        return result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes)`);
      });
      expect(violations, `${tab} view`).toEqual([]);
    }
  });

  it('reaches every view by keyboard', async () => {
    await page.goto(`http://localhost:${port}/`);
    await page.getByTestId('connection').getByText('Live').waitFor();
    const focused = () =>
      page.evaluate(
        () =>
          (globalThis as unknown as { document: { activeElement: { textContent: string | null } | null } })
            .document.activeElement?.textContent ?? '',
      );
    for (let i = 0; i < 10 && (await focused()) !== 'Update'; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('Update');
    for (const tab of ['Pod placement', 'NodePools']) {
      for (let i = 0; i < 5 && (await focused()) !== tab; i++) await page.keyboard.press('Tab');
      expect(await focused()).toBe(tab);
      await page.keyboard.press('Enter');
      await expect
        .poll(() => page.getByRole('tab', { name: tab }).getAttribute('aria-selected'))
        .toBe('true');
      await page.getByRole('tab', { name: tab }).focus();
    }
    await page.getByTestId('nodepool-clusters-workers').waitFor();
  });

  it('opens the view a link names (#placement) and names the shown view in the address, to copy', async () => {
    await page.goto(`http://localhost:${port}/#placement`);
    await expect
      .poll(() => page.getByRole('tab', { name: 'Pod placement' }).getAttribute('aria-selected'))
      .toBe('true');
    await page.getByTestId('gated-summary').waitFor();
    await page.getByRole('tab', { name: 'NodePools' }).click();
    await expect.poll(() => new URL(page.url()).hash).toBe('#nodepools');
    // Anything else in the fragment opens the Update view.
    await page.goto(`http://localhost:${port}/#<script>`);
    await expect
      .poll(() => page.getByRole('tab', { name: 'Update' }).getAttribute('aria-selected'))
      .toBe('true');
  });
  it('`tessera dashboard --port 0` prints its URL, serves the cluster read-only, and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(root, 'src/cli/main.ts'),
        'dashboard',
        '--port',
        '0',
        '--kubeconfig',
        cluster.kubeconfigPath,
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await expect
        .poll(() => stdout, { timeout: 60_000 })
        .toMatch(/at http:\/\/127\.0\.0\.1:\d+\/ \(read-only/);
      const url = new URL(/http:\/\/127\.0\.0\.1:\d+\//.exec(stdout)?.[0] ?? '');
      await expect
        .poll(async () => {
          const res = await fetch(new URL('/api/views/nodepools', url));
          return JSON.stringify(await res.json());
        })
        .toContain('"name":"workers"');
      expect((await fetch(new URL('/api/views/nodepools', url), { method: 'DELETE' })).status).toBe(405);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
