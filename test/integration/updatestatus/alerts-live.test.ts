// Alerts from a live cluster, against real parts on loopback: Prometheus evaluates alerting rules that fire the
// alerts oc's Update Health section treats specially (an allow-listed PodDisruptionBudgetAtLimit, a critical
// alert, an info alert it drops, a pending one it drops); kube-rbac-proxy guards its API as on OpenShift
// (TokenReview for bearer tokens, client certificates against the cluster CA, SubjectAccessReview for
// `get prometheuses/api`) against the test's kube-apiserver; the `openshift-monitoring/thanos-querier` Route names
// it. The command reads alerts as the kubeconfig user (token or certificate), `--prometheus-url` skips the Route,
// users without access get oc's notice and the rest of the report, and the controller reads alerts with its own
// service account.
import { setMaxListeners } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERTS_TEST_BINARIES, ensureBinaries } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import {
  type ComponentProcess,
  freePort,
  spawnComponent,
  stopProcess,
  waitUntilHealthy,
} from '../../../src/devcluster/processes.js';
import { SharedInformerFactory } from '../../../src/runtime/cache/informer-factory.js';
import { KubeClient } from '../../../src/runtime/client.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { Namespaces } from '../../../src/runtime/resources.js';
import { createLiveAlertsReader } from '../../../src/updatestatus/alertsource.js';
import { installUpdateStatusCrd, UpdateStatuses } from '../../../src/updatestatus/api/install.js';
import type { UpdateStatus } from '../../../src/updatestatus/api/schema.js';
import { snapshotNow } from '../../../src/updatestatus/assess.js';
import { type UpgradeStatusOptions, runUpgradeStatus } from '../../../src/updatestatus/command.js';
import { createUpdateStatusController } from '../../../src/updatestatus/controller.js';
import {
  ClusterOperators,
  ClusterVersions,
  MachineConfigPools,
  MachineConfigs,
  Routes,
  installOpenShiftDevCrds,
} from '../../../src/updatestatus/api/dev-crds.js';
import { MILLISECOND } from '../../../src/updatestatus/gotime.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { fixturePath } from '../../support/fixtures.js';
import { eventually, startApiServerOnlyTestCluster } from '../../support/cluster.js';
import { captureCommandIO } from '../../support/command-io.js';
import { createSnapshotObjects, liveStatusOptions } from '../../support/updatestatus.js';
import { FakeClock } from '../../../src/runtime/testing/index.js';

const fixtures = fixturePath('oc-upgrade-status');
/** An updating cluster without alerts of its own. */
const CASE = '4.16.0-compact';
const NS = 'tessera-alerts';

const RULES = `groups:
  - name: update-status
    interval: 1s
    rules:
      - alert: PodDisruptionBudgetAtLimit
        expr: vector(1)
        labels: { severity: warning, namespace: openshift-monitoring }
        annotations:
          summary: The pod disruption budget is preventing further disruption to pods.
          description: The pod disruption budget is at the minimum disruptions allowed level.
          runbook_url: https://example.test/runbooks/PodDisruptionBudgetAtLimit.md
      - alert: ClusterOperatorDegraded
        expr: vector(1)
        labels: { severity: critical, namespace: openshift-cluster-version }
        annotations:
          summary: Cluster operator has been degraded for 30 minutes.
          message: The kube-apiserver operator is degraded.
          runbook_url: https://example.test/runbooks/ClusterOperatorDegraded.md
      - alert: UpdateAvailable
        expr: vector(1)
        labels: { severity: info, namespace: openshift-cluster-version }
        annotations: { summary: Your upstream update recommendation service recommends an update. }
      - alert: KubePodNotReadyForAnHour
        expr: vector(1)
        for: 1h
        labels: { severity: critical, namespace: openshift-monitoring }
        annotations: { summary: A pod has been not ready for an hour. }
`;

