// The exec format error monitor (leader only), while the ClusterPodPlacementConfig enables it: a cache of pods
// projected to their failed container instances (../exec-format-error.ts), and a controller that looks at each
// failed instance once: the kubelet's termination message, or the last lines of the instance's log through the API
// server. A finding is a Warning Event `ExecFormatError` on the pod, the label
// `multiarch.openshift.io/exec-format-error=true` on it, and one increment of `mto_enoexecevents_total`: once per
// container instance (a restart is a new instance), never per resync.
//
// Budgets: the pod cache starts only once the plugin is first enabled and lists pods whose phase is not Succeeded.
// It keeps of a pod its name, namespace, uid and resourceVersion (measured: about 0.2 KiB a pod, 10,000 pods about
// 2 MiB), and of a pod with failed instances also those, without their text, its placement labels and its
// containers' names and images (about 1.7 KiB a pod of two failed containers). Log reads: at most
// MAX_LOG_TAIL_BYTES each (the API server's limitBytes and tailLines, and this client stops reading there),
// LOG_READS_PER_SECOND overall with a burst of LOG_READ_BURST, WORKERS at once, only for an instance that ended
// within a second of starting. The instances already examined are remembered per pod, only those its status still
// shows (at most one per container).
import { Counter, type Registry } from 'prom-client';
import {
  BucketRateLimiter,
  Nodes,
  Pods,
  ResourceClient,
  isNotFound,
  objectKey,
  type Controller,
  type KubeObject,
  type Manager,
  type ReconcileResult,
  type SharedInformer,
} from '../../runtime/index.js';
import { ARCH_LABEL, EVENT_RECORDER_COMPONENT } from '../constants.js';
import {
  EXEC_FORMAT_ERROR_EVENT_REASON,
  EXEC_FORMAT_ERROR_LABEL,
  EXEC_FORMAT_ERRORS_METRIC,
  MAX_LOG_TAIL_BYTES,
  MAX_LOG_TAIL_LINES,
  examinationPass,
  execFormatErrorFinding,
  projectExecWatchedPod,
  saysExecFormatError,
  type ContainerToExamine,
  type ExecWatchedPod,
} from '../exec-format-error.js';
import { execFormatErrorMonitorEnabled } from '../unsupported-plugins.js';
import type { ConfigCaches } from './config-caches.js';

export const LOG_READS_PER_SECOND = 5;
export const LOG_READ_BURST = 10;
const WORKERS = 2;
const LOG_READ_TIMEOUT_MS = 10_000;

type WatchedPod = ExecWatchedPod & KubeObject;

/** MTO's counter, registered by every controller process (0 until a finding), so the alert's input always exists. */
export class ExecFormatErrorMetrics {
  readonly detected: Counter;
  constructor(registry: Registry) {
    this.detected = new Counter({
      name: EXEC_FORMAT_ERRORS_METRIC,
      help: 'The counter for exec format errors detected and reported',
      registers: [registry],
    });
  }
}

export interface ExecFormatErrorMonitorOptions {
  manager: Manager;
  configs: ConfigCaches;
  metrics: ExecFormatErrorMetrics;
}

/** Adds the monitor to the Manager; its pod cache starts when the plugin is first enabled. */
export function addExecFormatErrorMonitor(o: ExecFormatErrorMonitorOptions): Controller {
  const monitor = new ExecFormatErrorMonitor(o);
  const controller = o.manager.newController({
    name: 'podplacement-exec-format-error',
    reconciler: monitor,
    workers: WORKERS,
  });
  const startIfEnabled = (): void => {
    if (execFormatErrorMonitorEnabled(o.configs.clusterConfig())) monitor.startWatching(controller);
  };
  o.configs.clusterConfigs.addEventHandler({ onAdd: startIfEnabled, onUpdate: startIfEnabled });
  return controller;
}

class ExecFormatErrorMonitor {
  private pods: SharedInformer<WatchedPod> | undefined;
  /** Per pod key: the instances examined (reported or not), pruned to those its status still shows. */
  private readonly examined = new Map<string, Set<string>>();
  private readonly logReads: BucketRateLimiter<string>;
  private readonly startedAt: number;
  private readonly podClient: ResourceClient<WatchedPod>;
  private readonly nodeClient: ResourceClient<KubeObject>;
  private readonly events;
  private readonly logger;

  constructor(private readonly o: ExecFormatErrorMonitorOptions) {
    const { manager } = o;
    this.logReads = new BucketRateLimiter(LOG_READS_PER_SECOND, LOG_READ_BURST, manager.clock);
    this.startedAt = manager.clock.now();
    this.podClient = new ResourceClient<WatchedPod>(manager.client, Pods);
    this.nodeClient = new ResourceClient<KubeObject>(manager.client, Nodes);
    this.events = manager.eventRecorder(EVENT_RECORDER_COMPONENT, { api: 'v1' });
    this.logger = manager.logger.child({ controller: 'podplacement-exec-format-error' });
  }

