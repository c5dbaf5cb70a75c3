// The dashboard's imperative shell on the cluster side: Tessera's own informers (one SharedInformerFactory, the
// kind the areas' controllers use) list and watch what the views read, every event marks the views it feeds as
// changed, and changes are announced at most every `coalesceMs` (a rollout of thousands of nodes is one notice,
// not thousands). Views are computed on request from the caches with the pure builders. Read-only: the only
// request it makes besides list/watch is the list of one pod's events for an explanation.
// Resources a cluster may not serve (OpenShift's, HyperShift's, the pod placement CRD) are optional informers:
// absent, they are synced and empty, and the view says what is missing.
import {
  type Clock,
  CoreEvents,
  type KubeClient,
  type KubeObject,
  type Logger,
  Pods,
  realClock,
  ResourceClient,
  type SharedInformer,
  type Timer,
  SharedInformerFactory,
  shareStrings,
  silentLogger,
} from '../runtime/index.js';
import type { NodePool } from '../nodepool/api/types.js';
import { NodePools } from '../nodepool/resources.js';
import type { ObservedPod, PodEvent } from '../podplacement/explain.js';
import { ClusterPodPlacementConfigs } from '../podplacement/resources.js';
import { type ClusterInputInformers, clusterInputInformers } from '../updatestatus/cluster-informers.js';
import { mcoImageOf } from '../updatestatus/snapshot.js';
import type { UpdateStatusReport } from '../updatestatus/assess.js';
import { nodePoolViewFor, placementViewFor, updateViewFor } from './compute-views.js';
import { explainPod, projectPodForDashboard, type PlacementPod } from './placement-view.js';
import { appendSample, assessForView, completionSample } from './update-view.js';
import type {
  CompletionSample,
  PodExplanation,
  Unavailable,
  ViewName,
  ChangeNotice,
  ViewResponse,
} from './view-types.js';

/** How long a computed view is reused for the same page parameters while nothing changed (ms). */
const VIEW_MEMO_MS = 1_000;

/** Events listed for one explanation (the newest are what matter; the API server gives creation order). */
export const MAX_EXPLAIN_EVENTS = 200;

/** What the HTTP server needs from the data side (tests may pass their own). */
export interface DashboardData {
  /** The view's JSON for the query's page parameters. */
  view(name: ViewName, query: URLSearchParams): ViewResponse<unknown>;
  /** One pod's explanation; undefined when the pod is not in the cache. */
  explain(namespace: string, name: string, signal: AbortSignal): Promise<PodExplanation | undefined>;
  /** Calls `listener` with each change notice; returns the unsubscribe function. */
  subscribe(listener: (notice: ChangeNotice) => void): () => void;
  /** The notice a new client starts from (every view, the current revision). */
  current(): ChangeNotice;
}

export interface LiveDataOptions {
  readonly client: KubeClient;
  /** Announce changes at most this often (ms). Default: 100. */
  readonly coalesceMs?: number;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

type Informer<T> = SharedInformer<T & KubeObject>;

export class LiveDashboardData implements DashboardData {
  readonly factory: SharedInformerFactory;
  private readonly clock: Clock;
  private readonly coalesceMs: number;
  private readonly listeners = new Set<(notice: ChangeNotice) => void>();
  private readonly dirty = new Set<ViewName>();
  /** Counts every change; what clients are told. */
  private revision = 0;
  /** The revision of each view's last change: a view is recomputed only when its own inputs changed. */
  private readonly viewRevisions = new Map<ViewName, number>();
  private timer: Timer | undefined;
  private history: CompletionSample[] = [];
  /** The assessment of the current revision (computed once however many clients ask). */
  private assessed: { revision: number; report: UpdateStatusReport | Unavailable } | undefined;
  private readonly events: ResourceClient<KubeObject>;
  private readonly memo = new Map<
    ViewName,
    { revision: number; key: string; atMs: number; value: ViewResponse<unknown> }
  >();

  /** What the update status controller reads (OpenShift's resources optional: this may not be OpenShift). */
  private readonly inputs: ClusterInputInformers;
  private readonly pods: Informer<PlacementPod>;
  private readonly placementConfigs: Informer<KubeObject>;
  private readonly nodePools: Informer<NodePool>;

