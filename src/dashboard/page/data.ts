// The page's data: one EventSource on the server's change stream, and a fetch of a view's JSON at once and whenever
// the stream says it changed (or its page parameters change). The page never polls; the server never sends more than
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

/** One answer of a view fetch: its data, or why there is none (the page keeps the last good data beside it). */
export type FetchAnswer<T> = { readonly data: T } | { readonly error: string };

/** GETs `url` as JSON: its data, or the server's refusal (status and text); rejects only when no answer came. */
export type FetchJson = (url: string, signal: AbortSignal) => Promise<FetchAnswer<unknown>>;

const fetchJson: FetchJson = async (url, signal) => {
  const res = await fetch(url, { signal, headers: { accept: 'application/json' } });
  if (!res.ok) return { error: `${res.status} ${await res.text()}` };
  return { data: (await res.json()) as unknown };
};

/**
 * Keeps one view current from change notices: at most one request in flight, never cancelled for a newer revision.
 * Cancelling would starve the page while changes keep coming (a rollout announces one every coalescing interval,
 * often sooner than an answer arrives under load): every answer would be dropped for the next and nothing shown.
 * Instead the answer in flight is shown, then one request catches up with the newest revision announced meanwhile.
 */
export class ViewFetcher<T> {
  private wanted: number;
  private running = false;
  private readonly controller = new AbortController();

  /**
   * Fetches at once, for `revision`: the latest the change stream announced, or -1 before its first notice. An answer
   * does not say which revision it shows, so that first notice costs one more fetch; the view is on screen sooner.
   */
  constructor(
    private readonly url: string,
    revision: number,
    private readonly onAnswer: (answer: FetchAnswer<T>) => void,
    private readonly get: FetchJson = fetchJson,
  ) {
    this.wanted = revision;
    void this.run();
  }

  /**
   * The change stream announced `revision`: fetch unless a request for it was already made. Any other number counts,
   * lower too: a restarted server counts from 0 again, and its changes must still be shown.
   */
  want(revision: number): void {
    if (revision === this.wanted || this.controller.signal.aborted) return;
    this.wanted = revision;
    if (!this.running) void this.run();
  }

  /** The view or its page parameters changed, or the page closed: drop the request in flight. */
  close(): void {
    this.controller.abort();
  }

  private async run(): Promise<void> {
    this.running = true;
    const { signal } = this.controller;
    for (;;) {
      const asked = this.wanted;
      let answer: FetchAnswer<T>;
      try {
        answer = (await this.get(this.url, signal)) as FetchAnswer<T>;
      } catch (err) {
        answer = { error: err instanceof Error ? err.message : String(err) };
      }
      if (signal.aborted) break;
      this.onAnswer(answer);
      if (this.wanted === asked) break;
    }
    this.running = false;
  }
}

/** GET `url` at once and again whenever `revision` advances (see ViewFetcher); a new `url` starts over. */
export function useFetched<T>(url: string, revision: number): Fetched<T> {
  const [state, setState] = useState<Fetched<T>>({ data: undefined, error: undefined });
  const fetcher = useRef<ViewFetcher<T> | undefined>(undefined);
  const latestRevision = useRef(revision);
  latestRevision.current = revision;
  useEffect(() => {
    const current = new ViewFetcher<T>(url, latestRevision.current, (answer) =>
      setState((prev) =>
        'data' in answer ? { data: answer.data, error: undefined } : { data: prev.data, error: answer.error },
      ),
    );
    fetcher.current = current;
    return () => current.close();
  }, [url]);
  useEffect(() => fetcher.current?.want(revision), [revision]);
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
