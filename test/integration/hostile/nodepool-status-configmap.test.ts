// Issue #10 items 5 and 11 against a real API server: status ConfigMaps written from a hosted cluster (and a
// user's tuning ConfigMap) that are oversize, deeply nested, alias bombs or carry conditions a NodePool cannot hold.
// Each becomes a NodePool condition and a Warning event naming the ConfigMap and the limit; the controller does not
// retry it (no reconcile errors), does not parse the same text again, and keeps serving another NodePool.
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiStatusError,
  ConfigMaps,
  CustomResourceDefinitions,
  Events,
  KubeClient,
  type KubeObject,
  ResourceClient,
} from '../../../src/runtime/index.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import type { ConfigMap, NodePool, NodePoolCondition } from '../../../src/nodepool/api/types.js';
import { ANNOTATIONS, LABELS } from '../../../src/nodepool/constants.js';
import { HostedClusterPair } from '../../../src/demo/hosted-cluster-pair.js';
import { installNodePoolCrds } from '../../../src/nodepool/api/install.js';
import { performanceProfileConfigMapName, statusConfigMapName } from '../../../src/nodepool/names.js';
import { createNodePoolController } from '../../../src/nodepool/management/nodepool-controller.js';
import { NodePools } from '../../../src/nodepool/resources.js';
import { encodeProfileStatus } from '../../../src/nodepool/status-codec.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';

const SUMMARY = 'PerformanceProfileAppliedSuccessfully';
const PREFIX = 'performance.operator.openshift.io/';
const NAMESPACE = 'hostile';

function condition(np: NodePool, type: string): NodePoolCondition | undefined {
  return np.status?.conditions?.find((c) => c.type === type);
}

function ours(np: NodePool): NodePoolCondition[] {
  return (np.status?.conditions ?? []).filter((c) => c.type === SUMMARY || c.type.startsWith(PREFIX));
}

async function metric(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const found = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (found?.values ?? []) as { value: number; labels: Record<string, string | number> }[];
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
    .reduce((sum, v) => sum + v.value, 0);
}

