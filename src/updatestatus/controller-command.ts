// `tessera upgrade status-controller`: the update status controller alone, as a Deployment runs it: a Manager with
// leader election on a Lease in its own namespace, probes and metrics, and the controller reading alerts with its
// own service account. `tessera start` runs the same runnable beside the other controllers.
import { KubeConfig } from '@kubernetes/client-node';
import { InvalidArgumentError, Manager, type Logger, type LogLevel } from '../runtime/index.js';
import { updateStatusRunnable } from './runnable.js';

/** What the command's flags say. */
export interface UpdateStatusControllerCommandOptions {
  readonly kubeconfig?: string;
  /** Namespace of the leader-election Lease. */
  readonly namespace: string;
  readonly probePort: number;
  readonly leaderElection: boolean;
  readonly prometheusUrl?: string;
}

/** Reads the command's flags (commander's values). */
export function parseControllerOptions(
  opts: Record<string, unknown>,
  defaultNamespace: string,
): UpdateStatusControllerCommandOptions {
  const probePort = Number(opts['probePort'] ?? 8081);
  if (!Number.isInteger(probePort) || probePort < 0 || probePort > 65535)
    throw new InvalidArgumentError('--probe-port', `must be a port number, got ${String(opts['probePort'])}`);
  const namespace =
    typeof opts['namespace'] === 'string' && opts['namespace'] ? opts['namespace'] : defaultNamespace;
  return {
    kubeconfig: typeof opts['kubeconfig'] === 'string' ? opts['kubeconfig'] : undefined,
    namespace,
    probePort,
    leaderElection: opts['leaderElect'] !== false,
    prometheusUrl: typeof opts['prometheusUrl'] === 'string' ? opts['prometheusUrl'] : undefined,
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
  const kubeConfig = new KubeConfig();
  if (options.kubeconfig) kubeConfig.loadFromFile(options.kubeconfig);
  else kubeConfig.loadFromDefault();
  const manager = new Manager({
    kubeConfig,
    // Also the Lease's name (deploy/updatestatus/rbac.yaml grants that one Lease).
    name: 'tessera-updatestatus',
    leaderElection: options.leaderElection ? { leaseNamespace: options.namespace } : false,
    probes: { port: options.probePort },
    logger: logging.logger,
    logLevel: logging.logLevel,
    handleSignals: signal === undefined,
  });
  manager.add(
    updateStatusRunnable({
      client: manager.client,
      informers: manager.informers,
      kubeConfig,
      prometheusUrl: options.prometheusUrl,
    }),
  );
  await manager.start(signal);
}
