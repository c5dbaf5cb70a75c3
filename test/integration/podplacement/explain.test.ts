// `tessera podplacement explain` as the README suggests it after `npm start`: on a pod the operator has already
// placed, with a registry whose CA the cluster trusts through image.config.openshift.io additionalTrustedCA (what
// the demo sets up), and nothing passed on the command line. Runs on a private API-server-only cluster (the image
// config is a cluster singleton); the operator runs in this process, the registry is served by this process.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { multiPlatformImage, type Blob, type BuiltImage } from '../../../src/devcluster/registry-images.js';
import { EVENT_REASONS, LABELS, SCHEDULING_GATE } from '../../../src/podplacement/constants.js';
import { trustRegistryClusterWide } from '../../../src/demo/trust-registry.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
} from '../../../src/podplacement/operator/start.js';
import { KubeClient } from '../../../src/runtime/index.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { createClusterPodPlacementConfig } from '../../support/placement.js';
import { startFakeServer, type FakeServer } from '../registry/fake-server.js';
import { runTessera } from './support.js';
import { inProcessOperatorOptions } from './in-process-operator.js';

const opNs = 'pp-explain-operator';
const appNs = 'pp-explain-apps';

let cluster: DevCluster | undefined;
let client: KubeClient;
let registry: FakeServer;
let operator: PodPlacementOperatorHandle | undefined;
const stop = new AbortController();
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'pp-explain-'));

/** Serves `image` as `repo:tag` (manifests by tag and digest, blobs) from the fake registry. */
function serve(repo: string, tag: string, image: BuiltImage): void {
  const byPath = new Map<string, Blob>();
  const add = (ref: string, img: BuiltImage): void => {
    byPath.set(`/v2/${repo}/manifests/${ref}`, img.manifest);
    byPath.set(`/v2/${repo}/manifests/${img.manifest.digest}`, img.manifest);
    for (const b of img.blobs) byPath.set(`/v2/${repo}/blobs/${b.digest}`, b);
    for (const child of img.children) add(child.manifest.digest, child);
  };
  add(tag, image);
  registry.handler = (req, res) => {
    if (req.url === '/v2/') return void res.writeHead(200).end('{}');
    const blob = byPath.get(req.url ?? '');
    if (!blob) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': blob.mediaType, 'docker-content-digest': blob.digest });
    res.end(req.method === 'HEAD' ? undefined : blob.bytes);
  };
}

beforeAll(async () => {
  registry = await startFakeServer();
  serve(
    'demo/web',
    '1',
    multiPlatformImage({ platforms: [{ architecture: 'amd64' }, { architecture: 'arm64' }] }),
  );
  cluster = await startApiServerOnlyTestCluster(uniqueName('pp-explain'));
  client = new KubeClient(await cluster.kubeConfig());
  for (const name of [opNs, appNs])
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name } } });
  // No controller manager here to create it; pods need their namespace's default service account.
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${appNs}/serviceaccounts`,
    body: { metadata: { name: 'default' } },
  });
  // The registry's CA reaches the operator and explain only through the cluster, as in the demo.
  await trustRegistryClusterWide(client, registry.host, registry.caCertPem);
  operator = await startPodPlacementOperator(
    inProcessOperatorOptions({
      kubeConfig: await cluster.kubeConfig(),
      namespace: opNs,
      signal: stop.signal,
      certDir: path.join(stateDir, 'certs'),
    }),
  );
  // The API server answers 503 for a moment after the operator points the CRD's conversion at itself.
  await eventually(() => createClusterPodPlacementConfig(client, {}), {
    timeoutMs: 60_000,
    intervalMs: 500,
    what: 'the ClusterPodPlacementConfig to be created',
  });
}, 180_000);

afterAll(async () => {
  stop.abort();
  await operator?.stopped.catch(() => undefined);
  await client?.close();
  await cluster?.stop({ wipe: true });
  await registry?.close();
  rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

interface PodNow {
  metadata: { labels?: Record<string, string> };
  spec: { schedulingGates?: { name: string }[] };
}

describe('podplacement explain on a pod the operator has placed', () => {
  it('shows what the operator did and what it would do to a new pod, trusting the cluster-configured CA', async () => {
    const image = `${registry.host}/demo/web:1`;
    // The webhook gates pods once its configuration names this operator; retry the create until a pod is gated.
    let name = '';
    await eventually(
      async () => {
        name = uniqueName('web');
        const created = await client.request<PodNow>({
          method: 'POST',
          path: `/api/v1/namespaces/${appNs}/pods`,
          body: { metadata: { name, labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } },
        });
        if (!(created.spec.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE))
          throw new Error('not gated yet');
      },
      { timeoutMs: 90_000, what: 'a gated pod' },
    );
    await eventually(
      async () => {
        const pod = await client.request<PodNow>({
          method: 'GET',
          path: `/api/v1/namespaces/${appNs}/pods/${name}`,
        });
        if (pod.metadata.labels?.[LABELS.nodeAffinity] !== 'set') throw new Error('not placed yet');
      },
      { timeoutMs: 60_000, what: 'the operator to place the pod' },
    );
    // What the scheduler would do next (there is none here): bind it to a node.
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${appNs}/pods/${name}/binding`,
      body: {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name },
        target: { kind: 'Node', name: 'node-a' },
      },
    });

    const run = await runTessera(
      cluster?.kubeconfigPath ?? '',
      'podplacement',
      'explain',
      `${appNs}/${name}`,
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [observed = '', wouldDo = ''] = run.stdout.split('What the operator would do now');
    // What the operator did, as the API server has it.
    expect(observed).toContain(`${LABELS.nodeAffinity}=set`);
    expect(observed).toContain('kubernetes.io/arch In [amd64, arm64]');
    expect(observed).toContain('Node: node-a');
    expect(observed).toContain(EVENT_REASONS.schedGateAdded);
    expect(observed).toContain(EVENT_REASONS.schedGateRemovalSuccess);
    expect(observed).toMatch(/ungated +\S+ \(\+[\d.]+ s after gating\)/);
    // A new pod like it: gated and placed, its images inspected through the cluster-trusted CA.
    expect(wouldDo).not.toMatch(/not trusted|ERROR/);
    expect(wouldDo).toContain(`${image}: amd64, arm64`);
    expect(wouldDo).toContain('Would be gated: yes');
    expect(wouldDo).not.toContain('spec.nodeName is set');
    expect(wouldDo).toContain('kubernetes.io/arch In [amd64, arm64]');
  }, 240_000);
});
