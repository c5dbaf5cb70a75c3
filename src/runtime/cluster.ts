// A second cluster a process talks to (such as a HyperShift hosted cluster beside the management cluster), as
// controller-runtime's cluster.Cluster: its own client and shared informers, run by the Manager that made it
// (Manager.cluster). Its caches start with the Manager's, on every replica, and stop after the controllers have
// drained; the Manager closes its client as it closes its own. They gate neither /readyz nor leader election: another
// cluster's reachability must not decide whether this process is ready or may lead (a controller that needs them
// synced waits on the informers itself, or reports the cluster unreachable, as the NodePool status writer does).
import { SharedInformerFactory, type SharedInformerFactoryOptions } from './cache/informer-factory.js';
import { KubeClient } from './client.js';
import type { Clock } from './clock.js';
import type { KubeConnection } from './kubeconfig.js';
import type { Logger } from './logging.js';
import type { Runnable } from './runnable.js';

export interface ClusterOptions {
  /** For logs (`cluster` on every line of its informers). */
  readonly name: string;
  readonly kubeConfig: KubeConnection;
  /** User-Agent of the cluster's client. */
  readonly userAgent: string;
  /** Informer tuning (namespace, resync, watchdog...). */
  readonly informers?: Omit<SharedInformerFactoryOptions, 'client' | 'clock' | 'logger'>;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class Cluster implements Runnable {
  readonly name: string;
  readonly client: KubeClient;
  readonly informers: SharedInformerFactory;

  constructor(options: ClusterOptions) {
    this.name = `cluster-${options.name}`;
    this.client = new KubeClient(options.kubeConfig, { userAgent: options.userAgent });
    this.informers = new SharedInformerFactory({
      ...options.informers,
      client: this.client,
      clock: options.clock,
      logger: options.logger.child({ cluster: options.name }),
    });
  }

  /** Runs the cluster's informers until `signal` aborts. */
  start(signal: AbortSignal): Promise<void> {
    return this.informers.start(signal);
  }
}
