// The Pod placement view: pods gated now (count, the oldest and how long), placements by architecture, inspection
// failures by registry and by namespace, and one pod's explanation on a click.
import {
  Alert,
  Button,
  Card,
  CardBody,
  CardTitle,
  Gallery,
  List,
  ListItem,
  Modal,
  ModalBody,
  ModalHeader,
  Stack,
  StackItem,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import type {
  FailureGroupRow,
  Page,
  PlacementView as PlacementViewData,
  PodExplanation,
} from '../../view-types.js';
import { Pager, TitledCard, age } from './common.js';

export interface PlacementViewProps {
  readonly view: PlacementViewData;
  readonly onPage: (list: 'gated' | 'registries' | 'namespaces', offset: number, limit: number) => void;
  /** Asks for one pod's explanation. */
  readonly onExplain: (namespace: string, name: string) => void;
  /** The explanation asked for (or why it could not be had); undefined: none open. */
  readonly explanation:
    { readonly pod: string; readonly result?: PodExplanation; readonly error?: string } | undefined;
  readonly onCloseExplanation: () => void;
}

function FailureTable({
  title,
  keyTitle,
  page,
  onPage,
}: {
  title: string;
  keyTitle: string;
  page: Page<FailureGroupRow>;
  onPage: (offset: number, limit: number) => void;
}) {
  return (
    <TitledCard title={title}>
      {page.total === 0 ? (
        <p>No image inspection failures.</p>
      ) : (
        <>
          <Table aria-label={title} variant="compact">
            <Thead>
              <Tr>
                <Th>{keyTitle}</Th>
                <Th>Pods</Th>
                <Th>Example error</Th>
              </Tr>
            </Thead>
            <Tbody>
              {page.items.map((row) => (
                <Tr key={row.key}>
                  <Td dataLabel={keyTitle}>{row.key}</Td>
                  <Td dataLabel="Pods">{row.pods}</Td>
                  <Td dataLabel="Example error">{row.example}</Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
          <Pager page={page} label={title} onChange={onPage} />
        </>
      )}
    </TitledCard>
  );
}

export function PlacementView({
  view,
  onPage,
  onExplain,
  explanation,
  onCloseExplanation,
}: PlacementViewProps) {
  const oldest = view.gated.oldest;
  return (
    <Stack hasGutter>
      {view.note ? (
        <StackItem>
          <Alert variant="info" isInline title="Pod placement is not enabled">
            {view.note}
          </Alert>
        </StackItem>
      ) : null}
      <StackItem>
        <TitledCard title="Gated now" long>
          <p data-testid="gated-summary">
            {view.gated.count === 0
              ? 'No pod is waiting for image inspection.'
              : `${view.gated.count} pod${view.gated.count === 1 ? '' : 's'} gated; the oldest, ${oldest?.namespace ?? ''}/${oldest?.name ?? ''}, for ${age(oldest?.ageSeconds ?? 0)}.`}
          </p>
          {view.gated.count > 0 ? (
            <>
              <Table aria-label="Gated pods" variant="compact" data-testid="gated-pods">
                <Thead>
                  <Tr>
                    <Th>Namespace</Th>
                    <Th>Pod</Th>
                    <Th>Gated for</Th>
                    <Th>Images</Th>
                  </Tr>
                </Thead>
                <Tbody>
                  {view.gated.pods.items.map((p) => (
                    <Tr key={`${p.namespace}/${p.name}`}>
                      <Td dataLabel="Namespace">{p.namespace}</Td>
                      <Td dataLabel="Pod">
                        <Button variant="link" isInline onClick={() => onExplain(p.namespace, p.name)}>
                          {p.name}
                        </Button>
                      </Td>
                      <Td dataLabel="Gated for">{age(p.ageSeconds)}</Td>
                      <Td dataLabel="Images">{p.images.join(', ')}</Td>
                    </Tr>
                  ))}
                </Tbody>
              </Table>
              <Pager page={view.gated.pods} label="Gated pods" onChange={(o, l) => onPage('gated', o, l)} />
            </>
          ) : null}
        </TitledCard>
      </StackItem>
      <StackItem>
        <TitledCard title="Placements by architecture" long>
          {view.architectures.length === 0 ? (
            <p>No pod runs on a node yet.</p>
          ) : (
            <Gallery hasGutter minWidths={{ default: '280px' }}>
              {view.architectures.map((a) => (
                <Card key={a.architecture} isCompact data-testid={`arch-${a.architecture}`}>
                  <CardTitle component="h4">
                    {a.architecture}: {a.pods} pod{a.pods === 1 ? '' : 's'}
                  </CardTitle>
                  <CardBody>
                    <List isPlain aria-label={`Images on ${a.architecture}`}>
                      {a.images.map((i) => (
                        <ListItem key={i.image}>
                          {i.image} ({i.pods})
                        </ListItem>
                      ))}
                    </List>
                  </CardBody>
                </Card>
              ))}
            </Gallery>
          )}
        </TitledCard>
      </StackItem>
      <StackItem>
        <FailureTable
          title="Inspection failures by registry"
          keyTitle="Registry"
          page={view.failuresByRegistry}
          onPage={(o, l) => onPage('registries', o, l)}
        />
      </StackItem>
      <StackItem>
        <FailureTable
          title="Inspection failures by namespace"
          keyTitle="Namespace"
          page={view.failuresByNamespace}
          onPage={(o, l) => onPage('namespaces', o, l)}
        />
      </StackItem>
      <Modal
        isOpen={explanation !== undefined}
        onClose={onCloseExplanation}
        variant="large"
        aria-labelledby="explain-title"
      >
        <ModalHeader title={`Explain ${explanation?.pod ?? ''}`} labelId="explain-title" />
        <ModalBody>
          {explanation?.error ? (
            <Alert variant="warning" isInline title="No explanation">
              {explanation.error}
            </Alert>
          ) : (
            <pre className="tessera-pre" data-testid="explanation">
              {explanation?.result?.text ?? 'Loading…'}
            </pre>
          )}
        </ModalBody>
      </Modal>
    </Stack>
  );
}
