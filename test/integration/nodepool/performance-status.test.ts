// Both sides of the NodePool performance-profile status contract on two real control planes: a management
// cluster (NodePools, HCP namespace) and a hosted cluster (Nodes, Tuned Profiles), as in HyperShift.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Clock,
  ConfigMaps,
  KubeClient,
  type KubeObject,
  Namespaces,
  realClock,
  ResourceClient,
  retryOnConflict,
  type Timer,
} from '../../../src/runtime/index.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import type { ConfigMap, NodePool, NodePoolCondition } from '../../../src/nodepool/api/types.js';
import { LABELS } from '../../../src/nodepool/constants.js';
import { NodePools } from '../../../src/nodepool/resources.js';
import { HostedClusterPair, performanceProfileManifest } from '../../../src/demo/hosted-cluster-pair.js';
import { installNodePoolCrds } from '../../../src/nodepool/api/install.js';
import { createNodePoolController } from '../../../src/nodepool/management/nodepool-controller.js';
import { decodeProfileStatus } from '../../../src/nodepool/status-codec.js';
import { createStatusWriter } from '../../../src/nodepool/tuning/status-writer.js';
import { runNodePoolDemo } from '../../../src/demo/nodepool.js';
import { runNodePoolStatus } from '../../../src/nodepool/management/status-command.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';

const SUMMARY = 'PerformanceProfileAppliedSuccessfully';
const PREFIX = 'performance.operator.openshift.io/';

function condition(np: NodePool, type: string): NodePoolCondition | undefined {
  return np.status?.conditions?.find((c) => c.type === type);
}

/**
 * The process clock, movable forward: timers are due on this clock, so moving it fires them early, as if that time
 * had passed. Lets a test age heartbeats without waiting for real.
 */
class ShiftableClock implements Clock {
  private offsetMs = 0;
  private readonly pending = new Set<{ due: number; fn: () => void; timer?: Timer }>();

