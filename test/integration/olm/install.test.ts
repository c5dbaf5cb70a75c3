// Tessera installed by OLM (operator-lifecycle-manager v0.36, built from its module) on a private local control
// plane, as a cluster admin does on OperatorHub: OLM's own `olm` and `catalog` operators run against the apiserver
// (test/support/olm.ts); kwok runs the pods OLM creates, so Deployments become Available.
//  1. The bundle (bundle/manifests: the CSV and its CRDs) through an AllNamespaces OperatorGroup: the CSV reaches
//     Succeeded, the CRDs are established, OLM registers the CSV's webhooks (admission and conversion) with a CA of
//     its own that signed the serving certificate it put in the Secret the webhook Deployment mounts, both
//     Deployments are Available; deleting the CSV removes what OLM created.
//  2. The catalog path: a file-based catalog of that bundle (`opm validate`, then `opm serve` on loopback), a
//     CatalogSource naming that address, a Subscription: the catalog is READY, the Subscription resolves to the
//     bundle and OLM starts a Job to unpack the bundle image, whose pod copies the image's files and writes them
//     into a ConfigMap. That is where OLM stops on this machine: kwok, standing in for the kubelet, marks the pod
//     Succeeded without pulling an image or running a container, so the ConfigMap stays empty and OLM waits for the
//     manifests, with no InstallPlan and no CSV.
//  3. The rest of that path, with the unpack pod's `extract` container run by the test on this machine (its own
//     command: real opm, same flags, the bundle directory as the files the `pull` init container would copy):
//     OLM writes and executes the InstallPlan, and the CSV installed from the catalog passes the checks of 1.
import { X509Certificate } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { projectRoot } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { catalogHead } from '../../../hack/bundle/catalog.js';
import { KubeClient } from '../../../src/runtime/index.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import { type Olm, OLM_NAMESPACE, OPERATORS_NAMESPACE, startOlm } from '../../support/olm.js';
import { prometheusOperatorCrd } from '../../support/deploy.js';
import { csvPermissionObjects } from '../../support/olm-install.js';

const BUNDLE = path.join(projectRoot, 'bundle');
const BUNDLE_IMAGE = 'quay.io/tessera/tessera-bundle:v0.1.0';

interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  spec?: Record<string, unknown>;
}
interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface StrategyDeployment {
  name: string;
  spec: { replicas?: number };
}
interface WebhookDefinition {
  type: 'ValidatingAdmissionWebhook' | 'MutatingAdmissionWebhook' | 'ConversionWebhook';
  generateName: string;
  deploymentName: string;
  conversionCRDs?: string[];
}
interface Csv extends Manifest {
  spec: {
    version: string;
    installModes: { type: string; supported: boolean }[];
    install: {
      spec: {
        deployments: StrategyDeployment[];
        permissions?: { serviceAccountName: string; rules: PolicyRule[] }[];
        clusterPermissions?: { serviceAccountName: string; rules: PolicyRule[] }[];
      };
    };
    customresourcedefinitions?: { owned?: { name: string }[] };
    webhookdefinitions?: WebhookDefinition[];
  };
  status?: { phase?: string; reason?: string; message?: string };
}
interface WebhookConfiguration {
  metadata: Meta;
  webhooks: {
    name: string;
    clientConfig: { caBundle?: string; service?: { name: string; namespace: string } };
  }[];
}
interface Crd {
  metadata: Meta;
  spec: {
    conversion?: {
      strategy: string;
      webhook?: { clientConfig?: { caBundle?: string; service?: { name: string; namespace: string } } };
    };
  };
  status?: { conditions?: { type: string; status: string }[] };
}
interface List<T> {
  items: T[];
}

/** The bundle's manifests, parsed (bundle/manifests/*.yaml). */
function bundleManifests(): Manifest[] {
  const dir = path.join(BUNDLE, 'manifests');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort()
    .flatMap((f) =>
      parseAllDocuments(readFileSync(path.join(dir, f), 'utf8')).map((d) => d.toJSON() as Manifest),
    );
}

let cluster: DevCluster | undefined;
let olm: Olm | undefined;
let client: KubeClient;
let work: string;
/** The bundle unpack Job the catalog path got to (its ConfigMap has the same name). */
let unpackJob: string | undefined;
const manifests = bundleManifests();
const csv = manifests.find((m) => m.kind === 'ClusterServiceVersion') as Csv;
const crds = manifests.filter((m) => m.kind === 'CustomResourceDefinition');

