// The pod placement operator running as OLM installs it (--tls=olm), with only the permissions the CSV grants:
// OLM (v0.36, built from its module, test/support/olm.ts) installs the bundle's CSV, issues the webhook Deployment's
// certificate, and registers the CSV's validating and conversion webhooks on its own Service with its own CA. Both
// halves then run as `tessera` processes with their containers' arguments from the CSV, their ServiceAccounts'
// tokens and the certificate files OLM put in its Secret, as the kubelet would mount them. kwok runs no containers,
// so the cluster's kube-apiserver reaches OLM's Service through a ServiceRouter (its egress proxy,
// src/devcluster/service-router.ts) that sends the Service's ClusterIP:443 to the webhook process: every admission
// and conversion call below crosses the same TLS hop as in a cluster, verified by the apiserver against the
// caBundle OLM or the controller set.
import { X509Certificate } from 'node:crypto';
import { spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { freePort } from '../../../src/devcluster/processes.js';
import { ServiceRouter } from '../../../src/devcluster/service-router.js';
import { MUTATING_WEBHOOK, SCHEDULING_GATE } from '../../../src/podplacement/constants.js';
import { BUNDLE_METADATA } from '../../../hack/bundle/metadata.js';
import {
  OLM_CA_KEY,
  WEBHOOK_DEPLOYMENT_NAME,
  olmCertSecretName,
  olmServiceName,
} from '../../../src/podplacement/operator/olm-ca.js';
import { KubeClient } from '../../../src/runtime/index.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import { forbiddenLines, serviceAccountKubeConfig } from '../../support/identities.js';
import { OPERATORS_NAMESPACE, startOlm, type Olm } from '../../support/olm.js';
import { csvPermissionObjects, type CsvPermissions } from '../../support/olm-install.js';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}
interface MutatingWebhookConfiguration {
  webhooks: {
    clientConfig: {
      caBundle?: string;
      service?: { name: string; namespace: string; port?: number; path?: string };
    };
  }[];
}

const NS = OPERATORS_NAMESPACE;
const manifests: Manifest[] = readdirSync(path.join(projectRoot, 'bundle/manifests'))
  .sort()
  .flatMap((f) =>
    parseAllDocuments(readFileSync(path.join(projectRoot, 'bundle/manifests', f), 'utf8')).map(
      (d) => d.toJSON() as Manifest,
    ),
  );
const csv = manifests.find((m) => m.kind === 'ClusterServiceVersion') as Manifest;

let cluster: DevCluster | undefined;
let router: ServiceRouter | undefined;
let routerDir: string | undefined;
let olm: Olm | undefined;
let admin: KubeConfig;
let client: KubeClient;
const processes: { stop(): Promise<void>; log(): string }[] = [];

interface CsvDeployment {
  name: string;
  spec: { template: { spec: { containers: { args: string[] }[] } } };
}

const get = <T>(apiPath: string): Promise<T> => client.request<T>({ method: 'GET', path: apiPath });

async function waitFor<T>(what: string, check: () => Promise<T>, timeoutMs = 180_000): Promise<T> {
  try {
    return await eventually(check, { timeoutMs, intervalMs: 500, what });
  } catch (err) {
    throw new Error(
      `${(err as Error).message}\n${processes.map((p) => `--- operator\n${p.log().slice(-3000)}`).join('\n')}\n--- OLM\n${olm?.logs() ?? ''}`,
      { cause: err },
    );
  }
}

beforeAll(async () => {
  // Short: Unix socket paths are limited to ~107 bytes.
  routerDir = mkdtempSync(path.join(os.tmpdir(), 'svcr-'));
  router = await ServiceRouter.listen(path.join(routerDir, 's.sock'));
  cluster = await startTestCluster({
    name: uniqueName('olm-tls'),
    nodes: 'default',
    serviceRouterSocket: router.socketPath,
  });
  admin = await cluster.kubeConfig();
  client = new KubeClient(admin);
  olm = await startOlm(cluster);
}, 900_000);

afterAll(async () => {
  // The router first: the apiserver's keep-alive connections through it would hold the webhook server open.
  await router?.close();
  await Promise.allSettled(processes.map((p) => p.stop()));
  await olm?.stop();
  await client?.close();
  await cluster?.stop({ wipe: true });
  if (routerDir) rmSync(routerDir, { recursive: true, force: true });
}, 120_000);

