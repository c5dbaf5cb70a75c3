// The console plugin's data: the objects the views read, watched through the console's SDK, so every request is
// the logged-in user's through the console's proxy (the user sees what their RBAC lets them list, no more), then
// the SAME pure builders the loopback server runs (compute-views.ts) turn them into each view's JSON. The console
// shares one watch per resource among all plugins and pages that ask for it; nothing here polls.
import { useCallback, useMemo, useRef, useState } from 'react';
import {
  consoleFetchJSON,
  useK8sWatchResources,
  type K8sResourceCommon,
  type WatchK8sResource,
} from '@openshift-console/dynamic-plugin-sdk';
import { nodePoolViewFor, placementViewFor, updateViewFor } from '../../compute-views.js';
import { explainPod, type PlacementPod } from '../../placement-view.js';
import { appendSample, assessForView, completionSample, type UpdateInputs } from '../../update-view.js';
import type { CompletionSample, NodePoolView, PlacementView, UpdateView } from '../../view-types.js';
import type { NodePool } from '../../../nodepool/api/types.js';
import { NodePools } from '../../../nodepool/resources.js';
import type { ObservedPod, PodEvent } from '../../../podplacement/explain.js';
import { ClusterPodPlacementConfigs } from '../../../podplacement/resources.js';
import {
  ClusterOperators,
  ClusterVersions,
  Deployments,
  MachineConfigNodes,
  MachineConfigPools,
  MachineConfigs,
  MCO_DEPLOYMENT_NAME,
  MCO_NAMESPACE,
  mcoImageOf,
} from '../../../updatestatus/resources.js';

import { query } from '../data.js';
import type { ExplanationState, Loaded, PageParams } from '../views/DashboardTabs.js';

/** Events listed for one explanation, as the loopback server lists them (live-data.ts MAX_EXPLAIN_EVENTS). */
const MAX_EXPLAIN_EVENTS = 200;

