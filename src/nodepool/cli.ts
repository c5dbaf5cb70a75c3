// `tessera nodepool ...`: NodePool performance-profile status. Only commander is imported here; the
// implementation loads when a command runs.
import type { Command } from 'commander';
import { addMetricsFlags, parseDuration, parseListenPort } from '../cli/flags.js';
import type { MetricsFlags } from '../runtime/index.js';

export function registerNodePoolCommands(program: Command): void {
  const nodepool = program.command('nodepool').description('HyperShift NodePools: PerformanceProfile status');

  nodepool
    .command('status')
    .description('print the PerformanceProfile conditions of one NodePool, or of all')
    .argument('[NAMESPACE/NAME]', 'the NodePool; all NodePools when omitted')
    .option(
      '--kubeconfig <path>',
      'kubeconfig of the management cluster (default: $KUBECONFIG, then ~/.kube/config)',
    )
    .option('-n, --namespace <namespace>', 'only NodePools in this namespace')
    .option('--all-conditions', 'also show conditions set by other controllers', false)
    .action(
      async (
        target: string | undefined,
        opts: { kubeconfig?: string; namespace?: string; allConditions: boolean },
      ) => {
        const { runNodePoolStatus } = await import('./management/status-command.js');
        process.exitCode = await runNodePoolStatus({ target, ...opts, out: process.stdout });
      },
    );

  addMetricsFlags(nodepool.command('run'))
    .description(
      'run the NodePool performance-status controller (and, with a hosted cluster, the NTO status writer)',
    )
    .option(
      '--kubeconfig <path>',
      'kubeconfig of the management cluster (default: $KUBECONFIG, then ~/.kube/config)',
    )
    .option('--hosted-kubeconfig <path>', 'kubeconfig of a hosted cluster: also write its status ConfigMaps')
    .option('--hcp-namespace <namespace>', 'the hosted control plane namespace of that hosted cluster')
    .option(
      '--stale-after <seconds>',
      'report a status stale when its heartbeat is older; 0: never (default: 0)',
      parseDuration('s', { allowZero: true }),
    )
    .option(
      '--heartbeat <seconds>',
      'status writer heartbeat interval; 0: write on change only (default: 300)',
      parseDuration('s', { allowZero: true }),
    )
    .option(
      '--probe-port <port>',
      'serve /healthz, /readyz and /metrics on this port, 0 = any free port (default: none)',
      parseListenPort,
    )
    .option(
      '--leader-elect',
      'run the controllers only while holding the tessera-nodepool Lease in --namespace (for more than one replica)',
      false,
    )
    .option('--namespace <ns>', "the Lease's namespace (default: $POD_NAMESPACE)")
    .action(
      async (
        opts: MetricsFlags & {
          kubeconfig?: string;
          hostedKubeconfig?: string;
          hcpNamespace?: string;
          /** ms */
          staleAfter?: number;
          /** ms */
          heartbeat?: number;
          probePort?: number;
          leaderElect: boolean;
          namespace?: string;
        },
        command: Command,
      ) => {
        const [{ runNodePoolControllers }, { commandLogger }] = await Promise.all([
          import('./run-command.js'),
          import('../cli/logging.js'),
        ]);
        const { logger } = commandLogger(command, { name: 'tessera-nodepool' });
        const { staleAfter, heartbeat, ...rest } = opts;
        await runNodePoolControllers({
          ...rest,
          staleAfterMs: staleAfter,
          heartbeatIntervalMs: heartbeat,
          namespace: opts.namespace ?? process.env.POD_NAMESPACE,
          logger,
        });
      },
    );
}
