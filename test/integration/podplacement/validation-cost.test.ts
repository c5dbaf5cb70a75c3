// The validating webhook answers any caller that reaches its port (the API server does not authenticate to it).
// Unauthenticated DELETE reviews of the ClusterPodPlacementConfig must not make the operator read the API server:
// the "no PodPlacementConfigs left" rule counts the informer cache. PodPlacementConfig reviews may confirm the
// cache with a namespaced read only within a budget. Measured at the real kube-apiserver's own request counter
// (apiserver_request_total, verb LIST, resource podplacementconfigs) on a private cluster.
import { execFile } from 'node:child_process';
import https from 'node:https';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryPaths } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import {
  CONFIRMING_READS_BURST,
  CONFIRMING_READS_PER_SECOND,
} from '../../../src/podplacement/config-validation.js';
import { VALIDATING_WEBHOOK } from '../../../src/podplacement/constants.js';
import { ClusterPodPlacementConfigs } from '../../../src/podplacement/resources.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
} from '../../../src/podplacement/operator/start.js';
import { KubeClient, silentLogger } from '../../../src/runtime/index.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { createClusterPodPlacementConfig } from '../../support/placement.js';

const run = promisify(execFile);
const opNs = 'pp-cost-operator';
const tenantNs = 'pp-cost-tenant';
const HOSTILE_REVIEWS = 200;

let cluster: DevCluster | undefined;
let client: KubeClient;
const stop = new AbortController();
let operator: PodPlacementOperatorHandle | undefined;

/** Sum of the API server's request counter for `verb` on PodPlacementConfigs, from its /metrics endpoint. */
async function apiServerRequests(verb: string): Promise<number> {
  const { stdout } = await run(
    binaryPaths().kubectl,
    ['--kubeconfig', cluster?.kubeconfigPath ?? '', 'get', '--raw', '/metrics'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  let total = 0;
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    if (!line.includes(`verb="${verb}"`) || !line.includes('resource="podplacementconfigs"')) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** One AdmissionReview posted straight to the webhook port, as any pod that can reach it could. */
function postReview(
  port: number,
  body: unknown,
  path: string = VALIDATING_WEBHOOK.clusterConfigPath,
): Promise<{ allowed: boolean; message?: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        rejectUnauthorized: false, // an attacker does not need to trust the serving certificate
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              response: { allowed: boolean; status?: { message?: string } };
            };
            resolve({ allowed: review.response.allowed, message: review.response.status?.message });
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const deleteReview = (i: number) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `hostile-${i}`,
    kind: { group: 'multiarch.openshift.io', version: 'v1beta1', kind: 'ClusterPodPlacementConfig' },
    resource: { group: 'multiarch.openshift.io', version: 'v1beta1', resource: 'clusterpodplacementconfigs' },
    name: 'cluster',
    operation: 'DELETE',
    userInfo: { username: 'system:anonymous' },
    object: null,
    oldObject: null,
  },
});

const createReview = (i: number) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `hostile-create-${i}`,
    kind: { group: 'multiarch.openshift.io', version: 'v1beta1', kind: 'PodPlacementConfig' },
    resource: { group: 'multiarch.openshift.io', version: 'v1beta1', resource: 'podplacementconfigs' },
    name: `p${i}`,
    namespace: tenantNs,
    operation: 'CREATE',
    userInfo: { username: 'system:anonymous' },
    object: {
      apiVersion: 'multiarch.openshift.io/v1beta1',
      kind: 'PodPlacementConfig',
      metadata: { name: `p${i}`, namespace: tenantNs },
      spec: { priority: 77 },
    },
    oldObject: null,
  },
});

