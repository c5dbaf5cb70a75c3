// The standalone dashboard: three tabs over the view components, fed by the server's change stream. A console
// plugin would render the same view components with data it fetches its own way.
import { useCallback, useState } from 'react';
import {
  Alert,
  Label,
  PageSection,
  Tab,
  TabTitleText,
  Tabs,
  Title,
  Flex,
  FlexItem,
} from '@patternfly/react-core';
import type {
  NodePoolView as NodePoolViewData,
  PlacementView as PlacementViewData,
  PodExplanation,
  UpdateView as UpdateViewData,
  ViewName,
  ViewResponse,
} from '../view-types.js';
import { query, useChangeStream, useFetched } from './data.js';
import { LoadError, Loading, MissingSource, isUnavailable } from './views/common.js';
import { NodePoolsView } from './views/NodePoolsView.js';
import { PlacementView } from './views/PlacementView.js';
import { UpdateView } from './views/UpdateView.js';

type Params = Readonly<Record<string, number | string | undefined>>;

function ViewState<V>({
  label,
  fetched,
  render,
}: {
  label: string;
  fetched: { data: ViewResponse<V> | undefined; error: string | undefined };
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

export function App() {
  const { revisions, connected } = useChangeStream();
  const [tab, setTab] = useState<ViewName>('update');
  const [updateParams, setUpdateParams] = useState<Params>({});
  const [placementParams, setPlacementParams] = useState<Params>({});
  const [nodePoolParams, setNodePoolParams] = useState<Params>({});
  const [explanation, setExplanation] = useState<
    { pod: string; result?: PodExplanation; error?: string } | undefined
  >(undefined);

  const update = useFetched<ViewResponse<UpdateViewData>>(
    `/api/views/update${query(updateParams)}`,
    revisions.update,
  );
  const placement = useFetched<ViewResponse<PlacementViewData>>(
    `/api/views/placement${query(placementParams)}`,
    revisions.placement,
  );
  const nodePools = useFetched<ViewResponse<NodePoolViewData>>(
    `/api/views/nodepools${query(nodePoolParams)}`,
    revisions.nodepools,
  );

  const explain = useCallback((namespace: string, name: string) => {
    const pod = `${namespace}/${name}`;
    setExplanation({ pod });
    fetch(`/api/explain${query({ namespace, name })}`)
      .then(async (res) => {
        const body = (await res.json()) as PodExplanation | { error: string };
        if ('error' in body) setExplanation({ pod, error: body.error });
        else setExplanation({ pod, result: body });
      })
      .catch((err: unknown) =>
        setExplanation({ pod, error: err instanceof Error ? err.message : String(err) }),
      );
  }, []);

  return (
    <main className="tessera-main">
      <PageSection>
        <Flex alignItems={{ default: 'alignItemsCenter' }}>
          <FlexItem>
            <Title headingLevel="h1">Tessera</Title>
          </FlexItem>
          <FlexItem>
            <Label color={connected ? 'green' : 'orange'} data-testid="connection">
              {connected ? 'Live' : 'Reconnecting…'}
            </Label>
          </FlexItem>
        </Flex>
        {!connected && revisions.update >= 0 ? (
          <Alert
            variant="warning"
            isInline
            isPlain
            title="The live stream is interrupted; showing the last data received."
          />
        ) : null}
      </PageSection>
      <PageSection>
        <Tabs
          activeKey={tab}
          onSelect={(_e, key) => setTab(key as ViewName)}
          aria-label="Dashboard views"
          mountOnEnter
        >
          <Tab eventKey="update" title={<TabTitleText>Update</TabTitleText>}>
            <ViewState
              label="Update"
              fetched={update}
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
              fetched={placement}
              render={(v) => (
                <PlacementView
                  view={v}
                  onPage={(list, offset, limit) =>
                    setPlacementParams((p) => ({ ...p, [`${list}Offset`]: offset, [`${list}Limit`]: limit }))
                  }
                  onExplain={explain}
                  explanation={explanation}
                  onCloseExplanation={() => setExplanation(undefined)}
                />
              )}
            />
          </Tab>
          <Tab eventKey="nodepools" title={<TabTitleText>NodePools</TabTitleText>}>
            <ViewState
              label="NodePools"
              fetched={nodePools}
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
      </PageSection>
    </main>
  );
}
