// The JSON the dashboard's server sends and its page shows: plain data, no behaviour, no Node or DOM types, so the
// view components (src/dashboard/page) can take it as props in the standalone page and in a console plugin alike.
// Every string here may be tenant- or cluster-written: the page renders it as text, never as markup.

/** One page of a longer list: `items` are rows `offset`..`offset + items.length - 1` of `total`. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly total: number;
  readonly offset: number;
  readonly limit: number;
}

/** A view whose source is not in the cluster (no controller, no CRD): what is missing, in a sentence. */
export interface Unavailable {
  readonly available: false;
  readonly missing: string;
}

/** One progress bar: the control plane or a MachineConfigPool. */
export interface ProgressRow {
  readonly name: string;
  /** oc's assessment: Progressing, Completed, Stalled, Degraded, Pending, Excluded, ... */
  readonly assessment: string;
  /** 0..100, one decimal; 0 for an empty pool. */
  readonly completion: number;
  readonly updated: number;
  readonly total: number;
  /** oc's estimate text ("<10m", "25m", "N/A ..."), or '' when none applies. */
  readonly estimate: string;
  /** How long it has run, in oc's words ("12m3s"), or ''. */
  readonly duration: string;
}

/** A node's phase as oc's PHASE column names it. */
export type NodePhaseName = 'Draining' | 'Updating' | 'Rebooting' | 'Paused' | 'Pending' | 'Updated';
export const NODE_PHASES: readonly NodePhaseName[] = [
  'Draining',
  'Updating',
  'Rebooting',
  'Paused',
  'Pending',
  'Updated',
];

export interface NodeCell {
  readonly name: string;
  readonly phase: NodePhaseName;
  /** Degraded, Unavailable, Progressing, Excluded, Outdated, Completed. */
  readonly assessment: string;
  readonly version: string;
  readonly estimate: string;
  readonly message: string;
}

/** The nodes of one pool, in oc's order (most troubled first), one page of them. */
export interface NodeGroup {
  readonly pool: string;
  /** How many nodes of the pool are in each phase (every phase listed, zero included). */
  readonly phaseCounts: readonly { readonly phase: NodePhaseName; readonly count: number }[];
  readonly nodes: Page<NodeCell>;
}

/** One health insight in oc's words (`oc adm upgrade status --details=health`). */
export interface InsightRow {
  readonly since: string;
  readonly level: 'Info' | 'Warning' | 'Error' | 'Critical';
  readonly impact: string;
  readonly message: string;
  readonly description: string;
  readonly reference: string;
  /** `kind.group: namespace/name` per resource. */
  readonly resources: readonly string[];
}

/** Completion at one instant, for the completion-over-time plot. */
export interface CompletionSample {
  /** Seconds since the update started. */
  readonly atSeconds: number;
  readonly controlPlane: number;
  /** Completion per pool, in the order of `UpdateView.pools`' names at that time. */
  readonly pools: readonly { readonly name: string; readonly completion: number }[];
}

export interface UpdateView {
  readonly available: true;
  readonly updating: boolean;
  /** "4.16.1 (from 4.16.0)", in oc's words. */
  readonly versions: string;
  /** RFC 3339, or '' when unknown. */
  readonly startedAt: string;
  readonly controlPlane: ProgressRow;
  readonly pools: readonly ProgressRow[];
  readonly nodeGroups: readonly NodeGroup[];
  readonly insights: Page<InsightRow>;
  readonly history: readonly CompletionSample[];
}

/** A pod still held by the pod placement operator's scheduling gate. */
export interface GatedPodRow {
  readonly namespace: string;
  readonly name: string;
  /** Seconds since creation. */
  readonly ageSeconds: number;
  readonly images: readonly string[];
}

/** Where the pods of one architecture run, and which images they run. */
export interface ArchitectureRow {
  readonly architecture: string;
  readonly pods: number;
  /** The most-placed images on this architecture, most first (at most a page of them). */
  readonly images: readonly { readonly image: string; readonly pods: number }[];
}

/** Pods whose image inspection failed, counted under one key (a registry host or a namespace). */
export interface FailureGroupRow {
  readonly key: string;
  readonly pods: number;
  /** One failed pod's error, as the operator wrote it (truncated). */
  readonly example: string;
}

export interface PlacementView {
  readonly available: true;
  /** Set when the operator's configuration is absent: pods are not being gated. */
  readonly note: string;
  readonly gated: {
    readonly count: number;
    readonly oldest: GatedPodRow | undefined;
    readonly pods: Page<GatedPodRow>;
  };
  readonly architectures: readonly ArchitectureRow[];
  readonly failuresByRegistry: Page<FailureGroupRow>;
  readonly failuresByNamespace: Page<FailureGroupRow>;
}

/** One pod's `tessera podplacement explain` (what the operator did to it), on request. */
export interface PodExplanation {
  readonly namespace: string;
  readonly name: string;
  readonly text: string;
}

export interface NodePoolConditionRow {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  /** RFC 3339, as the API server has it. */
  readonly lastTransitionTime: string;
  /** "5m10s" ago. */
  readonly age: string;
}

export interface NodePoolRow {
  readonly namespace: string;
  readonly name: string;
  readonly cluster: string;
  /** `tessera nodepool status`'s one-line verdict. */
  readonly verdict: string;
  /** healthy: applied; degraded: a condition says so; progressing/unknown otherwise; none: no profile. */
  readonly state: 'applied' | 'degraded' | 'progressing' | 'unknown' | 'none';
  readonly conditions: readonly NodePoolConditionRow[];
}

export interface NodePoolView {
  readonly available: true;
  readonly nodePools: Page<NodePoolRow>;
}

export type ViewName = 'update' | 'placement' | 'nodepools';
export const VIEW_NAMES: readonly ViewName[] = ['update', 'placement', 'nodepools'];

/** What GET /api/views/<name> answers. */
export type ViewResponse<V> = V | Unavailable;

/** One SSE message (event `change`): the views whose data changed since the last message. */
export interface ChangeNotice {
  readonly views: readonly ViewName[];
  /** Increases with every change the server saw. */
  readonly revision: number;
}
