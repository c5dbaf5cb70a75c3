// The dashboard as an OpenShift console dynamic plugin, checked end to end without a console:
//  - the build (webpack + the console SDK's ConsoleRemotePlugin, whose extension checks fail the build) succeeds
//    (run here when dist/console-plugin is missing or older than src/);
//  - `tessera console-plugin serve`'s server serves it over HTTPS with a serving certificate for the Service's
//    DNS name, verified against the issuing CA;
//  - in Debian's Chromium, the plugin is loaded as the console loads it (its manifest's baseURL and loadScripts,
//    through a stand-in for the console's /api/plugins/<name>/ proxy), every module the extensions reference is
//    fetched from the container and has the exported component, and the page renders the shared view tabs from
//    the objects handed to the SDK's watch hook (oc's recorded update snapshot, and a gated pod read back from the
//    local API server), with no error in the browser console;
//  - the generated ConsolePlugin, Service, Deployment, ServiceAccount and NetworkPolicy apply to the local API
//    server with OpenShift's ConsolePlugin CRD (test/fixtures/openshift-api), which refuses a malformed one.
// The console itself (its SDK runtime: watches, proxy, shared React) is not available here; the stand-in gives the
// plugin React and the two SDK functions it calls, nothing else.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  REGISTRATION_FIELD_MANAGER,
  consolePluginManifests,
  consolePluginObject,
} from '../../../src/dashboard/console-plugin/manifests.js';
import { runRegisterCommand } from '../../../src/dashboard/console-plugin/registration.js';
import {
  CONSOLE_EXTENSIONS,
  CONSOLE_PLUGIN_NAME,
  referencedExports,
} from '../../../src/dashboard/console-plugin/plugin-metadata.js';
import { ConsolePluginServer } from '../../../src/dashboard/console-plugin/server.js';
import { buildConsolePlugin } from '../../../src/dashboard/page/console-plugin/build.js';
import { SCHEDULING_GATE } from '../../../src/podplacement/constants.js';
import {
  ApiStatusError,
  applyCrds,
  generateDevCertificate,
  KubeClient,
  type KubeObject,
  ResourceClient,
  type ResourceType,
} from '../../../src/runtime/index.js';
import { Pods } from '../../../src/runtime/resources.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { launchBrowser } from '../../support/browser.js';
import { eventually, testKubeConfig, uniqueName, useTestNamespace } from '../../support/cluster.js';
import { serviceAccountKubeConfig } from '../../support/identities.js';
import { fixturePath } from '../../support/fixtures.js';

const nodeModules = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../node_modules');
const SERVICE_DNS = `${CONSOLE_PLUGIN_NAME}.openshift-multiarch-tuning-operator.svc`;

interface PluginManifest {
  name: string;
  version: string;
  baseURL: string;
  loadScripts: string[];
  extensions: unknown[];
  dependencies: Record<string, string>;
}