interface Described {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** A list watch of every object of a kind; `optional`: a cluster that does not serve it gives an empty list. */
const listOf = (type: Described, extra: Partial<WatchK8sResource> = {}): WatchK8sResource => ({
  groupVersionKind: {
    group: type.group === '' ? undefined : type.group,
    version: type.version,
    kind: type.kind,
  },
  isList: true,
  ...extra,
});

const WATCHES = {
  clusterVersions: listOf(ClusterVersions, { optional: true }),
  clusterOperators: listOf(ClusterOperators, { optional: true }),
  pools: listOf(MachineConfigPools, { optional: true }),
  machineConfigs: listOf(MachineConfigs, { optional: true }),
  machineConfigNodes: listOf(MachineConfigNodes, { optional: true }),
  mcoDeployments: listOf(Deployments, {
    optional: true,
    namespace: MCO_NAMESPACE,
    fieldSelector: `metadata.name=${MCO_DEPLOYMENT_NAME}`,
  }),
  nodes: listOf({ group: '', version: 'v1', kind: 'Node' }),
  pods: listOf({ group: '', version: 'v1', kind: 'Pod' }),
  placementConfigs: listOf(ClusterPodPlacementConfigs, { optional: true }),
  nodePools: listOf(NodePools, { optional: true }),
} satisfies Record<string, WatchK8sResource>;

type Watched = { [K in keyof typeof WATCHES]: K8sResourceCommon[] };

/** The user-facing reason a watch failed (a 403 says which list the user may not read). */
function reasonOf(error: unknown): string | undefined {
  if (error === undefined || error === null) return undefined;
  if (error instanceof Error) return error.message;
  return String(error);
}

function searchOf(params: PageParams): URLSearchParams {
  return new URLSearchParams(query(params).slice(1));
}

export interface ConsoleViews {
  readonly update: Loaded<UpdateView>;
  readonly placement: Loaded<PlacementView>;
  readonly nodePools: Loaded<NodePoolView>;
  readonly explain: (namespace: string, name: string) => void;
  readonly explanation: ExplanationState | undefined;
  readonly closeExplanation: () => void;
}

/** The three views, recomputed when a watched list or a view's page parameters change. */
export function useConsoleViews(
  updateParams: PageParams,
  placementParams: PageParams,
  nodePoolParams: PageParams,
): ConsoleViews {
  const watched = useK8sWatchResources<Watched>(WATCHES);
  const history = useRef<CompletionSample[]>([]);
  const [explanation, setExplanation] = useState<ExplanationState | undefined>(undefined);

  const loaded = (...keys: (keyof Watched)[]): boolean => keys.every((k) => watched[k].loaded);
  const errorOf = (...keys: (keyof Watched)[]): string | undefined =>
    keys.map((k) => reasonOf(watched[k].loadError)).find((e) => e !== undefined);
  const list = <T>(key: keyof Watched): T[] => (watched[key].data ?? []) as unknown as T[];

  const updateKeys = [
    'clusterVersions',
    'clusterOperators',
    'pools',
    'machineConfigs',
    'machineConfigNodes',
    'mcoDeployments',
    'nodes',
  ] as const;
  const update = useMemo((): Loaded<UpdateView> => {
    const error = errorOf(...updateKeys);
    if (!loaded(...updateKeys)) return { data: undefined, error };
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    const inputs = {
      clusterVersion: list<UpdateInputs['machineConfigPools'][number]>('clusterVersions').find(
        (c) => c.metadata?.name === 'version',
      ),
      clusterOperators: list('clusterOperators'),
      machineConfigPools: list('pools'),
      machineConfigs: list('machineConfigs'),
      nodes: list('nodes'),
      machineConfigNodes: list('machineConfigNodes'),
      alerts: undefined,
      mcoImagePullSpec: mcoImageOf(list<Parameters<typeof mcoImageOf>[0]>('mcoDeployments')[0]),
    } as UpdateInputs;
    const report = assessForView(inputs, nowNs);
    // The plot's history is this page's: one point per change seen since the page opened.
    if (!('available' in report))
      history.current = appendSample(history.current, completionSample(report, nowNs));
    return { data: updateViewFor(report, history.current, searchOf(updateParams)), error };
  }, [...updateKeys.map((k) => watched[k].data), ...updateKeys.map((k) => watched[k].loaded), updateParams]);

  const placement = useMemo((): Loaded<PlacementView> => {
    const error = errorOf('pods', 'nodes', 'placementConfigs');
    if (!loaded('pods', 'nodes', 'placementConfigs')) return { data: undefined, error };
    return {
      data: placementViewFor(
        {
          pods: list<PlacementPod>('pods'),
          nodes: list('nodes'),
          placementConfigs: list('placementConfigs'),
        },
        Date.now(),
        searchOf(placementParams),
      ),
      error,
    };
  }, [
    watched.pods.data,
    watched.nodes.data,
    watched.placementConfigs.data,
    watched.pods.loaded,
    placementParams,
  ]);

  const nodePools = useMemo((): Loaded<NodePoolView> => {
    const error = errorOf('nodePools');
    if (!loaded('nodePools')) return { data: undefined, error };
    return {
      data: nodePoolViewFor(list<NodePool>('nodePools'), Date.now(), searchOf(nodePoolParams)),
      error,
    };
  }, [watched.nodePools.data, watched.nodePools.loaded, nodePoolParams]);

  const pods = watched.pods.data;
  const explain = useCallback(
    (namespace: string, name: string) => {
      const id = `${namespace}/${name}`;
      const pod = (pods ?? []).find(
        (p) => p.metadata?.namespace === namespace && p.metadata?.name === name,
      ) as ObservedPod | undefined;
      if (!pod) {
        setExplanation({ pod: id, error: `Pod ${id} is no longer listed.` });
        return;
      }
      setExplanation({ pod: id });
      const uid = (pod.metadata as { uid?: string } | undefined)?.uid ?? '';
      const search = new URLSearchParams({
        fieldSelector: `involvedObject.uid=${uid}`,
        limit: String(MAX_EXPLAIN_EVENTS),
      });
      // The console's proxy to the API server, as the logged-in user.
      consoleFetchJSON(`/api/kubernetes/api/v1/namespaces/${encodeURIComponent(namespace)}/events?${search}`)
        .then((list: { items?: PodEvent[] }) =>
          setExplanation({ pod: id, result: explainPod(pod, list.items ?? []) }),
        )
        .catch((err: unknown) => setExplanation({ pod: id, error: reasonOf(err) ?? 'unknown error' }));
    },
    [pods],
  );

  return {
    update,
    placement,
    nodePools,
    explain,
    explanation,
    closeExplanation: () => setExplanation(undefined),
  };
}
