// `tessera upgrade status-controller`: the update status controller alone, as a Deployment runs it: a Manager with
// leader election on a Lease in its own namespace, probes and metrics, and the controller reading alerts with its
// own service account. /readyz is ready once the UpdateStatus CRD is installed and the caches synced, on the
// leader and on a standby alike. `tessera start` runs the same controller beside the other controllers.
import {
  loadKubeConnection,
  Manager,
  type Logger,
  metricsServing,
  type LogLevel,
  type MetricsFlags,
  type MetricsServingOptions,
} from '../runtime/index.js';
import { addUpdateStatusController } from './runnable.js';

/** What the command's flags say. */
export interface UpdateStatusControllerCommandOptions {
  readonly kubeconfig?: string;
  /** Namespace of the leader-election Lease. */
  readonly namespace: string;
  /** Undefined: the runtime probe server's default port (8081). */
  readonly probePort?: number;
  readonly leaderElection: boolean;
  readonly prometheusUrl?: string;
  /** --metrics-bind-address, --metrics-secure, --metrics-cert-dir. */
  readonly metrics?: MetricsServingOptions;
}

/** The command's flags, as commander has parsed them (src/updatestatus/cli.ts). */
export interface UpdateStatusControllerFlags extends MetricsFlags {
  readonly kubeconfig?: string;
  readonly namespace?: string;
  readonly probePort?: number;
  /** False with --no-leader-elect. */
  readonly leaderElect?: boolean;
  readonly prometheusUrl?: string;
}

/** Reads the command's flags. */
export function parseControllerOptions(
  opts: UpdateStatusControllerFlags,
  defaultNamespace: string,
): UpdateStatusControllerCommandOptions {
  return {
    kubeconfig: opts.kubeconfig,
    namespace: opts.namespace || defaultNamespace,
    probePort: opts.probePort,
    leaderElection: opts.leaderElect !== false,
    prometheusUrl: opts.prometheusUrl,
    metrics: metricsServing(opts),
  };
}

/**
 * Runs until SIGTERM/SIGINT (the Manager's graceful shutdown) or `signal` aborts, or rejects when the lease is lost.
 */
export async function runUpdateStatusController(
  options: UpdateStatusControllerCommandOptions,
  logging: { logger: Logger; logLevel: LogLevel },
  signal?: AbortSignal,
): Promise<void> {
  const kubeConfig = await loadKubeConnection(options.kubeconfig, { env: process.env });
  const manager = new Manager({
    kubeConfig,
    // Also the Lease's name (deploy/updatestatus/rbac.yaml grants that one Lease).
    name: 'tessera-updatestatus',
    leaderElection: options.leaderElection ? { leaseNamespace: options.namespace } : false,
    probes: options.probePort === undefined ? {} : { port: options.probePort },
    metrics: options.metrics,
    logger: logging.logger,
    logLevel: logging.logLevel,
    handleSignals: signal === undefined,
  });
  addUpdateStatusController(manager, { kubeConfig, prometheusUrl: options.prometheusUrl });
  await manager.start(signal);
}