describe('alerts from a live cluster (Prometheus behind kube-rbac-proxy)', () => {
  let cluster: DevCluster;
  let admin: KubeClient;
  let work: string;
  let now: bigint;
  let proxyPort = 0;
  const processes: ComponentProcess[] = [];
  /** Kubeconfig files of the test's users. */
  const kubeconfigs: Record<'reader' | 'noAlerts' | 'noRoute', string> = {
    reader: '',
    noAlerts: '',
    noRoute: '',
  };

  beforeAll(async () => {
    // Built on first use (minutes when cold; cached afterwards).
    const bins = await ensureBinaries(ALERTS_TEST_BINARIES);
    cluster = await startApiServerOnlyTestCluster('updatestatus-alerts');
    admin = new KubeClient(await cluster.kubeConfig());
    work = mkdtempSync(path.join(tmpdir(), 'tessera-alerts-'));
    const pki = path.join(cluster.stateDir, 'pki');

    // Prometheus: alerting rules only, evaluated every second, on loopback.
    const promPort = await freePort();
    writeFileSync(path.join(work, 'rules.yml'), RULES);
    writeFileSync(
      path.join(work, 'prometheus.yml'),
      'global: { evaluation_interval: 1s }\nrule_files: [rules.yml]\n',
    );
    const prometheus = spawnComponent({
      name: 'prometheus',
      binary: bins.prometheus,
      args: [
        `--config.file=${path.join(work, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(work, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      logFile: path.join(work, 'prometheus.log'),
      cwd: work,
    });
    processes.push(prometheus);
    // Ready when the two firing rules fire (the pending one stays pending for its hour).
    await waitUntilHealthy(
      prometheus,
      async () => {
        const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/alerts`);
        const body = (await res.json()) as { data?: { alerts?: { state?: string }[] } };
        return (body.data?.alerts ?? []).filter((a) => a.state === 'firing').length >= 3;
      },
      120_000,
    );

    // kube-rbac-proxy in front of it, with a serving certificate of the cluster CA. It authorizes like the
    // proxies of OpenShift's monitoring stack: `get` on prometheuses/api `k8s` in openshift-monitoring (a
    // non-resource check of /api/v1/alerts would let every user in: system:discovery grants /api/*).
    writeFileSync(
      path.join(work, 'kube-rbac-proxy.yaml'),
      'authorization:\n  resourceAttributes:\n    namespace: openshift-monitoring\n    apiGroup: monitoring.coreos.com\n' +
        '    resource: prometheuses\n    subresource: api\n    name: k8s\n',
    );
    proxyPort = await freePort();
    const proxy = spawnComponent({
      name: 'kube-rbac-proxy',
      binary: bins['kube-rbac-proxy'],
      args: [
        `--secure-listen-address=127.0.0.1:${proxyPort}`,
        `--upstream=http://127.0.0.1:${promPort}/`,
        `--tls-cert-file=${path.join(pki, 'components.crt')}`,
        `--tls-private-key-file=${path.join(pki, 'components.key')}`,
        `--client-ca-file=${path.join(pki, 'ca.crt')}`,
        `--kubeconfig=${cluster.kubeconfigPath}`,
        `--config-file=${path.join(work, 'kube-rbac-proxy.yaml')}`,
      ],
      logFile: path.join(work, 'kube-rbac-proxy.log'),
    });
    processes.push(proxy);
    const ca = readFileSync(path.join(pki, 'ca.crt'));
    const { Agent, request } = await import('undici');
    const probeAgent = new Agent({ connect: { ca } });
    await waitUntilHealthy(
      proxy,
      async () => {
        // Up when it answers (401 without credentials).
        const res = await request(`https://127.0.0.1:${proxyPort}/api/v1/alerts`, { dispatcher: probeAgent });
        await res.body.text();
        return res.statusCode === 401;
      },
      60_000,
    );
    await probeAgent.close();

    // The cluster: stand-in CRDs, the Route, one updating case, and three users.
    await installOpenShiftDevCrds(admin);
    await installUpdateStatusCrd(admin);
    for (const type of [
      ClusterVersions,
      ClusterOperators,
      MachineConfigPools,
      MachineConfigs,
      Routes,
      UpdateStatuses,
    ]) {
      await eventually(() => new ResourceClient<KubeObject>(admin, type).list(), {
        what: `${type.plural} served`,
      });
    }
    const namespaces = new ResourceClient<KubeObject>(admin, Namespaces);
    for (const name of ['openshift-monitoring', NS]) await namespaces.create({ metadata: { name } });
    await new ResourceClient<KubeObject>(admin, Routes).create({
      metadata: { name: 'thanos-querier', namespace: 'openshift-monitoring' },
      spec: { host: `127.0.0.1:${proxyPort}`, to: { kind: 'Service', name: 'thanos-querier' } },
      status: { ingress: [{ host: `127.0.0.1:${proxyPort}`, routerName: 'default' }] },
    } as KubeObject);
    const { snapshot } = await loadSnapshot(path.join(fixtures, `${CASE}-cv.yaml`));
    now = snapshotNow(snapshot);
    await createSnapshotObjects(admin, snapshot);

    const clusterRoles = new ResourceClient<KubeObject>(admin, {
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      plural: 'clusterroles',
      kind: 'ClusterRole',
      namespaced: false,
    });
    const bindings = new ResourceClient<KubeObject>(admin, {
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      plural: 'clusterrolebindings',
      kind: 'ClusterRoleBinding',
      namespaced: false,
    });
    const readCluster = [
      {
        apiGroups: ['config.openshift.io', 'machineconfiguration.openshift.io'],
        resources: ['*'],
        verbs: ['get', 'list', 'watch'],
      },
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['update.openshift.io'], resources: ['*'], verbs: ['*'] },
    ];
    const readRoute = { apiGroups: ['route.openshift.io'], resources: ['routes'], verbs: ['get'] };
    const readAlerts = {
      apiGroups: ['monitoring.coreos.com'],
      resources: ['prometheuses/api'],
      resourceNames: ['k8s'],
      verbs: ['get'],
    };
    const users = {
      reader: [...readCluster, readRoute, readAlerts],
      noAlerts: [...readCluster, readRoute],
      noRoute: [...readCluster, readAlerts],
    } as const;
    const serviceAccounts = new ResourceClient<KubeObject>(admin, {
      group: '',
      version: 'v1',
      plural: 'serviceaccounts',
      kind: 'ServiceAccount',
      namespaced: true,
    });
    const adminKc = await cluster.kubeConfig();
    const server = adminKc.getCurrentCluster();
    for (const [user, rules] of Object.entries(users) as [keyof typeof users, readonly unknown[]][]) {
      const name = `alerts-${user.toLowerCase()}`;
      await clusterRoles.create({ metadata: { name }, rules } as KubeObject);
      await serviceAccounts.create({ metadata: { name, namespace: NS } });
      await bindings.create({
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace: NS }],
      } as KubeObject);
      const token = await admin.request<{ status: { token: string } }>({
        method: 'POST',
        path: `/api/v1/namespaces/${NS}/serviceaccounts/${name}/token`,
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 3600 },
        },
      });
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [
          { name: 'c', server: server?.server ?? '', caData: server?.caData, caFile: server?.caFile },
        ],
        users: [{ name: 'u', token: token.status.token }],
        contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
        currentContext: 'ctx',
      });
      kubeconfigs[user] = path.join(work, `${user}.kubeconfig`);
      writeFileSync(kubeconfigs[user], kc.exportConfig(), { mode: 0o600 });
    }
  }, 45 * 60_000);

  afterAll(async () => {
    for (const p of processes.reverse()) await stopProcess(p);
    await admin?.close();
    await cluster?.stop({ wipe: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const options = (kubeconfig: string, extra: Partial<UpgradeStatusOptions> = {}): UpgradeStatusOptions =>
    liveStatusOptions(kubeconfig, { details: 'all', now, source: 'cluster', ...extra });

  /** The same case rendered from files, with `alertsJson` as its alerts file: oc's snapshot semantics. */
  async function snapshotText(alertsJson: string | undefined): Promise<string> {
    const dir = mkdtempSync(path.join(work, 'case-'));
    for (const suffix of ['cv', 'co', 'mcp', 'mc', 'node'])
      copyFileSync(path.join(fixtures, `${CASE}-${suffix}.yaml`), path.join(dir, `c-${suffix}.yaml`));
    if (alertsJson !== undefined) writeFileSync(path.join(dir, 'c-alerts.json'), alertsJson);
    const io = captureCommandIO();
    await runUpgradeStatus(options('', { mockClusterVersion: path.join(dir, 'c-cv.yaml') }), io);
    return io.stdout();
  }

  async function prometheusAlerts(): Promise<string> {
    // Straight from Prometheus, as the admin would see it through the proxy.
    const kc = await cluster.kubeConfig();
    const reader = createLiveAlertsReader(kc, admin, { prometheusUrl: `https://127.0.0.1:${proxyPort}` });
    const reading = await reader.read();
    await reader.close();
    expect(reading.notice).toBe('');
    return JSON.stringify(reading.alerts);
  }

  it('a user with access (bearer token) sees the firing alerts oc would show, found through the Route', async () => {
    const io = captureCommandIO();
    await runUpgradeStatus(options(kubeconfigs.reader), io);
    const text = io.stdout();
    expect(text).toContain(
      'Alert is firing: The pod disruption budget is preventing further disruption to pods.',
    );
    expect(text).toContain('Alert is firing: Cluster operator has been degraded for 30 minutes.');
    expect(text).toContain(
      'Alert started firing during the update. The alert description is: The kube-apiserver operator is degraded.',
    );
    // Info-level and pending alerts are left out, as oc leaves them out.
    expect(text).not.toContain('upstream update recommendation');
    expect(text).not.toContain('not ready for an hour');
    // Byte for byte what oc's rules make of the same alerts.
    expect(text).toBe(await snapshotText(await prometheusAlerts()));
    expect(io.stderr()).toBe('');
  });

  it('a client-certificate user (the admin kubeconfig) reads them too, and --prometheus-url needs no Route', async () => {
    const viaRoute = captureCommandIO();
    await runUpgradeStatus(options(cluster.kubeconfigPath), viaRoute);
    expect(viaRoute.stdout()).toContain(
      'Alert is firing: Cluster operator has been degraded for 30 minutes.',
    );

    const direct = captureCommandIO();
    await runUpgradeStatus(
      options(kubeconfigs.noRoute, { prometheusUrl: `https://127.0.0.1:${proxyPort}/` }),
      direct,
    );
    expect(direct.stdout()).toBe(viaRoute.stdout());
  });

  it("a user without access to the alerts gets oc's notice and the report without alerts", async () => {
    const io = captureCommandIO();
    await runUpgradeStatus(options(kubeconfigs.noAlerts), io);
    const notice =
      "Unable to fetch alerts, ignoring alerts in 'Update Health':  failed to get alerts from Thanos: unable to get " +
      `/api/v1/alerts from URI in the openshift-monitoring/thanos-querier Route: 127.0.0.1:${proxyPort}->GET status code=403\n`;
    const withoutAlerts = readFileSync(path.join(fixtures, `${CASE}.detailed-output`), 'utf8');
    expect(io.stdout()).toBe(notice + withoutAlerts);
  });

  it("a user who cannot read the Route gets the API server's refusal in oc's notice", async () => {
    const io = captureCommandIO();
    await runUpgradeStatus(options(kubeconfigs.noRoute), io);
    expect(io.stdout()).toBe(
      "Unable to fetch alerts, ignoring alerts in 'Update Health':  failed to get alerts from Thanos: " +
        `routes.route.openshift.io "thanos-querier" is forbidden: User "system:serviceaccount:${NS}:alerts-noroute" ` +
        'cannot get resource "routes" in API group "route.openshift.io" in the namespace "openshift-monitoring"\n' +
        readFileSync(path.join(fixtures, `${CASE}.detailed-output`), 'utf8'),
    );
  });

  it('the controller fills Health insights from alerts with its own service account', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigs.reader);
    const client = new KubeClient(kc);
    const stop = new AbortController();
    setMaxListeners(32, stop.signal);
    const alerts = createLiveAlertsReader(kc, client);
    const informers = new SharedInformerFactory({ client });
    const { controller } = createUpdateStatusController({
      client,
      informers,
      clock: new FakeClock(Number(now / MILLISECOND)),
      alerts,
    });
    const running = [informers.start(stop.signal), controller.start(stop.signal)];
    try {
      const statuses = new ResourceClient<UpdateStatus & KubeObject>(client, UpdateStatuses);
      const summaries = await eventually(
        async () => {
          const obj = await statuses.get({ name: 'cluster' });
          const found = (obj.status?.controlPlane?.informers ?? [])
            .flatMap((i) => i.insights ?? [])
            .flatMap((i) => (i.insight.health ? [i.insight.health.impact.summary] : []));
          if (!found.some((s) => s.startsWith('Alert is firing'))) throw new Error(JSON.stringify(found));
          return found;
        },
        { timeoutMs: 30_000, what: 'alert health insights in UpdateStatus cluster' },
      );
      expect(summaries).toEqual(
        expect.arrayContaining([
          'Alert is firing: The pod disruption budget is preventing further disruption to pods.',
          'Alert is firing: Cluster operator has been degraded for 30 minutes.',
        ]),
      );
      expect(summaries.join('\n')).not.toContain('upstream update recommendation');
    } finally {
      stop.abort();
      await Promise.allSettled(running);
      await alerts.close();
      await client.close();
    }
  });
});
