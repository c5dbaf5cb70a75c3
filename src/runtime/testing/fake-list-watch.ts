// A scripted list/watch source for testing reflectors and informers without an API server: every list or watch
// call is recorded (with its query) and answered by the caller's functions, which may throw (e.g. ApiStatusError
// 410) to simulate server failures. It does no timing of its own, so tests drive time with a FakeClock.
import type { ListRequestOptions, QueryValue, WatchEvent, WatchStream } from '../client.js';
import type { KubeList } from '../object.js';
import type { ListWatchClient } from '../cache/reflector.js';

export interface ListWatchCall {
  readonly kind: 'list' | 'watch';
  readonly query: Readonly<Record<string, QueryValue>>;
}

export interface ListWatchScript<T> {
  /** Answers the n-th list request (0-based); throw to fail it. */
  list(query: Readonly<Record<string, QueryValue>>, n: number): KubeList<T> | Promise<KubeList<T>>;
  /** Opens the n-th watch (0-based); throw to refuse it. The events iterable ends the watch when it ends. */
  watch(
    query: Readonly<Record<string, QueryValue>>,
    signal: AbortSignal,
    n: number,
  ): AsyncIterable<WatchEvent<unknown>> | Promise<AsyncIterable<WatchEvent<unknown>>>;
}

export class FakeListWatch<T> implements ListWatchClient {
  /** Every call in order. */
  readonly calls: ListWatchCall[] = [];

  constructor(private readonly script: ListWatchScript<T>) {}

  /** Answers like KubeClient.list: each item goes through `opts.item` in order, as the real decoder does. */
  async list<R>(opts: ListRequestOptions<R>): Promise<KubeList<R>> {
    const query = { ...(opts.query ?? {}) };
    const n = this.calls.filter((c) => c.kind === 'list').length;
    this.calls.push({ kind: 'list', query });
    // The reflector asks for KubeList<T>; the generic signature is KubeClient's. Items are copied, as a decoder
    // would give fresh objects (the script may reuse its own).
    const page = (await this.script.list(query, n)) as unknown as KubeList<unknown>;
    const item = opts.item ?? ((raw: unknown) => raw as R);
    return { ...page, items: page.items.map((raw, i) => item(structuredClone(raw), i)) };
  }

  async watch<R>(
    _path: string,
    query: Record<string, QueryValue>,
    signal?: AbortSignal,
  ): Promise<WatchStream<R>> {
    const copy = { ...query };
    const n = this.calls.filter((c) => c.kind === 'watch').length;
    this.calls.push({ kind: 'watch', query: copy });
    const closer = new AbortController();
    const combined = signal ? AbortSignal.any([signal, closer.signal]) : closer.signal;
    const events = (await this.script.watch(copy, combined, n)) as AsyncIterable<WatchEvent<R>>;
    return { events: untilAborted(events, combined), close: () => closer.abort() };
  }
}

/** Yields `events`, then waits until `signal` aborts (a watch that stays open but quiet). */
export async function* openWatch<T>(
  events: readonly WatchEvent<T>[],
  signal: AbortSignal,
): AsyncGenerator<WatchEvent<T>> {
  yield* events;
  if (signal.aborted) return;
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Yields `events` and ends (a watch the server closed). */
export async function* closedWatch<T>(events: readonly WatchEvent<T>[]): AsyncGenerator<WatchEvent<T>> {
  yield* events;
}

async function* untilAborted<T>(
  events: AsyncIterable<WatchEvent<T>>,
  signal: AbortSignal,
): AsyncGenerator<WatchEvent<T>> {
  for await (const e of events) {
    if (signal.aborted) return;
    yield e;
  }
}
