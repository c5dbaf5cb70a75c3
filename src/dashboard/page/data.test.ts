// How a view keeps up with change notices: the answer in flight is always shown, even while newer changes keep
// being announced, and one request then catches up; nothing is fetched twice for one revision.
import { describe, expect, it } from 'vitest';
import { ViewFetcher, type FetchAnswer, type FetchJson } from './data.js';

/** A fetch whose answers the test releases one at a time, in order. */
function controlledFetch(): {
  get: FetchJson;
  requests: () => number;
  answer: (body: unknown) => Promise<void>;
  fail: (reason: string) => Promise<void>;
  lose: (reason: string) => Promise<void>;
  signals: AbortSignal[];
} {
  const pending: { resolve: (v: FetchAnswer<unknown>) => void; reject: (e: Error) => void }[] = [];
  const signals: AbortSignal[] = [];
  let requests = 0;
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };
  return {
    get: (_url, signal) => {
      requests++;
      signals.push(signal);
      return new Promise((resolve, reject) => pending.push({ resolve, reject }));
    },
    requests: () => requests,
    signals,
    answer: async (body) => {
      pending.shift()?.resolve({ data: body });
      await settle();
    },
    fail: async (reason) => {
      pending.shift()?.resolve({ error: reason });
      await settle();
    },
    lose: async (reason) => {
      pending.shift()?.reject(new TypeError(reason));
      await settle();
    },
  };
}

describe('ViewFetcher', () => {
  it('shows the answer in flight while changes keep coming, then catches up once with the newest', async () => {
    const http = controlledFetch();
    const shown: FetchAnswer<string>[] = [];
    const fetcher = new ViewFetcher<string>('/api/views/update', -1, (a) => shown.push(a), http.get);
    expect(http.requests()).toBe(1);
    // A rollout announces changes faster than the answer arrives.
    for (let revision = 1; revision <= 20; revision++) fetcher.want(revision);
    expect(http.requests()).toBe(1);
    expect(http.signals[0]?.aborted).toBe(false);
    await http.answer('at revision 0');
    expect(shown).toEqual([{ data: 'at revision 0' }]);
    // One request for all twenty notices.
    expect(http.requests()).toBe(2);
    fetcher.want(21);
    await http.answer('at revision 20');
    await http.answer('at revision 21');
    expect(shown.map((a) => ('data' in a ? a.data : a.error))).toEqual([
      'at revision 0',
      'at revision 20',
      'at revision 21',
    ]);
    expect(http.requests()).toBe(3);
  });

  it('fetches nothing for a revision already asked for, and starts at once before any notice', async () => {
    const http = controlledFetch();
    const fetcher = new ViewFetcher<string>('/api/views/placement', 4, () => undefined, http.get);
    expect(http.requests()).toBe(1);
    fetcher.want(4);
    await http.answer('x');
    fetcher.want(4);
    expect(http.requests()).toBe(1);
  });

  it('fetches again when a restarted server counts its revisions from 0 again', async () => {
    const http = controlledFetch();
    const shown: FetchAnswer<string>[] = [];
    const fetcher = new ViewFetcher<string>('/api/views/update', 41, (a) => shown.push(a), http.get);
    await http.answer('before the restart');
    fetcher.want(0);
    expect(http.requests()).toBe(2);
    await http.answer('after the restart');
    expect(shown).toEqual([{ data: 'before the restart' }, { data: 'after the restart' }]);
  });

  it('passes a refusal or a lost connection on (the page keeps its last data beside it), and goes on', async () => {
    const http = controlledFetch();
    const shown: FetchAnswer<string>[] = [];
    const fetcher = new ViewFetcher<string>('/api/views/update', 1, (a) => shown.push(a), http.get);
    await http.fail('503 at most 32 dashboard pages may be open at once');
    fetcher.want(2);
    await http.answer('recovered');
    expect(shown).toEqual([
      { error: '503 at most 32 dashboard pages may be open at once' },
      { data: 'recovered' },
    ]);
  });

  it('drops the answer in flight once closed (new page parameters or an unmounted view)', async () => {
    const http = controlledFetch();
    const shown: FetchAnswer<string>[] = [];
    const fetcher = new ViewFetcher<string>(
      '/api/views/update?nodesOffset=0',
      1,
      (a) => shown.push(a),
      http.get,
    );
    fetcher.close();
    expect(http.signals[0]?.aborted).toBe(true);
    await http.answer('stale page');
    fetcher.want(2);
    expect(shown).toEqual([]);
    expect(http.requests()).toBe(1);
  });
});