describe('the operator as OLM runs it', () => {
  it('serves OLM’s webhooks with OLM’s certificate, and gates pods through OLM’s Service with OLM’s CA', async () => {
    for (const crd of manifests.filter((m) => m.kind === 'CustomResourceDefinition')) {
      await client.request({
        method: 'POST',
        path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        body: crd,
      });
    }
    for (const object of csvPermissionObjects(csv as unknown as CsvPermissions, NS))
      await client.request({ method: 'POST', path: object.path, body: object.body });
    await client.request({
      method: 'POST',
      path: `/apis/operators.coreos.com/v1alpha1/namespaces/${NS}/clusterserviceversions`,
      body: { ...csv, metadata: { ...csv.metadata, namespace: NS } },
    });
    await waitFor('the CSV to succeed', async () => {
      const live = await get<{ status?: { phase?: string; message?: string } }>(
        `/apis/operators.coreos.com/v1alpha1/namespaces/${NS}/clusterserviceversions/${csv.metadata.name}`,
      );
      if (live.status?.phase !== 'Succeeded')
        throw new Error(`phase ${live.status?.phase}: ${live.status?.message}`);
    });

    // The files the kubelet would mount into the webhook Deployment, from the Secret OLM made for it.
    const secret = await get<{ data: Record<string, string> }>(
      `/api/v1/namespaces/${NS}/secrets/${olmCertSecretName(WEBHOOK_DEPLOYMENT_NAME)}`,
    );
    const certDir = path.join(cluster?.stateDir ?? '', 'olm-serving-certs');
    mkdirSync(certDir, { recursive: true });
    for (const key of ['tls.crt', 'tls.key'])
      writeFileSync(path.join(certDir, key), Buffer.from(secret.data[key] ?? '', 'base64'));
    const olmCa = Buffer.from(secret.data[OLM_CA_KEY] ?? '', 'base64').toString('utf8');
    expect(olmCa).toContain('BEGIN CERTIFICATE');

    // Each half as `tessera` with its container's arguments from the CSV, as its Deployment's ServiceAccount (the
    // CSV's permissions only). Only where it listens and finds the mounted files differ from a pod: later flags
    // override the CSV's.
    const webhookPort = await freePort();
    const webhook = await startFromCsv(WEBHOOK_DEPLOYMENT_NAME, 'pod-placement-web-hook', [
      ...['--cert-dir', certDir, '--webhook-host', '127.0.0.1', '--webhook-port', String(webhookPort)],
    ]);
    // kube-apiserver dials OLM's Service at its ClusterIP: that address leads to the webhook half.
    const olmService = { namespace: NS, name: olmServiceName(WEBHOOK_DEPLOYMENT_NAME), port: 443 };
    const { spec } = await get<{ spec: { clusterIP: string } }>(
      `/api/v1/namespaces/${NS}/services/${olmService.name}`,
    );
    router?.route(`${spec.clusterIP}:${olmService.port}`, { host: '127.0.0.1', port: webhookPort });
    const controller = await startFromCsv('pod-placement-controller', 'pod-placement-controller', []);

    // OLM's validating webhook answers: a PodPlacementConfig before the ClusterPodPlacementConfig is refused with
    // the operator's own message (an unreachable webhook would fail with "failed calling webhook" instead).
    const tenant = uniqueName('tenant');
    await client.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { metadata: { name: tenant } },
    });
    const podConfig = BUNDLE_METADATA.examples[1] as { metadata: Record<string, unknown> };
    const refused = await client
      .request({
        method: 'POST',
        path: `/apis/multiarch.openshift.io/v1beta1/namespaces/${tenant}/podplacementconfigs`,
        body: { ...podConfig, metadata: { ...podConfig.metadata, namespace: tenant } },
      })
      .then(
        () => 'created',
        (err: Error) => err.message,
      );
    expect(refused).toMatch(/denied the request: ClusterPodPlacementConfig does not exist/);
    const clusterConfigs = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';
    await client.request({ method: 'POST', path: clusterConfigs, body: BUNDLE_METADATA.examples[0] });

    // The controller registers the gating webhook on OLM's Service with the CA OLM issued the certificate with.
    const registered = await waitFor('the controller to register the gating webhook', async () => {
      const cfg = await get<MutatingWebhookConfiguration>(
        `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING_WEBHOOK.configurationName}`,
      );
      const hook = cfg.webhooks[0];
      if (!hook?.clientConfig.caBundle) throw new Error('no caBundle yet');
      return hook.clientConfig;
    });
    expect(registered.service).toMatchObject({ name: olmService.name, namespace: NS, port: 443 });
    const published = new X509Certificate(Buffer.from(registered.caBundle ?? '', 'base64'));
    expect(published.fingerprint256).toBe(new X509Certificate(olmCa).fingerprint256);

    // A tenant's pod is gated by the apiserver calling that webhook.
    const pod = await waitFor('a new pod to be gated', async () => {
      const created = await client.request<{
        metadata: { name: string };
        spec: { schedulingGates?: { name: string }[] };
      }>({
        method: 'POST',
        path: `/api/v1/namespaces/${tenant}/pods`,
        body: {
          metadata: { generateName: 'app-' },
          spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }] },
        },
      });
      expect(created.spec.schedulingGates ?? []).toContainEqual({ name: SCHEDULING_GATE });
      return created;
    });

    // OLM's conversion webhook answers too: the config read as v1alpha1.
    const v1alpha1 = await get<{ apiVersion: string; spec: { namespaceSelector?: unknown } }>(
      '/apis/multiarch.openshift.io/v1alpha1/clusterpodplacementconfigs/cluster',
    );
    expect(v1alpha1.apiVersion).toBe('multiarch.openshift.io/v1alpha1');
    expect(v1alpha1.spec.namespaceSelector).toEqual(
      (BUNDLE_METADATA.examples[0] as { spec: { namespaceSelector: unknown } }).spec.namespaceSelector,
    );

    // Turning pod placement off removes the gating webhook and leaves no pod gated (this one's image cannot be
    // inspected, so it may already have been released with an inspection error; either way it must not stay gated).
    await client.request({ method: 'DELETE', path: `${clusterConfigs}/cluster` });
    await waitFor('the pod to be released', async () => {
      const live = await get<{ spec: { schedulingGates?: { name: string }[] } }>(
        `/api/v1/namespaces/${tenant}/pods/${pod.metadata.name}`,
      );
      expect(live.spec.schedulingGates ?? []).toEqual([]);
    });

    await waitFor('the gating webhook to be removed', async () => {
      const status = await get(
        `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING_WEBHOOK.configurationName}`,
      ).then(
        () => 200,
        (err: { statusCode?: number }) => err.statusCode,
      );
      expect(status).toBe(404);
    });
    expect(router?.unrouted ?? []).toEqual([]);
    // Nothing either half needed was left out of the CSV's permissions.
    expect(forbiddenLines(webhook.log().split('\n'))).toEqual([]);
    expect(forbiddenLines(controller.log().split('\n'))).toEqual([]);
  }, 600_000);
});

