// The in-cluster manifests (deploy/) on a real control plane, as a cluster admin installs them: the CRDs, then
// `kubectl apply --server-side -k deploy/` (pod placement, update status, NodePool management side) and
// `-k deploy/nodepool/hosted` (the status writer's identity in a hosted cluster; this one cluster stands in for
// both). A private cluster, because the manifests name fixed cluster-scoped objects; kwok runs the pods.
//  1. Every Deployment becomes Available in namespaces that enforce the restricted Pod Security profile (so the pods
//     pass it), the webhook replicas land on different nodes, one image is used everywhere and a digest pins it
//     in every container, and applying again (an upgrade) changes nothing.
//  2. `kubectl auth can-i` tables for each new service account: what its component calls is allowed, what lies
//     around it is not.
//  3. The components themselves, in this process, each with its service account's token: the update status
//     controller (leader-elected) writes the UpdateStatus and the NodePool controller and status writer carry a
//     profile's status to its NodePool and clean up after it, with no `forbidden` answer in any log.
// kwok does not run containers: the process inside the pods is proven by 3, not by 1.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { binaryPaths } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { HostedClusterPair } from '../../../src/demo/hosted-cluster-pair.js';
import type { NodePool } from '../../../src/nodepool/api/types.js';
import { LABELS } from '../../../src/nodepool/constants.js';
import { runNodePoolControllers } from '../../../src/nodepool/run-command.js';
import { KubeClient } from '../../../src/runtime/index.js';
import { parseControllerOptions, runUpdateStatusController } from '../../../src/updatestatus/controller-command.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import {
  DEPLOY,
  DEPLOY_NAMESPACES,
  applyDeploy,
  NTO_STATUS_WRITER_NAMESPACE,
  hostedStatusWriterToken,
  prepareOpenShiftLikeCluster,
} from '../../support/deploy.js';
import {
  type CanICheck,
  expectCanITable,
  forbiddenLines,
  lineLogger,
  serviceAccountKubeConfig,
  tokenKubeConfig,
} from '../../support/identities.js';

const run = promisify(execFile);
const IMAGE = 'quay.io/tessera/tessera';

const US_NS = DEPLOY_NAMESPACES.updateStatus;
const NP_NS = DEPLOY_NAMESPACES.nodePool;
const NTO_SA_NS = NTO_STATUS_WRITER_NAMESPACE;
const PP_NS = DEPLOY_NAMESPACES.podPlacement;
const UPDATE_STATUS = `system:serviceaccount:${US_NS}:update-status-controller`;
const NODEPOOL = `system:serviceaccount:${NP_NS}:nodepool-status-controller`;
const NTO_WRITER = `system:serviceaccount:${NTO_SA_NS}:nto-status-writer`;
const MCO_NS = 'openshift-machine-config-operator';
const MONITORING_NS = 'openshift-monitoring';
const NTO_NS = 'openshift-cluster-node-tuning-operator';
const TENANT = 'deploy-tenant';

let cluster: DevCluster | undefined;
let client: KubeClient;

