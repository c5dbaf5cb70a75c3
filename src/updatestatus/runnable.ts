// The update-status feature as one Runnable for the operator's manager: installs the UpdateStatus CRD (and, on
// development clusters, stand-in CRDs for the OpenShift inputs), then builds and runs the controller until the
// signal aborts. Building after installing means the informers list served resources from their first attempt.
// The caller owns and starts the shared informer factory passed in the options.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Runnable } from '../runtime/index.js';
import { createLiveAlertsReader } from './alertsource.js';
import { installUpdateStatusCrd } from './api/install.js';
import {
  type UpdateStatusControllerOptions,
  type UpdateStatusControllerStats,
  createUpdateStatusController,
} from './controller.js';
import { installOpenShiftDevCrds } from './api/dev-crds.js';

/** Options for {@link updateStatusRunnable}. */
export interface UpdateStatusRunnableOptions extends UpdateStatusControllerOptions {
  /**
   * The controller's own credentials, to read alerts (the thanos-querier Route, or `prometheusUrl`) unless
   * `alerts` is given. Neither: health leaves alerts out.
   */
  readonly kubeConfig?: KubeConfig;
  /** With `kubeConfig`: a Prometheus-compatible API to read alerts from instead of the Route. */
  readonly prometheusUrl?: string;
  /** Also install minimal ClusterVersion/ClusterOperator/MachineConfigPool/MachineConfig CRDs. Default: false. */
  readonly installDevCrds?: boolean;
}

export interface UpdateStatusRunnable extends Runnable {
  /** Counters of the running controller; undefined until start() has built it. */
  readonly stats: UpdateStatusControllerStats | undefined;
}

export function updateStatusRunnable(options: UpdateStatusRunnableOptions): UpdateStatusRunnable {
  let stats: UpdateStatusControllerStats | undefined;
  return {
    name: 'updatestatus',
    needsLeaderElection: true,
    get stats() {
      return stats;
    },
    async start(signal: AbortSignal): Promise<void> {
      await installUpdateStatusCrd(options.client);
      if (options.installDevCrds) await installOpenShiftDevCrds(options.client);
      if (signal.aborted) return;
      // Alerts read with the controller's own credentials; closed with the controller.
      const ownReader =
        options.alerts === undefined && options.kubeConfig
          ? createLiveAlertsReader(options.kubeConfig, options.client, {
              prometheusUrl: options.prometheusUrl,
              userAgent: 'tessera-updatestatus',
            })
          : undefined;
      const built = createUpdateStatusController({ ...options, alerts: options.alerts ?? ownReader });
      stats = built.stats;
      try {
        await built.controller.start(signal);
      } finally {
        await ownReader?.close();
      }
    },
  };
}
