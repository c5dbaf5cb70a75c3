// The NodePool area on a Manager, the way the Manager runs every area (controller-runtime's SetupWithManager): the
// NodePool controller's caches come from the Manager's informers (they start on every replica, /readyz and leader
// election wait for them), the hosted cluster is the Manager's `cluster(hostedKubeConfig)` (its own client and
// informers, gating neither), and every controller reports its reconcile and work-queue metrics into the
// Manager's registry. The controllers and the update insights run on the leader.
import type { KubeConnection, Manager, Runnable } from '../runtime/index.js';
import { createNodePoolController, type NodePoolController } from './management/nodepool-controller.js';
import { addNodePoolUpdateInsights } from './management/update-insights.js';
import { createStatusWriter } from './tuning/status-writer.js';

export interface NodePoolAreaOptions {
  /** See NodePoolControllerOptions.staleAfterMs. Default: the controller's (0). */
  readonly staleAfterMs?: number;
  /** The Node Tuning side's status writer for one hosted cluster. Default: none. */
  readonly hosted?: {
    readonly kubeConfig: KubeConnection;
    /** The hosted control plane namespace the writer serves. */
    readonly hcpNamespace: string;
    /** See StatusWriterOptions.heartbeatIntervalMs. Default: the writer's (5 minutes). */
    readonly heartbeatIntervalMs?: number;
  };
  /** NodePool updates and PerformanceProfile state as update insights, where served. Default: true. */
  readonly updateInsights?: boolean;
}

/** What {@link addNodePoolControllers} added to the Manager. */
export interface NodePoolRunnables {
  readonly controller: NodePoolController;
  readonly statusWriter?: Runnable;
  readonly updateInsights?: Runnable;
}

/** Adds the NodePool controller, the status writer (given a hosted cluster) and the update insights to `manager`. */
export function addNodePoolControllers(
  manager: Manager,
  options: NodePoolAreaOptions = {},
): NodePoolRunnables {
  const shared = {
    management: manager.client,
    informers: manager.informers,
    registry: manager.registry,
    queueMetrics: manager.queueMetrics,
    clock: manager.clock,
    logger: manager.logger,
  };
  const controller = createNodePoolController({
    ...shared,
    staleAfterMs: options.staleAfterMs,
    events: manager.eventRecorder('tessera-nodepool'),
  });
  manager.add(controller);
  let statusWriter: Runnable | undefined;
  if (options.hosted) {
    const hosted = manager.cluster(options.hosted.kubeConfig, { name: 'hosted' });
    statusWriter = createStatusWriter({
      ...shared,
      hosted: hosted.client,
      hostedInformers: hosted.informers,
      hcpNamespace: options.hosted.hcpNamespace,
      heartbeatIntervalMs: options.hosted.heartbeatIntervalMs,
    });
    manager.add(statusWriter);
  }
  const updateInsights = options.updateInsights === false ? undefined : addNodePoolUpdateInsights(manager);
  return { controller, statusWriter, updateInsights };
}
