// The main job (`npm start` = `tessera start`). Without KUBECONFIG it starts (or reuses) the local control plane
// and runs all three controllers on it with their demos: pod placement (demo Deployments whose images live in a
// local registry), update status (a simulated OpenShift update) and NodePool status (a second local cluster as
// the hosted cluster). With KUBECONFIG set it starts nothing locally and runs the controllers against that
// cluster. Either way it serves the read-only dashboard of that cluster on 127.0.0.1 (7480, or any free port when
// 7480 is taken) and prints its URL. Runs until SIGINT/SIGTERM; local clusters keep running afterwards
// (`tessera dev down` stops them).
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  isClusterRunning,
  readClusterState,
  startDevCluster,
  type DevClusterState,
} from '../devcluster/cluster.js';
import { defaultNodeSpecs } from '../devcluster/nodes.js';
import { KubeClient, Manager, type Logger } from '../runtime/index.js';

const say = (line: string): void => void process.stdout.write(line + '\n');

export interface StartOptions {
  /** Local cluster name (used without KUBECONFIG). */
  readonly name: string;
  /** The controllers' logger (the CLI builds it from --log-format/--log-level). */
  readonly logger: Logger;
}

interface Target {
  readonly kubeConfig: KubeConfig;
  /** Set for the local cluster: where its state (and the demos' registry data) lives. */
  readonly local?: DevClusterState;
}

export async function runStart(opts: StartOptions): Promise<void> {
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
  const { KubeConfig } = await import('@kubernetes/client-node');
  const target = await resolveTarget(opts.name, KubeConfig);
  if (stop.signal.aborted) return;

  const logger = opts.logger;
  const parts = [
    runPodPlacement(target, stop.signal, logger),
    runUpdateStatus(target, stop.signal, logger),
    runNodePool(opts.name, target, stop.signal, logger),
    runDashboard(target, stop.signal, logger),
  ];
  const settled = await Promise.allSettled(parts);
  // Stopped by the user while an area was still starting (its start-up I/O aborted): a clean stop, not an error.
  const failures = settled
    .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    .map((r) => r.reason as unknown)
    .filter((reason) => !(stop.signal.aborted && isAbortError(reason)));
  for (const reason of failures) say(`error: ${reason instanceof Error ? reason.message : String(reason)}`);
  if (target.local)
    say(`local clusters keep running; stop them with \`npx tessera dev down --name ${opts.name}\``);
  if (failures.length > 0) process.exitCode = 1;
}

/** An AbortError, or an error caused by one (an API call aborted by the stop signal). */
function isAbortError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (e.name === 'AbortError') return true;
  return false;
}

async function resolveTarget(name: string, KubeConfigClass: typeof KubeConfig): Promise<Target> {
  const kubeConfig = new KubeConfigClass();
  if (process.env.KUBECONFIG) {
    kubeConfig.loadFromDefault();
    say(`using the cluster of KUBECONFIG (${kubeConfig.getCurrentCluster()?.server ?? 'unknown server'})`);
    return { kubeConfig };
  }
  let state = readClusterState(name);
  if (state && isClusterRunning(state)) {
    say(`reusing the local cluster "${name}" at ${state.server}`);
  } else {
    say(`starting the local cluster "${name}"`);
    state = await startDevCluster({
      name,
      nodes: defaultNodeSpecs(),
      log: (line) => say(`  ${line}`),
      buildMissingBinaries: true,
      registry: true,
    });
    say(`local cluster up at ${state.server}`);
  }
  say(`  export KUBECONFIG=${state.kubeconfigPath}`);
  kubeConfig.loadFromFile(state.kubeconfigPath);
  return { kubeConfig, local: state };
}

async function runPodPlacement(target: Target, signal: AbortSignal, logger: Logger): Promise<void> {
  if (target.local) {
    const { runPodPlacementDemo } = await import('../demo/podplacement.js');
    const demo = await runPodPlacementDemo({
      kubeConfig: target.kubeConfig,
      stateDir: target.local.stateDir,
      signal,
      log: (line) => say(`[podplacement] ${line}`),
      // A child logger: the CR's logVerbosity changes this one's level, not that of the other controllers.
      logger: logger.child({ area: 'podplacement' }),
    });
    say(`[podplacement] where the demo pods landed:\n${demo.summary}`);
    say('[podplacement] try: npx tessera podplacement explain podplacement-demo/<pod>');
    await demo.operator.stopped;
    return;
  }
  const { runPodPlacementOperator } = await import('../podplacement/operator/start.js');
  // An API server on this machine can call a webhook on 127.0.0.1; a remote one needs the in-cluster Service.
  const server = target.kubeConfig.getCurrentCluster()?.server ?? '';
  const apiServerIsLocal = /^https:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:|\/|$)/.test(server);
  say(
    apiServerIsLocal
      ? '[podplacement] operator running; the API server calls its webhook on 127.0.0.1'
      : '[podplacement] operator running; its webhook is expected behind the in-cluster Service (deploy/podplacement)',
  );
  await runPodPlacementOperator({
    kubeConfig: target.kubeConfig,
    signal,
    handleSignals: false,
    logger,
    ...(apiServerIsLocal
      ? {
          endpoint: { kind: 'url' as const, baseUrl: 'https://127.0.0.1:0' },
          webhookHost: '127.0.0.1',
          webhookPort: 0,
          installCrds: true,
          manageValidatingWebhook: true,
        }
      : {}),
  });
}

