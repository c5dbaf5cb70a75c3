// Pod placement's monitoring as OpenShift's platform Prometheus runs it, with real parts on loopback: the operator's
// controller (`tessera podplacement operator --components=controller`, a process, with its own service account and
// the RBAC of deploy/podplacement/base) serves /metrics with the bundle's metrics flags, the certificate in
// --metrics-cert-dir signed by a CA that stands in for the service CA; the project's Prometheus scrapes it with the
// bundle ServiceMonitor's settings (scheme, path, the bearer token of prometheus-k8s, the CA it names, its
// serverName; the job named after the Service and the `controller` target label, as the Prometheus operator makes
// them) and evaluates the bundle's PrometheusRule (its `for:` shortened). It proves:
//  1. Prometheus' token (a ServiceAccount allowed `get` on /metrics, as OpenShift's prometheus-k8s ClusterRole
//     allows) scrapes; a scrape without a token is refused with 401, a token without that grant with 403;
//  2. the probes stay plain HTTP for the kubelet, and the probe port no longer serves /metrics;
//  3. PodPlacementControllerDown fires once the controller stops, with its runbook link.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBinaries, projectRoot } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import {
  type ComponentProcess,
  freePort,
  spawnComponent,
  stopProcess,
  waitUntilHealthy,
} from '../../../src/devcluster/processes.js';
import { installPodPlacementCrds } from '../../../src/podplacement/api/install.js';
import { DEFAULT_OPERATOR_NAMESPACE } from '../../../src/podplacement/constants.js';
import { createCertificateAuthority, KubeClient } from '../../../src/runtime/index.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { prepareOpenShiftLikeCluster } from '../../support/deploy.js';
import { tokenKubeConfig } from '../../support/identities.js';
import { startTessera } from '../../support/supervisor.js';

/** The suggested namespace: the one the bundle ServiceMonitor's serverName names. */
const NS = DEFAULT_OPERATOR_NAMESPACE;
const MONITORING_NS = 'openshift-monitoring';
const BUNDLE = path.join(projectRoot, 'bundle/manifests');

interface Endpoint {
  port: string;
  scheme: string;
  path: string;
  bearerTokenFile?: string;
  tlsConfig: { caFile?: string; serverName?: string; insecureSkipVerify?: boolean };
}
interface ServiceMonitor {
  metadata: { name: string };
  spec: {
    podTargetLabels?: string[];
    endpoints: Endpoint[];
    selector: { matchLabels: Record<string, string> };
  };
}
interface CsvDeployment {
  name: string;
  spec: {
    template: { metadata: { labels: Record<string, string> }; spec: { containers: { args: string[] }[] } };
  };
}
interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
}
interface Target {
  labels: Record<string, string>;
  health: string;
  lastError: string;
}

const readYaml = <T>(file: string): T => parse(readFileSync(path.join(BUNDLE, file), 'utf8')) as T;

let cluster: DevCluster;
let admin: KubeClient;
let work: string;
let promUrl = '';
let metricsPort = 0;
let probePort = 0;
let serverName = '';
let caPem = '';
const tokens: Record<'prometheus' | 'stranger', string> = { prometheus: '', stranger: '' };
const processes: ComponentProcess[] = [];
let operator: ReturnType<typeof startTessera> | undefined;

async function tokenOf(namespace: string, name: string): Promise<string> {
  const tr = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return tr.status.token;
}

async function create(pathName: string, body: object): Promise<void> {
  await admin.request({ method: 'POST', path: pathName, body });
}

async function promApi<T>(query: string): Promise<T> {
  const res = await fetch(`${promUrl}${query}`);
  const body = (await res.json()) as { status: string; data: T };
  if (body.status !== 'success') throw new Error(`${query}: ${JSON.stringify(body)}`);
  return body.data;
}

