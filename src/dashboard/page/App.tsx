// The standalone dashboard: the shared view tabs (views/DashboardTabs.tsx), fed by the server's change stream. The
// console plugin (src/dashboard/console-plugin) renders the same tabs with data it watches through the console.
import { useCallback, useEffect, useState } from 'react';
import { Alert, Label, PageSection, Title, Flex, FlexItem } from '@patternfly/react-core';
import {
  VIEW_NAMES,
  type NodePoolView as NodePoolViewData,
  type PlacementView as PlacementViewData,
  type PodExplanation,
  type UpdateView as UpdateViewData,
  type ViewName,
  type ViewResponse,
} from '../view-types.js';
import { query, useChangeStream, useFetched } from './data.js';
import { DashboardTabs, type ExplanationState, type PageParams } from './views/DashboardTabs.js';

export function App() {
  const { revisions, connected } = useChangeStream();
  const [updateParams, setUpdateParams] = useState<PageParams>({});
  const [placementParams, setPlacementParams] = useState<PageParams>({});
  const [nodePoolParams, setNodePoolParams] = useState<PageParams>({});
  const [explanation, setExplanation] = useState<ExplanationState | undefined>(undefined);
  // The view shown is the URL's fragment (#update, #placement, #nodepools): a view can be linked and bookmarked.
  const [tab, setTab] = useState<ViewName>(() => tabFromFragment(window.location.hash));
  useEffect(() => {
    const follow = (): void => setTab(tabFromFragment(window.location.hash));
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);

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
        <DashboardTabs
          update={update}
          placement={placement}
          nodePools={nodePools}
          setUpdateParams={setUpdateParams}
          setPlacementParams={setPlacementParams}
          setNodePoolParams={setNodePoolParams}
          explanation={explanation}
          onExplain={explain}
          onCloseExplanation={() => setExplanation(undefined)}
          tab={tab}
          onTabChange={(next) => {
            setTab(next);
            window.history.replaceState(null, '', `#${next}`);
          }}
        />
      </PageSection>
    </main>
  );
}

/** The view a link names (`#placement`, `#nodepools`, `#update`); anything else: the Update view. */
export function tabFromFragment(fragment: string): ViewName {
  const name = fragment.replace(/^#/, '');
  return (VIEW_NAMES as readonly string[]).includes(name) ? (name as ViewName) : 'update';
}
