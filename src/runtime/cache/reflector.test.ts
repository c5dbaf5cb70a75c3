// The reflector's list side against a scripted list/watch source (no API server, no real time): an expired
// continue token restarts the list from scratch and the cache ends with the complete list, never an empty or
// partial one that would emit spurious deletes.
import { describe, expect, it } from 'vitest';
import { ApiStatusError, WatchStalledError } from '../errors.js';
import type { KubeList, KubeObject } from '../object.js';
import { ConfigMaps } from '../resources.js';
import {
  EXPECTED_THROTTLE_ATTEMPTS,
  Reflector,
  listWatchFailureLevel,
  type ReflectorSink,
} from './reflector.js';
import { DefaultSharedInformer } from './shared-informer.js';
import { FakeClock, flushAsync, FakeListWatch, closedWatch, openWatch } from '../testing/index.js';

const cm = (name: string, rv: string): KubeObject => ({
  metadata: { namespace: 'n', name, resourceVersion: rv },
});
const page = (items: KubeObject[], rv: string, cont?: string): KubeList<KubeObject> => ({
  metadata: { resourceVersion: rv, continue: cont },
  items,
});
const expired = (): ApiStatusError =>
  new ApiStatusError('GET', '/api/v1/configmaps', 410, 'Expired', 'continue token expired', {});