function get(port: number, ca: string, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path: target, ca, servername: SERVICE_DNS, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** The page's globals the tests touch (the test runs in Node: no DOM types here). */
interface StandIn {
  React: { createElement(component: unknown): unknown };
  ReactDOM: { createRoot(element: unknown): { render(element: unknown): void } };
  document: {
    getElementById(id: string): unknown;
    createElement(tag: string): { id: string; setAttribute(name: string, value: string): void };
    body: { append(element: unknown): void };
  };
  __module: Record<string, unknown>;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const pluginDir = path.join(root, 'dist/console-plugin');

/** The newest modification time under `dir` (ms). */
function newest(dir: string): number {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * `npm test` does not run `npm run build`: build the plugin here (webpack with the SDK's checks, which fail the
 * build) when it is missing or older than src/ (the plugin bundles the views and the pure builders) or the lock.
 */
async function ensurePluginBuilt(): Promise<void> {
  const manifest = path.join(pluginDir, 'plugin-manifest.json');
  const sources = Math.max(
    newest(path.join(root, 'src')),
    statSync(path.join(root, 'package-lock.json')).mtimeMs,
  );
  if (existsSync(manifest) && statSync(manifest).mtimeMs >= sources) return;
  await buildConsolePlugin(pluginDir);
}

const resource = (group: string, version: string, plural: string, kind: string, namespaced: boolean) =>
  ({ group, version, plural, kind, namespaced }) satisfies ResourceType;

describe('the console plugin', () => {
  const namespace = useTestNamespace('console-plugin');
  let server: ConsolePluginServer;
  let port: number;
  let ca: string;
  let browser: Browser;
  let client: KubeClient;

  beforeAll(async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'tessera-console-plugin-cert-'));
    const certDir = path.join(root, 'serving-cert');
    await mkdir(certDir);
    // What the service CA writes into the Secret the Service's annotation names (tls.crt, tls.key).
    const certificate = await generateDevCertificate({ dnsNames: [SERVICE_DNS] });
    ca = certificate.caPem;
    await writeFile(path.join(certDir, 'tls.crt'), certificate.certPem);
    await writeFile(path.join(certDir, 'tls.key'), certificate.keyPem);
    [, browser] = await Promise.all([ensurePluginBuilt(), launchBrowser()]);
    server = new ConsolePluginServer({
      pluginDir,
      certFile: path.join(certDir, 'tls.crt'),
      keyFile: path.join(certDir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
    });
    port = await server.start();
    client = new KubeClient(testKubeConfig());
    // A timeout only catches a hang: webpack takes minutes on a loaded machine.
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await client?.close();
  });

  it('builds a manifest with the extensions, served over HTTPS with the serving certificate', async () => {
    const answer = await get(port, ca, '/plugin-manifest.json');
    expect(answer.status).toBe(200);
    const manifest = JSON.parse(answer.body) as PluginManifest;
    expect(manifest.name).toBe(CONSOLE_PLUGIN_NAME);
    expect(manifest.baseURL).toBe(`/api/plugins/${CONSOLE_PLUGIN_NAME}/`);
    expect(manifest.dependencies).toEqual({ '@console/pluginAPI': '>=4.22.0-0' });
    expect(manifest.extensions).toEqual(CONSOLE_EXTENSIONS);
    expect(manifest.loadScripts).toEqual(['plugin-entry.js']);
    for (const script of manifest.loadScripts) expect((await get(port, ca, `/${script}`)).status).toBe(200);
  });

  describe('in Chromium, loaded as the console loads it', () => {
    let page: Page;
    const errors: string[] = [];
    const gatedPod = uniqueName('gated');

    beforeAll(async () => {
      // A pod held by pod placement's scheduling gate, read back from the API server for the plugin's watch.
      const pods = new ResourceClient<KubeObject>(client, Pods);
      await pods.create({
        metadata: { name: gatedPod, namespace: namespace.name },
        spec: {
          schedulingGates: [{ name: SCHEDULING_GATE }],
          containers: [{ name: 'app', image: 'registry.example/app:1' }],
        },
      } as KubeObject);
      const listedPods = (await pods.list({ namespace: namespace.name })).items;
      // oc's recorded snapshot of an update in progress (a degraded operator among them).
      const { snapshot } = await loadSnapshot(fixturePath('oc-upgrade-status/4.14.1-degraded-cv.yaml'));
      const mcoDeployment = {
        metadata: { name: 'machine-config-operator', namespace: 'openshift-machine-config-operator' },
        spec: {
          template: {
            spec: { containers: [{ name: 'machine-config-operator', image: snapshot.mcoImagePullSpec }] },
          },
        },
      };
      // What the SDK's watch hook gives for each group/kind the plugin watches.
      const objects: Record<string, unknown[]> = {
        'config.openshift.io/ClusterVersion': [snapshot.clusterVersion],
        'config.openshift.io/ClusterOperator': [...snapshot.clusterOperators],
        'machineconfiguration.openshift.io/MachineConfigPool': [...snapshot.machineConfigPools],
        'machineconfiguration.openshift.io/MachineConfig': [...snapshot.machineConfigs],
        'machineconfiguration.openshift.io/MachineConfigNode': [...(snapshot.machineConfigNodes ?? [])],
        'apps/Deployment': [mcoDeployment],
        '/Node': [...snapshot.nodes],
        '/Pod': listedPods,
      };

      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      page = await context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('dialog', (d) => {
        errors.push(`dialog: ${d.message()}`);
        void d.dismiss();
      });
      const origin = `https://127.0.0.1:${port}`;
      const manifest = JSON.parse((await get(port, ca, '/plugin-manifest.json')).body) as PluginManifest;
      // The console's backend serves a plugin at /api/plugins/<name>/ from its Service's basePath: here, from the
      // plugin's server itself.
      await page.route(`${origin}${manifest.baseURL}**`, async (route) => {
        const file = new URL(route.request().url()).pathname.slice(manifest.baseURL.length - 1);
        await route.fulfill({ response: await route.fetch({ url: `${origin}${file}` }) });
      });
      await page.route(`${origin}/console-stand-in.html`, (route) =>
        route.fulfill({
          contentType: 'text/html',
          body: '<!doctype html><html lang="en"><head><title>console stand-in</title></head><body><main id="root"></main></body></html>',
        }),
      );
      await page.goto(`${origin}/console-stand-in.html`);
      // React 18's own browser builds, as the console shares its React with plugins.
      await page.addScriptTag({ path: path.join(nodeModules, 'react/umd/react.production.min.js') });
      await page.addScriptTag({ path: path.join(nodeModules, 'react-dom/umd/react-dom.production.min.js') });
      await page.evaluate(
        ({ objects }) => {
          const w = globalThis as unknown as Record<string, unknown>;
          const entries: Record<string, unknown> = {};
          w['__entries'] = entries;
          // The console's callback for plugin-entry.js (registrationMethod "callback").
          w['__load_plugin_entry__'] = (name: string, entry: unknown) => (entries[name] = entry);
          type Watch = { groupVersionKind?: { group?: string; kind: string } };
          const result = (r: Watch) => ({
            data: objects[`${r.groupVersionKind?.group ?? ''}/${r.groupVersionKind?.kind ?? ''}`] ?? [],
            loaded: true,
            loadError: undefined,
          });
          w['__sdk'] = {
            useK8sWatchResources: (resources: Record<string, Watch>) =>
              Object.fromEntries(Object.entries(resources).map(([key, r]) => [key, result(r)])),
            consoleFetchJSON: () => Promise.resolve({ items: [] }),
          };
        },
        { objects },
      );
      for (const script of manifest.loadScripts)
        await page.addScriptTag({ url: `${origin}${manifest.baseURL}${script}` });
    });

    it('has every module the extensions reference, with the exported components', async () => {
      for (const [module, exported] of referencedExports()) {
        const found = await page.evaluate(
          async ({ name, module, exported }) => {
            const w = globalThis as unknown as Record<string, unknown>;
            const entry = (w['__entries'] as Record<string, unknown>)[name] as {
              init(scope: unknown): Promise<void> | void;
              get(module: string): Promise<() => Record<string, unknown>>;
            };
            const provided = (version: string, value: unknown) => ({
              [version]: { get: () => Promise.resolve(() => value), loaded: 1, from: 'console' },
            });
            // What the console shares with every plugin: React and its SDK.
            await entry.init({
              react: provided('18.3.1', w['React']),
              '@openshift-console/dynamic-plugin-sdk': provided('4.22.0', w['__sdk']),
            });
            const loaded = (await entry.get(module))();
            w['__module'] = loaded;
            return exported.map((e) => `${e}:${typeof loaded[e]}`);
          },
          { name: CONSOLE_PLUGIN_NAME, module, exported },
        );
        expect(found).toEqual(exported.map((e) => `${e}:function`));
      }
    });

    it('renders the shared view tabs from the watched objects: update progress and a gated pod', async () => {
      await page.evaluate(() => {
        const w = globalThis as unknown as StandIn;
        w.ReactDOM.createRoot(w.document.getElementById('root')).render(
          w.React.createElement(w.__module['TesseraPage']),
        );
      });
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Tessera');
      const controlPlane = page.getByTestId('progress-Control plane').getByRole('progressbar');
      await expect.poll(() => controlPlane.count()).toBe(1);
      await expect.poll(() => page.getByTestId('insights').textContent()).toContain('Degraded');
      await page.getByRole('tab', { name: 'Pod placement' }).click();
      await expect
        .poll(() => page.getByTestId('gated-summary').textContent())
        .toContain(`1 pod gated; the oldest, ${namespace.name}/${gatedPod}`);
      await page.getByRole('tab', { name: 'NodePools' }).click();
      await expect.poll(() => page.getByText('NodePools: nothing to show on this cluster').count()).toBe(1);
      expect(errors).toEqual([]);
    });

    it('renders the Cluster Settings tab with the same views', async () => {
      await page.evaluate(() => {
        const w = globalThis as unknown as StandIn;
        const host = w.document.createElement('section');
        host.id = 'cluster-settings-tab';
        host.setAttribute('aria-label', 'Cluster Settings tab');
        w.document.body.append(host);
        w.ReactDOM.createRoot(host).render(w.React.createElement(w.__module['TesseraClusterSettingsTab']));
      });
      const tab = page.locator('#cluster-settings-tab');
      await expect
        .poll(() => tab.getByRole('tab', { name: 'Update' }).getAttribute('aria-selected'))
        .toBe('true');
      await expect.poll(() => tab.getByTestId('progress-Control plane').count()).toBe(1);
      expect(errors).toEqual([]);
    });
  });

  describe("its manifests on the API server with OpenShift's ConsolePlugin CRD", () => {
    const ConsolePlugins = resource('console.openshift.io', 'v1', 'consoleplugins', 'ConsolePlugin', false);
    const fieldManager = 'tessera-console-plugin-test';

    beforeAll(async () => {
      const crd = parse(
        readFileSync(fixturePath('openshift-api/console.openshift.io_consoleplugins.crd.yaml'), 'utf8'),
      ) as KubeObject;
      await applyCrds(client, [crd], { fieldManager });
    });

    it('applies every generated object, the ConsolePlugin pointing at the Service', async () => {
      const objects = consolePluginManifests({
        namespace: namespace.name,
        image: 'quay.io/tessera/tessera:v0',
      });
      const types: Record<string, ResourceType> = {
        ServiceAccount: resource('', 'v1', 'serviceaccounts', 'ServiceAccount', true),
        Service: resource('', 'v1', 'services', 'Service', true),
        Deployment: resource('apps', 'v1', 'deployments', 'Deployment', true),
        NetworkPolicy: resource('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true),
        ConsolePlugin: ConsolePlugins,
      };
      expect(objects.map((o) => o.kind).sort()).toEqual(Object.keys(types).sort());
      try {
        for (const object of objects)
          await new ResourceClient<KubeObject>(client, types[object.kind] ?? ConsolePlugins).apply(
            object as KubeObject,
            {
              fieldManager,
              force: true,
            },
          );
        const plugin = (await new ResourceClient<KubeObject>(client, ConsolePlugins).get({
          name: CONSOLE_PLUGIN_NAME,
        })) as KubeObject & { spec: { backend: { service: Record<string, unknown> } } };
        expect(plugin.spec.backend.service).toEqual({
          name: CONSOLE_PLUGIN_NAME,
          namespace: namespace.name,
          port: 9443,
          basePath: '/',
        });
      } finally {
        await new ResourceClient<KubeObject>(client, ConsolePlugins)
          .delete({ name: CONSOLE_PLUGIN_NAME })
          .catch(() => undefined);
      }
    });

    it("the OLM bundle's variant: the init container, as its service account with only its ClusterRole, applies the ConsolePlugin", async () => {
      const objects = consolePluginManifests({ namespace: namespace.name, image: 'x', registration: 'pods' });
      const types: Record<string, ResourceType> = {
        ServiceAccount: resource('', 'v1', 'serviceaccounts', 'ServiceAccount', true),
        ClusterRole: resource('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
        ClusterRoleBinding: resource(
          'rbac.authorization.k8s.io',
          'v1',
          'clusterrolebindings',
          'ClusterRoleBinding',
          false,
        ),
      };
      const grants = objects.filter((o) => types[o.kind]);
      expect(grants.map((o) => o.kind).sort()).toEqual([
        'ClusterRole',
        'ClusterRoleBinding',
        'ServiceAccount',
      ]);
      const plugins = new ResourceClient<KubeObject>(client, ConsolePlugins);
      try {
        for (const object of grants)
          await new ResourceClient<KubeObject>(client, types[object.kind] as ResourceType).apply(
            object as KubeObject,
            { fieldManager, force: true },
          );
        const user = `system:serviceaccount:${namespace.name}:${CONSOLE_PLUGIN_NAME}`;
        // The authorizer learns of the new binding from its informer: wait until it answers as the pod will see it.
        await eventually(
          async () => {
            const review = await client.request<{ status: { allowed: boolean } }>({
              method: 'POST',
              path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
              body: {
                apiVersion: 'authorization.k8s.io/v1',
                kind: 'SubjectAccessReview',
                spec: {
                  user,
                  groups: [
                    'system:serviceaccounts',
                    `system:serviceaccounts:${namespace.name}`,
                    'system:authenticated',
                  ],
                  resourceAttributes: {
                    group: 'console.openshift.io',
                    resource: 'consoleplugins',
                    name: CONSOLE_PLUGIN_NAME,
                    verb: 'create',
                  },
                },
              },
            });
            expect(review.status.allowed).toBe(true);
          },
          { what: `RBAC allows ${user} to create the ConsolePlugin` },
        );
        const asPod = await serviceAccountKubeConfig(
          testKubeConfig(),
          client,
          namespace.name,
          CONSOLE_PLUGIN_NAME,
        );
        const out: string[] = [];
        // Twice: a restarted pod applies it again, as the same field manager, without a conflict.
        for (let run = 0; run < 2; run++)
          await runRegisterCommand({ connection: asPod, namespace: namespace.name, out: (l) => out.push(l) });
        expect(out).toEqual(
          Array(2).fill(
            `ConsolePlugin ${CONSOLE_PLUGIN_NAME} applied: the console loads the plugin from Service ${namespace.name}/${CONSOLE_PLUGIN_NAME}`,
          ),
        );
        const plugin = (await plugins.get({ name: CONSOLE_PLUGIN_NAME })) as KubeObject & {
          metadata: { managedFields?: { manager: string }[] };
          spec: unknown;
        };
        expect(plugin.spec).toEqual(consolePluginObject(namespace.name)['spec']);
        expect(plugin.metadata.managedFields?.map((f) => f.manager)).toEqual([REGISTRATION_FIELD_MANAGER]);
        // The grant covers that one name: the token can create no other ConsolePlugin.
        const other = {
          ...consolePluginObject(namespace.name),
          metadata: { name: uniqueName('other-plugin') },
        };
        const refused = new ResourceClient<KubeObject>(new KubeClient(asPod), ConsolePlugins).apply(
          other as unknown as KubeObject,
          { fieldManager: REGISTRATION_FIELD_MANAGER, force: true },
        );
        await expect(refused).rejects.toMatchObject({ statusCode: 403 });
      } finally {
        await plugins.delete({ name: CONSOLE_PLUGIN_NAME }).catch(() => undefined);
        for (const object of grants.filter((o) => o.kind !== 'ServiceAccount'))
          await new ResourceClient<KubeObject>(client, types[object.kind] as ResourceType)
            .delete({ name: object.metadata.name })
            .catch(() => undefined);
      }
    });

    it('is refused by the CRD when malformed (the schema is in force)', async () => {
      const plugin = consolePluginManifests({ namespace: namespace.name, image: 'x' }).find(
        (o) => o.kind === 'ConsolePlugin',
      );
      expect(plugin).toBeDefined();
      const bad = structuredClone(plugin) as unknown as KubeObject & {
        spec: { backend: { service: Record<string, unknown> } };
      };
      bad.metadata = { name: uniqueName('bad-plugin') };
      bad.spec.backend.service['port'] = 70_000;
      const refused = new ResourceClient<KubeObject>(client, ConsolePlugins).create(bad);
      await expect(refused).rejects.toBeInstanceOf(ApiStatusError);
      await expect(refused).rejects.toMatchObject({ statusCode: 422 });
    });
  });
});
