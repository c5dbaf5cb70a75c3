// `tessera nodepool run`: runs the NodePool side against a management cluster and, given a hosted cluster and its
// HCP namespace, the Node Tuning side's status writer too, until SIGINT/SIGTERM. On a Manager: with --probe-port it
// serves /healthz, /readyz and /metrics; with --leader-elect only the holder of the `tessera-nodepool` Lease runs
// the controllers (deploy/nodepool/management runs it so).
import { KubeConfig } from '@kubernetes/client-node';
import {
  InvalidArgumentError,
  KubeClient,
  Manager,
  type Logger,
  type Runnable,
  runTogether,
} from '../runtime/index.js';
import { createNodePoolController } from './management/nodepool-controller.js';
import { createStatusWriter } from './tuning/status-writer.js';

export interface NodePoolRunOptions {
  /** Management cluster kubeconfig; default: $KUBECONFIG, then ~/.kube/config. */
  kubeconfig?: string;
  /** Hosted cluster kubeconfig: also run the status writer for `hcpNamespace`. */
  hostedKubeconfig?: string;
  hcpNamespace?: string;
  /** Seconds; 0 disables staleness. */
  staleAfter: string;
  /** Seconds; 0 disables heartbeats. */
  heartbeat: string;
  /** Port of /healthz, /readyz and /metrics; undefined: none. */
  probePort?: string;
  /** Run the controllers only while holding the Lease in `namespace`; otherwise one process only. */
  leaderElect?: boolean;
  namespace?: string;
  /** Stops the controllers (tests); without it SIGINT/SIGTERM do. */
  signal?: AbortSignal;
  /** The CLI builds it from --log-format/--log-level. */
  logger: Logger;
}

function seconds(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new InvalidArgumentError(flag, `must be a number of seconds >= 0, got "${value}"`);
  return n * 1000;
}

function load(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

export async function runNodePoolControllers(opts: NodePoolRunOptions): Promise<void> {
  if (Boolean(opts.hostedKubeconfig) !== Boolean(opts.hcpNamespace)) {
    throw new InvalidArgumentError(
      '--hosted-kubeconfig',
      'give it together with --hcp-namespace (the status writer needs both)',
    );
  }
  const staleAfterMs = seconds(opts.staleAfter, '--stale-after');
  const probePort = opts.probePort === undefined ? undefined : Number(opts.probePort);
  if (probePort !== undefined && (!Number.isInteger(probePort) || probePort < 0 || probePort > 65535))
    throw new InvalidArgumentError('--probe-port', `must be a port number, got "${opts.probePort ?? ''}"`);
  const leaseNamespace = opts.leaderElect ? opts.namespace : undefined;
  if (opts.leaderElect && !leaseNamespace)
    throw new InvalidArgumentError('--leader-elect', 'needs --namespace (or $POD_NAMESPACE) for its Lease');
  const heartbeatIntervalMs = seconds(opts.heartbeat, '--heartbeat');
  const logger = opts.logger;
  const managementConfig = load(opts.kubeconfig);
  const management = new KubeClient(managementConfig);
  const hosted = opts.hostedKubeconfig ? new KubeClient(load(opts.hostedKubeconfig)) : undefined;
  const parts: Runnable[] = [createNodePoolController({ management, staleAfterMs, logger })];
  if (hosted && opts.hcpNamespace) {
    parts.push(
      createStatusWriter({
        management,
        hosted,
        hcpNamespace: opts.hcpNamespace,
        heartbeatIntervalMs,
        logger,
      }),
    );
  }
  const manager = new Manager({
    kubeConfig: managementConfig,
    // Also the Lease's name (deploy/nodepool/management/rbac.yaml grants that one Lease).
    name: 'tessera-nodepool',
    leaderElection: leaseNamespace ? { leaseNamespace } : false,
    probes: probePort === undefined ? false : { port: probePort },
    logger,
    handleSignals: opts.signal === undefined,
  });
  manager.add(runTogether('nodepool', parts, true));
  logger.info(
    {
      statusWriter: Boolean(hosted),
      staleAfterMs,
      heartbeatIntervalMs,
      leaderElection: Boolean(leaseNamespace),
    },
    'running; Ctrl-C to stop',
  );
  try {
    await manager.start(opts.signal);
  } finally {
    await management.close();
    await hosted?.close();
  }
}
