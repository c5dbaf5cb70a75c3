// `tessera dev simulate-update`: a dev-only driver, registered under the `dev` command. Only commander's types are
// imported here; the implementation loads when the command runs.
import type { Command } from 'commander';
import { parseDuration } from '../cli/flags.js';

export function registerSimulateUpdateCommand(dev: Command): void {
  dev
    .command('simulate-update')
    .description(
      'drive a realistic OpenShift update on the local cluster (operators in waves, node drains and reboots)',
    )
    .requiredOption('--to <version>', 'version to update to, e.g. 4.16.1')
    .option('--from <version>', 'version to update from (default: 4.16.0)')
    .option('--step-ms <ms>', 'real time per simulation step (default: 2000)', parseDuration('ms'))
    .option('--kubeconfig <file>', 'kubeconfig to use (default: $KUBECONFIG or ~/.kube/config)')
    .action(async (opts: { to: string; from?: string; stepMs?: number; kubeconfig?: string }) => {
      const { simulateUpdateCommand } = await import('./update-simulation/command.js');
      await simulateUpdateCommand(opts);
    });
}
