// The console plugin's exposed module: the dashboard's view tabs (the same components as the standalone page)
// as a console page under Home and as a tab on Cluster Settings, fed by the console's watches.
import { useState } from 'react';
import { PageSection, Title } from '@patternfly/react-core';
import { DashboardTabs, type PageParams } from '../views/DashboardTabs.js';
import { useConsoleViews } from './console-data.js';
import '../styles.css';

function ConsoleDashboard() {
  const [updateParams, setUpdateParams] = useState<PageParams>({});
  const [placementParams, setPlacementParams] = useState<PageParams>({});
  const [nodePoolParams, setNodePoolParams] = useState<PageParams>({});
  const views = useConsoleViews(updateParams, placementParams, nodePoolParams);
  return (
    <DashboardTabs
      update={views.update}
      placement={views.placement}
      nodePools={views.nodePools}
      setUpdateParams={setUpdateParams}
      setPlacementParams={setPlacementParams}
      setNodePoolParams={setNodePoolParams}
      explanation={views.explanation}
      onExplain={views.explain}
      onCloseExplanation={views.closeExplanation}
    />
  );
}

/** The page at /tessera (console.page/route). */
export function TesseraPage() {
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Tessera</Title>
      </PageSection>
      <PageSection>
        <ConsoleDashboard />
      </PageSection>
    </>
  );
}

/** The Tessera tab of Cluster Settings (console.tab/horizontalNav on ClusterVersion). */
export function TesseraClusterSettingsTab() {
  return (
    <PageSection>
      <ConsoleDashboard />
    </PageSection>
  );
}
