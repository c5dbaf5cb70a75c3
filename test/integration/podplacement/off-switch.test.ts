// The off switches must not depend on the processes that fail. On a real kube-apiserver (private, node-less
// cluster, since the configurations are cluster singletons) with the webhook configurations exactly as the operator
// writes them:
//  - the API server itself never calls the gating webhook for `kube-*`, `openshift-*` or the operator's namespace
//    (matchConditions), counted at a stand-in webhook server that gates every pod it is asked about;
//  - with no operator running, the documented admin command deletes the cluster config (the validating webhook's
//    DELETE hook fails open) and the mutating webhook configuration, and pods created afterwards are not gated.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryPaths } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { installPodPlacementCrds } from '../../../src/podplacement/api/install.js';
import {
  FINALIZERS,
  MUTATING_WEBHOOK,
  SCHEDULING_GATE,
  VALIDATING_WEBHOOK,
} from '../../../src/podplacement/constants.js';
import {
  mutatingWebhookConfiguration,
  validatingWebhookConfiguration,
} from '../../../src/podplacement/webhook-configurations.js';
import {
  KubeClient,
  WebhookServer,
  patched,
  silentLogger,
  type AdmissionRequest,
} from '../../../src/runtime/index.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { freePort } from './support.js';

const run = promisify(execFile);
const opNs = 'pp-off-switch-operator';
const tenantNs = 'pp-off-switch-tenant';
const systemNamespaces = ['kube-system', 'kube-public', 'openshift-off-switch', opNs];
const cppcPath = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';
const mwcPath = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING_WEBHOOK.configurationName}`;

interface PodLike {
  metadata: { name: string; namespace?: string; deletionTimestamp?: string };
  spec: { schedulingGates?: { name: string }[] };
}

let cluster: DevCluster | undefined;
let client: KubeClient;
const stop = new AbortController();
let server: WebhookServer;
let serving: Promise<void> | undefined;
/** Namespaces of the pod reviews the API server sent to the stand-in webhook, in order. */
const reviewed: string[] = [];

async function createPod(namespace: string, name: string): Promise<PodLike> {
  return client.request<PodLike>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/pods`,
    body: { metadata: { name }, spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }] } },
  });
}

const gates = (pod: PodLike): string[] => (pod.spec.schedulingGates ?? []).map((g) => g.name);

beforeAll(async () => {
  cluster = await startApiServerOnlyTestCluster(uniqueName('pp-off'));
  client = new KubeClient(await cluster.kubeConfig());
  await installPodPlacementCrds(client);
  for (const ns of [tenantNs, 'openshift-off-switch', opNs]) {
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } });
  }
  // No controller-manager here: create the `default` service accounts pods need.
  for (const ns of [tenantNs, ...systemNamespaces]) {
    await client
      .request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/serviceaccounts`,
        body: { metadata: { name: 'default' } },
      })
      .catch(() => undefined);
  }
  // A stand-in for the gating webhook that gates every pod it is asked about, and records who asked.
  server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    devCertificate: { ipAddresses: ['127.0.0.1'] },
    logger: silentLogger,
  });
  server.register(MUTATING_WEBHOOK.path, {
    handle(request: AdmissionRequest) {
      reviewed.push(request.namespace ?? '');
      const pod = request.object as PodLike;
      return patched(pod, { ...pod, spec: { ...pod.spec, schedulingGates: [{ name: SCHEDULING_GATE }] } });
    },
  });
  serving = server.start(stop.signal);
  await server.ready();
}, 180_000);

afterAll(async () => {
  stop.abort();
  await serving;
  await client?.close();
  await cluster?.stop({ wipe: true });
}, 120_000);

describe('gating webhook scope, enforced by the API server', () => {
  it('is never called for kube-*, openshift-* or the operator namespace, and is called for tenants', async () => {
    const mwc = mutatingWebhookConfiguration(
      { kind: 'url', baseUrl: `https://127.0.0.1:${server.port()}` },
      { caBundlePem: server.caBundle() },
      undefined,
      opNs,
    );
    await client.request({
      method: 'POST',
      path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
      body: mwc,
    });
    try {
      // The API server's webhook client picks new configurations up asynchronously: wait for the first call.
      const tenantPod = await eventually(
        async () => {
          const pod = await createPod(tenantNs, uniqueName('tenant'));
          if (gates(pod).length === 0) throw new Error('not gated yet');
          return pod;
        },
        { what: 'the API server to call the registered webhook' },
      );
      expect(gates(tenantPod)).toEqual([SCHEDULING_GATE]);
      const callsBefore = reviewed.length;

      for (const ns of systemNamespaces) {
        const pod = await createPod(ns, uniqueName('system'));
        expect(gates(pod), ns).toEqual([]);
      }
      // And the webhook is still live: the next tenant pod is gated again.
      expect(gates(await createPod(tenantNs, uniqueName('tenant')))).toEqual([SCHEDULING_GATE]);
      expect(reviewed.slice(callsBefore)).toEqual([tenantNs]);
      expect(reviewed.every((ns) => ns === tenantNs)).toBe(true);
    } finally {
      await client.request({ method: 'DELETE', path: mwcPath }).catch(() => undefined);
    }
  });
});

