// The pod placement RBAC in deploy/podplacement, applied to a real kube-apiserver (private cluster, since the
// manifests name fixed cluster-scoped objects) and checked three ways:
//  1. `kubectl auth can-i --as=system:serviceaccount:...` for each service account: what it must be able to do, and
//     what it must not (no Secret creation by the webhook, Secrets elsewhere only by name, webhook configurations,
//     the in-flight record ConfigMap and leases only by name; `create` and pod `patch`, which RBAC cannot narrow by
//     name, are shown as granted);
//  2. the operator itself, split as deployed (controller and webhook, each with its own service account's token),
//     gates and releases a pod with no `forbidden` answer in either log, so the narrowing removed nothing it calls;
//  3. the OpenShift overlay drops the self-managed certificate's Roles: nobody can touch that Secret there.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { binaryPaths, projectRoot } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { installPodPlacementCrds } from '../../../src/podplacement/api/install.js';
import {
  LEADER_ELECTION_ID,
  MUTATING_WEBHOOK,
  SCHEDULING_GATE,
} from '../../../src/podplacement/constants.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
} from '../../../src/podplacement/operator/start.js';
import { INFLIGHT_RECORD_NAME } from '../../../src/podplacement/inflight-record.js';
import { KubeClient } from '../../../src/runtime/index.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { createClusterPodPlacementConfig } from '../../support/placement.js';
import {
  type CanICheck,
  expectCanITable,
  forbiddenLines,
  lineLogger,
  serviceAccountKubeConfig,
} from '../../support/identities.js';
import { freePort } from '../podplacement/support.js';

const run = promisify(execFile);
const NS = 'openshift-multiarch-tuning-operator';
const CONTROLLER = `system:serviceaccount:${NS}:pod-placement-controller`;
const WEBHOOK = `system:serviceaccount:${NS}:pod-placement-web-hook`;
const TENANT = 'rbac-tenant';
const TLS_SECRET = 'pod-placement-webhook-tls';
const MWC = `mutatingwebhookconfigurations.admissionregistration.k8s.io/${MUTATING_WEBHOOK.configurationName}`;
const VWC =
  'validatingwebhookconfigurations.admissionregistration.k8s.io/pod-placement-validating-webhook-configuration';
const CRD =
  'customresourcedefinitions.apiextensions.k8s.io/clusterpodplacementconfigs.multiarch.openshift.io';

let cluster: DevCluster | undefined;
let client: KubeClient;

async function kubectl(args: string[], input?: string): Promise<string> {
  const child = run(binaryPaths().kubectl, ['--kubeconfig', cluster?.kubeconfigPath ?? '', ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  return (await child).stdout;
}

interface Manifest {
  kind: string;
  metadata: { name: string };
}

/** The overlay rendered by kubectl's kustomize, without the PrometheusRule and ServiceMonitor (no CRDs here). */
async function rendered(overlay: string): Promise<Manifest[]> {
  const { stdout } = await run(binaryPaths().kubectl, [
    'kustomize',
    path.join(projectRoot, 'deploy/podplacement', overlay),
  ]);
  return parseAllDocuments(stdout)
    .map((d) => d.toJSON() as Manifest)
    .filter((o) => o.kind !== 'PrometheusRule' && o.kind !== 'ServiceMonitor');
}

const yaml = (objects: readonly Manifest[]): string => objects.map((o) => stringify(o)).join('---\n');

type Check = CanICheck;
const expectTable = (checks: readonly Check[]): Promise<void> => expectCanITable(kubectl, checks);

beforeAll(async () => {
  cluster = await startApiServerOnlyTestCluster(uniqueName('pp-rbac'));
  client = new KubeClient(await cluster.kubeConfig());
  for (const ns of ['openshift-config', TENANT])
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } });
  await installPodPlacementCrds(client); // a deploy step done by the admin, not by the operator
  await kubectl(['apply', '-f', '-'], yaml(await rendered('.')));
}, 180_000);

afterAll(async () => {
  await client?.close();
  await cluster?.stop({ wipe: true });
}, 120_000);

