// The probes and metrics of the two status controllers as their Deployments run them (`tessera nodepool run
// --leader-elect --probe-port`, `tessera upgrade status-controller`), scraped over HTTP from the real processes on
// a private API server (the NodePool CRDs must be missing at first, which the shared cluster cannot promise):
//  1. NodePool: /readyz is not ready while the management cluster's caches cannot sync (no NodePool CRD yet), and
//     ready once they did; /metrics then has the reconcile and work-queue metrics of the NodePool controller and
//     of the status writer, beside their own counters.
//  2. Update status, two replicas on one Lease: neither is ready, and neither leads, while the caches of what the
//     controller watches cannot sync (no ClusterVersion CRD yet); once they did, both are ready, the standby too.
//  3. Update status: /metrics has the controller's reconcile and work-queue metrics.
// Cases 2 and 3 share the cluster in this order: 3 installs the ClusterVersion CRD that 2 must start without.
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { HostedClusterPair } from '../../../src/demo/hosted-cluster-pair.js';
import { installNodePoolCrds } from '../../../src/nodepool/api/install.js';
import type { NodePool } from '../../../src/nodepool/api/types.js';
import { isNotFound, KubeClient } from '../../../src/runtime/index.js';
import {
  ClusterOperators,
  ClusterVersions,
  installOpenShiftDevCrds,
  MachineConfigPools,
  MachineConfigs,
  Routes,
} from '../../../src/updatestatus/api/dev-crds.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { fixturePath } from '../../support/fixtures.js';
import { startTessera, type ProcessRun } from '../../support/supervisor.js';
import { createSnapshotObjects } from '../../support/updatestatus.js';

const LEASE_NAMESPACE = 'tessera-probes';
const SNAPSHOT = path.join(fixturePath('oc-upgrade-status'), '4.15.0-ec2-early-cv.yaml');

let cluster: DevCluster;
let client: KubeClient;
const runs: ProcessRun[] = [];

type Run = ProcessRun & { log(): string };

function run(args: readonly string[]): Run {
  const started = startTessera(args);
  runs.push(started);
  return started;
}

/** The probe server's address, from the Manager's "manager starting" log line (the port is chosen at random). */
async function probeAddress(component: Run): Promise<string> {
  return eventually(
    async () => {
      for (const line of component.log().split('\n')) {
        if (!line.startsWith('{')) continue;
        const record = JSON.parse(line) as { msg?: string; probePort?: number };
        if (record.msg === 'manager starting' && record.probePort) return `http://127.0.0.1:${record.probePort}`;
      }
      throw new Error('no "manager starting" line yet');
    },
    { timeoutMs: 60_000, what: `the probe server of ${component.logFile}` },
  );
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

beforeAll(async () => {
  cluster = await startApiServerOnlyTestCluster(uniqueName('probes'));
  client = new KubeClient(await cluster.kubeConfig());
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: LEASE_NAMESPACE } } });
}, 180_000);

/** SIGKILLs `r` and waits for it to exit. */
function kill(r: ProcessRun): Promise<void> {
  return new Promise<void>((resolve) => {
    if (r.child.exitCode !== null || r.child.signalCode !== null) return resolve();
    r.child.once('exit', () => resolve());
    r.child.kill('SIGKILL');
  });
}