describe('off switch with no operator running', () => {
  it('one kubectl command deletes the cluster config and the webhook; later pods are not gated', async () => {
    // State an operator leaves when it dies: the cluster config with its finalizer, both webhook configurations
    // registered. The validating webhook points at a port nobody answers (the operator is down); the gating webhook
    // at the stand-in, which still gates (e.g. the webhook Deployment survives the controller).
    await client.request({
      method: 'POST',
      path: cppcPath,
      body: {
        apiVersion: 'multiarch.openshift.io/v1beta1',
        kind: 'ClusterPodPlacementConfig',
        metadata: { name: 'cluster', finalizers: [FINALIZERS.podPlacement] },
        spec: { logVerbosity: 'Normal' },
      },
    });
    const deadPort = await freePort();
    await client.request({
      method: 'POST',
      path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
      body: validatingWebhookConfiguration(
        { kind: 'url', baseUrl: `https://127.0.0.1:${deadPort}` },
        { caBundlePem: server.caBundle() },
        { operatorNamespace: opNs },
      ),
    });
    await client.request({
      method: 'POST',
      path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
      body: mutatingWebhookConfiguration(
        { kind: 'url', baseUrl: `https://127.0.0.1:${server.port()}` },
        { caBundlePem: server.caBundle() },
        undefined,
        opNs,
      ),
    });
    // Both are live: config changes are refused (fail closed) and tenant pods are gated.
    await eventually(
      async () => {
        const refusal = await client
          .request({
            method: 'PATCH',
            path: `${cppcPath}/cluster`,
            body: { spec: { logVerbosity: 'Debug' } },
            contentType: 'application/merge-patch+json',
          })
          .then(
            () => 'accepted',
            (err: unknown) => String(err),
          );
        expect(refusal).toContain(VALIDATING_WEBHOOK.clusterConfigWebhookName);
      },
      { what: 'the validating webhook to refuse config changes while the operator is down' },
    );
    await eventually(
      async () => {
        if (gates(await createPod(tenantNs, uniqueName('before'))).length === 0)
          throw new Error('not gated yet');
      },
      { what: 'tenant pods gated before the off switch' },
    );

    // The documented off switch.
    const kubeconfig = cluster?.kubeconfigPath ?? '';
    const { stdout } = await run(binaryPaths().kubectl, [
      '--kubeconfig',
      kubeconfig,
      'delete',
      '--wait=false',
      'clusterpodplacementconfig/cluster',
      `mutatingwebhookconfiguration/${MUTATING_WEBHOOK.configurationName}`,
    ]);
    expect(stdout).toContain('"cluster" deleted');
    expect(stdout).toContain(`"${MUTATING_WEBHOOK.configurationName}" deleted`);

    // The config is being deleted (held by the finalizer until an operator releases the last gated pod)...
    const config = await client.request<PodLike>({ method: 'GET', path: `${cppcPath}/cluster` });
    expect(config.metadata.deletionTimestamp).toBeDefined();
    // ...the gating webhook is gone (the API server drops it from its webhook cache within moments), and new pods
    // are admitted without the gate and without calling it.
    await expect(client.request({ method: 'GET', path: mwcPath })).rejects.toThrow('404');
    await eventually(
      async () => {
        if (gates(await createPod(tenantNs, uniqueName('after'))).length > 0) throw new Error('still gated');
      },
      { what: 'the API server to stop calling the deleted webhook' },
    );
    const calls = reviewed.length;
    for (let i = 0; i < 5; i++) expect(gates(await createPod(tenantNs, uniqueName('after')))).toEqual([]);
    expect(reviewed.length).toBe(calls);
  });
});
