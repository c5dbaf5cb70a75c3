// `tessera dev simulate-update`: the shell around runSimulation (kubeconfig, Ctrl-C, a progress line per step).
import { KubeClient, loadKubeConfig } from '../../runtime/index.js';
import { runSimulation } from './driver.js';

/** The flags, as commander has parsed them (src/demo/cli.ts); undefined ones take runSimulation's defaults. */
export async function simulateUpdateCommand(opts: {
  to: string;
  from?: string;
  stepMs?: number;
  kubeconfig?: string;
}): Promise<void> {
  const client = new KubeClient(await loadKubeConfig(opts.kubeconfig), { userAgent: 'tessera-simulator' });
  const controller = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => controller.abort());
  try {
    await runSimulation({
      client,
      from: opts.from,
      to: opts.to,
      stepMs: opts.stepMs,
      signal: controller.signal,
      onStep: (step, state) => {
        const updated = state.clusterOperators.filter(
          (o) => o.status?.versions?.[0]?.version === opts.to,
        ).length;
        const nodesDone = [...state.nodeAnnotations.values()].filter((a) =>
          a['machineconfiguration.openshift.io/currentConfig']?.endsWith(opts.to),
        ).length;
        process.stdout.write(
          `step ${step}: ${updated}/${state.clusterOperators.length} operators, ${nodesDone}/${state.nodeAnnotations.size} nodes at ${opts.to}${state.done ? ' (done)' : ''}\n`,
        );
      },
    });
  } finally {
    await client.close();
  }
}
