// The three views as tabs, over data passed as props: the standalone page (App.tsx, fed by the loopback server's
// change stream) and the console plugin (console-plugin/, fed by the console's watches as the logged-in user)
// render this same component; only where the data comes from differs.
import { useState, type Dispatch, type SetStateAction } from 'react';
import { Tab, TabTitleText, Tabs } from '@patternfly/react-core';
import type {
  NodePoolView as NodePoolViewData,
  PlacementView as PlacementViewData,
  PodExplanation,
  UpdateView as UpdateViewData,
  ViewName,
  ViewResponse,
} from '../../view-types.js';
import { LoadError, Loading, MissingSource, isUnavailable } from './common.js';
import { NodePoolsView } from './NodePoolsView.js';
import { PlacementView } from './PlacementView.js';
import { UpdateView } from './UpdateView.js';

/** Page parameters of one view (`nodesOffset`, `gatedLimit`, ...), as the server's query takes them. */
export type PageParams = Readonly<Record<string, number | string | undefined>>;

/** A view's data as last received, and the last failure (the last good data stays shown beside it). */
export interface Loaded<V> {
  readonly data: ViewResponse<V> | undefined;
  readonly error: string | undefined;
}

/** One pod's explanation, once asked for: pending, answered, or why not. */
export interface ExplanationState {
  readonly pod: string;
  readonly result?: PodExplanation;
  readonly error?: string;
}

export interface DashboardTabsProps {
  readonly update: Loaded<UpdateViewData>;
  readonly placement: Loaded<PlacementViewData>;
  readonly nodePools: Loaded<NodePoolViewData>;
  readonly setUpdateParams: Dispatch<SetStateAction<PageParams>>;
  readonly setPlacementParams: Dispatch<SetStateAction<PageParams>>;
  readonly setNodePoolParams: Dispatch<SetStateAction<PageParams>>;
  readonly explanation: ExplanationState | undefined;
  readonly onExplain: (namespace: string, name: string) => void;
  readonly onCloseExplanation: () => void;
  /**
   * The tab shown, when the caller keeps it (the standalone page: from the URL's fragment, so a view can be linked);
   * otherwise the component keeps it, starting with update.
   */
  readonly tab?: ViewName;
  /** Told of every tab the user selects. */
  readonly onTabChange?: (tab: ViewName) => void;
}

function ViewState<V>({
  label,
  fetched,
  render,
}: {
  label: string;
  fetched: Loaded<V>;
  render: (v: V) => JSX.Element;
}) {
  if (fetched.data === undefined)
    return fetched.error ? <LoadError error={fetched.error} /> : <Loading label={label} />;
  if (isUnavailable(fetched.data)) return <MissingSource view={label} missing={fetched.data.missing} />;
  return (
    <>
      {fetched.error ? <LoadError error={fetched.error} /> : null}
      {render(fetched.data as V)}
    </>
  );
}

export function DashboardTabs(props: DashboardTabsProps) {
  const [ownTab, setOwnTab] = useState<ViewName>('update');
  const tab = props.tab ?? ownTab;
  const { setUpdateParams, setPlacementParams, setNodePoolParams } = props;
  return (
    <Tabs
      activeKey={tab}
      onSelect={(_e, key) => {
        setOwnTab(key as ViewName);
        props.onTabChange?.(key as ViewName);
      }}
      aria-label="Dashboard views"
      mountOnEnter
    >
      <Tab eventKey="update" title={<TabTitleText>Update</TabTitleText>}>
        <ViewState
          label="Update"
          fetched={props.update}
          render={(v) => (
            <UpdateView
              view={v}
              onNodesPage={(pool, offset, limit) =>
                setUpdateParams((p) => ({ ...p, pool, nodesOffset: offset, nodesLimit: limit }))
              }
              onInsightsPage={(offset, limit) =>
                setUpdateParams((p) => ({ ...p, insightsOffset: offset, insightsLimit: limit }))
              }
            />
          )}
        />
      </Tab>
      <Tab eventKey="placement" title={<TabTitleText>Pod placement</TabTitleText>}>
        <ViewState
          label="Pod placement"
          fetched={props.placement}
          render={(v) => (
            <PlacementView
              view={v}
              onPage={(list, offset, limit) =>
                setPlacementParams((p) => ({ ...p, [`${list}Offset`]: offset, [`${list}Limit`]: limit }))
              }
              onExplain={props.onExplain}
              explanation={props.explanation}
              onCloseExplanation={props.onCloseExplanation}
            />
          )}
        />
      </Tab>
      <Tab eventKey="nodepools" title={<TabTitleText>NodePools</TabTitleText>}>
        <ViewState
          label="NodePools"
          fetched={props.nodePools}
          render={(v) => (
            <NodePoolsView
              view={v}
              onPage={(offset, limit) =>
                setNodePoolParams({ nodepoolsOffset: offset, nodepoolsLimit: limit })
              }
            />
          )}
        />
      </Tab>
    </Tabs>
  );
}