  now(): number {
    return realClock.now() + this.offsetMs;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const entry: { due: number; fn: () => void; timer?: Timer } = { due: this.now() + Math.max(0, ms), fn };
    this.arm(entry);
    return {
      cancel: () => {
        entry.timer?.cancel();
        this.pending.delete(entry);
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = (): void => {
        timer.cancel();
        resolve();
      };
      const timer = this.setTimer(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Moves the clock forward by `ms`; timers now due fire at once. */
  shift(ms: number): void {
    this.offsetMs += ms;
    for (const entry of [...this.pending]) this.arm(entry);
  }

  private arm(entry: { due: number; fn: () => void; timer?: Timer }): void {
    entry.timer?.cancel();
    this.pending.add(entry);
    entry.timer = realClock.setTimer(() => {
      this.pending.delete(entry);
      entry.fn();
    }, entry.due - this.now());
  }
}

describe('NodePool performance-profile status across a management and a hosted cluster', () => {
  let management: DevCluster | undefined;
  let hostedCluster: DevCluster | undefined;
  let mgmtClient: KubeClient;
  let hostedClient: KubeClient;
  let pair: HostedClusterPair;
  const stop = new AbortController();
  let running: Promise<void>[] = [];

  beforeAll(async () => {
    [management, hostedCluster] = await Promise.all([
      startApiServerOnlyTestCluster(uniqueName('np-mgmt')),
      startApiServerOnlyTestCluster(uniqueName('np-hosted')),
    ]);
    mgmtClient = new KubeClient(await management.kubeConfig());
    hostedClient = new KubeClient(await hostedCluster.kubeConfig());
    await installNodePoolCrds(mgmtClient, 'management');
    await installNodePoolCrds(hostedClient, 'hosted');
    pair = new HostedClusterPair({ management: mgmtClient, hosted: hostedClient, clusterName: 'hc1' });
    await pair.setUp();
    await pair.addNodePool('np-a', 'pp-a', ['node-a1', 'node-a2']);
    await pair.addNodePool('np-b', 'pp-b', ['node-b1']);
    await pair.setTunedState('node-b1', { kind: 'applied' });
    running = [
      createStatusWriter({
        management: mgmtClient,
        hosted: hostedClient,
        hcpNamespace: pair.hcpNamespace,
        heartbeatIntervalMs: 0,
      }).start(stop.signal),
      createNodePoolController({ management: mgmtClient, namespace: 'clusters' }).start(stop.signal),
    ];
  });

  afterAll(async () => {
    stop.abort();
    await Promise.allSettled(running);
    await mgmtClient?.close();
    await hostedClient?.close();
    await Promise.allSettled([management?.stop({ wipe: true }), hostedCluster?.stop({ wipe: true })]);
  });

  async function statusIn(p: HostedClusterPair, name: string): Promise<ConfigMap> {
    const found = (await p.hcpConfigMaps(LABELS.statusConfigMap)).find((cm) => cm.metadata.name === name);
    if (!found) throw new Error(`status ConfigMap ${name} not there yet`);
    return found;
  }

  async function statusOf(name: string): Promise<ConfigMap> {
    const found = (await pair.hcpConfigMaps(LABELS.statusConfigMap)).find((cm) => cm.metadata.name === name);
    if (!found) throw new Error(`status ConfigMap ${name} not there yet`);
    return found;
  }

  it('reports a profile Progressing until every node applied it, then Available', async () => {
    await eventually(
      async () => {
        const np = await pair.getNodePool('np-a');
        expect(condition(np, SUMMARY)).toMatchObject({ status: 'False', reason: 'DeploymentStarting' });
        expect(condition(np, SUMMARY)?.message).toContain('2 of 2 node(s): node-a1, node-a2');
        expect(condition(np, `${PREFIX}Progressing`)?.status).toBe('True');
      },
      { what: 'np-a Progressing' },
    );

    await pair.setTunedState('node-a1', { kind: 'applied' });
    await pair.setTunedState('node-a2', { kind: 'applied' });
    const cm = await eventually(
      async () => {
        const cm = await statusOf('status-pp-a-tuning-np-a');
        const status = decodeProfileStatus(cm.data?.status ?? '');
        expect(status.conditions?.find((c) => c.type === 'Available')?.status).toBe('True');
        return cm;
      },
      { what: 'status ConfigMap Available' },
    );
    expect(cm.metadata.labels).toMatchObject({
      [LABELS.statusConfigMap]: 'true',
      [LABELS.nodePool]: 'np-a',
      [LABELS.performanceProfileName]: 'pp-a',
    });
    expect(cm.metadata.annotations?.[LABELS.nodePool]).toBe('clusters/np-a');
    expect(cm.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'ConfigMap',
      name: 'pp-a-tuning-np-a',
      controller: true,
    });

    await eventually(
      async () => {
        const np = await pair.getNodePool('np-a');
        expect(condition(np, SUMMARY)).toMatchObject({ status: 'True', reason: 'AsExpected' });
        expect(condition(np, `${PREFIX}Available`)?.status).toBe('True');
        expect(condition(np, `${PREFIX}Upgradeable`)?.status).toBe('True');
      },
      { what: 'np-a Available' },
    );
  });

  it('follows a Tuned Profile to Degraded and back, status ConfigMap first, then the NodePool', async () => {
    await pair.setTunedState('node-a2', {
      kind: 'degraded',
      reason: 'TunedError',
      message: 'sysctl kernel.sched_rt_runtime_us failed',
    });
    await eventually(
      async () => {
        const status = decodeProfileStatus((await statusOf('status-pp-a-tuning-np-a')).data?.status ?? '');
        expect(status.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
          status: 'True',
          reason: 'TunedProfileDegraded',
        });
      },
      { what: 'status ConfigMap Degraded' },
    );
    await eventually(
      async () => {
        const np = await pair.getNodePool('np-a');
        expect(condition(np, SUMMARY)).toMatchObject({
          status: 'False',
          reason: 'TunedProfileDegraded',
          message:
            'Tuned node-a2 Degraded Reason: TunedError.\nTuned node-a2 Degraded Message: sysctl kernel.sched_rt_runtime_us failed.\n',
        });
        expect(condition(np, `${PREFIX}Degraded`)?.status).toBe('True');
      },
      { what: 'np-a Degraded' },
    );

    // The other NodePool of the same hosted cluster never sees np-a's failure.
    const b = await pair.getNodePool('np-b');
    expect(condition(b, SUMMARY)).toMatchObject({ status: 'True' });
    expect(condition(b, `${PREFIX}Degraded`)?.status).toBe('False');

    await pair.setTunedState('node-a2', { kind: 'applied' });
    await eventually(
      async () => {
        const np = await pair.getNodePool('np-a');
        expect(condition(np, SUMMARY)?.status).toBe('True');
        expect(condition(np, `${PREFIX}Degraded`)?.status).toBe('False');
      },
      { what: 'np-a back to Available' },
    );
  });

  it('keeps two NodePools of one hosted cluster apart', async () => {
    await pair.setTunedState('node-b1', { kind: 'degraded', reason: 'B', message: 'only b' });
    await eventually(
      async () => {
        const np = await pair.getNodePool('np-b');
        expect(condition(np, SUMMARY)).toMatchObject({ status: 'False', reason: 'TunedProfileDegraded' });
        expect(condition(np, SUMMARY)?.message).toContain('node-b1');
      },
      { what: 'np-b Degraded' },
    );
    const a = await pair.getNodePool('np-a');
    expect(condition(a, SUMMARY)?.status).toBe('True');
    const statusA = decodeProfileStatus((await statusOf('status-pp-a-tuning-np-a')).data?.status ?? '');
    expect(statusA.conditions?.find((c) => c.type === 'Degraded')?.status).toBe('False');
    const statusB = await statusOf('status-pp-b-tuning-np-b');
    expect(statusB.metadata.labels?.[LABELS.nodePool]).toBe('np-b');
    await pair.setTunedState('node-b1', { kind: 'applied' });
  });

  it('puts its conditions back when another writer removes them, keeping that writer’s own', async () => {
    // The controller drops the watch events that only echo its own NodePool status writes; another writer's change
    // must still be reconciled.
    await eventually(async () => expect(condition(await pair.getNodePool('np-b'), SUMMARY)).toBeDefined(), {
      what: 'np-b reported',
    });
    const theirs: NodePoolCondition = {
      type: 'Ready',
      status: 'True',
      reason: 'AsExpected',
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    // Only the other writer's condition left (the controller may still be writing np-b: retry on conflict).
    await retryOnConflict(async () => {
      const np = await pair.getNodePool('np-b');
      await new ResourceClient<NodePool>(mgmtClient, NodePools).updateStatus({
        ...np,
        status: { ...np.status, conditions: [theirs] },
      });
    });
    await eventually(
      async () => {
        const after = await pair.getNodePool('np-b');
        expect(condition(after, SUMMARY)).toBeDefined();
        expect(condition(after, `${PREFIX}Degraded`)).toBeDefined();
        expect(condition(after, 'Ready')).toMatchObject({ status: 'True', reason: 'AsExpected' });
      },
      { what: 'np-b conditions restored' },
    );
  });

  it('removes the conditions, the mirrored ConfigMap and its status when the tuning reference goes', async () => {
    await pair.setTuningConfig('np-a', []);
    await eventually(
      async () => {
        const np = await pair.getNodePool('np-a');
        const ours = (np.status?.conditions ?? []).filter(
          (c) => c.type === SUMMARY || c.type.startsWith(PREFIX),
        );
        expect(ours).toEqual([]);
      },
      { what: 'np-a conditions removed' },
    );
    await eventually(
      async () => {
        const mirrors = (await pair.hcpConfigMaps(LABELS.ppConfigMap)).map((cm) => cm.metadata.name);
        expect(mirrors).toEqual(['pp-b-tuning-np-b']);
        const statuses = (await pair.hcpConfigMaps(LABELS.statusConfigMap)).map((cm) => cm.metadata.name);
        expect(statuses).toEqual(['status-pp-b-tuning-np-b']);
      },
      { what: 'np-a mirror and status deleted' },
    );
    const b = await pair.getNodePool('np-b');
    expect(condition(b, SUMMARY)).toBeDefined();
  });

  it('keeps a heartbeat-refreshed status fresh without NodePool writes, and reports it stale once the writer stops', async () => {
    const stalePair = new HostedClusterPair({
      management: mgmtClient,
      hosted: hostedClient,
      namespace: 'stale',
      clusterName: 'hcs',
    });
    await stalePair.setUp();
    await stalePair.addNodePool('np-s', 'pp-s', ['node-s1']);
    await stalePair.setTunedState('node-s1', { kind: 'applied' });
    // A stale limit far beyond any scheduling hiccup of a loaded machine; the NodePool side's clock is moved forward
    // later instead of waiting that long for real.
    const staleAfterMs = 60_000;
    const clock = new ShiftableClock();
    const writerStop = new AbortController();
    const controllerStop = new AbortController();
    const writer = createStatusWriter({
      management: mgmtClient,
      hosted: hostedClient,
      hcpNamespace: stalePair.hcpNamespace,
      heartbeatIntervalMs: 1_000,
    }).start(writerStop.signal);
    const controller = createNodePoolController({
      management: mgmtClient,
      namespace: 'stale',
      staleAfterMs,
      clock,
    }).start(controllerStop.signal);
    const nextHeartbeat = async (after: string | undefined): Promise<string | undefined> =>
      eventually(
        async () => {
          const rv = (await statusIn(stalePair, 'status-pp-s-tuning-np-s')).metadata.resourceVersion;
          expect(rv).not.toBe(after);
          return rv;
        },
        { what: 'a heartbeat write of the status ConfigMap' },
      );
    try {
      const fresh = await eventually(
        async () => {
          const np = await stalePair.getNodePool('np-s');
          expect(condition(np, SUMMARY)?.status).toBe('True');
          return np;
        },
        { what: 'np-s Available' },
      );
      let heartbeat = (await statusIn(stalePair, 'status-pp-s-tuning-np-s')).metadata.resourceVersion;
      for (let i = 0; i < 3; i++) heartbeat = await nextHeartbeat(heartbeat);
      const later = await stalePair.getNodePool('np-s');
      expect(condition(later, SUMMARY)?.status).toBe('True');
      expect(later.metadata.resourceVersion).toBe(fresh.metadata.resourceVersion); // heartbeats: no NodePool write

      // The writer stops; then, on the NodePool side, the stale limit passes.
      writerStop.abort();
      await writer;
      clock.shift(staleAfterMs);
      await eventually(
        async () => {
          const np = await stalePair.getNodePool('np-s');
          expect(condition(np, SUMMARY)).toMatchObject({
            status: 'Unknown',
            reason: 'PerformanceProfileStatusStale',
          });
          expect(condition(np, SUMMARY)?.message).toMatch(/check that the Node Tuning Operator/);
          expect(condition(np, `${PREFIX}Available`)).toMatchObject({
            status: 'Unknown',
            reason: 'PerformanceProfileStatusStale',
          });
        },
        { what: 'np-s stale', timeoutMs: 45_000 },
      );
    } finally {
      writerStop.abort();
      controllerStop.abort();
      await Promise.allSettled([writer, controller]);
    }
  });

  it('stops heartbeats and reports GettingTunedStatusFailed when the hosted API server goes away', async () => {
    const gone = await startApiServerOnlyTestCluster(uniqueName('np-gone'));
    const goneClient = new KubeClient(await gone.kubeConfig());
    const writerStop = new AbortController();
    const controllerStop = new AbortController();
    let running: Promise<void>[] = [];
    try {
      await installNodePoolCrds(goneClient, 'hosted');
      const gonePair = new HostedClusterPair({
        management: mgmtClient,
        hosted: goneClient,
        namespace: 'gone',
        clusterName: 'hcg',
      });
      await gonePair.setUp();
      await gonePair.addNodePool('np-g', 'pp-g', ['node-g1']);
      await gonePair.setTunedState('node-g1', { kind: 'applied' });
      running = [
        createStatusWriter({
          management: mgmtClient,
          hosted: goneClient,
          hcpNamespace: gonePair.hcpNamespace,
          heartbeatIntervalMs: 1_000,
          hostedSyncGraceMs: 3_000,
        }).start(writerStop.signal),
        createNodePoolController({
          management: mgmtClient,
          namespace: 'gone',
          staleAfterMs: 120_000,
        }).start(controllerStop.signal),
      ];
      await eventually(
        async () => {
          expect(condition(await gonePair.getNodePool('np-g'), SUMMARY)?.status).toBe('True');
        },
        { what: 'np-g Available' },
      );

      await gone.stop(); // the hosted kube-apiserver and its etcd go away; the writer's caches keep their contents
      const failed = await eventually(
        async () => {
          const cm = await statusIn(gonePair, 'status-pp-g-tuning-np-g');
          const degraded = decodeProfileStatus(cm.data?.status ?? '').conditions?.find(
            (c) => c.type === 'Degraded',
          );
          expect(degraded).toMatchObject({ status: 'True', reason: 'GettingTunedStatusFailed' });
          expect(degraded?.message).toMatch(/^Cannot list Tuned Profiles to match with profile pp-g: /);
          return cm;
        },
        { what: 'status ConfigMap GettingTunedStatusFailed', timeoutMs: 40_000 },
      );
      await eventually(
        async () => {
          const np = await gonePair.getNodePool('np-g');
          expect(condition(np, SUMMARY)).toMatchObject({
            status: 'False',
            reason: 'GettingTunedStatusFailed',
          });
          expect(condition(np, `${PREFIX}Available`)?.status).toBe('False');
        },
        { what: 'np-g GettingTunedStatusFailed' },
      );
      // No heartbeat vouches for the unreachable cluster any more (it would come every second).
      await new Promise((r) => setTimeout(r, 4_000));
      expect((await statusIn(gonePair, 'status-pp-g-tuning-np-g')).metadata.resourceVersion).toBe(
        failed.metadata.resourceVersion,
      );
    } finally {
      writerStop.abort();
      controllerStop.abort();
      await Promise.allSettled(running);
      await goneClient.close();
      await gone.stop({ wipe: true }).catch(() => undefined);
    }
  });

  it('without a namespace, watches tuning ConfigMaps only where NodePools name them, and follows their edits', async () => {
    const namespaces = new ResourceClient<KubeObject>(mgmtClient, Namespaces);
    const configMaps = new ResourceClient<ConfigMap>(mgmtClient, ConfigMaps);
    const unrelated = uniqueName('np-unrelated');
    await namespaces.create({ metadata: { name: unrelated } });
    await configMaps.create({
      metadata: { name: 'bulk', namespace: unrelated },
      data: { big: 'x'.repeat(1000) },
    });
    const editPair = new HostedClusterPair({
      management: mgmtClient,
      hosted: hostedClient,
      namespace: 'edits',
      clusterName: 'hce',
    });
    await editPair.setUp();
    await editPair.addNodePool('np-e', 'pp-e', []);
    const controllerStop = new AbortController();
    const controller = createNodePoolController({ management: mgmtClient, workers: 1 });
    const run = controller.start(controllerStop.signal);
    const mirroredTuning = async (): Promise<string> => {
      const mirror = (await editPair.hcpConfigMaps(LABELS.ppConfigMap)).find(
        (cm) => cm.metadata.name === 'pp-e-tuning-np-e',
      );
      if (!mirror) throw new Error('mirror pp-e-tuning-np-e not there yet');
      return mirror.data?.tuning ?? '';
    };
    try {
      await eventually(async () => expect(await mirroredTuning()).toContain('name: pp-e\n'), {
        what: 'np-e mirrored',
      });
      const watched = controller.tuningNamespaces();
      expect(watched).toContain('edits');
      expect(watched).not.toContain(unrelated);
      expect(watched).not.toContain(editPair.hcpNamespace);

      const tuning = await configMaps.get({ namespace: 'edits', name: 'pp-e-tuning' });
      tuning.data = { tuning: performanceProfileManifest('pp-e2', 'np-e') };
      await configMaps.update(tuning);
      await eventually(async () => expect(await mirroredTuning()).toContain('name: pp-e2\n'), {
        what: 'edited tuning ConfigMap mirrored',
      });
    } finally {
      controllerStop.abort();
      await run;
      await namespaces.delete({ name: unrelated }).catch(() => undefined);
    }
  });

  it('reports GettingTunedStatusFailed when the hosted cluster cannot be read', async () => {
    // The management cluster does not serve tuned.openshift.io: as a "hosted" cluster its Tuned Profiles are unreadable.
    const hcpNamespace = 'broken-hcb';
    const configMaps = new ResourceClient<ConfigMap>(mgmtClient, ConfigMaps);
    await new ResourceClient<KubeObject>(mgmtClient, Namespaces).create({ metadata: { name: hcpNamespace } });
    await configMaps.create({
      metadata: {
        name: 'pp-x-tuning-np-x',
        namespace: hcpNamespace,
        labels: { [LABELS.ppConfigMap]: 'true', [LABELS.nodePool]: 'np-x' },
        annotations: { [LABELS.nodePool]: 'broken/np-x' },
      },
      data: { tuning: performanceProfileManifest('pp-x', 'np-x') },
    });
    const writerStop = new AbortController();
    const writer = createStatusWriter({
      management: mgmtClient,
      hosted: mgmtClient,
      hcpNamespace,
      heartbeatIntervalMs: 0,
      hostedSyncGraceMs: 1_500,
    }).start(writerStop.signal);
    try {
      await eventually(
        async () => {
          const cm = await configMaps.get({ namespace: hcpNamespace, name: 'status-pp-x-tuning-np-x' });
          const degraded = decodeProfileStatus(cm.data?.status ?? '').conditions?.find(
            (c) => c.type === 'Degraded',
          );
          expect(degraded).toMatchObject({ status: 'True', reason: 'GettingTunedStatusFailed' });
          expect(degraded?.message).toMatch(/^Cannot list Tuned Profiles to match with profile pp-x: /);
        },
        { what: 'GettingTunedStatusFailed status', timeoutMs: 20_000 },
      );
    } finally {
      writerStop.abort();
      await writer;
    }
  });

  it('waits for the hosted control plane before mirroring, then mirrors', async () => {
    const later = new HostedClusterPair({
      management: mgmtClient,
      hosted: hostedClient,
      clusterName: 'hc-later',
    });
    await later.addNodePool('np-later', 'pp-later', []);
    await eventually(
      async () => {
        const np = await later.getNodePool('np-later');
        expect(condition(np, SUMMARY)).toMatchObject({
          status: 'Unknown',
          reason: 'HostedControlPlaneNotFound',
        });
      },
      { what: 'np-later waiting for its control plane' },
    );
    await later.setUp();
    await eventually(
      async () => {
        expect((await later.hcpConfigMaps(LABELS.ppConfigMap)).map((cm) => cm.metadata.name)).toEqual([
          'pp-later-tuning-np-later',
        ]);
        const np = await later.getNodePool('np-later');
        expect(condition(np, SUMMARY)).toMatchObject({
          status: 'Unknown',
          reason: 'PerformanceProfileStatusNotFound',
        });
      },
      { what: 'np-later mirrored once its control plane exists' },
    );
  });

  it('runs the npm start demo: one NodePool Progressing -> Available, one Degraded; the CLI shows both', async () => {
    if (!management || !hostedCluster) throw new Error('clusters not started');
    const demoStop = new AbortController();
    const lines: string[] = [];
    const demo = runNodePoolDemo({
      management: await management.kubeConfig(),
      hosted: await hostedCluster.kubeConfig(),
      signal: demoStop.signal,
      stepSeconds: 0.5,
      say: (l) => lines.push(l),
    });
    const demoPair = new HostedClusterPair({
      management: mgmtClient,
      hosted: hostedClient,
      clusterName: 'demo',
    });
    try {
      await eventually(
        async () => {
          expect(condition(await demoPair.getNodePool('tuned-ok'), SUMMARY)?.reason).toBe(
            'DeploymentStarting',
          );
        },
        { what: 'tuned-ok Progressing' },
      );
      await eventually(
        async () => {
          expect(condition(await demoPair.getNodePool('tuned-ok'), SUMMARY)?.status).toBe('True');
          expect(condition(await demoPair.getNodePool('tuned-bad'), SUMMARY)?.reason).toBe(
            'TunedProfileDegraded',
          );
        },
        { what: 'tuned-ok Available and tuned-bad Degraded' },
      );
    } finally {
      demoStop.abort();
      await demo;
    }
    expect(lines.some((l) => l.includes('tuned-bad becomes Degraded'))).toBe(true);

    let printed = '';
    const out = { write: (chunk: string) => ((printed += chunk), true) } as unknown as NodeJS.WritableStream;
    const code = await runNodePoolStatus({
      target: 'clusters/tuned-bad',
      kubeconfig: management.kubeconfigPath,
      allConditions: false,
      out,
    });
    expect(code).toBe(0);
    expect(printed).toContain(
      'NodePool clusters/tuned-bad (HostedCluster demo): PerformanceProfile not applied: TunedProfileDegraded',
    );
    expect(printed).toContain('Tuned demo-bad-0 Degraded Message: failed to set sysctl');
    let errors = '';
    const err = { write: (chunk: string) => ((errors += chunk), true) } as unknown as NodeJS.WritableStream;
    const missing = await runNodePoolStatus({
      target: 'clusters/nope',
      kubeconfig: management.kubeconfigPath,
      allConditions: false,
      out,
      err,
    });
    expect(missing).toBe(1);
    expect(errors).toContain('NodePool clusters/nope not found');
    await expect(
      runNodePoolStatus({ kubeconfig: hostedCluster.kubeconfigPath, allConditions: false, out }),
    ).rejects.toThrow(/does not serve NodePools/);
  });
});
