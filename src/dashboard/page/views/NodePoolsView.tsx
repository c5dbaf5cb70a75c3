// The NodePools view: each NodePool's performance-profile state and its mirrored conditions, with when each changed.
import { Card, CardBody, CardTitle, Label, Stack, StackItem } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import type { NodePoolRow, NodePoolView as NodePoolViewData } from '../../view-types.js';
import { Pager } from './common.js';

const STATE_LABELS: Readonly<
  Record<NodePoolRow['state'], { text: string; color: 'green' | 'red' | 'blue' | 'grey' }>
> = {
  applied: { text: 'Applied', color: 'green' },
  degraded: { text: 'Degraded', color: 'red' },
  progressing: { text: 'Progressing', color: 'blue' },
  unknown: { text: 'Unknown', color: 'grey' },
  none: { text: 'No profile', color: 'grey' },
};

export function NodePoolsView({
  view,
  onPage,
}: {
  view: NodePoolViewData;
  onPage: (offset: number, limit: number) => void;
}) {
  return (
    <Stack hasGutter>
      {view.nodePools.items.map((np) => {
        const state = STATE_LABELS[np.state];
        return (
          <StackItem key={`${np.namespace}/${np.name}`}>
            <Card data-testid={`nodepool-${np.namespace}-${np.name}`} data-state={np.state}>
              <CardTitle component="h3">
                {np.namespace}/{np.name} <Label color={state.color}>{state.text}</Label>
              </CardTitle>
              <CardBody>
                <p>
                  HostedCluster {np.cluster}: {np.verdict}
                </p>
                {np.conditions.length > 0 ? (
                  <Table aria-label={`Conditions of ${np.namespace}/${np.name}`} variant="compact">
                    <Thead>
                      <Tr>
                        <Th>Condition</Th>
                        <Th>Status</Th>
                        <Th>Reason</Th>
                        <Th modifier="wrap">Changed</Th>
                        <Th>Message</Th>
                      </Tr>
                    </Thead>
                    <Tbody>
                      {np.conditions.map((c) => (
                        <Tr key={c.type}>
                          <Td dataLabel="Condition">{c.type}</Td>
                          <Td dataLabel="Status">{c.status}</Td>
                          <Td dataLabel="Reason">{c.reason}</Td>
                          <Td dataLabel="Changed">
                            <time dateTime={c.lastTransitionTime}>{c.age} ago</time>
                          </Td>
                          <Td dataLabel="Message">{c.message}</Td>
                        </Tr>
                      ))}
                    </Tbody>
                  </Table>
                ) : null}
              </CardBody>
            </Card>
          </StackItem>
        );
      })}
      <StackItem>
        <Pager page={view.nodePools} label="NodePools" onChange={onPage} />
      </StackItem>
    </Stack>
  );
}
