// `tessera dashboard`: registration only (commander's types); the server loads when the command runs.
import type { Command } from 'commander';
import { parseListenPort } from '../cli/flags.js';

export function registerDashboardCommand(program: Command): void {
  program
    .command('dashboard')
    .description(
      'serve a live, read-only web view of update progress, pod placement and NodePool tuning on 127.0.0.1',
    )
    .option('--port <port>', 'port on 127.0.0.1; 0 for any free port (default: 7480)', parseListenPort)
    .option(
      '--kubeconfig <path>',
      'kubeconfig to read the cluster with (default: $KUBECONFIG, then ~/.kube/config)',
    )
    .action(async (opts: { port?: number; kubeconfig?: string }, command: Command) => {
      const [{ runDashboard, DEFAULT_DASHBOARD_PORT }, { commandLogger }] = await Promise.all([
        import('./command.js'),
        import('../cli/logging.js'),
      ]);
      const { logger } = commandLogger(command, {
        name: 'dashboard',
        destination: process.stderr,
        defaultLevel: 'warn',
      });
      const stop = new AbortController();
      for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
      await runDashboard({
        port: opts.port ?? DEFAULT_DASHBOARD_PORT,
        kubeconfig: opts.kubeconfig,
        out: (line) => void process.stdout.write(`${line}\n`),
        signal: stop.signal,
        logger,
      });
    });
}