describe('NodePool performance status against hostile hosted-cluster text', () => {
  let cluster: DevCluster | undefined;
  let client: KubeClient;
  let pair: HostedClusterPair;
  let configMaps: ResourceClient<ConfigMap>;
  let nodePools: ResourceClient<NodePool>;
  const registry = new Registry();
  const stop = new AbortController();
  let running: Promise<void> | undefined;

  /** Writes (creates or replaces) the status ConfigMap of `nodePool`, as NTO would, with `text` under `status`. */
  async function writeStatus(nodePool: string, profile: string, text: string): Promise<string> {
    const name = statusConfigMapName(performanceProfileConfigMapName(`${profile}-tuning`, nodePool));
    const body: ConfigMap = {
      metadata: {
        name,
        namespace: pair.hcpNamespace,
        labels: {
          [LABELS.statusConfigMap]: 'true',
          [LABELS.nodePool]: nodePool,
          [LABELS.performanceProfileName]: profile,
        },
        annotations: { [ANNOTATIONS.nodePool]: `${NAMESPACE}/${nodePool}` },
      },
      data: { status: text },
    };
    try {
      const current = await configMaps.get({ namespace: pair.hcpNamespace, name });
      await configMaps.update({
        ...body,
        metadata: { ...body.metadata, resourceVersion: current.metadata.resourceVersion },
      });
    } catch {
      await configMaps.create(body);
    }
    return `${pair.hcpNamespace}/${name}`;
  }

  const available = encodeProfileStatus({
    conditions: ['Available', 'Upgradeable', 'Progressing', 'Degraded'].map((type) => ({
      type,
      status: type === 'Available' || type === 'Upgradeable' ? 'True' : 'False',
      lastHeartbeatTime: '2026-01-01T00:00:00Z',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    })),
  });

  beforeAll(async () => {
    cluster = await startApiServerOnlyTestCluster(uniqueName('np-hostile'));
    client = new KubeClient(await cluster.kubeConfig());
    await installNodePoolCrds(client, 'management');
    configMaps = new ResourceClient<ConfigMap>(client, ConfigMaps);
    nodePools = new ResourceClient<NodePool>(client, NodePools);
    // One API server plays both sides: the controller only reads the management side, and no Nodes are needed.
    pair = new HostedClusterPair({
      management: client,
      hosted: client,
      namespace: NAMESPACE,
      clusterName: 'hc',
    });
    await pair.setUp();
    await pair.addNodePool('np-good', 'pp-good', []);
    await pair.addNodePool('np-evil', 'pp-evil', []);
    running = createNodePoolController({ management: client, namespace: NAMESPACE, registry }).start(
      stop.signal,
    );
    await writeStatus('np-good', 'pp-good', available);
    await eventually(
      async () => expect(condition(await pair.getNodePool('np-good'), SUMMARY)?.status).toBe('True'),
      { what: 'np-good Available' },
    );
  });

  afterAll(async () => {
    stop.abort();
    await running;
    await client?.close();
    await cluster?.stop({ wipe: true });
  });

  it('reports 1 MiB of nesting as too large, naming the ConfigMap and the limit, with a Warning event', async () => {
    // Just under the API server's 1 MiB ConfigMap limit: the unbounded parser needed ~550 MB of heap for this.
    const nesting = '['.repeat(500_000) + ']'.repeat(500_000);
    const ref = await writeStatus('np-evil', 'pp-evil', nesting);
    const np = await eventually(
      async () => {
        const np = await pair.getNodePool('np-evil');
        expect(condition(np, SUMMARY)).toMatchObject({
          status: 'Unknown',
          reason: 'PerformanceProfileStatusTooLarge',
        });
        return np;
      },
      { what: 'np-evil PerformanceProfileStatusTooLarge' },
    );
    expect(condition(np, SUMMARY)?.message).toContain(
      `status ConfigMap ${ref}: key "status" is at least 1000000 bytes, over the limit of 65536 bytes`,
    );
    expect(ours(np).map((c) => c.type)).toEqual([SUMMARY]);
    const events = new ResourceClient<
      KubeObject & { reason?: string; note?: string; regarding?: { name?: string } }
    >(client, Events);
    await eventually(
      async () => {
        const found = (await events.list({ namespace: NAMESPACE })).items.filter(
          (e) => e.regarding?.name === 'np-evil' && e.reason === 'PerformanceProfileStatusTooLarge',
        );
        expect(found.length).toBeGreaterThanOrEqual(1);
        expect(found[0]?.note).toContain(ref);
      },
      { what: 'a Warning event on np-evil' },
    );
  });

  it('refuses an alias bomb and parses it once, however often the NodePool is reconciled', async () => {
    const bomb = [
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      ...'bcdefghi'.split('').map(
        (n, i) =>
          `${n}: &${n} [${Array(9)
            .fill(`*${'abcdefghi'[i] ?? 'a'}`)
            .join(',')}]`,
      ),
    ].join('\n');
    const ref = await writeStatus('np-evil', 'pp-evil', bomb);
    await eventually(
      async () => {
        const np = await pair.getNodePool('np-evil');
        expect(condition(np, SUMMARY)).toMatchObject({
          status: 'Unknown',
          reason: 'PerformanceProfileStatusInvalid',
        });
        expect(condition(np, SUMMARY)?.message).toContain(
          `status ConfigMap ${ref}: key "status" uses a YAML alias`,
        );
      },
      { what: 'np-evil PerformanceProfileStatusInvalid' },
    );
    const decodes = await metric(registry, 'tessera_nodepool_status_decodes_total');
    const reconciles = await metric(registry, 'controller_runtime_reconcile_total');
    // Each label edit queues np-evil again; the status text it finds is the same.
    for (let i = 0; i < 3; i++) {
      await nodePools.mergePatch(
        { namespace: NAMESPACE, name: 'np-evil' },
        { metadata: { labels: { poke: `${i}` } } },
      );
    }
    await eventually(
      async () =>
        expect(await metric(registry, 'controller_runtime_reconcile_total')).toBeGreaterThanOrEqual(
          reconciles + 3,
        ),
      { what: 'three more reconciles' },
    );
    expect(await metric(registry, 'tessera_nodepool_status_decodes_total')).toBe(decodes);
  });

  it('refuses conditions a NodePool cannot carry (100,000-character message, long type, 20,001 conditions)', async () => {
    const cases: [string, RegExp][] = [
      [
        JSON.stringify({ conditions: [{ type: 'Degraded', status: 'True', message: 'm'.repeat(40_000) }] }),
        /message is 40000 characters, over the NodePool condition limit of 32768/,
      ],
      [
        JSON.stringify({ conditions: [{ type: 'T'.repeat(2034), status: 'True' }] }),
        /type is 2034 characters, over the NodePool condition limit of 63/,
      ],
      [
        JSON.stringify({ conditions: [{ type: 'Degraded', status: 'True', message: 'm'.repeat(100_000) }] }),
        /over the limit of 65536 bytes/,
      ],
      [
        JSON.stringify({
          conditions: Array.from({ length: 20_001 }, (_, i) => ({ type: `T${i}`, status: 'True' })),
        }),
        /over the limit of 65536 bytes/,
      ],
    ];
    for (const [text, detail] of cases) {
      const ref = await writeStatus('np-evil', 'pp-evil', text);
      await eventually(
        async () => {
          const np = await pair.getNodePool('np-evil');
          expect(condition(np, SUMMARY)?.status).toBe('Unknown');
          expect(condition(np, SUMMARY)?.message).toContain(`status ConfigMap ${ref}: `);
          expect(condition(np, SUMMARY)?.message).toMatch(detail);
          expect(ours(np).every((c) => (c.message ?? '').length <= 32768)).toBe(true);
        },
        { what: `np-evil refusing ${detail.source}` },
      );
    }
  });

  it('reports a hostile tuning ConfigMap on its NodePool instead of retrying forever', async () => {
    const bomb = [
      'apiVersion: performance.openshift.io/v2',
      'kind: PerformanceProfile',
      'metadata: {name: pp-tuning}',
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      ...'bcdefghi'.split('').map(
        (n, i) =>
          `${n}: &${n} [${Array(9)
            .fill(`*${'abcdefghi'[i] ?? 'a'}`)
            .join(',')}]`,
      ),
    ].join('\n');
    await configMaps.create({
      metadata: { name: 'bomb-tuning', namespace: NAMESPACE },
      data: { tuning: bomb },
    });
    await nodePools.create({
      metadata: { name: 'np-tuning', namespace: NAMESPACE },
      spec: { clusterName: 'hc', tuningConfig: [{ name: 'bomb-tuning' }] },
    });
    await eventually(
      async () => {
        const np = await pair.getNodePool('np-tuning');
        expect(condition(np, SUMMARY)).toMatchObject({ status: 'Unknown', reason: 'TuningConfigUnresolved' });
        expect(condition(np, SUMMARY)?.message).toBe(
          `key "tuning" of ConfigMap ${NAMESPACE}/bomb-tuning has more than 16 YAML aliases`,
        );
      },
      { what: 'np-tuning TuningConfigUnresolved' },
    );
  });

  it('keeps serving the other NodePool throughout, and never failed a reconcile', async () => {
    const degraded = encodeProfileStatus({
      conditions: [
        { type: 'Available', status: 'False' },
        { type: 'Upgradeable', status: 'False' },
        { type: 'Progressing', status: 'False' },
        { type: 'Degraded', status: 'True', reason: 'TunedProfileDegraded', message: 'sysctl failed' },
      ],
    });
    await writeStatus('np-good', 'pp-good', degraded);
    await eventually(
      async () => {
        const np = await pair.getNodePool('np-good');
        expect(condition(np, SUMMARY)).toMatchObject({
          status: 'False',
          reason: 'TunedProfileDegraded',
          message: 'sysctl failed',
        });
        expect(condition(np, `${PREFIX}Degraded`)?.status).toBe('True');
      },
      { what: 'np-good Degraded' },
    );
    // Hostile input is an outcome, not a failure: nothing was retried with backoff.
    expect(await metric(registry, 'controller_runtime_reconcile_errors_total')).toBe(0);
  });

  it('replaces conditions the API server refuses with one naming the ConfigMap, instead of retrying forever', async () => {
    // A NodePool schema stricter than the one the controller was built for: at most 3 conditions.
    type Schema = { properties: Record<string, Schema>; maxItems?: number };
    type Crd = KubeObject & { spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } };
    const crds = new ResourceClient<Crd>(client, CustomResourceDefinitions);
    const crd = await crds.get({ name: 'nodepools.hypershift.openshift.io' });
    for (const version of crd.spec.versions) {
      const status = version.schema.openAPIV3Schema.properties.status;
      const conditions = status?.properties.conditions;
      if (conditions) conditions.maxItems = 3;
    }
    await crds.update(crd);
    const foreign = (type: string): NodePoolCondition => ({
      type,
      status: 'True',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    await pair.addNodePool('np-strict', 'pp-strict', []);
    // Wait until the API server enforces the new limit (CRD updates apply asynchronously).
    await eventually(
      async () => {
        const np = await pair.getNodePool('np-strict');
        const err = await nodePools
          .updateStatus({
            ...np,
            status: { conditions: ['A', 'B', 'C', 'D'].map(foreign) },
          })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(err).toBeInstanceOf(ApiStatusError);
        expect((err as ApiStatusError).statusCode).toBe(422);
      },
      { what: 'the stricter NodePool schema in force' },
    );
    // Another controller's two conditions, then a good status: 2 + 4 mirrors + summary would be 7 conditions.
    await eventually(
      async () => {
        const np = await pair.getNodePool('np-strict');
        await nodePools.updateStatus({
          ...np,
          status: { conditions: [foreign('Ready'), foreign('AllMachinesReady')] },
        });
      },
      { what: 'foreign conditions written' },
    );
    const ref = await writeStatus('np-strict', 'pp-strict', available);
    const np = await eventually(
      async () => {
        const np = await pair.getNodePool('np-strict');
        expect(condition(np, SUMMARY)).toMatchObject({
          status: 'Unknown',
          reason: 'PerformanceProfileStatusRejected',
        });
        return np;
      },
      { what: 'np-strict PerformanceProfileStatusRejected' },
    );
    expect(condition(np, SUMMARY)?.message).toContain(
      `the API server refused the NodePool conditions built from status ConfigMap ${ref}: `,
    );
    expect(condition(np, SUMMARY)?.message).toMatch(/at most 3 items/);
    expect((np.status?.conditions ?? []).map((c) => c.type)).toEqual(['Ready', 'AllMachinesReady', SUMMARY]);
    expect(await metric(registry, 'controller_runtime_reconcile_errors_total')).toBe(0);
  });
});