/** The holder of the Lease `name` in `namespace`; undefined while there is no Lease. */
async function leaseHolder(namespace: string, name: string): Promise<string | undefined> {
  try {
    const lease = await client.request<{ spec?: { holderIdentity?: string } }>({
      method: 'GET',
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
    });
    return lease.spec?.holderIdentity;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

afterAll(async () => {
  await Promise.all(runs.map(kill));
  await client?.close();
  await cluster?.stop({ wipe: true });
}, 120_000);

describe('status controllers as deployed: /readyz and /metrics', () => {
  it('tessera nodepool run: not ready until its caches synced, then reconcile and queue metrics of both controllers', async () => {
    // This one cluster plays both parts, as in manifests.test.ts.
    const pair = new HostedClusterPair({ management: client, hosted: client, clusterName: 'probes-hc' });
    const nodePool = run([
      'nodepool',
      'run',
      `--kubeconfig=${cluster.kubeconfigPath}`,
      `--hosted-kubeconfig=${cluster.kubeconfigPath}`,
      `--hcp-namespace=${pair.hcpNamespace}`,
      '--leader-elect',
      `--namespace=${LEASE_NAMESPACE}`,
      '--probe-port=0',
    ]);
    const base = await probeAddress(nodePool);
    await eventually(async () => expect((await get(`${base}/healthz`)).status).toBe(200), {
      what: `/healthz (log: ${nodePool.logFile})`,
    });
    // No NodePool CRD: the NodePool cache cannot sync, so the process is not ready, whenever it is asked.
    const unsynced = await get(`${base}/readyz`);
    expect(unsynced.status).toBeGreaterThanOrEqual(400); // a failed probe to the kubelet
    expect(unsynced.body).toContain('caches have not synced yet');

    await installNodePoolCrds(client, 'management');
    await installNodePoolCrds(client, 'hosted');
    await pair.setUp();
    await pair.addNodePool('np-probes', 'pp-probes', ['probes-node-1']);
    await pair.setTunedState('probes-node-1', { kind: 'applied' });
    await eventually(async () => expect((await get(`${base}/readyz`)).status).toBe(200), {
      timeoutMs: 60_000,
      what: `/readyz once the caches synced (log: ${nodePool.logFile})`,
    });
    await eventually(
      async () => {
        const np: NodePool = await pair.getNodePool('np-probes');
        expect(np.status?.conditions?.find((c) => c.type === 'PerformanceProfileAppliedSuccessfully')?.status).toBe(
          'True',
        );
      },
      { timeoutMs: 60_000, what: `the NodePool condition (log: ${nodePool.logFile})` },
    );

    const metrics = (await get(`${base}/metrics`)).body;
    for (const controller of ['nodepool-performance-status', `nto-status-writer-${pair.hcpNamespace}`]) {
      expect(metrics).toMatch(
        new RegExp(`controller_runtime_reconcile_total\\{controller="${controller}",result="[a-z_]+"\\} [1-9]`),
      );
      expect(metrics).toMatch(new RegExp(`controller_runtime_reconcile_time_seconds_count\\{controller="${controller}"\\} [1-9]`));
      expect(metrics).toMatch(new RegExp(`workqueue_adds_total\\{name="${controller}"\\} [1-9]`));
      expect(metrics).toMatch(new RegExp(`workqueue_depth\\{name="${controller}"\\} \\d+`));
    }
    expect(metrics).toMatch(/tessera_nodepool_mirror_writes_total [1-9]/);
    expect(metrics).toMatch(/tessera_nodepool_status_writes_total [1-9]/);
    expect(metrics).toMatch(/tessera_nto_status_writes_total\{kind="create"\} [1-9]/);
  }, 240_000);

  it('tessera upgrade status-controller: neither replica ready nor leading until its caches synced, then both ready', async () => {
    // Its own Lease, so case 3's process leads its own and these two are gone before it starts.
    const leaseNamespace = 'tessera-probes-replicas';
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: leaseNamespace } } });
    // Every input but ClusterVersion: the ClusterVersion cache cannot sync until its CRD exists.
    await installOpenShiftDevCrds(client, { types: [ClusterOperators, MachineConfigPools, MachineConfigs, Routes] });
    await expect(
      client.request({
        method: 'GET',
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${ClusterVersions.plural}.${ClusterVersions.group}`,
      }),
    ).rejects.toSatisfy(isNotFound);
    const args = [
      'upgrade',
      'status-controller',
      `--kubeconfig=${cluster.kubeconfigPath}`,
      `--namespace=${leaseNamespace}`,
      '--probe-port=0',
    ];
    const replicas = [run(args), run(args)];
    const bases = await Promise.all(replicas.map(probeAddress));
    for (const [i, base] of bases.entries()) {
      await eventually(async () => expect((await get(`${base}/healthz`)).status).toBe(200), {
        what: `/healthz (log: ${replicas[i]?.logFile})`,
      });
      // Past its start-up (the UpdateStatus CRD installed), it waits for the caches, which cannot sync yet.
      await eventually(
        async () => {
          const unsynced = await get(`${base}/readyz`);
          expect(unsynced.status).toBeGreaterThanOrEqual(400);
          expect(unsynced.body).toContain('caches have not synced yet');
        },
        { timeoutMs: 60_000, what: `/readyz waiting for the caches (log: ${replicas[i]?.logFile})` },
      );
    }
    // Leader election waits for the caches too: no replica has taken the Lease.
    expect(await leaseHolder(leaseNamespace, 'tessera-updatestatus')).toBeUndefined();

    await installOpenShiftDevCrds(client, { types: [ClusterVersions] });
    for (const [i, base] of bases.entries())
      await eventually(async () => expect((await get(`${base}/readyz`)).status).toBe(200), {
        timeoutMs: 60_000,
        what: `/readyz once the caches synced (log: ${replicas[i]?.logFile})`,
      });
    // One replica leads (the Manager's identity is <hostname>_<pid>); the other, ready above, is the standby.
    const identities = replicas.map((r) => `${os.hostname()}_${r.child.pid}`);
    const holder = await eventually(
      async () => {
        const got = await leaseHolder(leaseNamespace, 'tessera-updatestatus');
        expect(identities).toContain(got);
        return got;
      },
      { timeoutMs: 60_000, what: `the Lease taken by one replica (logs: ${replicas.map((r) => r.logFile).join(', ')})` },
    );
    const standby = bases[identities.indexOf(holder ?? '') === 0 ? 1 : 0] ?? '';
    expect((await get(`${standby}/readyz`)).status).toBe(200);
    await Promise.all(replicas.map(kill));
  }, 240_000);

  it('tessera upgrade status-controller: reconcile and queue metrics of the controller', async () => {
    // A cluster in the middle of an update (on the OpenShift inputs' stand-in CRDs): an empty cluster would queue
    // no key, so nothing would be reconciled.
    await installOpenShiftDevCrds(client);
    await createSnapshotObjects(client, (await loadSnapshot(SNAPSHOT)).snapshot);
    const updateStatus = run([
      'upgrade',
      'status-controller',
      `--kubeconfig=${cluster.kubeconfigPath}`,
      `--namespace=${LEASE_NAMESPACE}`,
      '--probe-port=0',
    ]);
    const base = await probeAddress(updateStatus);
    await eventually(
      async () => {
        const metrics = (await get(`${base}/metrics`)).body;
        expect(metrics).toMatch(/controller_runtime_reconcile_total\{controller="updatestatus",result="[a-z_]+"\} [1-9]/);
        expect(metrics).toMatch(/controller_runtime_reconcile_time_seconds_count\{controller="updatestatus"\} [1-9]/);
        expect(metrics).toMatch(/workqueue_adds_total\{name="updatestatus"\} [1-9]/);
        expect(metrics).toMatch(/workqueue_depth\{name="updatestatus"\} \d+/);
      },
      { timeoutMs: 90_000, what: `the update status controller's metrics (log: ${updateStatus.logFile})` },
    );
  }, 180_000);
});
