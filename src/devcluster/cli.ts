// `tessera dev up|down|status|env`: the local control plane (`dev simulate-update` is the demo's, src/demo/cli.ts). Only commander is imported here; the
// implementation loads when a command runs.
import type { Command } from 'commander';
import { parseCount, parsePositiveCount, parseRequiredBindAddress } from '../cli/flags.js';

const DEFAULT_NAME = 'tessera';

/** Registers `tessera dev ...` and returns the `dev` command, for the demo's own sub-command. */
export function registerDevCommands(program: Command): Command {
  const dev = program
    .command('dev')
    .description('run a real local Kubernetes control plane (etcd, kube-apiserver, controllers, kwok nodes)');

  dev
    .command('up')
    .description('start the local cluster (binaries built once by `npm run binaries`)')
    .option('--name <name>', 'cluster name; several can run at once', DEFAULT_NAME)
    .option(
      '--workers-per-arch <n>',
      'fake worker nodes per architecture (amd64, arm64, ppc64le, s390x) (default: 2)',
      parseCount,
    )
    .option(
      '--real-nodes [n]',
      "also start n real kubelet nodes of this machine's architecture, running containers (root only; default n: 1)",
      parsePositiveCount,
    )
    .action(async (opts: { name: string; workersPerArch?: number; realNodes?: number | true }) => {
      const { devUp } = await import('./commands.js');
      await devUp(opts);
    });

  dev
    .command('down')
    .description('stop the local cluster started by `tessera dev up`')
    .option('--name <name>', 'cluster name', DEFAULT_NAME)
    .option('--wipe', 'also delete its state (etcd data, certificates, kubeconfig)', false)
    .action(async (opts: { name: string; wipe: boolean }) => {
      const { devDown } = await import('./commands.js');
      await devDown(opts);
    });

  dev
    .command('status')
    .description('show whether the local cluster runs, and its components')
    .option('--name <name>', 'cluster name', DEFAULT_NAME)
    .action(async (opts: { name: string }) => {
      const { devStatus } = await import('./commands.js');
      process.exitCode = await devStatus(opts);
    });

  dev
    .command('env')
    .description('print shell exports for the local cluster: eval "$(tessera dev env)"')
    .option('--name <name>', 'cluster name', DEFAULT_NAME)
    .action(async (opts: { name: string }) => {
      const { devEnv } = await import('./commands.js');
      await devEnv(opts);
    });

  // Started by `dev up --real-nodes` as a process of the cluster's own (./cluster-dns.ts); not for people to run.
  dev
    .command('cluster-dns', { hidden: true })
    .description(
      "serve a real-node cluster's DNS: its Services' names, others forwarded to this machine's resolver",
    )
    .requiredOption('--kubeconfig <path>', 'kubeconfig with read access to Services and EndpointSlices')
    .requiredOption('--listen <host:port>', 'UDP and TCP address to serve on', parseRequiredBindAddress)
    .option('--cluster-domain <domain>', 'the cluster domain (default: cluster.local)')
    .action(
      async (
        opts: { kubeconfig: string; listen: { host: string; port: number }; clusterDomain?: string },
        command: Command,
      ) => {
        const [{ serveClusterDns }, { commandLogger }] = await Promise.all([
          import('./cluster-dns.js'),
          import('../cli/logging.js'),
        ]);
        const { logger } = commandLogger(command, { name: 'cluster-dns', destination: process.stderr });
        const stop = new AbortController();
        for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
        await serveClusterDns({
          kubeconfig: opts.kubeconfig,
          host: opts.listen.host,
          port: opts.listen.port,
          ...(opts.clusterDomain ? { domain: opts.clusterDomain } : {}),
          logger,
          signal: stop.signal,
        });
      },
    );

  return dev;
}