interface OperatorProcess {
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts `tessera` with the args of Deployment `deployment`'s container in the CSV plus `overrides`, as
 * ServiceAccount `serviceAccount` (a TokenRequest token in a kubeconfig file) with the pod's POD_NAMESPACE; resolves
 * once its /readyz answers.
 */
async function startFromCsv(
  deployment: string,
  serviceAccount: string,
  overrides: string[],
): Promise<OperatorProcess> {
  const strategy = (csv.spec as { install: { spec: { deployments: CsvDeployment[] } } }).install.spec
    .deployments;
  const container = strategy.find((d) => d.name === deployment)?.spec.template.spec.containers[0];
  if (!container) throw new Error(`the CSV has no Deployment ${deployment}`);
  const dir = path.join(cluster?.stateDir ?? os.tmpdir(), `olm-${deployment}`);
  mkdirSync(dir, { recursive: true });
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    (await serviceAccountKubeConfig(admin, client, NS, serviceAccount)).exportConfig(),
  );
  const probePort = await freePort();
  const logFile = path.join(dir, 'log');
  const fd = openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [
      ...['--import', 'tsx', path.join(projectRoot, 'src/cli/main.ts'), ...container.args],
      ...['--kubeconfig', kubeconfig, '--probe-port', String(probePort), ...overrides],
      // The CSV's metrics listener (:8443 in every pod, the service CA's certificate) cannot be shared by two
      // processes on one host, and the service CA does not run here: off (test/integration/podplacement/
      // metrics-monitoring.test.ts runs it as the CSV has it).
      '--metrics-bind-address=0',
    ],
    { cwd: projectRoot, stdio: ['ignore', fd, fd], env: { ...process.env, POD_NAMESPACE: NS } },
  );
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proc: OperatorProcess = {
    log: () => readFileSync(logFile, 'utf8'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
  processes.push(proc);
  await waitFor(`${deployment} ready`, async () => {
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${proc.log().slice(-2000)}`);
    const res = await fetch(`http://127.0.0.1:${probePort}/readyz`);
    if (res.status !== 200) throw new Error(`readyz ${res.status}`);
  });
  return proc;
}