const get = <T>(apiPath: string): Promise<T> => client.request<T>({ method: 'GET', path: apiPath });
const create = (apiPath: string, body: object): Promise<unknown> =>
  client.request({ method: 'POST', path: apiPath, body });

/** OLM's logs on a failed wait: what the operators said is the first thing to read. */
async function waitFor<T>(what: string, check: () => Promise<T>, timeoutMs = 180_000): Promise<T> {
  try {
    return await eventually(check, { timeoutMs, intervalMs: 500, what });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${olm?.logs() ?? ''}`, { cause: err });
  }
}

beforeAll(async () => {
  cluster = await startTestCluster({ name: uniqueName('olm'), nodes: 'default' });
  client = new KubeClient(await cluster.kubeConfig());
  // Builds olm, catalog and opm on first use (minutes, once; CI builds them before the tests).
  olm = await startOlm(cluster);
  work = path.join(cluster.stateDir, 'olm-test');
  mkdirSync(work, { recursive: true });
}, 900_000);

afterAll(async () => {
  await olm?.stop();
  await client?.close();
  await cluster?.stop({ wipe: true });
}, 120_000);

describe('OLM installs the bundle through an OperatorGroup', () => {
  const ns = csv.metadata.annotations?.['operatorframework.io/suggested-namespace'] ?? 'tessera';

  it('CSV Succeeded, CRDs established, webhooks registered with OLM certificates, Deployments Available', async () => {
    expect(csv.spec.installModes.filter((m) => m.supported).map((m) => m.type)).toEqual(['AllNamespaces']);
    await create('/api/v1/namespaces', { metadata: { name: ns } });
    // AllNamespaces: an OperatorGroup without target namespaces, as OperatorHub creates for such an operator.
    await create(`/apis/operators.coreos.com/v1/namespaces/${ns}/operatorgroups`, {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'tessera' },
      spec: {},
    });
    // What an InstallPlan would create before the CSV (the catalog path below does that from the catalog): the CRDs,
    // and the service accounts with the CSV's permissions, which OLM checks as the CSV's requirements.
    for (const crd of crds)
      await create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', stripStatus(crd));
    for (const object of csvPermissionObjects(csv, ns)) await create(object.path, object.body);
    await create(
      `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions`,
      stripStatus(csv),
    );

    await expectInstalledByOlm(ns);
  }, 600_000);

  it('deleting the CSV removes the Deployments and webhooks OLM created', async () => {
    await client.request({
      method: 'DELETE',
      path: `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions/${csv.metadata.name}`,
    });
    await waitFor('OLM-owned Deployments and webhook configurations gone', async () => {
      const deployments = await client.request<List<{ metadata: Meta }>>({
        method: 'GET',
        path: `/apis/apps/v1/namespaces/${ns}/deployments`,
      });
      const webhooks = await client.request<List<{ metadata: Meta }>>({
        method: 'GET',
        path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
        query: { labelSelector: `olm.owner=${csv.metadata.name}` },
      });
      expect({
        deployments: deployments.items.map((d) => d.metadata.name),
        webhooks: webhooks.items.map((w) => w.metadata.name),
      }).toEqual({ deployments: [], webhooks: [] });
    });
    // The cluster-wide OperatorGroup goes too, so the catalog path below installs into `operators` on its own.
    await client.request({
      method: 'DELETE',
      path: `/apis/operators.coreos.com/v1/namespaces/${ns}/operatorgroups/tessera`,
    });
  }, 300_000);
});

describe('OLM catalog path: opm serve, CatalogSource, Subscription, InstallPlan', () => {
  it('resolves the Subscription from the catalog served by opm and starts unpacking the bundle', async () => {
    if (!olm) throw new Error('OLM did not start');
    // A file-based catalog of this bundle: the package and channel blobs from the project's catalog generator, the
    // bundle blob as `opm render` makes it from the bundle directory, naming the bundle image it would be pulled from.
    const version = csv.spec.version;
    const { stdout: rendered } = await runOpm(['render', BUNDLE, '--output=json']);
    const bundleBlob = { ...(JSON.parse(rendered) as Record<string, unknown>), image: BUNDLE_IMAGE };
    const catalogDir = path.join(work, 'catalog');
    mkdirSync(path.join(catalogDir, 'tessera'), { recursive: true });
    writeFileSync(
      path.join(catalogDir, 'tessera', 'catalog.json'),
      [...catalogHead([version]), bundleBlob].map((b) => JSON.stringify(b)).join('\n') + '\n',
    );
    await runOpm(['validate', catalogDir]);
    const served = await olm.serveCatalog(catalogDir);

    await create(`/apis/operators.coreos.com/v1alpha1/namespaces/${OLM_NAMESPACE}/catalogsources`, {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'tessera' },
      spec: { sourceType: 'grpc', address: served.address, displayName: 'Tessera', publisher: 'Tessera' },
    });
    await waitFor('CatalogSource READY', async () => {
      const cs = await get<{
        status?: { connectionState?: { lastObservedState?: string; address?: string } };
      }>(`/apis/operators.coreos.com/v1alpha1/namespaces/${OLM_NAMESPACE}/catalogsources/tessera`);
      expect(cs.status?.connectionState).toMatchObject({
        lastObservedState: 'READY',
        address: served.address,
      });
    });

    const channel = csv.metadata.annotations?.['operators.operatorframework.io/bundle.channel.default.v1'];
    await create(`/apis/operators.coreos.com/v1alpha1/namespaces/${OPERATORS_NAMESPACE}/subscriptions`, {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'tessera' },
      spec: {
        name: 'tessera',
        source: 'tessera',
        sourceNamespace: OLM_NAMESPACE,
        ...(channel ? { channel } : {}),
        installPlanApproval: 'Automatic',
      },
    });

    // The resolver picks this bundle from the catalog; OLM v0.36 unpacks a bundle before it writes the InstallPlan:
    // a Job in the catalog's namespace whose pod copies the bundle image's files (init containers `util` and
    // `pull`, the latter running the bundle image) and runs `opm alpha bundle extract` to write the manifests into a
    // ConfigMap of the same name. This is where OLM stops on its own here: kwok moves the pod to Running and
    // then Succeeded without pulling an image or running a container, so the Job completes with the ConfigMap
    // empty, OLM keeps waiting for the manifests, and no InstallPlan, and so no CSV, is created.
    const sub = await waitFor('Subscription unpacking the bundle', async () => {
      const got = await get<{
        status?: { conditions?: { type: string; status: string; reason?: string }[]; state?: string };
      }>(`/apis/operators.coreos.com/v1alpha1/namespaces/${OPERATORS_NAMESPACE}/subscriptions/tessera`);
      const unpacking = got.status?.conditions?.find((c) => c.type === 'BundleUnpacking');
      expect(unpacking).toMatchObject({ status: 'True', reason: 'UnpackingInProgress' });
      return got;
    });
    const conditions = Object.fromEntries((sub.status?.conditions ?? []).map((c) => [c.type, c.status]));
    expect(conditions).toMatchObject({ CatalogSourcesUnhealthy: 'False', BundleUnpacking: 'True' });
    expect(conditions.ResolutionFailed).not.toBe('True');

    interface Container {
      name: string;
      image: string;
      command?: string[];
    }
    const job = await waitFor('bundle unpack Job completed (by kwok)', async () => {
      const jobs = await get<
        List<{
          metadata: Meta;
          spec: { template: { spec: { containers: Container[]; initContainers?: Container[] } } };
          status?: { conditions?: { type: string; status: string }[] };
        }>
      >(`/apis/batch/v1/namespaces/${OLM_NAMESPACE}/jobs`);
      const [only, ...others] = jobs.items;
      expect({ found: Boolean(only), others: others.length }).toEqual({ found: true, others: 0 });
      const complete = only?.status?.conditions?.find((c) => c.type === 'Complete')?.status;
      expect(complete).toBe('True');
      return only as NonNullable<typeof only>;
    });
    const spec = job.spec.template.spec;
    expect(spec.initContainers?.find((c) => c.name === 'pull')?.image).toBe(BUNDLE_IMAGE);
    const extract = spec.containers.find((c) => c.name === 'extract');
    expect(extract?.command).toEqual([
      'opm',
      'alpha',
      'bundle',
      'extract',
      '-m',
      '/bundle/',
      '-n',
      OLM_NAMESPACE,
      '-c',
      job.metadata.name,
      '-z',
    ]);
    const configMap = await get<{ data?: Record<string, string>; binaryData?: Record<string, string> }>(
      `/api/v1/namespaces/${OLM_NAMESPACE}/configmaps/${job.metadata.name}`,
    );
    expect({ ...configMap.data, ...configMap.binaryData }).toEqual({});
    // OLM is still waiting for the manifests two resolutions after the Job completed: no InstallPlan, no CSV.
    const catalogLog = olm.catalog.logFile;
    const waits = (): number =>
      readFileSync(catalogLog, 'utf8').split('unpacking is not complete yet').length;
    const seen = waits();
    await waitFor('two more resolutions of the namespace', async () =>
      expect(waits()).toBeGreaterThanOrEqual(seen + 2),
    );
    const plans = await get<List<{ metadata: Meta }>>(
      `/apis/operators.coreos.com/v1alpha1/namespaces/${OPERATORS_NAMESPACE}/installplans`,
    );
    const csvs = await get<List<{ metadata: Meta }>>(
      `/apis/operators.coreos.com/v1alpha1/namespaces/${OPERATORS_NAMESPACE}/clusterserviceversions`,
    );
    expect({ installPlans: plans.items.length, csvs: csvs.items.map((c) => c.metadata.name) }).toEqual({
      installPlans: 0,
      csvs: [],
    });
    unpackJob = job.metadata.name;
  }, 600_000);

  it('with the unpack container command run for its pod, OLM installs the bundle from the catalog', async () => {
    if (!olm || !cluster || !unpackJob) throw new Error('the catalog path did not get to the unpack Job');
    // What kwok cannot do, done the way the pod would: the `extract` container's own command (real opm, same
    // flags) on the bundle's files, which the `pull` init container copies out of the bundle image to /bundle/.
    // It writes the manifests into the Job's ConfigMap with the cluster's admin credentials instead of the pod's.
    // The bundle ships a PrometheusRule: OLM's InstallPlan fails on a cluster without the Prometheus operator's
    // CRD ("GroupVersionKind monitoring.coreos.com/v1, Kind=PrometheusRule not found on the cluster"). OpenShift
    // has it; so does this cluster from here on (a minimal stand-in, as test/integration/deploy does).
    // The same for its ServiceMonitor.
    for (const [kind, plural] of [
      ['PrometheusRule', 'prometheusrules'],
      ['ServiceMonitor', 'servicemonitors'],
    ] as const) {
      await create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', prometheusOperatorCrd(kind));
      await waitFor(`${kind} CRD established`, async () => {
        const crd = await get<Crd>(
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.monitoring.coreos.com`,
        );
        expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
      });
    }
    const extract = [
      'alpha',
      'bundle',
      'extract',
      '-m',
      `${BUNDLE}/`,
      '-n',
      OLM_NAMESPACE,
      '-c',
      unpackJob,
      '-z',
    ];
    await runOpm([...extract, '--kubeconfig', cluster.kubeconfigPath], { CONTAINER_IMAGE: BUNDLE_IMAGE });
    const plan = await waitFor('InstallPlan Complete', async () => {
      const plans = await get<
        List<{
          metadata: Meta;
          spec: { clusterServiceVersionNames: string[]; approval: string; approved: boolean };
          status?: { phase?: string; message?: string; conditions?: { message?: string }[] };
        }>
      >(`/apis/operators.coreos.com/v1alpha1/namespaces/${OPERATORS_NAMESPACE}/installplans`);
      const [only] = plans.items;
      expect(
        only?.status?.phase,
        JSON.stringify(only?.status?.conditions ?? only?.status?.message ?? 'no InstallPlan yet'),
      ).toBe('Complete');
      return only as NonNullable<typeof only>;
    });
    expect(plan.spec).toMatchObject({
      clusterServiceVersionNames: [csv.metadata.name],
      approval: 'Automatic',
      approved: true,
    });
    await expectInstalledByOlm(OPERATORS_NAMESPACE);
  }, 600_000);
});