beforeAll(async () => {
  cluster = await startApiServerOnlyTestCluster(uniqueName('pp-cost'));
  const kubeConfig = await cluster.kubeConfig();
  client = new KubeClient(kubeConfig);
  for (const ns of [opNs, tenantNs])
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } });
  operator = await startPodPlacementOperator({
    kubeConfig,
    namespace: opNs,
    signal: stop.signal,
    webhookHost: '127.0.0.1',
    webhookPort: 0,
    endpoint: { kind: 'url', baseUrl: 'https://127.0.0.1:0' },
    probes: false,
    leaderElection: false,
    installCrds: true,
    handleSignals: false,
    logger: silentLogger,
  });
  for (const [name, priority] of [
    ['a', 1],
    ['b', 2],
  ] as const) {
    await client.request({
      method: 'POST',
      path: `/apis/multiarch.openshift.io/v1beta1/namespaces/${tenantNs}/podplacementconfigs`,
      body: {
        apiVersion: 'multiarch.openshift.io/v1beta1',
        kind: 'PodPlacementConfig',
        metadata: { name },
        spec: {
          priority,
          plugins: {
            nodeAffinityScoring: { enabled: true, platforms: [{ architecture: 'amd64', weight: 10 }] },
          },
        },
      },
    });
  }
}, 180_000);

afterAll(async () => {
  stop.abort();
  await operator?.stopped.catch(() => undefined);
  await client?.close();
  await cluster?.stop({ wipe: true });
}, 120_000);

describe('ClusterPodPlacementConfig DELETE reviews from an unauthenticated caller', () => {
  it(`cost no LIST at the API server, however many arrive (${HOSTILE_REVIEWS})`, async () => {
    const port = operator?.webhookPort ?? 0;
    // The rule still holds: both configs are counted (once the informer has seen them).
    await eventually(async () => {
      const verdict = await postReview(port, deleteReview(-1));
      expect(verdict).toEqual({
        allowed: false,
        message: expect.stringContaining('while 2 PodPlacementConfig(s) still exist') as unknown,
      });
    });

    const listsBefore = await apiServerRequests('LIST');
    const getsBefore = await apiServerRequests('GET');
    const verdicts = await Promise.all(
      Array.from({ length: HOSTILE_REVIEWS }, (_, i) => postReview(port, deleteReview(i))),
    );
    expect(verdicts.filter((v) => !v.allowed)).toHaveLength(HOSTILE_REVIEWS);
    expect(await apiServerRequests('LIST')).toBe(listsBefore);
    expect(await apiServerRequests('GET')).toBe(getsBefore);

    // The counter is live: one real LIST moves it (so the equality above can fail).
    await client.request({
      method: 'GET',
      path: '/apis/multiarch.openshift.io/v1beta1/podplacementconfigs',
    });
    expect(await apiServerRequests('LIST')).toBe(listsBefore + 1);
  });
});

describe('PodPlacementConfig CREATE reviews from an unauthenticated caller', () => {
  it('cost at most the confirming-read budget, not one LIST each', async () => {
    const port = operator?.webhookPort ?? 0;
    await createClusterPodPlacementConfig(client);
    // Once the operator's cache holds it, the cache admits these reviews; only confirming them costs reads.
    await eventually(
      async () => {
        const cached = operator?.manager.informers
          .informerFor({ type: ClusterPodPlacementConfigs })
          .getIndexer()
          .get('cluster');
        expect(cached).toBeDefined();
      },
      { timeoutMs: 90_000, what: 'the cluster config in the operator cache' },
    );
    const listsBefore = await apiServerRequests('LIST');
    const started = Date.now();
    const verdicts = await Promise.all(
      Array.from({ length: HOSTILE_REVIEWS }, (_, i) =>
        postReview(port, createReview(i), VALIDATING_WEBHOOK.podConfigPath),
      ),
    );
    // Generous in the slow direction: a slower run only allows more reads.
    const budget =
      CONFIRMING_READS_BURST + CONFIRMING_READS_PER_SECOND * Math.ceil((Date.now() - started) / 1000);
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(HOSTILE_REVIEWS);
    const lists = (await apiServerRequests('LIST')) - listsBefore;
    expect(lists).toBeGreaterThan(0); // confirmation does happen, within the budget
    expect(lists).toBeLessThanOrEqual(budget);
  });
});