async function kubectl(args: string[]): Promise<string> {
  const { stdout } = await run(binaryPaths().kubectl, ['--kubeconfig', cluster?.kubeconfigPath ?? '', ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

interface Container {
  name: string;
  image: string;
}
interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: {
    replicas?: number;
    template?: { spec: { containers: Container[]; initContainers?: Container[] } };
  };
}

/** A kustomization rendered by kubectl's kustomize. */
async function rendered(dir: string): Promise<Manifest[]> {
  const { stdout } = await run(binaryPaths().kubectl, ['kustomize', dir], { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((d) => d.toJSON() as Manifest);
}

const images = (objects: readonly Manifest[]): string[] =>
  objects.flatMap((o) =>
    [...(o.spec?.template?.spec.containers ?? []), ...(o.spec?.template?.spec.initContainers ?? [])].map(
      (c) => `${o.metadata.name}/${c.name}=${c.image}`,
    ),
  );

interface DeploymentStatus {
  spec: { replicas: number };
  metadata: { generation: number };
  status?: {
    availableReplicas?: number;
    updatedReplicas?: number;
    conditions?: { type: string; status: string }[];
  };
}


type Check = CanICheck;
const expectTable = (checks: readonly Check[]): Promise<void> => expectCanITable(kubectl, checks);

async function adminKubeConfig(): Promise<KubeConfig> {
  if (!cluster) throw new Error('no cluster');
  return cluster.kubeConfig();
}

/** A KubeConfig acting as `namespace/name`, with a one-hour token. */
async function saKubeConfig(namespace: string, name: string): Promise<KubeConfig> {
  return serviceAccountKubeConfig(await adminKubeConfig(), client, namespace, name);
}

beforeAll(async () => {
  cluster = await startTestCluster({ name: uniqueName('deploy'), nodes: 'default' });
  client = new KubeClient(await cluster.kubeConfig());
  // What an OpenShift cluster (and a hosted cluster) already has, then the admin's commands (README "Install").
  await prepareOpenShiftLikeCluster(client, [TENANT]);
  await applyDeploy(kubectl);
}, 240_000);

afterAll(async () => {
  await client?.close();
  await cluster?.stop({ wipe: true });
}, 120_000);

describe('kubectl apply --server-side -k deploy/', () => {
  it('runs every Deployment to Available, restricted, the webhook spread over nodes', async () => {
    const deployments = (await rendered(DEPLOY)).filter((o) => o.kind === 'Deployment');
    expect(deployments.map((d) => `${d.metadata.namespace}/${d.metadata.name}`).sort()).toEqual([
      `${PP_NS}/pod-placement-controller`,
      `${PP_NS}/pod-placement-web-hook`,
      `${NP_NS}/nodepool-status-controller`,
      `${US_NS}/update-status-controller`,
    ]);
    for (const d of deployments) {
      await eventually(
        async () => {
          const got = await client.request<DeploymentStatus>({
            method: 'GET',
            path: `/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}`,
          });
          const available = got.status?.conditions?.find((c) => c.type === 'Available')?.status;
          expect({
            available,
            availableReplicas: got.status?.availableReplicas,
            updatedReplicas: got.status?.updatedReplicas,
          }).toEqual({
            available: 'True',
            availableReplicas: got.spec.replicas,
            updatedReplicas: got.spec.replicas,
          });
        },
        { timeoutMs: 120_000, what: `Deployment ${d.metadata.namespace}/${d.metadata.name} Available` },
      );
    }
    // Not vacuous: each namespace enforces the restricted profile, so the pods above passed it.
    for (const ns of [PP_NS, US_NS, NP_NS]) {
      const refused = await client
        .request({
          method: 'POST',
          path: `/api/v1/namespaces/${ns}/pods`,
          query: { dryRun: 'All' },
          body: { metadata: { name: 'unrestricted' }, spec: { containers: [{ name: 'c', image: IMAGE }] } },
        })
        .then(
          () => 'admitted',
          (err: unknown) => (err instanceof Error ? err.message : String(err)),
        );
      expect(refused, ns).toMatch(/violates PodSecurity "restricted/);
    }
    // Preferred anti-affinity: with eight workers, the three webhook replicas get three nodes.
    const webhookPods = await client.request<{ items: { spec: { nodeName?: string } }[] }>({
      method: 'GET',
      path: `/api/v1/namespaces/${PP_NS}/pods`,
      query: { labelSelector: 'controller=pod-placement-web-hook' },
    });
    expect(new Set(webhookPods.items.map((p) => p.spec.nodeName)).size).toBe(3);
  });

  it('protects the webhook replicas with a PodDisruptionBudget selecting exactly them', async () => {
    const pdb = await client.request<{ spec: { maxUnavailable: number; selector: { matchLabels: Record<string, string> } } }>({
      method: 'GET',
      path: `/apis/policy/v1/namespaces/${PP_NS}/poddisruptionbudgets/pod-placement-web-hook`,
    });
    expect(pdb.spec.maxUnavailable).toBe(1);
    const selector = Object.entries(pdb.spec.selector.matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const pods = await client.request<{ items: { metadata: { labels: Record<string, string> } }[] }>({
      method: 'GET',
      path: `/api/v1/namespaces/${PP_NS}/pods`,
      query: { labelSelector: selector },
    });
    expect(pods.items.map((p) => p.metadata.labels.controller)).toEqual([
      'pod-placement-web-hook',
      'pod-placement-web-hook',
      'pod-placement-web-hook',
    ]);
  });

  it('uses one image everywhere, and a digest set in deploy/ pins every container', async () => {
    const all = await rendered(DEPLOY);
    const used = images(all);
    expect(used.length).toBe(4);
    for (const image of used) expect(image).toMatch(new RegExp(`=${IMAGE}:latest$`));

    // What `kustomize edit set image quay.io/tessera/tessera@sha256:...` writes, in an overlay of deploy/.
    const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;
    const overlay = mkdtempSync(path.join(os.tmpdir(), 'tessera-deploy-'));
    try {
      writeFileSync(
        path.join(overlay, 'kustomization.yaml'),
        [
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          'resources:',
          `  - ${path.relative(overlay, DEPLOY)}`,
          'images:',
          `  - name: ${IMAGE}`,
          `    digest: ${digest}`,
          '',
        ].join('\n'),
      );
      const pinned = images(await rendered(overlay));
      expect(pinned.length).toBe(4);
      for (const image of pinned) expect(image).toMatch(new RegExp(`=${IMAGE}@${digest}$`));
    } finally {
      rmSync(overlay, { recursive: true, force: true });
    }
  });

  it('upgrades in place: applying the same manifests again changes no Deployment', async () => {
    const deployments = (await rendered(DEPLOY)).filter((o) => o.kind === 'Deployment');
    const generations = async (): Promise<number[]> => {
      const out: number[] = [];
      for (const d of deployments)
        out.push(
          (
            await client.request<DeploymentStatus>({
              method: 'GET',
              path: `/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}`,
            })
          ).metadata.generation,
        );
      return out;
    };
    const before = await generations();
    const out = await kubectl(['apply', '--server-side', '-k', DEPLOY]);
    expect(out).toContain('deployment.apps/update-status-controller serverside-applied');
    expect(await generations()).toEqual(before);
  });
});

describe('least-privilege RBAC of the new service accounts (kubectl auth can-i)', () => {
  it('update status: reads its inputs, writes only the UpdateStatus `cluster` and its lease', async () => {
    await expectTable([
      [UPDATE_STATUS, 'watch', 'clusterversions.config.openshift.io', '*', 'yes'],
      [UPDATE_STATUS, 'list', 'clusteroperators.config.openshift.io', '*', 'yes'],
      [UPDATE_STATUS, 'watch', 'machineconfigpools.machineconfiguration.openshift.io', '*', 'yes'],
      [UPDATE_STATUS, 'list', 'machineconfigs.machineconfiguration.openshift.io', '*', 'yes'],
      [UPDATE_STATUS, 'watch', 'machineconfignodes.machineconfiguration.openshift.io', '*', 'yes'],
      [UPDATE_STATUS, 'patch', 'machineconfignodes.machineconfiguration.openshift.io', '*', 'no'],
      [UPDATE_STATUS, 'watch', 'nodes', '*', 'yes'],
      [UPDATE_STATUS, 'watch', 'updatestatuses.update.openshift.io', '*', 'yes'],
      [UPDATE_STATUS, 'create', 'updatestatuses.update.openshift.io', '*', 'yes'],
      [UPDATE_STATUS, 'get', 'updatestatuses.update.openshift.io/cluster', '*', 'yes'],
      [UPDATE_STATUS, 'patch', 'updatestatuses.update.openshift.io/cluster', '*', 'yes', 'status'],
      [UPDATE_STATUS, 'update', 'updatestatuses.update.openshift.io/cluster', '*', 'no', 'status'],
      [UPDATE_STATUS, 'patch', 'customresourcedefinitions/updatestatuses.update.openshift.io', '*', 'yes'],
      [UPDATE_STATUS, 'watch', 'deployments.apps/machine-config-operator', MCO_NS, 'yes'],
      [UPDATE_STATUS, 'get', 'routes.route.openshift.io/thanos-querier', MONITORING_NS, 'yes'],
      [UPDATE_STATUS, 'get', 'prometheuses.monitoring.coreos.com/k8s', MONITORING_NS, 'yes', 'api'],
      [UPDATE_STATUS, 'create', 'leases.coordination.k8s.io', US_NS, 'yes'],
      [UPDATE_STATUS, 'update', 'leases.coordination.k8s.io/tessera-updatestatus', US_NS, 'yes'],
      // The write turn every writer of the UpdateStatus takes (write-turn.ts).
      [UPDATE_STATUS, 'update', 'leases.coordination.k8s.io/updatestatus-write-turn', US_NS, 'yes'],
      [`system:serviceaccount:${PP_NS}:pod-placement-controller`, 'update', 'leases.coordination.k8s.io/updatestatus-write-turn', US_NS, 'yes'],
      [`system:serviceaccount:${PP_NS}:pod-placement-web-hook`, 'update', 'leases.coordination.k8s.io/updatestatus-write-turn', US_NS, 'no'],
      // What it reads, it never writes; its own object only through status, by name.
      [UPDATE_STATUS, 'update', 'clusterversions.config.openshift.io/version', '*', 'no'],
      [UPDATE_STATUS, 'patch', 'clusteroperators.config.openshift.io', '*', 'no'],
      [UPDATE_STATUS, 'patch', 'nodes', '*', 'no'],
      [UPDATE_STATUS, 'update', 'updatestatuses.update.openshift.io/cluster', '*', 'no'],
      [UPDATE_STATUS, 'patch', 'updatestatuses.update.openshift.io/other', '*', 'no', 'status'],
      [UPDATE_STATUS, 'delete', 'updatestatuses.update.openshift.io/cluster', '*', 'no'],
      [UPDATE_STATUS, 'create', 'customresourcedefinitions', '*', 'no'],
      [UPDATE_STATUS, 'patch', 'customresourcedefinitions/nodepools.hypershift.openshift.io', '*', 'no'],
      // Other Deployments and Routes, Secrets, Pods and others' leases: no.
      [UPDATE_STATUS, 'list', 'deployments.apps', MCO_NS, 'no'],
      [UPDATE_STATUS, 'watch', 'deployments.apps', '*', 'no'],
      [UPDATE_STATUS, 'get', 'routes.route.openshift.io/console', MONITORING_NS, 'no'],
      [UPDATE_STATUS, 'get', 'prometheuses.monitoring.coreos.com/user-workload', MONITORING_NS, 'no', 'api'],
      [UPDATE_STATUS, 'list', 'secrets', 'openshift-config', 'no'],
      [UPDATE_STATUS, 'get', 'secrets/pull-secret', 'openshift-config', 'no'],
      [UPDATE_STATUS, 'create', 'pods', US_NS, 'no'],
      [UPDATE_STATUS, 'update', 'leases.coordination.k8s.io/someone-elses', US_NS, 'no'],
      [UPDATE_STATUS, 'create', 'leases.coordination.k8s.io', TENANT, 'no'],
    ]);
  });

  it('NodePool side: NodePools and their status, ConfigMaps, events; no Secrets, Pods or NodePool specs', async () => {
    await expectTable([
      [NODEPOOL, 'watch', 'nodepools.hypershift.openshift.io', '*', 'yes'],
      [NODEPOOL, 'list', 'hostedcontrolplanes.hypershift.openshift.io', '*', 'yes'],
      [NODEPOOL, 'update', 'nodepools.hypershift.openshift.io', TENANT, 'yes', 'status'],
      [NODEPOOL, 'watch', 'configmaps', '*', 'yes'],
      [NODEPOOL, 'get', 'configmaps', TENANT, 'yes'],
      [NODEPOOL, 'create', 'configmaps', TENANT, 'yes'],
      [NODEPOOL, 'update', 'configmaps', TENANT, 'yes'],
      [NODEPOOL, 'delete', 'configmaps', TENANT, 'yes'],
      [NODEPOOL, 'create', 'events.events.k8s.io', TENANT, 'yes'],
      [NODEPOOL, 'patch', 'events.events.k8s.io', TENANT, 'yes'],
      // The `nodepools` informer of the UpdateStatus: its own entries of the status, by server-side apply.
      [NODEPOOL, 'create', 'updatestatuses.update.openshift.io', '*', 'yes'],
      [NODEPOOL, 'get', 'updatestatuses.update.openshift.io/cluster', '*', 'yes'],
      [NODEPOOL, 'patch', 'updatestatuses.update.openshift.io/cluster', '*', 'yes', 'status'],
      [NODEPOOL, 'patch', 'updatestatuses.update.openshift.io/cluster', '*', 'no'],
      [NODEPOOL, 'patch', 'updatestatuses.update.openshift.io/other', '*', 'no', 'status'],
      [NODEPOOL, 'get', 'leases.coordination.k8s.io/updatestatus-write-turn', US_NS, 'yes'],
      [NODEPOOL, 'update', 'leases.coordination.k8s.io/updatestatus-write-turn', US_NS, 'yes'],
      [NODEPOOL, 'create', 'leases.coordination.k8s.io', US_NS, 'yes'],
      [NODEPOOL, 'update', 'leases.coordination.k8s.io/tessera-updatestatus', US_NS, 'no'],
      [NODEPOOL, 'watch', 'machineconfigpools.machineconfiguration.openshift.io', '*', 'yes'],
      [NODEPOOL, 'update', 'machineconfigpools.machineconfiguration.openshift.io', '*', 'no'],
      // A NodePool's spec and life belong to HyperShift; status is written with update only.
      [NODEPOOL, 'update', 'nodepools.hypershift.openshift.io', TENANT, 'no'],
      [NODEPOOL, 'patch', 'nodepools.hypershift.openshift.io', TENANT, 'no', 'status'],
      [NODEPOOL, 'delete', 'nodepools.hypershift.openshift.io', TENANT, 'no'],
      [NODEPOOL, 'update', 'hostedcontrolplanes.hypershift.openshift.io', TENANT, 'no'],
      [NODEPOOL, 'get', 'nodepools.hypershift.openshift.io', TENANT, 'no'],
      [NODEPOOL, 'deletecollection', 'configmaps', TENANT, 'no'],
      [NODEPOOL, 'get', 'secrets', TENANT, 'no'],
      [NODEPOOL, 'list', 'secrets', '*', 'no'],
      [NODEPOOL, 'create', 'pods', NP_NS, 'no'],
      [NODEPOOL, 'create', 'events', TENANT, 'no'],
      [NODEPOOL, 'create', 'leases.coordination.k8s.io', NP_NS, 'yes'],
      [NODEPOOL, 'update', 'leases.coordination.k8s.io/tessera-nodepool', NP_NS, 'yes'],
      [NODEPOOL, 'update', 'leases.coordination.k8s.io/someone-elses', NP_NS, 'no'],
      [NODEPOOL, 'create', 'leases.coordination.k8s.io', TENANT, 'no'],
      [NODEPOOL, 'list', 'nodes', '*', 'no'],
    ]);
  });

  it('status writer in the hosted cluster: reads Nodes and Tuned Profiles, writes nothing', async () => {
    await expectTable([
      [NTO_WRITER, 'list', 'nodes', '*', 'yes'],
      [NTO_WRITER, 'watch', 'nodes', '*', 'yes'],
      [NTO_WRITER, 'list', 'profiles.tuned.openshift.io', NTO_NS, 'yes'],
      [NTO_WRITER, 'watch', 'profiles.tuned.openshift.io', NTO_NS, 'yes'],
      [NTO_WRITER, 'patch', 'nodes', '*', 'no'],
      [NTO_WRITER, 'get', 'nodes/some-node', '*', 'no'],
      [NTO_WRITER, 'update', 'profiles.tuned.openshift.io', NTO_NS, 'no', 'status'],
      [NTO_WRITER, 'list', 'profiles.tuned.openshift.io', '*', 'no'],
      [NTO_WRITER, 'list', 'profiles.tuned.openshift.io', TENANT, 'no'],
      [NTO_WRITER, 'list', 'configmaps', NTO_NS, 'no'],
      [NTO_WRITER, 'get', 'secrets/nto-status-writer-token', NTO_SA_NS, 'no'],
      [NTO_WRITER, 'create', 'pods', NTO_SA_NS, 'no'],
    ]);
  });
});

describe('each component with its own service account', () => {
  it('update status, leader-elected, as its Deployment runs it (`tessera upgrade status-controller`): writes the UpdateStatus `cluster`, nothing forbidden', async () => {
    const log: string[] = [];
    const kubeConfig = await saKubeConfig(US_NS, 'update-status-controller');
    const kubeconfigFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'us-sa-')), 'kubeconfig');
    writeFileSync(kubeconfigFile, kubeConfig.exportConfig(), { mode: 0o600 });
    const options = parseControllerOptions(
      { kubeconfig: kubeconfigFile, namespace: US_NS, probePort: 0 },
      'unused-default',
    );
    const stop = new AbortController();
    // A component that stops early (e.g. on a 403) is logged, so the assertions below name the cause.
    const running = runUpdateStatusController(options, { logger: lineLogger(log), logLevel: 'info' }, stop.signal).catch(
      (err: unknown) => void log.push(`error stopped: ${String(err)}`),
    );
    try {
      // No ClusterVersion here: the controller says so in the status it writes.
      await eventually(
        async () => {
          const us = await client.request<{ status?: { conditions?: { reason?: string }[] } }>({
            method: 'GET',
            path: '/apis/update.openshift.io/v1alpha1/updatestatuses/cluster',
          });
          expect(us.status?.conditions?.map((c) => c.reason)).toContain('InsufficientData');
        },
        { timeoutMs: 60_000, what: 'the UpdateStatus written by the controller' },
      );
      const lease = await client.request<{ spec: { holderIdentity?: string } }>({
        method: 'GET',
        path: `/apis/coordination.k8s.io/v1/namespaces/${US_NS}/leases/tessera-updatestatus`,
      });
      expect(lease.spec.holderIdentity).toBeTruthy();
      // Its writes took turns with the UpdateStatus's other writers: the turn's Lease, given back after each write.
      await eventually(
        async () => {
          const turn = await client.request<{ spec: { holderIdentity?: string } }>({
            method: 'GET',
            path: `/apis/coordination.k8s.io/v1/namespaces/${US_NS}/leases/updatestatus-write-turn`,
          });
          expect(turn.spec.holderIdentity).toBe('');
        },
        { timeoutMs: 30_000, what: 'the write turn taken and given back' },
      );
    } finally {
      stop.abort();
      await running;
    }
    expect(forbiddenLines(log)).toEqual([]);
  });

  it('NodePool side and status writer (hosted identity from its token Secret): status carried, then cleaned up', async () => {
    // The long-lived token the management cluster's kubeconfig for the hosted cluster is built from.
    const token = await hostedStatusWriterToken(client);
    // As the Deployment runs it: `tessera nodepool run --leader-elect`, each side with its own identity.
    const kubeconfigs = mkdtempSync(path.join(os.tmpdir(), 'np-sa-'));
    const managementFile = path.join(kubeconfigs, 'management');
    const hostedFile = path.join(kubeconfigs, 'hosted');
    writeFileSync(
      managementFile,
      (await saKubeConfig(NP_NS, 'nodepool-status-controller')).exportConfig(),
      { mode: 0o600 },
    );
    writeFileSync(hostedFile, tokenKubeConfig(await adminKubeConfig(), 'nto-status-writer', token).exportConfig(), { mode: 0o600 });
    // This one cluster plays both parts; its kwok workers carry no NodePool label, so only the pair's nodes count.
    const pair = new HostedClusterPair({ management: client, hosted: client, clusterName: 'deploy-hc' });
    await pair.setUp();
    await pair.addNodePool('np-deploy', 'pp-deploy', ['deploy-np-node-1']);
    await pair.setTunedState('deploy-np-node-1', { kind: 'applied' });

    const log: string[] = [];
    const logger = lineLogger(log);
    const stop = new AbortController();
    const running = runNodePoolControllers({
      kubeconfig: managementFile,
      hostedKubeconfig: hostedFile,
      hcpNamespace: pair.hcpNamespace,
      staleAfterMs: 0,
      heartbeatIntervalMs: 300_000,
      probePort: 0,
      leaderElect: true,
      namespace: NP_NS,
      signal: stop.signal,
      logger,
    }).catch((err: unknown) => void log.push(`error stopped: ${String(err)}`));
    try {
      await eventually(
        async () => {
          const np: NodePool = await pair.getNodePool('np-deploy');
          const summary = np.status?.conditions?.find((c) => c.type === 'PerformanceProfileAppliedSuccessfully');
          expect(summary?.status).toBe('True');
        },
        { timeoutMs: 60_000, what: 'the NodePool condition from the hosted cluster' },
      );
      // The NodePool stops naming the profile: its mirror (and then its status) are deleted.
      await pair.setTuningConfig('np-deploy', []);
      await eventually(
        async () => {
          expect((await pair.hcpConfigMaps(LABELS.ppConfigMap)).length).toBe(0);
          expect((await pair.hcpConfigMaps(LABELS.statusConfigMap)).length).toBe(0);
        },
        { timeoutMs: 60_000, what: 'the mirrored profile and its status removed' },
      );
    } finally {
      stop.abort();
      await running;
    }
    expect(forbiddenLines(log)).toEqual([]);
    // Not vacuous: both parts wrote.
    expect(log.join('\n')).toContain('mirrored PerformanceProfile ConfigMap');
    expect(log.join('\n')).toContain('created status ConfigMap');
  });
});
