// The page's data: one EventSource on the server's change stream, and a fetch of a view's JSON whenever the
// stream says it changed (or its page parameters change). The page never polls; the server never sends more than
// a page of rows per answer.
import { useEffect, useRef, useState } from 'react';
import type { ChangeNotice, ViewName } from '../view-types.js';

export type Revisions = Readonly<Record<ViewName, number>>;

const INITIAL: Revisions = { update: -1, placement: -1, nodepools: -1 };

/** The latest revision the server announced for each view, and whether the stream is connected. */
export function useChangeStream(): { revisions: Revisions; connected: boolean } {
  const [revisions, setRevisions] = useState<Revisions>(INITIAL);
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    const source = new EventSource('/api/events');
    source.onopen = () => setConnected(true);
    source.onerror = () => setConnected(false);
    source.addEventListener('change', (e: MessageEvent<string>) => {
      const notice = JSON.parse(e.data) as ChangeNotice;
      setRevisions((prev) => {
        const next = { ...prev };
        for (const view of notice.views) if (view in next) next[view] = notice.revision;
        return next;
      });
    });
    return () => source.close();
  }, []);
  return { revisions, connected };
}

export interface Fetched<T> {
  readonly data: T | undefined;
  readonly error: string | undefined;
}

/** GET `url` again whenever `revision` or `url` changes; the newest answer wins. */
export function useFetched<T>(url: string, revision: number): Fetched<T> {
  const [state, setState] = useState<Fetched<T>>({ data: undefined, error: undefined });
  const latest = useRef(0);
  useEffect(() => {
    if (revision < 0) return;
    const id = ++latest.current;
    const controller = new AbortController();
    const current = (): boolean => !controller.signal.aborted && id === latest.current;
    // Keeps the last good data on a failure, with the reason beside it.
    const failed = (reason: string): void => {
      if (current()) setState((prev) => ({ data: prev.data, error: reason }));
    };
    fetch(url, { signal: controller.signal, headers: { accept: 'application/json' } })
      .then(async (res) => {
        if (!res.ok) return failed(`${res.status} ${await res.text()}`);
        const data = (await res.json()) as T;
        if (current()) setState({ data, error: undefined });
      })
      .catch((err: unknown) => failed(err instanceof Error ? err.message : String(err)));
    return () => controller.abort();
  }, [url, revision]);
  return state;
}

/** Query string of page parameters (`nodesOffset=100&nodesLimit=100`...), in a stable order. */
export function query(params: Readonly<Record<string, string | number | undefined>>): string {
  const search = new URLSearchParams();
  for (const key of Object.keys(params).sort()) {
    const value = params[key];
    if (value !== undefined) search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
