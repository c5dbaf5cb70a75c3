// `tessera nodepool run`: runs the NodePool side against a management cluster and, given a hosted cluster and its
// HCP namespace, the Node Tuning side's status writer too, until SIGINT/SIGTERM. On a Manager: with --probe-port it
// serves /healthz, /readyz (ready once the management cluster's caches synced; the hosted cluster's, the Manager's
// cluster(), never gate it) and /metrics (with the controllers' reconcile and work-queue metrics); with
// --leader-elect only the holder of the `tessera-nodepool` Lease runs the controllers (deploy/nodepool/management
// runs it so). The area itself is addNodePoolControllers (controllers.ts).
import {
  InvalidArgumentError,
  loadKubeConnection,
  Manager,
  metricsServing,
  type Logger,
  type MetricsFlags,
} from '../runtime/index.js';
import { addNodePoolControllers } from './controllers.js';

export interface NodePoolRunOptions extends MetricsFlags {
  /** Management cluster kubeconfig; default: $KUBECONFIG, then ~/.kube/config. */
  kubeconfig?: string;
  /** Hosted cluster kubeconfig: also run the status writer for `hcpNamespace`. */
  hostedKubeconfig?: string;
  hcpNamespace?: string;
  /** Milliseconds; 0 disables staleness. Default: the NodePool controller's (0). */
  staleAfterMs?: number;
  /** Milliseconds; 0 disables heartbeats. Default: the status writer's (5 minutes). */
  heartbeatIntervalMs?: number;
  /** Port of /healthz, /readyz and /metrics; undefined: none. */
  probePort?: number;
  /** Run the controllers only while holding the Lease in `namespace`; otherwise one process only. */
  leaderElect?: boolean;
  namespace?: string;
  /** Stops the controllers (tests); without it SIGINT/SIGTERM do. */
  signal?: AbortSignal;
  /** The CLI builds it from --log-format/--log-level. */
  logger: Logger;
}

export async function runNodePoolControllers(opts: NodePoolRunOptions): Promise<void> {
  if (Boolean(opts.hostedKubeconfig) !== Boolean(opts.hcpNamespace)) {
    throw new InvalidArgumentError(
      '--hosted-kubeconfig',
      'give it together with --hcp-namespace (the status writer needs both)',
    );
  }
  const { staleAfterMs, heartbeatIntervalMs, probePort } = opts;
  const leaseNamespace = opts.leaderElect ? opts.namespace : undefined;
  if (opts.leaderElect && !leaseNamespace)
    throw new InvalidArgumentError('--leader-elect', 'needs --namespace (or $POD_NAMESPACE) for its Lease');
  const logger = opts.logger;
  const managementConfig = await loadKubeConnection(opts.kubeconfig, { env: process.env });
  const hostedConfig = opts.hostedKubeconfig
    ? await loadKubeConnection(opts.hostedKubeconfig, { env: process.env, flag: '--hosted-kubeconfig' })
    : undefined;
  const manager = new Manager({
    kubeConfig: managementConfig,
    // Also the Lease's name (deploy/nodepool/management/rbac.yaml grants that one Lease).
    name: 'tessera-nodepool',
    leaderElection: leaseNamespace ? { leaseNamespace } : false,
    probes: probePort === undefined ? false : { port: probePort },
    metrics: metricsServing(opts),
    logger,
    handleSignals: opts.signal === undefined,
  });
  const { statusWriter } = addNodePoolControllers(manager, {
    staleAfterMs,
    ...(hostedConfig && opts.hcpNamespace
      ? { hosted: { kubeConfig: hostedConfig, hcpNamespace: opts.hcpNamespace, heartbeatIntervalMs } }
      : {}),
  });
  logger.info(
    {
      statusWriter: Boolean(statusWriter),
      staleAfterMs,
      heartbeatIntervalMs,
      leaderElection: Boolean(leaseNamespace),
    },
    'running; Ctrl-C to stop',
  );
  await manager.start(opts.signal);
}
