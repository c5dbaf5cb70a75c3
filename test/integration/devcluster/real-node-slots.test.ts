// Two clusters with real nodes started at the same moment on one machine: each node gets a slot of its own (link,
// addresses, pod subnet, interface, cgroup), both nodes run, and the global sysctls the kubelets change are written
// back only when the last of the two stops. Both clusters start in this one process; their slot claims go through
// the same lock files `tessera dev up` processes use (src/devcluster/real-node-slots.ts, whose unit test covers
// stale locks).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBinaries, REAL_NODE_BINARIES, TEST_BINARIES } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { KUBELET_GLOBAL_SYSCTLS, sysctlPath } from '../../../src/devcluster/real-node-config.js';
import {
  SLOT_LOCK_DIR,
  SYSCTL_BASELINE_FILE,
  liveSlotLocks,
  parseSysctlBaseline,
} from '../../../src/devcluster/real-node-slots.js';
import { realNodeSupportProblem } from '../../../src/devcluster/real-nodes.js';
import { holdRealNodeMachine } from '../../support/real-node-lock.js';
import { startTestCluster, uniqueName } from '../../support/cluster.js';

const isRoot = process.getuid?.() === 0;
const run = promisify(execFile);

function sysctls(): Record<string, string> {
  return Object.fromEntries(
    KUBELET_GLOBAL_SYSCTLS.filter((name) => existsSync(sysctlPath(name))).map((name) => [
      name,
      readFileSync(sysctlPath(name), 'utf8').trim(),
    ]),
  );
}

async function nodeReady(cluster: DevCluster): Promise<boolean> {
  const core = (await cluster.kubeConfig()).makeApiClient(CoreV1Api);
  const name = cluster.realNodes?.nodes[0]?.name ?? '';
  const node = await core.readNode({ name });
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

if (isRoot) {
  describe('two clusters with real nodes on one machine', () => {
    let first: DevCluster | undefined;
    let second: DevCluster | undefined;
    let before: Record<string, string>;
    let releaseMachine: (() => void) | undefined;

    beforeAll(async () => {
      releaseMachine = await holdRealNodeMachine();
      await ensureBinaries([...TEST_BINARIES, ...REAL_NODE_BINARIES]);
      expect(realNodeSupportProblem()).toBeUndefined();
      // The machine's own values: with another run's real node live, the baseline it recorded.
      before =
        (liveSlotLocks().length > 0 && existsSync(SYSCTL_BASELINE_FILE)
          ? parseSysctlBaseline(readFileSync(SYSCTL_BASELINE_FILE, 'utf8'))
          : undefined) ?? sysctls();
      [first, second] = await Promise.all([
        startTestCluster({ name: uniqueName('slots-a'), nodes: 'none', realNodes: 1 }),
        startTestCluster({ name: uniqueName('slots-b'), nodes: 'none', realNodes: 1 }),
      ]);
    }, 30 * 60_000);

    afterAll(async () => {
      try {
        await first?.stop({ wipe: true });
        await second?.stop({ wipe: true });
      } finally {
        releaseMachine?.();
      }
    });

    it('start at once, each node in a slot of its own, both Ready', async () => {
      const a = first?.realNodes?.nodes[0];
      const b = second?.realNodes?.nodes[0];
      if (!first || !second || !a || !b) throw new Error('the clusters did not start (see beforeAll)');
      expect(a.addresses.slot).not.toBe(b.addresses.slot);
      expect(a.addresses.hostLink).not.toBe(b.addresses.hostLink);
      expect(a.addresses.podCidr).not.toBe(b.addresses.podCidr);
      expect(a.cgroup).not.toBe(b.cgroup);
      expect(await nodeReady(first)).toBe(true);
      expect(await nodeReady(second)).toBe(true);
      // Both clusters use the Service range 10.96.0.0/16, so this machine routes it to neither: one cluster's
      // ClusterIPs would take the other's traffic. Each API server reaches webhook Services at their endpoints.
      const routes = (await run('ip', ['-4', 'route', 'show'])).stdout;
      expect(routes).not.toMatch(/^10\.96\./m);
      expect(routes).toContain(a.addresses.podCidr);
      expect(routes).toContain(b.addresses.podCidr);
      // Each slot is held by a lock naming its node.
      for (const node of [a, b]) {
        const lock = JSON.parse(readFileSync(`${SLOT_LOCK_DIR}/${node.addresses.slot}.lock`, 'utf8')) as {
          nodeDir: string;
        };
        expect(lock.nodeDir).toBe(node.dir);
      }
    });

    it('leave the sysctls to the last one out: the first to stop leaves the running kubelet its settings', async () => {
      if (!first || !second) throw new Error('the clusters did not start (see beforeAll)');
      const whileRunning = sysctls();
      // The kubelets' values (kernel.panic=10, ...) differ from this machine's, or nothing would be shown here.
      expect(whileRunning).not.toEqual(before);
      await first.stop({ wipe: true });
      first = undefined;
      expect(sysctls()).toEqual(whileRunning);
      expect(await nodeReady(second)).toBe(true);
      await second.stop({ wipe: true });
      second = undefined;
      // Another run's real node on this machine (a concurrent test run) would keep them, as it keeps its slot.
      if (liveSlotLocks().length === 0) {
        expect(sysctls()).toEqual(before);
        expect(existsSync(SLOT_LOCK_DIR)).toBe(false);
      } else {
        expect(sysctls()).toEqual(whileRunning);
      }
    });
  });
} else {
  describe('two clusters with real nodes without root', () => {
    it('cannot start: real nodes need root', () => {
      expect(realNodeSupportProblem()).toMatch(/need root/);
    });
  });
}
