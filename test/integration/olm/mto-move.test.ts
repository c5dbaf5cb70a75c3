// The move from the Multiarch Tuning Operator (MTO) to Tessera through OLM v0 (operator-lifecycle-manager v0.36's
// own `olm` and `catalog` operators on a private local control plane; kwok runs the pods OLM creates): MTO v1.3.3's
// own CSV and CRDs (test/fixtures/multiarch/mto-v1.3.3) installed through an AllNamespaces OperatorGroup with a
// ClusterPodPlacementConfig, a PodPlacementConfig and the operand Deployments MTO's operator creates for the config;
// then MTO's CSV deleted (OLM v0 removes what it created from the CSV, and leaves the CRDs, their objects and the
// operand, which the config owns); then Tessera's bundle (bundle/manifests) installed into the same namespace and
// OperatorGroup, its CRDs replacing MTO's as an InstallPlan updates an existing CRD. Its CSV fails while MTO's
// operand Deployments hold its Deployments' names, and succeeds once the admin removes them. The objects are kept,
// and the CRD's conversion webhook and the admission webhooks become Tessera's. Pods are placed by Tessera's
// processes, which this file does not run: test/integration/podplacement/mto-move.test.ts runs them over MTO's CRDs.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { projectRoot } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { KubeClient, waitForCrdsEstablished } from '../../../src/runtime/index.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import { fixturePath } from '../../support/fixtures.js';
import { type Olm, startOlm } from '../../support/olm.js';
import { csvPermissionObjects, type CsvPermissions } from '../../support/olm-install.js';

/** MTO's suggested namespace, where its CSV, its OperatorGroup and (here) Tessera's CSV live. */
const ns = 'openshift-multiarch-tuning-operator';
const MTO = 'multiarch/mto-v1.3.3';
const CPPC_CRD = 'clusterpodplacementconfigs.multiarch.openshift.io';
const PPC_CRD = 'podplacementconfigs.multiarch.openshift.io';
const group = '/apis/multiarch.openshift.io/v1beta1';
const cppcPath = `${group}/clusterpodplacementconfigs/cluster`;
const ppcPath = `${group}/namespaces/default/podplacementconfigs/prefer-arm64`;
const csvsPath = `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions`;
const crdsPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: unknown;
}
type Csv = Omit<Manifest, 'spec' | 'status'> &
  CsvPermissions & {
    status?: { phase?: string; reason?: string; message?: string };
  };
interface Crd extends Manifest {
  spec: {
    conversion?: { webhook?: { clientConfig?: { service?: { name: string; namespace: string } } } };
    versions: { name: string; storage: boolean }[];
  };
}
interface ConfigObject {
  metadata: { uid: string };
  spec: Record<string, unknown>;
}
interface List<T> {
  items: T[];
}

const withoutStatus = <T extends Manifest>(object: T): T => ({ ...object, status: undefined });
const mtoFixture = <T>(file: string): T => parse(readFileSync(fixturePath(`${MTO}/${file}`), 'utf8')) as T;
const mtoCsv = mtoFixture<Csv>('multiarch-tuning-operator.clusterserviceversion.yaml');
const mtoCrds = [
  'multiarch.openshift.io_clusterpodplacementconfigs.yaml',
  'multiarch.openshift.io_podplacementconfigs.yaml',
  'multiarch.openshift.io_enoexecevents.yaml',
].map((f) => mtoFixture<Manifest>(f));

/** Tessera's bundle: the CSV and its two CRDs. */
const tesseraManifests = readdirSync(path.join(projectRoot, 'bundle', 'manifests'))
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) =>
    parseAllDocuments(readFileSync(path.join(projectRoot, 'bundle', 'manifests', f), 'utf8')).map(
      (d) => d.toJSON() as Manifest,
    ),
  );
const tesseraCsv = tesseraManifests.find((m) => m.kind === 'ClusterServiceVersion') as Csv;
const tesseraCrds = tesseraManifests.filter((m) => m.kind === 'CustomResourceDefinition');

let cluster: DevCluster | undefined;
let olm: Olm | undefined;
let client: KubeClient;
const before: { cppc?: ConfigObject; ppc?: ConfigObject } = {};

const get = <T>(p: string): Promise<T> => client.request<T>({ method: 'GET', path: p });
const post = (p: string, body: object): Promise<unknown> => client.request({ method: 'POST', path: p, body });

