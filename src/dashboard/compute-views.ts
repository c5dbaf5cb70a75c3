// From what was observed to one view's JSON for a client's page parameters: the step the loopback server
// (live-data.ts, from its informers) and the console plugin (console-plugin/, from the console's watches as the
// logged-in user) share, so both show the same thing for the same objects. Pure, and free of Node modules: the
// plugin's bundle runs it in the browser.
import type { NodePool } from '../nodepool/api/types.js';
import { CLUSTER_CONFIG_NAME } from '../podplacement/constants.js';
import type { UpdateStatusReport } from '../updatestatus/assess.js';
import { buildNodePoolView } from './nodepool-view.js';
import { type PageRequest, pageRequestFrom } from './paging.js';
import { type PlacementNode, type PlacementPod, buildPlacementView } from './placement-view.js';
import { buildUpdateView } from './update-view.js';
import type {
  CompletionSample,
  NodePoolView,
  PlacementView,
  Unavailable,
  UpdateView,
  ViewResponse,
} from './view-types.js';

/** The Update view of an assessment (or the reason there is none), with the node page the query asks for. */
export function updateViewFor(
  report: UpdateStatusReport | Unavailable,
  history: readonly CompletionSample[],
  query: URLSearchParams,
): ViewResponse<UpdateView> {
  if ('available' in report) return report;
  const nodes = new Map<string, PageRequest>();
  const pool = query.get('pool');
  if (pool !== null) nodes.set(pool, pageRequestFrom(query, 'nodes'));
  return buildUpdateView(report, history, { nodes, insights: pageRequestFrom(query, 'insights') });
}

export interface PlacementObjects {
  readonly pods: readonly PlacementPod[];
  readonly nodes: readonly PlacementNode[];
  /** ClusterPodPlacementConfigs (only the one named `cluster` counts). */
  readonly placementConfigs: readonly { readonly metadata?: { readonly name?: string } }[];
}

export function placementViewFor(
  objects: PlacementObjects,
  nowMs: number,
  query: URLSearchParams,
): PlacementView {
  return buildPlacementView(
    {
      pods: objects.pods,
      nodes: objects.nodes,
      operatorConfigured: objects.placementConfigs.some((c) => c.metadata?.name === CLUSTER_CONFIG_NAME),
    },
    nowMs,
    {
      gated: pageRequestFrom(query, 'gated'),
      byRegistry: pageRequestFrom(query, 'registries'),
      byNamespace: pageRequestFrom(query, 'namespaces'),
    },
  );
}

export const NO_NODEPOOLS: Unavailable = {
  available: false,
  missing:
    'No NodePools: this cluster does not serve hypershift.openshift.io/v1beta1 NodePools (not a HyperShift management cluster) or has none.',
};

export function nodePoolViewFor(
  nodePools: readonly NodePool[],
  nowMs: number,
  query: URLSearchParams,
): ViewResponse<NodePoolView> {
  if (nodePools.length === 0) return NO_NODEPOOLS;
  return buildNodePoolView(nodePools, nowMs, pageRequestFrom(query, 'nodepools'));
}