describe('pod placement RBAC (plain Kubernetes, self-managed TLS)', () => {
  it('grants each service account what its component calls, and nothing around it', async () => {
    await expectTable([
      // Controller: pull secrets one name at a time, in any namespace; never listed, watched or written.
      [CONTROLLER, 'get', 'secrets/tenant-pull', TENANT, 'yes'],
      [CONTROLLER, 'list', 'secrets', TENANT, 'no'],
      [CONTROLLER, 'watch', 'secrets', '*', 'no'],
      [CONTROLLER, 'create', 'secrets', TENANT, 'no'],
      [CONTROLLER, 'update', 'secrets/tenant-pull', TENANT, 'no'],
      // ...the global pull secret, watched by name only...
      [CONTROLLER, 'watch', 'secrets/pull-secret', 'openshift-config', 'yes'],
      [CONTROLLER, 'list', 'secrets', 'openshift-config', 'no'],
      // ...and the webhook certificate: created in its own namespace, then read and renewed by name.
      [CONTROLLER, 'create', 'secrets', NS, 'yes'],
      [CONTROLLER, 'update', `secrets/${TLS_SECRET}`, NS, 'yes'],
      [CONTROLLER, 'update', 'secrets/other', NS, 'no'],
      [CONTROLLER, 'delete', `secrets/${TLS_SECRET}`, NS, 'no'],
      [CONTROLLER, 'list', 'secrets', NS, 'no'],
      // Pods: watched (gated ones) and patched (ungated); never created, replaced or deleted. `patch` cannot be
      // narrowed by name (pod names are the tenants'); the controller sends only merge patches of the gate, the
      // node affinity and its own labels and annotations, guarded by resourceVersion.
      [CONTROLLER, 'watch', 'pods', '*', 'yes'],
      [CONTROLLER, 'patch', 'pods', TENANT, 'yes'],
      [CONTROLLER, 'update', 'pods', TENANT, 'no'],
      [CONTROLLER, 'delete', 'pods', TENANT, 'no'],
      [CONTROLLER, 'create', 'pods', TENANT, 'no'],
      [CONTROLLER, 'patch', 'pods', TENANT, 'no', 'status'],
      // Its own webhook configurations, CRD and lease by name; anyone else's not. `create` cannot be narrowed by
      // name (the name is in the body, not the URL): it is the one grant that reaches other names.
      [CONTROLLER, 'get', MWC, '*', 'yes'],
      [CONTROLLER, 'update', MWC, '*', 'yes'],
      [CONTROLLER, 'delete', MWC, '*', 'yes'],
      [CONTROLLER, 'patch', VWC, '*', 'yes'],
      [CONTROLLER, 'update', VWC, '*', 'yes'],
      [CONTROLLER, 'delete', VWC, '*', 'yes'],
      [CONTROLLER, 'create', 'mutatingwebhookconfigurations', '*', 'yes'],
      [CONTROLLER, 'create', 'validatingwebhookconfigurations', '*', 'yes'],
      [CONTROLLER, 'get', 'mutatingwebhookconfigurations/someone-elses', '*', 'no'],
      [CONTROLLER, 'update', 'mutatingwebhookconfigurations/someone-elses', '*', 'no'],
      [CONTROLLER, 'patch', 'mutatingwebhookconfigurations/someone-elses', '*', 'no'],
      [CONTROLLER, 'delete', 'mutatingwebhookconfigurations/someone-elses', '*', 'no'],
      [CONTROLLER, 'update', 'validatingwebhookconfigurations/someone-elses', '*', 'no'],
      [CONTROLLER, 'patch', 'validatingwebhookconfigurations/someone-elses', '*', 'no'],
      [CONTROLLER, 'delete', 'validatingwebhookconfigurations/someone-elses', '*', 'no'],
      // The names are not interchangeable: the mutating name does not open the validating kind, nor the reverse.
      [
        CONTROLLER,
        'delete',
        'validatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
        '*',
        'no',
      ],
      [
        CONTROLLER,
        'delete',
        'mutatingwebhookconfigurations/pod-placement-validating-webhook-configuration',
        '*',
        'no',
      ],
      [CONTROLLER, 'list', 'mutatingwebhookconfigurations', '*', 'no'],
      [CONTROLLER, 'deletecollection', 'validatingwebhookconfigurations', '*', 'no'],
      // The record of pods in flight (poison-pod breaker): its own ConfigMap by name, create only in its namespace.
      [CONTROLLER, 'get', `configmaps/${INFLIGHT_RECORD_NAME}`, NS, 'yes'],
      [CONTROLLER, 'update', `configmaps/${INFLIGHT_RECORD_NAME}`, NS, 'yes'],
      [CONTROLLER, 'create', 'configmaps', NS, 'yes'],
      [CONTROLLER, 'update', 'configmaps/other', NS, 'no'],
      [CONTROLLER, 'delete', `configmaps/${INFLIGHT_RECORD_NAME}`, NS, 'no'],
      [CONTROLLER, 'list', 'configmaps', NS, 'no'],
      [CONTROLLER, 'create', 'configmaps', TENANT, 'no'],
      [CONTROLLER, 'update', `configmaps/${INFLIGHT_RECORD_NAME}`, TENANT, 'no'],
      [CONTROLLER, 'patch', CRD, '*', 'yes'],
      [CONTROLLER, 'patch', 'customresourcedefinitions/pods.example.com', '*', 'no'],
      [CONTROLLER, 'update', `leases.coordination.k8s.io/${LEADER_ELECTION_ID}`, NS, 'yes'],
      [CONTROLLER, 'update', 'leases.coordination.k8s.io/someone-elses', NS, 'no'],
      [CONTROLLER, 'update', `leases.coordination.k8s.io/${LEADER_ELECTION_ID}`, TENANT, 'no'],
      // Webhook: reads configs and its certificate by name; writes nothing.
      [WEBHOOK, 'get', `secrets/${TLS_SECRET}`, NS, 'yes'],
      [WEBHOOK, 'create', 'secrets', NS, 'no'],
      [WEBHOOK, 'update', `secrets/${TLS_SECRET}`, NS, 'no'],
      [WEBHOOK, 'get', 'secrets/other', NS, 'no'],
      [WEBHOOK, 'get', 'secrets/tenant-pull', TENANT, 'no'],
      [WEBHOOK, 'watch', 'podplacementconfigs.multiarch.openshift.io', '*', 'yes'],
      [WEBHOOK, 'watch', 'clusterpodplacementconfigs.multiarch.openshift.io', '*', 'yes'],
      [WEBHOOK, 'update', 'clusterpodplacementconfigs.multiarch.openshift.io/cluster', '*', 'no'],
      [WEBHOOK, 'patch', 'pods', TENANT, 'no'],
      [WEBHOOK, 'create', 'mutatingwebhookconfigurations', '*', 'no'],
      [WEBHOOK, 'delete', MWC, '*', 'no'],
      [WEBHOOK, 'update', `leases.coordination.k8s.io/${LEADER_ELECTION_ID}`, NS, 'no'],
      // ...reads the controller's Lease by name (to stop gating while it is not renewed), and says so in events.
      [WEBHOOK, 'get', `leases.coordination.k8s.io/${LEADER_ELECTION_ID}`, NS, 'yes'],
      [WEBHOOK, 'get', 'leases.coordination.k8s.io/someone-elses', NS, 'no'],
      [WEBHOOK, 'list', 'leases.coordination.k8s.io', NS, 'no'],
      [WEBHOOK, 'get', `leases.coordination.k8s.io/${LEADER_ELECTION_ID}`, TENANT, 'no'],
      [WEBHOOK, 'create', 'events', NS, 'yes'],
      [WEBHOOK, 'create', 'events', TENANT, 'no'],
      [WEBHOOK, 'get', `configmaps/${INFLIGHT_RECORD_NAME}`, NS, 'no'],
    ]);
  });

  it('is enough for the operator split as deployed: a pod is gated and released, nothing is forbidden', async () => {
    if (!cluster) throw new Error('no cluster');
    const admin = await cluster.kubeConfig();
    const dockerConfig = Buffer.from(JSON.stringify({ auths: {} })).toString('base64');
    for (const [ns, name] of [
      ['openshift-config', 'pull-secret'],
      [TENANT, 'tenant-pull'],
    ] as const) {
      await client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/secrets`,
        body: {
          metadata: { name },
          type: 'kubernetes.io/dockerconfigjson',
          data: { '.dockerconfigjson': dockerConfig },
        },
      });
    }
    for (const ns of [TENANT])
      await client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/serviceaccounts`,
        body: { metadata: { name: 'default' } },
      });
    // No kubelet here: stand in for the webhook pods' ready endpoint the controller waits for.
    await client.request({
      method: 'POST',
      path: `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
      body: {
        metadata: {
          name: 'pod-placement-web-hook-test',
          labels: { 'kubernetes.io/service-name': 'pod-placement-web-hook' },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
        ports: [{ name: 'webhook', port: 9443, protocol: 'TCP' }],
      },
    });

    const port = await freePort();
    const endpoint = { kind: 'url' as const, baseUrl: `https://127.0.0.1:${port}` };
    const stop = new AbortController();
    const controllerLog: string[] = [];
    const webhookLog: string[] = [];
    const common = {
      namespace: NS,
      signal: stop.signal,
      endpoint,
      probes: false as const,
      handleSignals: false,
    };
    let controller: PodPlacementOperatorHandle | undefined;
    let webhook: PodPlacementOperatorHandle | undefined;
    try {
      controller = await startPodPlacementOperator({
        ...common,
        kubeConfig: await serviceAccountKubeConfig(admin, client, NS, 'pod-placement-controller'),
        components: 'controller',
        manageValidatingWebhook: true,
        retryBaseDelayMs: 20,
        logger: lineLogger(controllerLog),
      });
      webhook = await startPodPlacementOperator({
        ...common,
        kubeConfig: await serviceAccountKubeConfig(admin, client, NS, 'pod-placement-web-hook'),
        components: 'webhook',
        webhookHost: '127.0.0.1',
        webhookPort: port,
        logger: lineLogger(webhookLog),
      });
      await controller.validatingWebhookConfigured;
      // The controller points the CRD's conversion webhook at itself; the API server answers 503 for the resource
      // while it swaps its storage after such a change.
      await eventually(() => createClusterPodPlacementConfig(client, { logVerbosity: 'Normal' }), {
        what: 'the cluster config created through the validating webhook',
      });
      // Gated by the webhook (webhook service account), then released by the reconciler (controller's), which
      // reads the pod's pull secret by name and gives up on the unreachable registry after its retries.
      const deadRegistry = `127.0.0.1:${await freePort()}`;
      await eventually(
        async () => {
          const pod = await client.request<{ spec: { schedulingGates?: { name: string }[] } }>({
            method: 'POST',
            path: `/api/v1/namespaces/${TENANT}/pods`,
            body: {
              metadata: { name: uniqueName('gated') },
              spec: {
                imagePullSecrets: [{ name: 'tenant-pull' }],
                containers: [{ name: 'c', image: `${deadRegistry}/app:1` }],
              },
            },
          });
          expect(pod.spec.schedulingGates).toEqual([{ name: SCHEDULING_GATE }]);
        },
        { timeoutMs: 60_000, what: 'a tenant pod gated by the webhook' },
      );
      await eventually(
        async () => {
          const pods = await client.request<{ items: { spec: { schedulingGates?: unknown[] } }[] }>({
            method: 'GET',
            path: `/api/v1/namespaces/${TENANT}/pods`,
          });
          const gated = pods.items.filter((p) => (p.spec.schedulingGates ?? []).length > 0);
          expect(gated).toEqual([]);
        },
        { timeoutMs: 60_000, what: 'the gated pods released by the controller' },
      );
    } finally {
      stop.abort();
      await webhook?.stopped.catch(() => undefined);
      await controller?.stopped.catch(() => undefined);
    }
    expect(forbiddenLines(controllerLog)).toEqual([]);
    expect(forbiddenLines(webhookLog)).toEqual([]);
    // The breaker recorded the uncached inspection (the dead registry) and cleared its record at the clean stop.
    const record = await client.request<{ data?: Record<string, string> }>({
      method: 'GET',
      path: `/api/v1/namespaces/${NS}/configmaps/${INFLIGHT_RECORD_NAME}`,
    });
    expect(record.data).toEqual({ pods: '' });
    // Not vacuous: both halves did their work.
    expect(controllerLog.join('\n')).toContain('mutating webhook configuration created');
    expect(webhookLog.join('\n')).toContain('webhook server listening');
  });
});

describe('pod placement RBAC, OpenShift overlay (service CA)', () => {
  it('keeps no access to the self-managed certificate Secret, and everything else', async () => {
    const base = await rendered('.');
    const openshift = await rendered('openshift');
    expect(JSON.stringify(base)).toContain(TLS_SECRET);
    expect(JSON.stringify(openshift)).not.toContain(TLS_SECRET);
    // Replace the base RBAC with the overlay's (the namespace's other objects are the same).
    await kubectl(['delete', '-f', '-'], yaml(base.filter((o) => /^(Cluster)?Role(Binding)?$/.test(o.kind))));
    await kubectl(['apply', '-f', '-'], yaml(openshift));
    await expectTable([
      [CONTROLLER, 'create', 'secrets', NS, 'no'],
      [CONTROLLER, 'update', `secrets/${TLS_SECRET}`, NS, 'no'],
      [WEBHOOK, 'get', `secrets/${TLS_SECRET}`, NS, 'no'],
      // The service CA's Secret is mounted by the kubelet, never read through the API.
      [WEBHOOK, 'get', 'secrets/pod-placement-web-hook-tls', NS, 'no'],
      [CONTROLLER, 'get', 'secrets/tenant-pull', TENANT, 'yes'],
      [CONTROLLER, 'watch', 'secrets/pull-secret', 'openshift-config', 'yes'],
      [CONTROLLER, 'delete', MWC, '*', 'yes'],
      [WEBHOOK, 'watch', 'podplacementconfigs.multiarch.openshift.io', '*', 'yes'],
    ]);
  });
});