  /** Starts the pod cache and `controller`'s watch on it, once. */
  startWatching(controller: Controller): void {
    if (this.pods) return;
    this.pods = this.o.manager.informers.informerFor<WatchedPod>({
      type: Pods,
      fieldSelector: 'status.phase!=Succeeded',
      transform: (pod) => projectExecWatchedPod(pod),
    });
    this.pods.addEventHandler({ onDelete: (pod) => this.examined.delete(objectKey(pod)) });
    // Only a pod with failed instances keeps a status (see projectExecWatchedPod), and only a change of it matters.
    const failures = (p: WatchedPod): string => JSON.stringify(p.status ?? null);
    controller.watch(this.pods, undefined, {
      add: (p) => p.status !== undefined,
      update: (a, b) => failures(a) !== failures(b),
      delete: () => false,
    });
    this.logger.info({}, 'exec format error monitor: watching pods');
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    if (!execFormatErrorMonitorEnabled(this.o.configs.clusterConfig())) return;
    const pod = this.pods?.getIndexer().get(key);
    if (!pod) {
      this.examined.delete(key);
      return;
    }
    const { examine, remember } = examinationPass(pod, this.examined.get(key) ?? new Set());
    // Remembered before looking: a finding is reported once even if this pass is cut short.
    if (remember.size > 0) this.examined.set(key, remember);
    else this.examined.delete(key);
    for (const c of examine) {
      if (signal.aborted) return;
      if (this.reportedByEarlierProcess(pod, c)) continue;
      const found = c.evidence === 'status' || (await this.logSaysExecFormatError(pod, c, signal));
      if (found) await this.report(pod, c, signal);
    }
  }

  /**
   * A pod a previous operator process labelled, whose instance ended before this process started: reported then.
   * (An instance that ended while no process ran is taken as reported too: the pod already carries the label.)
   */
  private reportedByEarlierProcess(pod: WatchedPod, c: ContainerToExamine): boolean {
    if (pod.metadata?.labels?.[EXEC_FORMAT_ERROR_LABEL] !== 'true') return false;
    const statuses = c.init ? pod.status?.initContainerStatuses : pod.status?.containerStatuses;
    const s = statuses?.find((x) => x.name === c.container);
    const finishedAt = Date.parse((c.previous ? s?.lastState : s?.state)?.terminated?.finishedAt ?? '');
    return Number.isFinite(finishedAt) && finishedAt < this.startedAt;
  }

  /** The instance's last log lines, through the API server (budgeted); false when they are gone or unreadable. */
  private async logSaysExecFormatError(
    pod: WatchedPod,
    c: ContainerToExamine,
    signal: AbortSignal,
  ): Promise<boolean> {
    const wait = this.logReads.when('log');
    if (wait > 0) await this.o.manager.clock.sleep(wait, signal);
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    try {
      const text = await this.o.manager.client.requestText(
        {
          method: 'GET',
          path: `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}/log`,
          query: {
            container: c.container,
            previous: c.previous ? 'true' : 'false',
            tailLines: String(MAX_LOG_TAIL_LINES),
            limitBytes: String(MAX_LOG_TAIL_BYTES),
          },
          signal,
          timeoutMs: LOG_READ_TIMEOUT_MS,
        },
        MAX_LOG_TAIL_BYTES,
      );
      return saysExecFormatError(text);
    } catch (err) {
      if (signal.aborted) throw err;
      // Gone (the instance's log was removed, the pod deleted) or the kubelet cannot serve it: nothing to report.
      this.logger.debug({ pod: `${ns}/${name}`, container: c.container, err }, 'container log not readable');
      return false;
    }
  }

  private async report(pod: WatchedPod, c: ContainerToExamine, signal: AbortSignal): Promise<void> {
    const nodeArchitecture = await this.nodeArchitecture(pod.spec?.nodeName, signal);
    const finding = execFormatErrorFinding({
      pod,
      container: c.container,
      init: c.init,
      nodeArchitecture,
      evidence: c.evidence,
    });
    const meta = pod.metadata ?? {};
    this.events.event(
      { apiVersion: 'v1', kind: 'Pod', namespace: meta.namespace, name: meta.name, uid: meta.uid },
      'Warning',
      EXEC_FORMAT_ERROR_EVENT_REASON,
      finding.message,
    );
    this.o.metrics.detected.inc();
    this.logger.info(
      { pod: `${meta.namespace ?? ''}/${meta.name ?? ''}`, container: c.container, nodeArchitecture },
      'exec format error detected',
    );
    if (meta.labels?.[EXEC_FORMAT_ERROR_LABEL] === 'true') return;
    // Best effort: the Event and the metric are the report; a failed label is logged, not retried (that would
    // report the instance again).
    await this.podClient
      .mergePatch(
        { namespace: meta.namespace ?? '', name: meta.name ?? '' },
        { metadata: { labels: { [EXEC_FORMAT_ERROR_LABEL]: 'true' } } },
        { signal, discardAnswer: true },
      )
      .catch((err: unknown) => {
        if (!isNotFound(err)) this.logger.info({ err }, 'could not label the pod with its exec format error');
      });
  }

  private async nodeArchitecture(
    nodeName: string | undefined,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    if (!nodeName) return undefined;
    try {
      const node = await this.nodeClient.get({ name: nodeName }, signal);
      return node.metadata?.labels?.[ARCH_LABEL];
    } catch (err) {
      // The finding is reported without it (the message says "the node's architecture").
      if (!isNotFound(err))
        this.logger.info({ err, node: nodeName }, "could not read the node's architecture");
      return undefined;
    }
  }
}
