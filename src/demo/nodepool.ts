// The NodePool part of `npm start`: a hosted-cluster pair where NodePool `tuned-ok` goes Progressing -> Available
// and NodePool `tuned-bad` becomes Degraded, with both controllers running. Resolves when `signal` aborts and
// everything has stopped. The caller provides the two clusters (management and hosted) and owns them.
import type { KubeConfig } from '@kubernetes/client-node';
import {
  type Clock,
  KubeClient,
  type Logger,
  realClock,
  runTogether,
  silentLogger,
} from '../runtime/index.js';
import { HostedClusterPair } from './hosted-cluster-pair.js';
import { installNodePoolCrds } from '../nodepool/api/install.js';
import { createNodePoolController } from '../nodepool/management/nodepool-controller.js';
import { createStatusWriter } from '../nodepool/tuning/status-writer.js';

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

/** Seeds the demo objects, runs the status writer and the NodePool controller until `signal` aborts. */
export async function runNodePoolDemo(options: NodePoolDemoOptions): Promise<void> {
  const clock = options.clock ?? realClock;
  const say = options.say ?? ((): void => undefined);
  const step = (options.stepSeconds ?? 5) * 1000;
  const management = new KubeClient(options.management);
  const hosted = new KubeClient(options.hosted);
  try {
    await installNodePoolCrds(management, 'management', { signal: options.signal });
    await installNodePoolCrds(hosted, 'hosted', { signal: options.signal });
    const pair = new HostedClusterPair({ management, hosted, clusterName: 'demo', now: () => clock.now() });
    await pair.setUp();
    await pair.addNodePool('tuned-ok', 'low-latency', ['demo-ok-0', 'demo-ok-1']);
    await pair.addNodePool('tuned-bad', 'realtime', ['demo-bad-0']);
    say(
      `nodepool demo: NodePools clusters/tuned-ok and clusters/tuned-bad of HostedCluster demo (HCP namespace ${pair.hcpNamespace})`,
    );
    say('nodepool demo: watch them with `tessera nodepool status`');

    const controllers = runTogether('nodepool-demo', [
      createStatusWriter({
        management,
        hosted,
        hcpNamespace: pair.hcpNamespace,
        clock,
        logger: options.logger ?? silentLogger,
      }),
      createNodePoolController({
        management,
        clock,
        staleAfterMs: 900_000,
        logger: options.logger ?? silentLogger,
      }),
    ]).start(options.signal);

    const script = async (): Promise<void> => {
      await clock.sleep(step, options.signal);
      if (options.signal.aborted) return;
      await pair.setTunedState('demo-ok-0', { kind: 'applied' });
      await pair.setTunedState('demo-bad-0', { kind: 'applied' });
      say('nodepool demo: TuneD applied the profile on demo-ok-0 and demo-bad-0');
      await clock.sleep(step, options.signal);
      if (options.signal.aborted) return;
      await pair.setTunedState('demo-ok-1', { kind: 'applied' });
      say('nodepool demo: TuneD applied the profile on demo-ok-1: tuned-ok becomes Available');
      await clock.sleep(step, options.signal);
      if (options.signal.aborted) return;
      await pair.setTunedState('demo-bad-0', {
        kind: 'degraded',
        reason: 'TunedError',
        message: 'failed to set sysctl kernel.sched_rt_runtime_us: permission denied',
      });
      say('nodepool demo: TuneD failed on demo-bad-0: tuned-bad becomes Degraded');
    };
    const scripted = script().catch((err: unknown) => {
      // The controllers keep running: a failed step leaves the demo in its last state, it does not stop it.
      say(`nodepool demo: a scripted step failed: ${err instanceof Error ? err.message : String(err)}`);
    });
    await Promise.all([controllers, scripted]);
  } finally {
    await management.close();
    await hosted.close();
  }
}
