// Small pieces every view uses. Everything shown is passed as text children: React escapes it, so markup in a
// pod name, an annotation or a condition message is displayed, never run.
import { Alert, Card, CardBody, CardTitle, Pagination, Skeleton } from '@patternfly/react-core';
import type { ReactNode } from 'react';
import type { Page, Unavailable } from '../../view-types.js';

/** One titled card of a view: its heading (h3, under the tab's), then its content. */
/**
 * A card with a title. `long`: a card that holds many rows, usually below the fold: the browser skips its style,
 * layout and paint until it scrolls near (CSS content-visibility), which is most of a first paint's cost with
 * thousands of nodes; its rows stay in the DOM, for search and assistive technology.
 */
export function TitledCard({
  title,
  children,
  long,
}: {
  title: ReactNode;
  children: ReactNode;
  long?: boolean;
}) {
  return (
    <Card className={long ? 'tessera-long' : undefined}>
      <CardTitle component="h3">{title}</CardTitle>
      <CardBody>{children}</CardBody>
    </Card>
  );
}

export function MissingSource({ view, missing }: { view: string; missing: string }) {
  return (
    <Alert variant="info" isInline title={`${view}: nothing to show on this cluster`}>
      {missing}
    </Alert>
  );
}

export function LoadError({ error }: { error: string }) {
  return (
    <Alert variant="danger" isInline title="Could not load this view">
      {error}
    </Alert>
  );
}

export function Loading({ label }: { label: string }) {
  return <Skeleton screenreaderText={`Loading ${label}`} />;
}

export function isUnavailable(v: unknown): v is Unavailable {
  return typeof v === 'object' && v !== null && (v as { available?: unknown }).available === false;
}

/** PatternFly pagination for a server page; `onChange(offset, limit)` asks for another page. */
export function Pager<T>({
  page,
  label,
  onChange,
}: {
  page: Page<T>;
  label: string;
  onChange: (offset: number, limit: number) => void;
}) {
  if (page.total <= page.limit && page.offset === 0) return null;
  return (
    <Pagination
      itemCount={page.total}
      perPage={page.limit}
      page={Math.floor(page.offset / page.limit) + 1}
      onSetPage={(_e, p) => onChange((p - 1) * page.limit, page.limit)}
      onPerPageSelect={(_e, perPage) => onChange(0, perPage)}
      perPageOptions={[
        { title: '50', value: 50 },
        { title: '100', value: 100 },
        { title: '500', value: 500 },
      ]}
      isCompact
      titles={{ paginationAriaLabel: `${label} pagination` }}
    />
  );
}

export function age(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${seconds % 60 ? `${seconds % 60}s` : ''}`;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return `${h}h${m ? `${m}m` : ''}`;
}