async function runUpdateStatus(target: Target, signal: AbortSignal, logger: Logger): Promise<void> {
  const { addUpdateStatusController } = await import('../updatestatus/runnable.js');
  const manager = new Manager({
    kubeConfig: target.kubeConfig,
    name: 'tessera-updatestatus',
    leaderElection: false,
    probes: false,
    handleSignals: false,
    logger,
  });
  addUpdateStatusController(manager, {
    installDevCrds: !!target.local,
    // Alerts for Health insights, read with the controller's own credentials (thanos-querier Route).
    kubeConfig: target.kubeConfig,
  });
  const running = manager.start(signal);
  say('[updatestatus] controller running; see it with: npx tessera upgrade status --details=all');
  if (target.local) {
    // One simulated z-stream update after another, a minute apart, so there is always something to watch.
    const { runSimulation } = await import('../demo/update-simulation/driver.js');
    const client = new KubeClient(target.kubeConfig, { userAgent: 'tessera-simulator' });
    for (let patch = 0; !signal.aborted; patch++) {
      const from = `4.16.${patch}`;
      const to = `4.16.${patch + 1}`;
      say(`[updatestatus] simulating an OpenShift update ${from} -> ${to} on the local cluster`);
      await runSimulation({ client, from, to, stepMs: 3_000, signal });
      if (!signal.aborted)
        say(`[updatestatus] simulated update to ${to} finished; the next starts in a minute`);
      // Rejects only when aborted at shutdown, which the loop's condition then ends.
      await sleep(60_000, undefined, { signal }).catch(() => undefined);
    }
  }
  await running;
}

async function runDashboard(target: Target, signal: AbortSignal, logger: Logger): Promise<void> {
  const [{ serveDashboard, DEFAULT_DASHBOARD_PORT }, { PageMissingError }] = await Promise.all([
    import('../dashboard/command.js'),
    import('../dashboard/errors.js'),
  ]);
  try {
    await serveDashboard({
      kubeConfig: target.kubeConfig,
      port: DEFAULT_DASHBOARD_PORT,
      anyPortIfTaken: true,
      signal,
      logger: logger.child({ area: 'dashboard' }),
      onListening: (url) => say(`[dashboard] live view of this cluster at ${url} (read-only)`),
    });
  } catch (err) {
    // The controllers and demos do not need the page: without it, say so and keep them running.
    if (!(err instanceof PageMissingError)) throw err;
    say(`[dashboard] not served: ${err.message}`);
  }
}

async function runNodePool(name: string, target: Target, signal: AbortSignal, logger: Logger): Promise<void> {
  if (!target.local) {
    say(
      '[nodepool] HyperShift NodePools: run `tessera nodepool run --hosted-kubeconfig ...` per hosted cluster',
    );
    return;
  }
  // HyperShift splits management and hosted clusters; the demo does too, with a lean second local cluster.
  const hostedName = `${name}-hosted`;
  let hosted = readClusterState(hostedName);
  if (!hosted || !isClusterRunning(hosted)) {
    say(`[nodepool] starting the hosted cluster "${hostedName}"`);
    hosted = await startDevCluster({
      name: hostedName,
      nodes: 'none',
      kwok: false,
      scheduler: false,
      controllerManager: false,
      stateRoot: path.dirname(target.local.stateDir),
    });
  }
  const { KubeConfig } = await import('@kubernetes/client-node');
  const hostedConfig = new KubeConfig();
  hostedConfig.loadFromFile(hosted.kubeconfigPath);
  const { runNodePoolDemo } = await import('../demo/nodepool.js');
  await runNodePoolDemo({
    management: target.kubeConfig,
    hosted: hostedConfig,
    signal,
    logger,
    say: (line) => say(`[nodepool] ${line.replace(/^nodepool demo: /, '')}`),
  });
}