/**
 * The CSV reaches Succeeded in `ns`, its CRDs are established, its Deployments Available, and OLM registered its
 * webhooks (admission and conversion) with certificates of its own.
 */
async function expectInstalledByOlm(ns: string): Promise<void> {
  const succeeded = await waitFor(`CSV ${csv.metadata.name} Succeeded`, async () => {
    const got = await get<Csv>(
      `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions/${csv.metadata.name}`,
    );
    expect(got.status?.phase, `${got.status?.reason}: ${got.status?.message}`).toBe('Succeeded');
    return got;
  });
  expect(succeeded.status?.reason).toBe('InstallSucceeded');

  // The CRDs the CSV owns are established.
  const owned = (csv.spec.customresourcedefinitions?.owned ?? []).map((o) => o.name);
  expect(owned.length).toBeGreaterThan(0);
  for (const name of new Set(owned)) {
    const crd = await get<Crd>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status, name).toBe('True');
  }

  // Every Deployment of the CSV is Available with all its replicas (kwok runs the pods).
  for (const d of csv.spec.install.spec.deployments) {
    await waitFor(`Deployment ${ns}/${d.name} Available`, async () => {
      const got = await get<{
        status?: { availableReplicas?: number; conditions?: { type: string; status: string }[] };
      }>(`/apis/apps/v1/namespaces/${ns}/deployments/${d.name}`);
      expect({
        available: got.status?.conditions?.find((c) => c.type === 'Available')?.status,
        replicas: got.status?.availableReplicas,
      }).toEqual({ available: 'True', replicas: d.spec.replicas ?? 1 });
    });
  }

  // OLM's certificates: for each webhook Deployment, a Secret `<deployment>-service-cert` holding a serving
  // certificate for `<deployment>-service.<ns>.svc` signed by the CA OLM put in every webhook's caBundle.
  const definitions = csv.spec.webhookdefinitions ?? [];
  expect(definitions.length).toBeGreaterThan(0);
  const servingCert = new Map<string, X509Certificate>();
  for (const deployment of new Set(definitions.map((w) => w.deploymentName))) {
    const secret = await get<{ data?: Record<string, string> }>(
      `/api/v1/namespaces/${ns}/secrets/${deployment}-service-cert`,
    );
    expect(Object.keys(secret.data ?? {})).toEqual(expect.arrayContaining(['tls.crt', 'tls.key']));
    const cert = new X509Certificate(Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64'));
    expect(cert.subjectAltName).toContain(`DNS:${deployment}-service.${ns}.svc`);
    servingCert.set(deployment, cert);
  }
  const signedBy = (caBundle: string | undefined, deployment: string): boolean => {
    const cert = servingCert.get(deployment);
    if (!caBundle || !cert) return false;
    return cert.verify(new X509Certificate(Buffer.from(caBundle, 'base64')).publicKey);
  };

  const owner = `olm.owner=${csv.metadata.name}`;
  const admission = [
    ...(
      await client.request<List<WebhookConfiguration>>({
        method: 'GET',
        path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
        query: { labelSelector: owner },
      })
    ).items.map((c) => ({ ...c, type: 'ValidatingAdmissionWebhook' })),
    ...(
      await client.request<List<WebhookConfiguration>>({
        method: 'GET',
        path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
        query: { labelSelector: owner },
      })
    ).items.map((c) => ({ ...c, type: 'MutatingAdmissionWebhook' })),
  ];
  const registered = admission.flatMap((c) =>
    c.webhooks.map((w) => ({
      type: c.type,
      name: w.name,
      service: w.clientConfig.service,
      caBundle: w.clientConfig.caBundle,
    })),
  );
  const wantedAdmission = definitions.filter((w) => w.type !== 'ConversionWebhook');
  expect(registered.map((w) => `${w.type}/${w.name}`).sort()).toEqual(
    wantedAdmission.map((w) => `${w.type}/${w.generateName}`).sort(),
  );
  for (const w of registered) {
    const def = wantedAdmission.find((d) => d.generateName === w.name) as WebhookDefinition;
    expect(w.service).toMatchObject({ name: `${def.deploymentName}-service`, namespace: ns });
    expect(signedBy(w.caBundle, def.deploymentName), `${w.name}: caBundle signed the serving cert`).toBe(
      true,
    );
  }
  // Conversion webhooks: OLM points the CRD's conversion at the service, with the same CA. Waited for: on the
  // catalog path the InstallPlan's CRD step replaces the whole CRD from the bundle (no caBundle there) and can run
  // again after the CSV installed; OLM then sets the conversion again.
  for (const def of definitions.filter((w) => w.type === 'ConversionWebhook')) {
    for (const name of def.conversionCRDs ?? []) {
      await waitFor(`CRD ${name}: conversion through OLM's Service with OLM's CA`, async () => {
        const crd = await get<Crd>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
        expect(crd.spec.conversion?.strategy, name).toBe('Webhook');
        const clientConfig = crd.spec.conversion?.webhook?.clientConfig;
        expect(clientConfig?.service).toMatchObject({ name: `${def.deploymentName}-service`, namespace: ns });
        expect(signedBy(clientConfig?.caBundle, def.deploymentName), `${name}: conversion caBundle`).toBe(
          true,
        );
      });
    }
  }
}

async function runOpm(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ stdout: string }> {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  try {
    return await promisify(execFile)(olm?.binaries.opm ?? 'opm', [...args], {
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, ...env },
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`opm ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

function stripStatus<T extends Manifest>(object: T): Omit<T, 'status'> {
  const { status: _status, ...rest } = object as T & { status?: unknown };
  return rest;
}
