// `tessera dev simulate-update`: the shell around runSimulation (kubeconfig, Ctrl-C, a progress line per step).
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, InvalidArgumentError } from '../../runtime/index.js';
import { runSimulation } from './driver.js';

export async function simulateUpdateCommand(opts: {
  to: string;
  from: string;
  stepMs: string;
  kubeconfig?: string;
}): Promise<void> {
  const stepMs = Number(opts.stepMs);
  if (!Number.isFinite(stepMs) || stepMs <= 0)
    throw new InvalidArgumentError('--step-ms', `${opts.stepMs} (milliseconds, > 0)`);
  const kc = new KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  const client = new KubeClient(kc, { userAgent: 'tessera-simulator' });
  const controller = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => controller.abort());
  try {
    await runSimulation({
      client,
      from: opts.from,
      to: opts.to,
      stepMs,
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