/** GET /metrics on the operator as a scraper would send it, verifying the certificate as the ServiceMonitor does. */
async function scrape(token: string | undefined): Promise<{ status: number; body: string }> {
  const dispatcher = new Agent({ connect: { ca: caPem, servername: serverName } });
  try {
    const res = await request(`https://127.0.0.1:${metricsPort}/metrics`, {
      dispatcher,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
    return { status: res.statusCode, body: await res.body.text() };
  } finally {
    await dispatcher.close();
  }
}

beforeAll(async () => {
  const bins = await ensureBinaries(['prometheus']);
  cluster = await startApiServerOnlyTestCluster(uniqueName('metrics'));
  const adminKc = await cluster.kubeConfig();
  admin = new KubeClient(adminKc);
  work = mkdtempSync(path.join(tmpdir(), 'tessera-metrics-'));

  // The cluster as OpenShift has it (openshift-config, openshift-monitoring, the OpenShift CRDs the controller
  // watches), the pod placement CRDs, and deploy/podplacement/base's namespace and RBAC as the admin applies them.
  await prepareOpenShiftLikeCluster(admin);
  await installPodPlacementCrds(admin);
  const base = path.join(projectRoot, 'deploy/podplacement/base');
  const rbac = ['namespace.yaml', 'rbac.yaml'].flatMap((f) =>
    readFileSync(path.join(base, f), 'utf8')
      .split(/^---$/m)
      .map(
        (d) =>
          parse(d) as {
            kind: string;
            apiVersion: string;
            metadata: { name: string; namespace?: string };
          } | null,
      )
      .filter((o) => o !== null),
  );
  for (const o of rbac) {
    const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
    const plural = `${o.kind.toLowerCase()}s`.replace(/ys$/, 'ies');
    const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : '';
    await create(`${prefix}${ns}/${plural}`, o);
  }

  // Prometheus' identity, as OpenShift's prometheus-k8s: allowed `get` on /metrics (cluster-wide, by its own
  // ClusterRole); and a stranger in the same namespace without that grant.
  for (const name of ['prometheus-k8s', 'stranger'])
    await create(`/api/v1/namespaces/${MONITORING_NS}/serviceaccounts`, { metadata: { name } });
  await create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: 'test-prometheus-k8s' },
    rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
  });
  await create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'test-prometheus-k8s' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'test-prometheus-k8s' },
    subjects: [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: MONITORING_NS }],
  });
  tokens.prometheus = await tokenOf(MONITORING_NS, 'prometheus-k8s');
  tokens.stranger = await tokenOf(MONITORING_NS, 'stranger');

  // The bundle: what OLM installs on OpenShift.
  const serviceMonitor = readYaml<ServiceMonitor>(
    'pod-placement-metrics_monitoring.coreos.com_v1_servicemonitor.yaml',
  );
  const endpoint = serviceMonitor.spec.endpoints[0];
  if (!endpoint?.bearerTokenFile || !endpoint.tlsConfig.caFile || !endpoint.tlsConfig.serverName)
    throw new Error(
      `the bundle's ServiceMonitor sends no token or verifies no CA: ${JSON.stringify(endpoint)}`,
    );
  serverName = endpoint.tlsConfig.serverName;
  const csv = readYaml<{ spec: { install: { spec: { deployments: CsvDeployment[] } } } }>(
    'tessera.clusterserviceversion.yaml',
  );
  const controller = csv.spec.install.spec.deployments.find((d) => d.name === 'pod-placement-controller');
  const bundleArgs = controller?.spec.template.spec.containers[0]?.args ?? [];
  const metricsArgs = bundleArgs.filter((a) => a.startsWith('--metrics-'));
  expect(metricsArgs).toEqual(
    expect.arrayContaining([
      '--metrics-bind-address=:8443',
      '--metrics-secure',
      expect.stringMatching(/^--metrics-cert-dir=/),
    ]),
  );

  // The serving certificate, as the service CA issues it for the metrics Service (its DNS name in serverName).
  const ca = await createCertificateAuthority('test-service-ca');
  const leaf = await ca.issue({ commonName: serverName, dnsNames: [serverName], usage: 'server' });
  caPem = ca.certPem;
  const certDir = path.join(work, 'metrics-tls');
  mkdirSync(certDir);
  writeFileSync(path.join(certDir, 'tls.crt'), leaf.certPem);
  writeFileSync(path.join(certDir, 'tls.key'), leaf.keyPem, { mode: 0o600 });
  const caFile = path.join(work, 'service-ca.crt');
  writeFileSync(caFile, caPem);

  // The controller, with its own service account's token and the bundle's metrics flags (on loopback, a free port,
  // the test's certificate directory).
  const operatorKc = tokenKubeConfig(
    adminKc,
    'pod-placement-controller',
    await tokenOf(NS, 'pod-placement-controller'),
  );
  const kubeconfig = path.join(work, 'operator.kubeconfig');
  writeFileSync(kubeconfig, operatorKc.exportConfig(), { mode: 0o600 });
  metricsPort = await freePort();
  probePort = await freePort();
  const localized = metricsArgs.map((a) =>
    a.startsWith('--metrics-bind-address=')
      ? `--metrics-bind-address=127.0.0.1:${metricsPort}`
      : a.startsWith('--metrics-cert-dir=')
        ? `--metrics-cert-dir=${certDir}`
        : a,
  );
  operator = startTessera([
    'podplacement',
    'operator',
    `--kubeconfig=${kubeconfig}`,
    `--namespace=${NS}`,
    '--components=controller',
    '--tls=self-managed',
    '--webhook-url=https://127.0.0.1:1',
    `--probe-port=${probePort}`,
    ...localized,
  ]);
  await eventually(
    async () => {
      const res = await scrape(undefined);
      if (res.status !== 401) throw new Error(`metrics answered ${res.status}`);
    },
    { timeoutMs: 120_000, what: `the operator's metrics listener (log: ${operator.logFile})` },
  );

  // Prometheus, scraping as the ServiceMonitor says (1 s apart for the test), and two scrapes that must be refused.
  const prometheusToken = path.join(work, 'prometheus.token');
  const strangerToken = path.join(work, 'stranger.token');
  writeFileSync(prometheusToken, tokens.prometheus, { mode: 0o600 });
  writeFileSync(strangerToken, tokens.stranger, { mode: 0o600 });
  const podLabels = controller?.spec.template.metadata.labels ?? {};
  const targetLabels = Object.fromEntries(
    (serviceMonitor.spec.podTargetLabels ?? []).map((l) => [l, podLabels[l] ?? '']),
  );
  const tls = { ca_file: caFile, server_name: serverName };
  const job = (name: string, credentialsFile?: string) => ({
    job_name: name,
    scheme: endpoint.scheme,
    metrics_path: endpoint.path,
    scrape_interval: '1s',
    ...(credentialsFile ? { authorization: { type: 'Bearer', credentials_file: credentialsFile } } : {}),
    tls_config: tls,
    static_configs: [{ targets: [`127.0.0.1:${metricsPort}`], labels: { namespace: NS, ...targetLabels } }],
  });
  writeFileSync(
    path.join(work, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: ['rules.yml'],
      scrape_configs: [
        // The Prometheus operator names a ServiceMonitor's job after the Service it selects.
        job(serviceMonitor.metadata.name, prometheusToken),
        job('without-token'),
        job('without-rbac', strangerToken),
      ],
    }),
  );
  // The bundle's rules, evaluated every second, each `for:` shortened to one second.
  const rule = readYaml<{ spec: { groups: { name: string; rules: Record<string, unknown>[] }[] } }>(
    'multiarch-tuning-operator-rules_monitoring.coreos.com_v1_prometheusrule.yaml',
  );
  writeFileSync(
    path.join(work, 'rules.yml'),
    stringify({
      groups: rule.spec.groups.map((g) => ({
        ...g,
        interval: '1s',
        rules: g.rules.map((r) => ({ ...r, for: '1s' })),
      })),
    }),
  );
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  const prometheus = spawnComponent({
    name: 'prometheus',
    binary: bins.prometheus,
    args: [
      `--config.file=${path.join(work, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(work, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    logFile: path.join(work, 'prometheus.log'),
    cwd: work,
  });
  processes.push(prometheus);
  await waitUntilHealthy(prometheus, async () => (await fetch(`${promUrl}/-/ready`)).status === 200, 120_000);
}, 45 * 60_000);

afterAll(async () => {
  if (operator && operator.child.exitCode === null && operator.child.signalCode === null) {
    const exited = new Promise((resolve) => operator?.child.once('exit', resolve));
    operator.child.kill('SIGKILL');
    await exited;
  }
  for (const p of processes.reverse()) await stopProcess(p);
  await admin?.close();
  await cluster?.stop({ wipe: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Prometheus' targets by job, once each has been scraped. */
async function scrapedTargets(): Promise<Map<string, Target>> {
  return eventually(
    async () => {
      const data = await promApi<{ activeTargets: Target[] }>('/api/v1/targets');
      const byJob = new Map(data.activeTargets.map((t) => [t.labels['job'] ?? '', t]));
      for (const t of byJob.values()) if (t.health === 'unknown') throw new Error('not scraped yet');
      if (byJob.size < 3) throw new Error(`targets: ${[...byJob.keys()].join(', ')}`);
      return byJob;
    },
    { timeoutMs: 60_000, what: 'every target scraped once' },
  );
}

async function controllerDownAlert(): Promise<{ state: string; alert?: Alert }> {
  const rules = await promApi<{ groups: { rules: { name: string; state: string; alerts?: Alert[] }[] }[] }>(
    '/api/v1/rules?type=alert',
  );
  const rule = rules.groups.flatMap((g) => g.rules).find((r) => r.name === 'PodPlacementControllerDown');
  if (!rule) throw new Error('PodPlacementControllerDown is not loaded');
  return { state: rule.state, alert: rule.alerts?.[0] };
}

describe("pod placement's metrics as platform Prometheus scrapes them", () => {
  it("scrapes with Prometheus' token and the serving CA; refuses no token with 401 and a token without RBAC with 403", async () => {
    const targets = await scrapedTargets();
    const scraped = targets.get('pod-placement-metrics');
    expect(scraped).toMatchObject({ health: 'up', lastError: '' });
    expect(scraped?.labels).toMatchObject({ namespace: NS, controller: 'pod-placement-controller' });
    expect(targets.get('without-token')).toMatchObject({ health: 'down' });
    expect(targets.get('without-token')?.lastError).toContain('401');
    expect(targets.get('without-rbac')).toMatchObject({ health: 'down' });
    expect(targets.get('without-rbac')?.lastError).toContain('403');
    // The operator's own series arrived (the controller's work queue and reconcile metrics).
    const up = await promApi<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
      `/api/v1/query?query=${encodeURIComponent('count({job="pod-placement-metrics", __name__=~"workqueue_.*"})')}`,
    );
    expect(Number(up.result[0]?.value[1] ?? 0)).toBeGreaterThan(0);

    // The same answers as a scraper sees them, with what they say.
    const allowed = await scrape(tokens.prometheus);
    expect(allowed.status).toBe(200);
    expect(allowed.body).toMatch(/^# HELP /m);
    const anonymous = await scrape(undefined);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toContain('no bearer token');
    const stranger = await scrape(tokens.stranger);
    expect(stranger.status).toBe(403);
    expect(stranger.body).toContain(
      `user "system:serviceaccount:${MONITORING_NS}:stranger" may not get /metrics`,
    );
    const forged = await scrape('not-a-token');
    expect(forged.status).toBe(401);
  });

  it('keeps the probes plain HTTP for the kubelet and no longer serves /metrics on the probe port', async () => {
    const health = await fetch(`http://127.0.0.1:${probePort}/healthz`);
    expect(health.status).toBe(200);
    const moved = await fetch(`http://127.0.0.1:${probePort}/metrics`);
    expect(moved.status).toBe(404);
    expect(await moved.text()).toContain(`served at https://:${metricsPort}/metrics`);
    // The metrics port speaks TLS only.
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
  });

  it('fires PodPlacementControllerDown, with its runbook, once the controller stops', async () => {
    // While the controller is scraped, the alert is inactive.
    await eventually(
      async () => {
        const { state } = await controllerDownAlert();
        if (state !== 'inactive') throw new Error(`state ${state}`);
      },
      { timeoutMs: 60_000, what: 'PodPlacementControllerDown inactive while the controller runs' },
    );
    const run = operator;
    if (!run) throw new Error('no operator');
    const exited = new Promise((resolve) => run.child.once('exit', resolve));
    run.child.kill('SIGTERM');
    await exited;
    const { alert } = await eventually(
      async () => {
        const found = await controllerDownAlert();
        if (found.state !== 'firing') throw new Error(`state ${found.state}`);
        return found;
      },
      { timeoutMs: 60_000, what: 'PodPlacementControllerDown firing after the controller stopped' },
    );
    expect(alert).toMatchObject({
      state: 'firing',
      labels: { alertname: 'PodPlacementControllerDown', severity: 'critical' },
      annotations: {
        runbook_url:
          'https://github.com/tessera/tessera/blob/main/docs/runbooks/PodPlacementControllerDown.md',
      },
    });
  });
});
