// The dev cluster's own lifecycle: a second cluster beside the shared one, restarts that keep data, and a
// stop that leaves no process behind. Also drives the real `tessera dev` CLI end to end.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { isAlive } from '../../../src/devcluster/processes.js';
import { testKubeConfig, startTestCluster } from '../../support/cluster.js';

const run = promisify(execFile);
const cli = path.resolve('src/cli/main.ts');
const tsx = path.resolve('node_modules/.bin/tsx');

describe('dev cluster lifecycle', () => {
  it('runs a second cluster beside the shared one, keeps its data across an apiserver restart, and stops cleanly', async () => {
    const second = await startTestCluster({ name: 'second', nodes: 'none', kwok: false, scheduler: false });
    try {
      const core = (await second.kubeConfig()).makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'only-here' }, data: { k: 'v' } },
      });
      // The shared cluster is a different one: it has no such object.
      await expect(
        testKubeConfig()
          .makeApiClient(CoreV1Api)
          .readNamespacedConfigMap({ name: 'only-here', namespace: 'default' }),
      ).rejects.toMatchObject({ code: 404 });

      const before = second.processes['kube-apiserver']?.pid;
      await second.restartApiServer();
      expect(second.processes['kube-apiserver']?.pid).not.toBe(before);
      const cm = await core.readNamespacedConfigMap({ name: 'only-here', namespace: 'default' });
      expect(cm.data).toEqual({ k: 'v' });
    } finally {
      await second.stop({ wipe: true });
    }
    for (const proc of Object.values(second.processes)) expect(isAlive(proc.pid)).toBe(false);
    expect(existsSync(second.stateDir)).toBe(false);
  });

  it('`tessera dev up|status|env|down` drive a cluster from the command line', async () => {
    const env = { ...process.env, TESSERA_STATE_DIR: inject('stateRoot') };
    let registryPid = 0;
    const up = await run(tsx, [cli, 'dev', 'up', '--name', 'cli', '--workers-per-arch', '1'], { env });
    expect(up.stdout).toMatch(/cluster "cli" is up at https:\/\/127\.0\.0\.1:\d+/);
    expect(up.stdout).toContain('eval "$(tessera dev env --name cli)"');
    try {
      const status = await run(tsx, [cli, 'dev', 'status', '--name', 'cli'], { env });
      expect(status.stdout).toMatch(/cluster "cli": running/);
      expect(status.stdout).toMatch(/kube-apiserver\s+pid \d+\s+running/);
      // The local OCI registry runs beside the cluster and is stopped with it.
      expect(up.stdout).toMatch(/local registry: 127\.0\.0\.1:\d+/);
      registryPid = Number(/registry\s+pid (\d+)\s+running/.exec(status.stdout)?.[1]);
      expect(registryPid).toBeGreaterThan(0);
      const exports = await run(tsx, [cli, 'dev', 'env', '--name', 'cli'], { env });
      const kubeconfig = /export KUBECONFIG='([^']+)'/.exec(exports.stdout)?.[1];
      expect(kubeconfig).toBeDefined();
      // kubectl from the cache, with the printed environment, sees 4 worker nodes and a control-plane node.
      const kubectlDir = /export PATH='([^']+)'/.exec(exports.stdout)?.[1] ?? '';
      const nodes = await run(path.join(kubectlDir, 'kubectl'), ['get', 'nodes', '-o', 'name'], {
        env: { ...env, KUBECONFIG: kubeconfig },
      });
      expect(nodes.stdout.trim().split('\n')).toHaveLength(5);
    } finally {
      const down = await run(tsx, [cli, 'dev', 'down', '--name', 'cli', '--wipe'], { env });
      expect(down.stdout).toContain('stopped and its state deleted');
    }
    await expect(run(tsx, [cli, 'dev', 'status', '--name', 'cli'], { env })).rejects.toMatchObject({
      code: 1,
    });
    expect(isAlive(registryPid)).toBe(false);
  });
});
