// `tessera nodepool run`: runs the NodePool side against a management cluster and, given a hosted cluster and its
// HCP namespace, the Node Tuning side's status writer too, until SIGINT/SIGTERM.
import { KubeConfig } from '@kubernetes/client-node';
import {
  InvalidArgumentError,
  KubeClient,
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
  const heartbeatIntervalMs = seconds(opts.heartbeat, '--heartbeat');
  const logger = opts.logger;
  const management = new KubeClient(load(opts.kubeconfig));
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
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
  logger.info(
    { statusWriter: Boolean(hosted), staleAfterMs, heartbeatIntervalMs },
    'running; Ctrl-C to stop',
  );
  try {
    await runTogether('nodepool', parts).start(stop.signal);
  } finally {
    await management.close();
    await hosted?.close();
  }
}