describe('Reflector list', () => {
  it('restarts the whole list unpaged when the continue token expires on page 2, without spurious deletes', async () => {
    const lists: Array<(q: Record<string, unknown>) => KubeList<KubeObject>> = [
      // First sync, two pages.
      () => page([cm('a', '1'), cm('b', '2')], '10', 'tok1'),
      () => page([cm('c', '3')], '10'),
      // Relist after the watch expired: page 1, then the token expires.
      () => page([cm('a', '15'), cm('b', '2')], '20', 'tok2'),
      () => {
        throw expired();
      },
      // The restarted, unpaged list.
      () => page([cm('a', '15'), cm('b', '2'), cm('c', '3'), cm('d', '21')], '21'),
    ];
    const source = new FakeListWatch<KubeObject>({
      list: (query, n) => {
        const answer = lists[n];
        if (!answer) throw new Error(`unexpected list #${n}`);
        return answer(query);
      },
      watch: (_q, signal, n) =>
        n === 0
          ? closedWatch([{ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old' } }])
          : openWatch([], signal),
    });
    const clock = new FakeClock(0);
    const informer = new DefaultSharedInformer<KubeObject>({
      client: source,
      type: ConfigMaps,
      pageSize: 2,
      clock,
    });
    const log: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => log.push(`add ${o.metadata?.name}`),
      onUpdate: (o, n) =>
        log.push(`update ${n.metadata?.name} ${o.metadata?.resourceVersion}->${n.metadata?.resourceVersion}`),
      onDelete: (o) => log.push(`delete ${o.metadata?.name}`),
    });
    const stop = new AbortController();
    const running = informer.start(stop.signal);
    for (let i = 0; i < 10 && source.calls.filter((c) => c.kind === 'watch').length < 2; i++)
      await flushAsync();

    expect(log).toEqual(['add a', 'add b', 'add c', 'update a 1->15', 'add d']);
    expect(informer.getIndexer().listKeys().sort()).toEqual(['n/a', 'n/b', 'n/c', 'n/d']);
    expect(informer.lastSyncResourceVersion()).toBe('21');
    const listQueries = source.calls.filter((c) => c.kind === 'list').map((c) => c.query);
    expect(listQueries.map((q) => [q.limit, q.continue])).toEqual([
      [2, undefined],
      [2, 'tok1'],
      [2, undefined],
      [2, 'tok2'],
      [undefined, undefined],
    ]);
    // The next watch resumes from the restarted list's version, not from the abandoned snapshot's.
    expect(source.calls.filter((c) => c.kind === 'watch').map((c) => c.query.resourceVersion)).toEqual([
      '10',
      '21',
    ]);
    stop.abort();
    await running;
  });

  it('hands the sink one complete list even when every page but the last carries a continue token', async () => {
    const replaced: string[][] = [];
    const sink: ReflectorSink<KubeObject> = {
      replace: (items) => replaced.push(items.map((o) => o.metadata?.name ?? '')),
      apply: () => undefined,
    };
    const source = new FakeListWatch<KubeObject>({
      list: (query) => {
        if (query.continue === undefined) return page([cm('a', '1')], '5', 't1');
        if (query.continue === 't1') return page([cm('b', '2')], '5', 't2');
        return page([cm('c', '3')], '5');
      },
      watch: (_q, signal) => openWatch([], signal),
    });
    const reflector = new Reflector<KubeObject>(
      { client: source, type: ConfigMaps, pageSize: 1, clock: new FakeClock(0) },
      sink,
    );
    const stop = new AbortController();
    const running = reflector.run(stop.signal);
    for (let i = 0; i < 10 && replaced.length === 0; i++) await flushAsync();
    expect(replaced).toEqual([['a', 'b', 'c']]);
    expect(reflector.lastSyncResourceVersion()).toBe('5');
    stop.abort();
    await running;
  });
});

describe('Reflector transform', () => {
  it('applies the transform to each list item (typed first) and each watch object before the sink sees them', async () => {
    const seen: string[] = [];
    const replaced: KubeObject[][] = [];
    const applied: KubeObject[] = [];
    const sink: ReflectorSink<KubeObject> = {
      replace: (items) => replaced.push(items),
      apply: (_type, obj) => applied.push(obj),
    };
    const source = new FakeListWatch<KubeObject>({
      list: () => page([{ ...cm('a', '1'), data: { big: 'x' } } as KubeObject], '5'),
      watch: (_q, signal) =>
        openWatch(
          [
            {
              type: 'ADDED',
              object: { apiVersion: 'v1', kind: 'ConfigMap', ...cm('b', '6'), data: { big: 'y' } },
            },
          ],
          signal,
        ),
    });
    const reflector = new Reflector<KubeObject>(
      {
        client: source,
        type: ConfigMaps,
        clock: new FakeClock(0),
        // A projection: keeps what it is given of the type and metadata only.
        transform: (o) => {
          seen.push(`${o.kind}/${o.apiVersion}/${o.metadata?.name}`);
          return { kind: o.kind, apiVersion: o.apiVersion, metadata: o.metadata };
        },
      },
      sink,
    );
    const stop = new AbortController();
    const running = reflector.run(stop.signal);
    for (let i = 0; i < 10 && applied.length === 0; i++) await flushAsync();
    expect(seen).toEqual(['ConfigMap/v1/a', 'ConfigMap/v1/b']);
    expect(replaced).toEqual([[{ kind: 'ConfigMap', apiVersion: 'v1', metadata: cm('a', '1').metadata }]]);
    expect(applied).toEqual([{ kind: 'ConfigMap', apiVersion: 'v1', metadata: cm('b', '6').metadata }]);
    stop.abort();
    await running;
  });
});

describe('listWatchFailureLevel', () => {
  const initializing = (): ApiStatusError =>
    new ApiStatusError('GET', '/apis/x/v1/ys', 429, 'TooManyRequests', 'storage is (re)initializing', {});

  it('logs the expected 429s of a starting API server at debug, and a persisting 429 at warn', () => {
    for (let attempt = 1; attempt <= EXPECTED_THROTTLE_ATTEMPTS; attempt++)
      expect(listWatchFailureLevel(initializing(), attempt)).toBe('debug');
    expect(listWatchFailureLevel(initializing(), EXPECTED_THROTTLE_ATTEMPTS + 1)).toBe('warn');
  });

  it('keeps other failures at warn and a stalled watch at info', () => {
    const forbidden = new ApiStatusError('GET', '/api/v1/pods', 403, 'Forbidden', 'no', {});
    expect(listWatchFailureLevel(forbidden, 1)).toBe('warn');
    expect(listWatchFailureLevel(new Error('ECONNRESET'), 1)).toBe('warn');
    expect(listWatchFailureLevel(new WatchStalledError(1000), 1)).toBe('info');
  });
});

describe('Reflector optional resource', () => {
  const status = (code: number): ApiStatusError =>
    new ApiStatusError(
      'GET',
      '/apis/x.io/v1/things',
      code,
      code === 404 ? 'NotFound' : 'Forbidden',
      'no',
      {},
    );

  /** An informer on a scripted source whose lists answer `lists[n]` (an error to throw, or a page). */
  function informerOn(
    lists: readonly (ApiStatusError | KubeList<KubeObject>)[],
    watch: (n: number, signal: AbortSignal) => AsyncIterable<never> | AsyncIterable<unknown>,
    optional: boolean,
  ) {
    const source = new FakeListWatch<KubeObject>({
      list: (_q, n) => {
        const answer = lists[n];
        if (answer === undefined) throw new Error(`unexpected list #${n}`);
        if (answer instanceof ApiStatusError) throw answer;
        return answer;
      },
      watch: (_q, signal, n) => watch(n, signal) as AsyncIterable<never>,
    });
    const clock = new FakeClock(0);
    const lines: string[] = [];
    const logger = {
      error: () => undefined,
      warn: (_o: object, msg?: string) => void lines.push(`warn ${msg}`),
      info: (_o: object, msg?: string) => void lines.push(`info ${msg}`),
      debug: () => undefined,
      trace: () => undefined,
      child: () => logger,
    };
    const informer = new DefaultSharedInformer<KubeObject>({
      client: source,
      type: ConfigMaps,
      clock,
      logger,
      optional,
      backoff: { initialMs: 1_000, maxMs: 1_000, jitter: 0 },
    });
    const log: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => log.push(`add ${o.metadata?.name}`),
      onDelete: (o) => log.push(`delete ${o.metadata?.name}`),
    });
    return { source, clock, informer, log, lines };
  }

  it('is synced and empty while not served, is listed and watched once served, and empties when it goes away', async () => {
    const { source, clock, informer, log, lines } = informerOn(
      [status(404), status(404), page([cm('a', '1')], '5'), status(404)],
      // The resource goes away under the first watch: the next one is refused.
      (n, signal) => {
        if (n === 0) return closedWatch([]);
        if (n === 1) throw status(404);
        return openWatch([], signal);
      },
      true,
    );
    const stop = new AbortController();
    const running = informer.start(stop.signal);
    await flushAsync();
    expect(informer.hasSynced()).toBe(true);
    expect(informer.getIndexer().list()).toEqual([]);

    await clock.advance(1_000);
    expect(informer.getIndexer().list()).toEqual([]);
    await clock.advance(1_000);
    expect(informer.getIndexer().listKeys()).toEqual(['n/a']);
    // The first watch closed at once (it delivered nothing: retried after backoff), the next one is refused.
    await clock.advance(1_000);
    expect(informer.getIndexer().list()).toEqual([]);
    expect(log).toEqual(['add a', 'delete a']);
    await clock.advance(1_000);
    expect(source.calls.map((c) => c.kind)).toEqual(['list', 'list', 'list', 'watch', 'watch', 'list']);
    // Logged when it changes, not on every retry.
    expect(lines).toEqual([
      'info optional resource is not served; treated as empty until it is',
      'info optional resource is served; listing and watching it',
      'info optional resource is not served; treated as empty until it is',
    ]);
    expect(informer.stats.unavailable).toBe(4);
    stop.abort();
    await running;
  });

  it('treats 403 as empty too, with a warning', async () => {
    const { informer, lines } = informerOn([status(403)], (_n, signal) => openWatch([], signal), true);
    const stop = new AbortController();
    const running = informer.start(stop.signal);
    await flushAsync();
    expect(informer.hasSynced()).toBe(true);
    expect(lines).toEqual(['warn optional resource may not be read (403); treated as empty, check RBAC']);
    stop.abort();
    await running;
  });

  it('without `optional`, a resource that is not served keeps the informer unsynced', async () => {
    const { clock, informer } = informerOn(
      [status(404), status(404), status(404)],
      (_n, signal) => openWatch([], signal),
      false,
    );
    const stop = new AbortController();
    const running = informer.start(stop.signal);
    await clock.advance(2_000);
    expect(informer.hasSynced()).toBe(false);
    stop.abort();
    await running;
  });
});
