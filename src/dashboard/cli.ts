// `tessera dashboard`, `tessera console-plugin serve` and `tessera console-plugin register`: registration only (commander's types); the servers load
// when the command runs.
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

export function registerConsolePluginCommand(program: Command): void {
  const consolePlugin = program
    .command('console-plugin')
    .description("the OpenShift console plugin with the dashboard's views");
  consolePlugin
    .command('register')
    .description(
      "apply the ConsolePlugin that points the console at the plugin's Service (the OLM bundle's init container: OLM creates no ConsolePlugin from a bundle); does nothing where the console API is not served",
    )
    .requiredOption('--namespace <namespace>', "the namespace of the plugin's Service")
    .option(
      '--kubeconfig <path>',
      "kubeconfig to write with (default: $KUBECONFIG, then ~/.kube/config, then the pod's service account)",
    )
    .action(async (opts: { namespace: string; kubeconfig?: string }) => {
      const [{ runRegisterCommand }, { loadKubeConnection }] = await Promise.all([
        import('./console-plugin/registration.js'),
        import('../runtime/index.js'),
      ]);
      await runRegisterCommand({
        connection: await loadKubeConnection(opts.kubeconfig, { env: process.env }),
        namespace: opts.namespace,
        out: (line) => void process.stdout.write(`${line}\n`),
      });
    });
  consolePlugin
    .command('serve')
    .description(
      "serve the console plugin's files over HTTPS for the console (the ConsolePlugin's Service points here)",
    )
    .option('--port <port>', 'port on every interface (default: 9443)', parseListenPort)
    .option(
      '--cert-dir <dir>',
      'folder with tls.crt and tls.key, re-read when they change (default: /var/serving-cert)',
    )
    .option('--plugin-dir <dir>', 'the built plugin (default: dist/console-plugin of this package)')
    .action(async (opts: { port?: number; certDir?: string; pluginDir?: string }, command: Command) => {
      const [
        { serveConsolePlugin, CONSOLE_PLUGIN_PORT, DEFAULT_PLUGIN_DIR, SERVING_CERT_DIR },
        { commandLogger },
      ] = await Promise.all([import('./console-plugin/command.js'), import('../cli/logging.js')]);
      const { logger } = commandLogger(command, {
        name: 'console-plugin',
        destination: process.stderr,
        defaultLevel: 'info',
      });
      const stop = new AbortController();
      for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
      await serveConsolePlugin({
        port: opts.port ?? CONSOLE_PLUGIN_PORT,
        certDir: opts.certDir ?? SERVING_CERT_DIR,
        pluginDir: opts.pluginDir ?? DEFAULT_PLUGIN_DIR,
        signal: stop.signal,
        logger,
        out: (line) => void process.stdout.write(`${line}\n`),
      });
    });
}
