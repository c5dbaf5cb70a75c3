// The Update view: progress bars (control plane and pools) with completion and the estimate, completion over time,
// every node as a cell coloured by phase (grouped by pool), and the health insights in oc's words.
import {
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
  ExpandableSection,
  Label,
  Progress,
  ProgressMeasureLocation,
  ProgressVariant,
  Stack,
  StackItem,
  Title,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import type { InsightRow, NodeGroup, ProgressRow, UpdateView as UpdateViewData } from '../../view-types.js';
import { CompletionPlot } from './CompletionPlot.js';
import { Pager, TitledCard } from './common.js';

export interface UpdateViewProps {
  readonly view: UpdateViewData;
  /** Asks for another page of one pool's nodes. */
  readonly onNodesPage: (pool: string, offset: number, limit: number) => void;
  readonly onInsightsPage: (offset: number, limit: number) => void;
}

function variantOf(row: ProgressRow): ProgressVariant | undefined {
  if (row.assessment === 'Degraded' || row.assessment === 'Stalled') return ProgressVariant.danger;
  if (row.completion >= 100) return ProgressVariant.success;
  return undefined;
}

function ProgressBar({ row }: { row: ProgressRow }) {
  const detail = [`${row.updated} of ${row.total} updated`, row.assessment];
  if (row.estimate) detail.push(`est. remaining ${row.estimate}`);
  if (row.duration) detail.push(`running for ${row.duration}`);
  return (
    <Progress
      title={row.name}
      value={row.completion}
      measureLocation={ProgressMeasureLocation.outside}
      variant={variantOf(row)}
      helperText={detail.join(' · ')}
      aria-label={`${row.name} completion`}
      data-testid={`progress-${row.name}`}
    />
  );
}

const LEVEL_COLOURS: Readonly<Record<InsightRow['level'], 'blue' | 'orange' | 'red' | 'purple'>> = {
  Info: 'blue',
  Warning: 'orange',
  Error: 'red',
  Critical: 'purple',
};

function NodeCells({ group, onPage }: { group: NodeGroup; onPage: (offset: number, limit: number) => void }) {
  return (
    <section aria-label={`Nodes of pool ${group.pool}`} data-testid={`nodes-${group.pool}`}>
      <Title headingLevel="h4">Pool {group.pool}</Title>
      <ul className="tessera-legend" aria-label={`Phases of pool ${group.pool}`}>
        {group.phaseCounts.map((c) => (
          <li key={c.phase}>
            <span className={`tessera-cell tessera-phase-${c.phase}`} aria-hidden="true" /> {c.phase}:{' '}
            {c.count}
          </li>
        ))}
      </ul>
      <ul className="tessera-cells">
        {group.nodes.items.map((n) => (
          <li
            key={n.name}
            className={`tessera-cell tessera-phase-${n.phase}${n.assessment === 'Degraded' || n.assessment === 'Unavailable' ? ' tessera-troubled' : ''}`}
            title={`${n.name}: ${n.phase}, ${n.assessment}${n.version ? `, ${n.version}` : ''}${n.message ? ` — ${n.message}` : ''}`}
            data-phase={n.phase}
          >
            <span className="pf-v6-screen-reader">
              {n.name}: {n.phase}, {n.assessment}
            </span>
          </li>
        ))}
      </ul>
      <Pager page={group.nodes} label={`Nodes of pool ${group.pool}`} onChange={onPage} />
    </section>
  );
}

export function UpdateView({ view, onNodesPage, onInsightsPage }: UpdateViewProps) {
  return (
    <Stack hasGutter>
      <StackItem>
        <TitledCard title={view.updating ? `Updating to ${view.versions}` : 'The cluster is not updating'}>
          <DescriptionList isHorizontal isCompact style={{ marginBottom: '1rem' }}>
            <DescriptionListGroup>
              <DescriptionListTerm>Target</DescriptionListTerm>
              <DescriptionListDescription>{view.versions}</DescriptionListDescription>
            </DescriptionListGroup>
            <DescriptionListGroup>
              <DescriptionListTerm>Started</DescriptionListTerm>
              <DescriptionListDescription>{view.startedAt || '-'}</DescriptionListDescription>
            </DescriptionListGroup>
          </DescriptionList>
          <Stack hasGutter>
            <StackItem>
              <ProgressBar row={view.controlPlane} />
            </StackItem>
            {view.pools.map((p) => (
              <StackItem key={p.name}>
                <ProgressBar row={{ ...p, name: `Pool ${p.name}` }} />
              </StackItem>
            ))}
          </Stack>
        </TitledCard>
      </StackItem>
      <StackItem>
        <TitledCard title="Completion over time">
          <CompletionPlot history={view.history} />
        </TitledCard>
      </StackItem>
      <StackItem>
        <TitledCard title="Nodes by phase" long>
          <Stack hasGutter>
            {view.nodeGroups.map((g) => (
              <StackItem key={g.pool}>
                <NodeCells group={g} onPage={(offset, limit) => onNodesPage(g.pool, offset, limit)} />
              </StackItem>
            ))}
          </Stack>
        </TitledCard>
      </StackItem>
      <StackItem>
        <TitledCard title="Update health" long>
          <Table aria-label="Update health insights" variant="compact" data-testid="insights">
            <Thead>
              <Tr>
                <Th>Since</Th>
                <Th>Level</Th>
                <Th>Impact</Th>
                <Th>Message</Th>
              </Tr>
            </Thead>
            <Tbody>
              {view.insights.items.map((i, index) => (
                <Tr key={`${view.insights.offset + index}`}>
                  <Td dataLabel="Since">{i.since}</Td>
                  <Td dataLabel="Level">
                    <Label color={LEVEL_COLOURS[i.level]}>{i.level}</Label>
                  </Td>
                  <Td dataLabel="Impact">{i.impact}</Td>
                  <Td dataLabel="Message">
                    {i.message}
                    {i.description || i.reference || i.resources.length > 0 ? (
                      <ExpandableSection toggleText="Details">
                        <pre className="tessera-pre">{i.description}</pre>
                        {i.resources.length > 0 ? <div>Resources: {i.resources.join(', ')}</div> : null}
                        {i.reference ? <div>Reference: {i.reference}</div> : null}
                      </ExpandableSection>
                    ) : null}
                  </Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
          <Pager page={view.insights} label="Insights" onChange={onInsightsPage} />
        </TitledCard>
      </StackItem>
    </Stack>
  );
}
