// `tessera upgrade status`: oc adm upgrade status, from a live cluster or a snapshot. Only commander is imported
// here; the implementation loads when the command runs.
import type { Command } from 'commander';
import {
  addMetricsFlags,
  collectRepeatable,
  parseDuration,
  parseListenPort,
  parseServerUrl,
} from '../cli/flags.js';
import type { UpgradeStatusFlags } from './command.js';
import type { UpdateStatusControllerFlags } from './controller-command.js';

export function registerUpgradeCommands(program: Command): void {
  const upgrade = program.command('upgrade').description('cluster updates');
  upgrade
    .command('status')
    .description('show the status of the current cluster update, as `oc adm upgrade status` does')
    .option(
      '--details <level>',
      'show details in a section: none, all, nodes, health, operators (default: none)',
    )
    .option(
      '--now <time>',
      'evaluate as of this RFC 3339 time (default: now; for snapshots, their latest event)',
    )
    .option(
      '--mock-clusterversion <file>',
      'render a snapshot: C-cv.yaml plus siblings C-co.yaml, C-mcp.yaml, C-mc.yaml, C-node.yaml (C-alerts.json, C-mco-deployment.yaml optional)',
    )
    .option('-o, --output <format>', 'print the UpdateStatus object instead of text: json or yaml')
    .option(
      '--source <source>',
      'live clusters: auto (the UpdateStatus when its controller runs, else computed here; the default), updatestatus, cluster',
    )
    .option('--watch', 'refresh the output in place until interrupted', false)
    .option('--interval <seconds>', 'refresh interval with --watch (default: 5)', parseDuration('s'))
    .option('--kubeconfig <file>', 'kubeconfig to use (default: $KUBECONFIG or ~/.kube/config)')
    // oc's global connection flags, applied over the kubeconfig as kubectl applies them (src/runtime/kubeconfig.ts),
    // for every request: the API server's and the alerts endpoint's.
    .option('--context <name>', 'kubeconfig context to use (default: its current-context)')
    .option(
      '-s, --server <url>',
      "API server address, replacing the server of the context's cluster (host:port means https)",
      parseServerUrl,
    )
    .option(
      '--certificate-authority <file>',
      "PEM file of the CA to verify the API server (and the alerts endpoint) with, instead of the kubeconfig's",
    )
    .option(
      '--insecure-skip-tls-verify',
      "do not verify the server certificates (insecure); drops the kubeconfig's CA",
    )
    .option(
      '--token <token>',
      "bearer token for the API server and the alerts endpoint, replacing the kubeconfig user's credentials",
    )
    .option('--as <user>', 'user to impersonate (a user name, or system:serviceaccount:NAMESPACE:NAME)')
    .option(
      '--as-group <group>',
      "group to impersonate, repeatable; needs --as (or the kubeconfig user's as)",
      collectRepeatable,
    )
    .option('--as-uid <uid>', "UID to impersonate; needs --as (or the kubeconfig user's as)")
    .option(
      '--prometheus-url <url>',
      'live clusters: read alerts from this Prometheus-compatible API (GET <url>/api/v1/alerts, as the kubeconfig user) instead of the openshift-monitoring/thanos-querier Route',
    )
    .action(async (opts: UpgradeStatusFlags) => {
      const { runUpgradeStatus, parseUpgradeStatusOptions } = await import('./command.js');
      process.exitCode = await runUpgradeStatus(parseUpgradeStatusOptions(opts));
    });

  addMetricsFlags(upgrade.command('status-controller'))
    .description(
      'run the update status controller alone (as deploy/updatestatus does): writes the UpdateStatus from ClusterVersion, ClusterOperators, MachineConfigPools, Nodes and alerts',
    )
    .option('--kubeconfig <file>', 'kubeconfig to use (default: in-cluster, $KUBECONFIG or ~/.kube/config)')
    .option(
      '-n, --namespace <ns>',
      "namespace of the leader-election Lease (default: $POD_NAMESPACE, else 'tessera-update-status')",
    )
    .option(
      '--probe-port <port>',
      '/healthz, /readyz and /metrics port, 0 = any free port (default: 8081)',
      parseListenPort,
    )
    .option('--no-leader-elect', 'run without leader election (one replica only)')
    .option(
      '--prometheus-url <url>',
      "read alerts from this Prometheus-compatible API with the controller's own credentials instead of the openshift-monitoring/thanos-querier Route",
    )
    .action(async (opts: UpdateStatusControllerFlags, command: Command) => {
      const [{ runUpdateStatusController, parseControllerOptions }, { commandLogger }] = await Promise.all([
        import('./controller-command.js'),
        import('../cli/logging.js'),
      ]);
      const { logger, settings } = commandLogger(command, { name: 'tessera-updatestatus' });
      const options = parseControllerOptions(opts, process.env.POD_NAMESPACE ?? 'tessera-update-status');
      await runUpdateStatusController(options, { logger, logLevel: settings.level });
    });
}
