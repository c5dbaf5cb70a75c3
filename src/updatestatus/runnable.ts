// The update-status feature on an operator's Manager, the way the Manager runs every controller: the UpdateStatus
// CRD (and, on development clusters, stand-in CRDs for the OpenShift inputs) is a start-up step, so the informers
// list served resources from their first attempt; the informers come from the Manager's factory, so their caches
// start on every replica, /readyz waits for them (a standby is ready once they synced) and so does leader
// election; the controller runs on the leader, with the Manager's metrics, clock and logger.
import type { KubeConnection, Manager } from '../runtime/index.js';
import { createLiveAlertsReader } from './alertsource.js';
import { installUpdateStatusCrd } from './api/install.js';
import {
  type UpdateStatusController,
  type UpdateStatusControllerTuning,
  createUpdateStatusController,
} from './controller.js';
import { installOpenShiftDevCrds } from './api/dev-crds.js';

/** Options for {@link addUpdateStatusController}: the client, informers, metrics and clock are the Manager's. */
export interface UpdateStatusOnManagerOptions extends Omit<
  UpdateStatusControllerTuning,
  'registry' | 'queueMetrics' | 'clock'
> {
  /**
   * The controller's own credentials, to read alerts (the thanos-querier Route, or `prometheusUrl`) unless
   * `alerts` is given. Neither: health leaves alerts out.
   */
  readonly kubeConfig?: KubeConnection;
  /** With `kubeConfig`: a Prometheus-compatible API to read alerts from instead of the Route. */
  readonly prometheusUrl?: string;
  /** Also install minimal ClusterVersion/ClusterOperator/MachineConfigPool/MachineConfig CRDs. Default: false. */
  readonly installDevCrds?: boolean;
}

/** Registers the CRD install, the informers and the controller with `manager` (before its start()). */
export function addUpdateStatusController(
  manager: Manager,
  options: UpdateStatusOnManagerOptions = {},
): UpdateStatusController {
  const { client } = manager;
  manager.addStartupStep({
    name: 'updatestatus-crds',
    run: async (signal) => {
      await installUpdateStatusCrd(client, { signal });
      if (options.installDevCrds) await installOpenShiftDevCrds(client, { signal });
    },
  });
  // Alerts read with the controller's own credentials; the reader connects on its first read, on the leader.
  const ownReader =
    options.alerts === undefined && options.kubeConfig
      ? createLiveAlertsReader(options.kubeConfig, client, {
          prometheusUrl: options.prometheusUrl,
          userAgent: 'tessera-updatestatus',
        })
      : undefined;
  const built = createUpdateStatusController({
    logger: manager.logger,
    ...options,
    alerts: options.alerts ?? ownReader,
    client,
    informers: manager.informers,
    registry: manager.registry,
    queueMetrics: manager.queueMetrics,
    clock: manager.clock,
  });
  manager.add({
    name: 'updatestatus',
    needsLeaderElection: true,
    async start(signal: AbortSignal): Promise<void> {
      try {
        await built.controller.start(signal);
      } finally {
        await ownReader?.close();
      }
    },
  });
  return built;
}
