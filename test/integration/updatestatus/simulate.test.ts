// End to end: a simulated update on a real cluster with kwok nodes, followed through the controller's
// UpdateStatus (control plane progressing then completed, worker pool progressing then completed, nodes
// draining and rebooting on the way) and ending with `tessera upgrade status` saying the cluster is not updating.
import { setMaxListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { SharedInformerFactory } from '../../../src/runtime/cache/informer-factory.js';
import { KubeClient } from '../../../src/runtime/client.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { UpdateStatuses, installUpdateStatusCrd } from '../../../src/updatestatus/api/install.js';
import type { UpdateStatus } from '../../../src/updatestatus/api/schema.js';
import { type CommandIO, runUpgradeStatus } from '../../../src/updatestatus/command.js';
import { createUpdateStatusController } from '../../../src/updatestatus/controller.js';
import { installOpenShiftDevCrds } from '../../../src/updatestatus/devcrds.js';
import { MILLISECOND } from '../../../src/updatestatus/gotime.js';
import { runSimulation } from '../../../src/updatestatus/simulate/driver.js';
import { startTestCluster } from '../../support/cluster.js';

describe('simulated update, end to end', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await startTestCluster({ name: 'updatestatus-sim', nodes: 'default' });
  });
  afterAll(async () => {
    await cluster?.stop({ wipe: true });
  });

  it('is followed through all phases by the controller and the CLI', async () => {
    const client = new KubeClient(await cluster.kubeConfig());
    const stop = new AbortController();
    setMaxListeners(32, stop.signal);
    const running: Promise<void>[] = [];
    const seen = { cv: new Set<string>(), worker: new Set<string>(), nodeReasons: new Set<string>() };
    try {
      await installUpdateStatusCrd(client);
      await installOpenShiftDevCrds(client);
      const informers = new SharedInformerFactory({ client });
      const { controller } = createUpdateStatusController({ client, informers, minWriteIntervalMs: 500 });
      running.push(informers.start(stop.signal), controller.start(stop.signal));
      const statuses = new ResourceClient<UpdateStatus & KubeObject>(client, UpdateStatuses);

      let simulating = true;
      const sampler = (async () => {
        while (simulating) {
          const obj = await statuses.get({ name: 'cluster' }).catch(() => undefined);
          for (const inf of obj?.status?.controlPlane?.informers ?? []) {
            for (const i of inf.insights ?? [])
              if (i.insight.clusterVersion) seen.cv.add(i.insight.clusterVersion.assessment);
          }
          for (const wp of obj?.status?.workerPools ?? []) {
            for (const i of wp.informers?.[0]?.insights ?? []) {
              if (i.insight.machineConfigPool) seen.worker.add(i.insight.machineConfigPool.assessment);
              const updating = i.insight.node?.conditions?.find((c) => c.type === 'Updating');
              if (updating) seen.nodeReasons.add(updating.reason);
            }
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      await runSimulation({ client, to: '4.16.1', stepMs: 400, signal: stop.signal });
      // Let the controller catch up with the last step.
      await new Promise((r) => setTimeout(r, 2_000));
      simulating = false;
      await sampler;

      expect(seen.cv).toContain('Progressing');
      expect(seen.cv).toContain('Completed');
      expect(seen.worker).toContain('Progressing');
      expect(seen.worker).toContain('Completed');
      for (const reason of ['Draining', 'Rebooting', 'Completed']) expect(seen.nodeReasons).toContain(reason);

      let out = '';
      const io: CommandIO = {
        out: (t) => {
          out += t;
        },
        err: () => undefined,
        clock: () => BigInt(Date.now()) * MILLISECOND,
        sleep: async () => undefined,
        signal: new AbortController().signal,
      };
      const opts = {
        details: 'none' as const,
        now: undefined,
        mockClusterVersion: undefined,
        output: 'text' as const,
        watch: false,
        intervalMs: 1000,
        kubeconfig: cluster.kubeconfigPath,
        source: 'auto' as const,
      };
      // Read from the controller's UpdateStatus, then computed here: both say it is over.
      await runUpgradeStatus(opts, io);
      expect(out).toBe('The cluster is not updating.\n');
      out = '';
      await runUpgradeStatus({ ...opts, source: 'cluster' }, io);
      expect(out).toBe('The cluster is not updating.\n');
    } finally {
      stop.abort();
      await Promise.all(running);
      await client.close();
    }
  });
});
