// The NodePool part of `npm start`: a hosted-cluster pair where NodePool `tuned-ok` goes Progressing -> Available
// and NodePool `tuned-bad` becomes Degraded, with both controllers running. Resolves when `signal` aborts and
// everything has stopped. The caller provides the two clusters (management and hosted) and owns them.
import type { KubeConfig } from '@kubernetes/client-node';
import { type Clock, Manager, type Logger, realClock, silentLogger, errorMessage } from '../runtime/index.js';
import { HostedClusterPair } from './hosted-cluster-pair.js';
import { installNodePoolCrds } from '../nodepool/api/install.js';
import { addNodePoolControllers } from '../nodepool/controllers.js';

export interface NodePoolDemoOptions {
  /** Management cluster (NodePools, HCP namespace). */
  management: KubeConfig;
  /** Hosted cluster (Nodes, Tuned Profiles). May be the same cluster as `management` for a one-cluster demo. */
  hosted: KubeConfig;
  /** Stops the demo. */
  signal: AbortSignal;
  /** Seconds between the scripted steps. Default: 5. */
  stepSeconds?: number;
  /** One line per step. Default: none. */
  say?: (line: string) => void;
  clock?: Clock;
  logger?: Logger;
}

/**
 * Seeds the demo objects (a start-up step: idempotent, retried until it succeeds), runs the status writer and the
 * NodePool controller on a Manager until `signal` aborts.
 */
export async function runNodePoolDemo(options: NodePoolDemoOptions): Promise<void> {
  const clock = options.clock ?? realClock;
  const say = options.say ?? ((): void => undefined);
  const step = (options.stepSeconds ?? 5) * 1000;
  const manager = new Manager({
    kubeConfig: options.management,
    name: 'tessera-nodepool',
    leaderElection: false,
    probes: false,
    handleSignals: false,
    logger: options.logger ?? silentLogger,
    clock,
  });
  // The status writer's hosted cluster; its client also seeds the hosted side.
  const hostedCluster = manager.cluster(options.hosted, { name: 'hosted' });
  const pair = new HostedClusterPair({
    management: manager.client,
    hosted: hostedCluster.client,
    clusterName: 'demo',
    now: () => clock.now(),
  });
  manager.addStartupStep({
    name: 'nodepool-demo-objects',
    run: async (signal) => {
      await installNodePoolCrds(manager.client, 'management', { signal });
      await installNodePoolCrds(hostedCluster.client, 'hosted', { signal });
      await pair.setUp();
      await pair.addNodePool('tuned-ok', 'low-latency', ['demo-ok-0', 'demo-ok-1']);
      await pair.addNodePool('tuned-bad', 'realtime', ['demo-bad-0']);
      say(
        `nodepool demo: NodePools clusters/tuned-ok and clusters/tuned-bad of HostedCluster demo (HCP namespace ${pair.hcpNamespace})`,
      );
      say('nodepool demo: watch them with `tessera nodepool status`');
    },
  });
  addNodePoolControllers(manager, {
    staleAfterMs: 900_000,
    hosted: { kubeConfig: options.hosted, hcpNamespace: pair.hcpNamespace },
    updateInsights: false,
  });
  manager.add({ name: 'nodepool-demo-script', start: (signal) => runScript(pair, step, clock, say, signal) });
  await manager.start(options.signal);
}

/** The demo's story, one step every `stepMs`; a failed step leaves the demo in its last state, it does not stop it. */
async function runScript(
  pair: HostedClusterPair,
  stepMs: number,
  clock: Clock,
  say: (line: string) => void,
  signal: AbortSignal,
): Promise<void> {
  try {
    await clock.sleep(stepMs, signal);
    if (signal.aborted) return;
    await pair.setTunedState('demo-ok-0', { kind: 'applied' });
    await pair.setTunedState('demo-bad-0', { kind: 'applied' });
    say('nodepool demo: TuneD applied the profile on demo-ok-0 and demo-bad-0');
    await clock.sleep(stepMs, signal);
    if (signal.aborted) return;
    await pair.setTunedState('demo-ok-1', { kind: 'applied' });
    say('nodepool demo: TuneD applied the profile on demo-ok-1: tuned-ok becomes Available');
    await clock.sleep(stepMs, signal);
    if (signal.aborted) return;
    await pair.setTunedState('demo-bad-0', {
      kind: 'degraded',
      reason: 'TunedError',
      message: 'failed to set sysctl kernel.sched_rt_runtime_us: permission denied',
    });
    say('nodepool demo: TuneD failed on demo-bad-0: tuned-bad becomes Degraded');
  } catch (err) {
    say(`nodepool demo: a scripted step failed: ${errorMessage(err)}`);
  }
}
