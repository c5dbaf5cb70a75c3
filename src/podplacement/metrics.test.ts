import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { silentLogger } from '../runtime/index.js';
import { clusterConfig, pod } from './builders.js';
import { GatingWebhook } from './gating-webhook.js';
import { PodPlacementMetrics } from './metrics.js';
import { FakeClock } from '../runtime/testing/index.js';

/** The value of an unlabelled metric in a scrape, undefined when the scrape has no such line. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('mto_ppo_pods_gated', () => {
  it("is the size of the controller's gated-pod cache at scrape time, whatever the webhook gated", async () => {
    // The shipped split: the webhook gates in one process, the controller (with the cache) runs in another.
    const webhookRegistry = new Registry();
    const webhook = new GatingWebhook({
      clusterConfig: () => clusterConfig(),
      podPlacementConfigs: () => [],
      operatorNamespace: 'op',
      clock: new FakeClock(),
      logger: silentLogger,
      metrics: new PodPlacementMetrics(webhookRegistry),
    });
    const controllerRegistry = new Registry();
    const cached = new Set<string>(['apps/a', 'apps/b', 'apps/c']);
    new PodPlacementMetrics(controllerRegistry).countGatedPodsFrom(() => cached.size);

    for (let i = 0; i < 5; i++) {
      const p = pod(`p${i}`, 'apps').withImages('r/a:1').build();
      webhook.handle({
        uid: `u${i}`,
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        operation: 'CREATE',
        namespace: 'apps',
        userInfo: {},
        object: p,
      });
    }
    // The webhook process does not count what it cannot see being released.
    const webhookScrape = await webhookRegistry.metrics();
    expect(sample(webhookScrape, 'mto_ppo_wh_pods_gated_total')).toBe(5);
    expect(sample(webhookScrape, 'mto_ppo_pods_gated')).toBeUndefined();

    expect(sample(await controllerRegistry.metrics(), 'mto_ppo_pods_gated')).toBe(3);
    cached.delete('apps/a');
    cached.delete('apps/b');
    expect(sample(await controllerRegistry.metrics(), 'mto_ppo_pods_gated')).toBe(1);
  });

  it('reads 0 on a replica that does not lead (or whose cache has not synced), so a sum over replicas is right', async () => {
    const registry = new Registry();
    let leading = false;
    new PodPlacementMetrics(registry).countGatedPodsFrom(() => (leading ? 4 : undefined));
    expect(sample(await registry.metrics(), 'mto_ppo_pods_gated')).toBe(0);
    leading = true;
    expect(sample(await registry.metrics(), 'mto_ppo_pods_gated')).toBe(4);
  });
});
