// `tessera start` (what `npm start` runs): with KUBECONFIG set, runs the operator against that cluster;
// otherwise brings up the embedded local control plane first and runs the operator on it.
import type { Command } from 'commander';

export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run the operator: against $KUBECONFIG if set, else on a local control plane it starts')
    .option('--name <name>', 'local cluster name (without KUBECONFIG)', 'tessera')
    .action(async (opts: { name: string }, command: Command) => {
      const [{ runStart }, { commandLogger }] = await Promise.all([
        import('./start.js'),
        import('./logging.js'),
      ]);
      // People read stdout; the controllers' logs go to stderr, warnings and up unless --log-level says.
      const { logger } = commandLogger(command, {
        name: 'tessera',
        destination: process.stderr,
        defaultLevel: 'warn',
      });
      await runStart({ ...opts, logger });
    });
}
