import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { silentLogger, type AdmissionRequest } from '../runtime/index.js';
import type { ClusterPodPlacementConfig } from './api/schema.js';
import { clusterConfig, pod } from './builders.js';
import { GatingWebhook } from './gating-webhook.js';
import { PodPlacementMetrics } from './metrics.js';
import { FakeClock } from '../runtime/testing/index.js';

function review(
  object: unknown,
  namespace = 'apps',
  operation: AdmissionRequest['operation'] = 'CREATE',
): AdmissionRequest {
  return {
    uid: 'u1',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    operation,
    namespace,
    userInfo: {},
    object,
  };
}

function webhook(cppc: ClusterPodPlacementConfig | undefined) {
  const registry = new Registry();
  const metrics = new PodPlacementMetrics(registry);
  const hook = new GatingWebhook({
    clusterConfig: () => cppc,
    podPlacementConfigs: () => [],
    operatorNamespace: 'op',
    clock: new FakeClock(),
    logger: silentLogger,
    metrics,
  });
  return { hook, registry };
}

describe('GatingWebhook', () => {
  it('gates a pod created without a namespace in its object (generateName) using the request namespace', async () => {
    const { hook, registry } = webhook(clusterConfig());
    const p = pod('x', '').withImages('r/a:1').build();
    const result = hook.handle(review({ ...p, metadata: { generateName: 'web-' } }));
    expect(result.allowed).toBe(true);
    expect(result.patch).toEqual([
      {
        op: 'add',
        path: '/metadata/labels',
        value: {
          'multiarch.openshift.io/node-affinity': 'not-set',
          'multiarch.openshift.io/scheduling-gate': 'gated',
        },
      },
      {
        op: 'add',
        path: '/spec/schedulingGates',
        value: [{ name: 'multiarch.openshift.io/scheduling-gate' }],
      },
    ]);
    const text = await registry.metrics();
    expect(text).toMatch(/mto_ppo_wh_pods_gated_total 1/);
    expect(text).toMatch(/mto_ppo_wh_pods_processed_total 1/);
  });

  it('escapes label keys in patch paths when the pod already has labels', () => {
    const { hook } = webhook(clusterConfig());
    const result = hook.handle(
      review(pod('x', 'apps').withImages('r/a:1').withLabels({ app: 'web' }).build()),
    );
    expect(result.patch?.[0]).toEqual({
      op: 'add',
      path: '/metadata/labels/multiarch.openshift.io~1node-affinity',
      value: 'not-set',
    });
  });

  it('admits unchanged without a cluster config, while it is being deleted, and for non-CREATE operations', () => {
    const p = pod('x', 'apps').withImages('r/a:1').build();
    expect(webhook(undefined).hook.handle(review(p))).toEqual({ allowed: true });
    const deleting = {
      ...clusterConfig(),
      metadata: { name: 'cluster', deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    expect(webhook(deleting).hook.handle(review(p))).toEqual({ allowed: true });
    expect(webhook(clusterConfig()).hook.handle(review(p, 'apps', 'UPDATE'))).toEqual({ allowed: true });
  });

  it('labels but does not gate pods in its own namespace', () => {
    const result = webhook(clusterConfig()).hook.handle(
      review(pod('x', 'op').withImages('r/a:1').build(), 'op'),
    );
    expect(JSON.stringify(result.patch)).not.toContain('schedulingGates');
    expect(JSON.stringify(result.patch)).toContain('not-set');
  });

  it('never denies: a failing lookup admits the pod unchanged and is logged and counted', async () => {
    const registry = new Registry();
    const errors: string[] = [];
    const logger = { ...silentLogger, error: (_obj: object, msg?: string) => void errors.push(msg ?? '') };
    const hook = new GatingWebhook({
      clusterConfig: () => clusterConfig(),
      podPlacementConfigs: () => {
        throw new Error('index missing');
      },
      operatorNamespace: 'op',
      clock: new FakeClock(),
      logger,
      metrics: new PodPlacementMetrics(registry),
    });
    expect(hook.failurePolicy).toBe('Ignore');
    expect(hook.handle(review(pod('x', 'apps').withImages('r/a:1').build()))).toEqual({ allowed: true });
    expect(errors).toEqual(['gating webhook failed; pod admitted unchanged (not gated)']);
    expect(await registry.metrics()).toContain('tessera_podplacement_webhook_errors_total 1');
  });
});