  constructor(options: LiveDataOptions) {
    this.clock = options.clock ?? realClock;
    this.coalesceMs = options.coalesceMs ?? 100;
    const f = new SharedInformerFactory({
      client: options.client,
      clock: options.clock,
      logger: options.logger ?? silentLogger,
    });
    this.factory = f;
    this.events = new ResourceClient<KubeObject>(options.client, CoreEvents);
    this.inputs = clusterInputInformers(f, { openShiftOptional: true });
    // Every pod of the cluster, tenants' included: only what the view and explain read is kept (see
    // projectPodForDashboard), so the cache's size does not follow the size of the pods tenants write.
    this.pods = f.informerFor({
      type: Pods,
      transform: (pod: ObservedPod & KubeObject) => shareStrings(projectPodForDashboard(pod)),
    });
    this.placementConfigs = f.informerFor({ type: ClusterPodPlacementConfigs, optional: true });
    this.nodePools = f.informerFor({ type: NodePools, optional: true });

    const feeds: [SharedInformer<KubeObject>, readonly ViewName[]][] = [
      [this.inputs.clusterVersions, ['update']],
      [this.inputs.clusterOperators, ['update']],
      [this.inputs.pools, ['update']],
      [this.inputs.machineConfigs, ['update']],
      [this.inputs.machineConfigNodes, ['update']],
      [this.inputs.deployments, ['update']],
      [this.inputs.nodes, ['update', 'placement']],
      [this.pods, ['placement']],
      [this.placementConfigs, ['placement']],
      [this.nodePools, ['nodepools']],
    ];
    for (const [informer, views] of feeds) {
      const changed = (): void => this.changed(views);
      informer.addEventHandler({ onAdd: changed, onUpdate: changed, onDelete: changed });
    }
  }

  /** Runs the informers until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.timer?.cancel(), { once: true });
    await this.factory.start(signal);
  }

  /** Resolves once every informer has listed (true), or false if `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    return this.factory.waitForCacheSync(signal);
  }

  subscribe(listener: (notice: ChangeNotice) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  current(): ChangeNotice {
    return { views: ['update', 'placement', 'nodepools'], revision: this.revision };
  }

  view(name: ViewName, query: URLSearchParams): ViewResponse<unknown> {
    const nowMs = this.clock.now();
    // Pages opened together (or reloaded) within a second of each other on an unchanged cluster share one
    // computation. One entry per view, each a page of rows: bounded in size as well as in number.
    const key = query.toString();
    const revision = this.viewRevision(name);
    const memo = this.memo.get(name);
    if (memo && memo.revision === revision && memo.key === key && nowMs - memo.atMs < VIEW_MEMO_MS)
      return memo.value;
    const value = this.computeView(name, query, nowMs);
    this.memo.set(name, { revision, key, atMs: nowMs, value });
    return value;
  }

  private computeView(name: ViewName, query: URLSearchParams, nowMs: number): ViewResponse<unknown> {
    switch (name) {
      case 'update':
        return updateViewFor(this.assessment(nowMs), this.history, query);
      case 'placement':
        return placementViewFor(
          {
            pods: this.pods.getIndexer().list(),
            nodes: this.inputs.nodes.getIndexer().list(),
            placementConfigs: this.placementConfigs.getIndexer().list(),
          },
          nowMs,
          query,
        );
      case 'nodepools':
        return nodePoolViewFor(this.nodePools.getIndexer().list(), nowMs, query);
    }
  }

  async explain(namespace: string, name: string, signal: AbortSignal): Promise<PodExplanation | undefined> {
    const pod = this.pods.getIndexer().get(`${namespace}/${name}`) as ObservedPod | undefined;
    if (!pod) return undefined;
    const uid = (pod.metadata as { uid?: string } | undefined)?.uid ?? '';
    const events = await this.events.list({
      namespace,
      fieldSelector: `involvedObject.uid=${uid}`,
      limit: MAX_EXPLAIN_EVENTS,
      signal,
    });
    return explainPod(pod, events.items as PodEvent[]);
  }

  private assessment(nowMs: number): UpdateStatusReport | Unavailable {
    const revision = this.viewRevision('update');
    if (this.assessed?.revision === revision) return this.assessed.report;
    const now = BigInt(Math.floor(nowMs)) * 1_000_000n;
    const report = assessForView(
      {
        clusterVersion: this.inputs.clusterVersions
          .getIndexer()
          .list()
          .find((c) => c.metadata?.name === 'version'),
        clusterOperators: this.inputs.clusterOperators.getIndexer().list(),
        machineConfigPools: this.inputs.pools.getIndexer().list(),
        machineConfigs: this.inputs.machineConfigs.getIndexer().list(),
        nodes: this.inputs.nodes.getIndexer().list(),
        machineConfigNodes: this.inputs.machineConfigNodes.getIndexer().list(),
        alerts: undefined,
        mcoImagePullSpec: mcoImageOf(this.inputs.deployments.getIndexer().list()[0]),
      },
      now,
    );
    if (!('available' in report)) this.history = appendSample(this.history, completionSample(report, now));
    this.assessed = { revision, report };
    return report;
  }

  private viewRevision(name: ViewName): number {
    return this.viewRevisions.get(name) ?? 0;
  }

  private changed(views: readonly ViewName[]): void {
    this.revision++;
    for (const v of views) {
      this.dirty.add(v);
      this.viewRevisions.set(v, this.revision);
    }
    if (this.timer !== undefined) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      const notice: ChangeNotice = { views: [...this.dirty], revision: this.revision };
      this.dirty.clear();
      // The plot gets a point per change even when no page asks for the Update view at that moment.
      if (notice.views.includes('update')) this.assessment(this.clock.now());
      for (const listener of this.listeners) listener(notice);
    }, this.coalesceMs);
  }
}