async function waitFor<T>(what: string, check: () => Promise<T>, timeoutMs = 180_000): Promise<T> {
  try {
    return await eventually(check, { timeoutMs, intervalMs: 500, what });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${olm?.logs() ?? ''}`, { cause: err });
  }
}

async function installCsv(csv: Csv): Promise<void> {
  // What an InstallPlan creates before the CSV: its ServiceAccounts and RBAC.
  for (const object of csvPermissionObjects(csv, ns)) await post(object.path, object.body);
  await post(csvsPath, withoutStatus(csv));
  await waitFor(`CSV ${csv.metadata.name} Succeeded`, async () => {
    const got = await get<Csv>(`${csvsPath}/${csv.metadata.name}`);
    expect(got.status?.phase, `${got.status?.reason}: ${got.status?.message}`).toBe('Succeeded');
  });
}

/** Names of the webhook configurations OLM created for `csvName`. */
async function webhooksOf(csvName: string): Promise<string[]> {
  const names: string[] = [];
  for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
    const list = await client.request<List<Manifest>>({
      method: 'GET',
      path: `/apis/admissionregistration.k8s.io/v1/${kind}`,
      query: { labelSelector: `olm.owner=${csvName}` },
    });
    names.push(...list.items.map((w) => w.metadata.name));
  }
  return names.sort();
}

/** MTO's operand Deployments, as MTO's operator creates them (buildDeployment): owned by the config, not the CSV. */
const OPERAND = ['pod-placement-controller', 'pod-placement-web-hook'];
function mtoOperandDeployment(name: string, owner: ConfigObject): object {
  const labels = { 'multiarch.openshift.io/operand': 'pod-placement-controller', controller: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      labels,
      // MTO holds the controller until every gated pod is released (finalizers.multiarch.openshift.io/pod-placement).
      finalizers: name === OPERAND[0] ? ['finalizers.multiarch.openshift.io/pod-placement'] : [],
      ownerReferences: [
        {
          apiVersion: 'multiarch.openshift.io/v1beta1',
          kind: 'ClusterPodPlacementConfig',
          name: 'cluster',
          uid: owner.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            { name: 'manager', image: 'registry.ci.openshift.org/origin/multiarch-tuning-operator:v1.x' },
          ],
        },
      },
    },
  };
}

const conversionService = async () =>
  (await get<Crd>(`${crdsPath}/${CPPC_CRD}`)).spec.conversion?.webhook?.clientConfig?.service;

/** An InstallPlan updates a CRD that exists: the bundle's CRD, with the live object's resourceVersion. */
async function putTesseraCrds(): Promise<void> {
  for (const crd of tesseraCrds) {
    const live = await get<Manifest>(`${crdsPath}/${crd.metadata.name}`);
    await client.request({
      method: 'PUT',
      path: `${crdsPath}/${crd.metadata.name}`,
      body: {
        ...withoutStatus(crd),
        metadata: { ...crd.metadata, resourceVersion: live.metadata.resourceVersion },
      },
    });
  }
  await waitForCrdsEstablished(
    client,
    tesseraCrds.map((c) => c.metadata.name),
  );
}

beforeAll(async () => {
  cluster = await startTestCluster({ name: uniqueName('olm-mto'), nodes: 'default' });
  client = new KubeClient(await cluster.kubeConfig());
  olm = await startOlm(cluster);
}, 900_000);

afterAll(async () => {
  await olm?.stop();
  await client?.close();
  await cluster?.stop({ wipe: true });
}, 120_000);

describe('from MTO to Tessera through OLM v0', () => {
  it("MTO v1.3.3's CSV installed with its CRDs, a ClusterPodPlacementConfig and a PodPlacementConfig", async () => {
    expect({
      csv: mtoCsv.metadata.name,
      package: mtoFixture<{ annotations: Record<string, string> }>('annotations.yaml').annotations[
        'operators.operatorframework.io.bundle.package.v1'
      ],
    }).toEqual({ csv: 'multiarch-tuning-operator.v1.3.3', package: 'multiarch-tuning-operator' });
    await post('/api/v1/namespaces', { metadata: { name: ns } });
    await post(`/apis/operators.coreos.com/v1/namespaces/${ns}/operatorgroups`, {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: ns },
      spec: {},
    });
    for (const crd of mtoCrds) await post(crdsPath, withoutStatus(crd));
    await waitForCrdsEstablished(
      client,
      mtoCrds.map((c) => c.metadata.name),
    );
    // Created before MTO's CSV: its validating webhooks fail closed and no MTO process answers them here.
    await eventually(
      () =>
        post(
          `${group}/clusterpodplacementconfigs`,
          mtoFixture('multiarch_v1beta1_clusterpodplacementconfig.yaml'),
        ),
      {
        what: 'the ClusterPodPlacementConfig created',
      },
    );
    await post(`${group}/namespaces/default/podplacementconfigs`, {
      apiVersion: 'multiarch.openshift.io/v1beta1',
      kind: 'PodPlacementConfig',
      metadata: { name: 'prefer-arm64' },
      spec: {
        plugins: {
          nodeAffinityScoring: { enabled: true, platforms: [{ architecture: 'arm64', weight: 40 }] },
        },
      },
    });
    before.cppc = await get<ConfigObject>(cppcPath);
    before.ppc = await get<ConfigObject>(ppcPath);

    await installCsv(mtoCsv);
    expect(await conversionService()).toMatchObject({
      name: 'multiarch-tuning-operator-controller-manager-service',
      namespace: ns,
    });
    expect(await webhooksOf(mtoCsv.metadata.name)).toHaveLength(2);
    // What MTO's operator then creates for the ClusterPodPlacementConfig: its operand.
    for (const name of OPERAND)
      await post(`/apis/apps/v1/namespaces/${ns}/deployments`, mtoOperandDeployment(name, before.cppc));
  }, 600_000);

  it("deleting MTO's CSV removes its Deployment and webhooks, and keeps the CRDs, every object and MTO's operand", async () => {
    await client.request({ method: 'DELETE', path: `${csvsPath}/${mtoCsv.metadata.name}` });
    await waitFor("MTO's Deployment and webhook configurations gone", async () => {
      const deployments = await get<List<Manifest>>(`/apis/apps/v1/namespaces/${ns}/deployments`);
      expect({
        deployments: deployments.items.map((d) => d.metadata.name),
        webhooks: await webhooksOf(mtoCsv.metadata.name),
      }).toEqual({ deployments: OPERAND, webhooks: [] });
    });
    for (const crd of mtoCrds) await get(`${crdsPath}/${crd.metadata.name}`);
    expect(await get<ConfigObject>(cppcPath)).toMatchObject({
      metadata: { uid: before.cppc?.metadata.uid },
      spec: before.cppc?.spec,
    });
    expect(await get<ConfigObject>(ppcPath)).toMatchObject({
      metadata: { uid: before.ppc?.metadata.uid },
      spec: before.ppc?.spec,
    });
  }, 300_000);

  it("Tessera's CSV in MTO's namespace fails while MTO's operand Deployments hold its Deployments' names", async () => {
    await putTesseraCrds();
    for (const object of csvPermissionObjects(tesseraCsv, ns)) await post(object.path, object.body);
    await post(csvsPath, withoutStatus(tesseraCsv));
    // OLM v0 updates a Deployment of the same name in place, and a Deployment's selector is immutable: MTO's
    // operand selects by two labels, Tessera's by one. OLM retries (NeedsReinstall) and fails the same way.
    await waitFor(`CSV ${tesseraCsv.metadata.name} failed on MTO's operand`, async () => {
      const got = await get<Csv>(`${csvsPath}/${tesseraCsv.metadata.name}`);
      const message = got.status?.message ?? '';
      expect(message).toContain('Deployment.apps "pod-placement-controller" is invalid: spec.selector');
      expect(message).toContain('field is immutable');
      expect([got.status?.phase, got.status?.reason]).toEqual(['Failed', 'InstallComponentFailed']);
    });
  }, 300_000);

  it("Tessera's bundle installs into MTO's namespace and OperatorGroup over MTO's CRDs, keeping the objects", async () => {
    // The admin removes MTO's operand (the controller's finalizer first: no MTO operator is left to drop it).
    await client.request({
      method: 'PATCH',
      path: `/apis/apps/v1/namespaces/${ns}/deployments/${OPERAND[0]}`,
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    });
    for (const name of OPERAND)
      await client.request({ method: 'DELETE', path: `/apis/apps/v1/namespaces/${ns}/deployments/${name}` });
    await waitFor(`CSV ${tesseraCsv.metadata.name} Succeeded`, async () => {
      const got = await get<Csv>(`${csvsPath}/${tesseraCsv.metadata.name}`);
      expect(got.status?.phase, `${got.status?.reason}: ${got.status?.message}`).toBe('Succeeded');
    });

    // OLM points the conversion webhook at Tessera's Service, and registers Tessera's admission webhooks.
    expect(await conversionService()).toMatchObject({
      name: 'pod-placement-web-hook-service',
      namespace: ns,
    });
    // OLM names each configuration after the CSV's webhook definition, plus a random suffix.
    expect((await webhooksOf(tesseraCsv.metadata.name)).map((n) => n.replace(/-[a-z0-9]{5}$/, ''))).toEqual([
      'delete-clusterpodplacementconfig.multiarch.openshift.io',
      'validate-clusterpodplacementconfig.multiarch.openshift.io',
      'validate-podplacementconfig.multiarch.openshift.io',
    ]);
    const crd = await get<Crd>(`${crdsPath}/${PPC_CRD}`);
    expect(crd.spec.versions.map((v) => [v.name, v.storage])).toEqual([['v1beta1', true]]);
    expect(await get<ConfigObject>(cppcPath)).toMatchObject({
      metadata: { uid: before.cppc?.metadata.uid },
      spec: before.cppc?.spec,
    });
    expect(await get<ConfigObject>(ppcPath)).toMatchObject({
      metadata: { uid: before.ppc?.metadata.uid },
      spec: before.ppc?.spec,
    });
  }, 600_000);
});
