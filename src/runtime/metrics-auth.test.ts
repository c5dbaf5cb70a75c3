import { describe, expect, it } from 'vitest';
import { MetricsAuthFilter } from './metrics-auth-filter.js';
import {
  METRICS_AUTH_LIMITS,
  MetricsDecisionCache,
  accessReviewDecision,
  bearerToken,
  subjectAccessReviewBody,
  tokenKey,
  tokenReviewDecision,
  type MetricsAuthDecision,
} from './metrics-auth.js';
import { FakeClock } from './testing/index.js';

const PROMETHEUS = {
  username: 'system:serviceaccount:openshift-monitoring:prometheus-k8s',
  uid: 'u-1',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-monitoring', 'system:authenticated'],
  extra: { 'authentication.kubernetes.io/pod-name': ['prometheus-k8s-0'] },
};

describe('bearerToken', () => {
  it('takes the token of an Authorization: Bearer header, whatever the case of the scheme', () => {
    expect(bearerToken('Bearer abc.def')).toEqual({ token: 'abc.def' });
    expect(bearerToken('bearer abc')).toEqual({ token: 'abc' });
  });

  it.each([
    [undefined, 'no bearer token'],
    ['', 'no bearer token'],
    ['Basic dXNlcjpwYXNz', 'not a bearer token'],
    ['Bearer', 'not a bearer token'],
    ['Bearer ', 'empty or malformed'],
    ['Bearer a b', 'empty or malformed'],
  ])('answers %j with 401 (%s), before any API call', (header, reason) => {
    const parsed = bearerToken(header);
    expect(parsed).toMatchObject({ refusal: { allowed: false, status: 401 } });
    expect('refusal' in parsed && parsed.refusal.reason).toContain(reason);
  });

  it('refuses a token over the budget unread, and several Authorization headers', () => {
    const huge = `Bearer ${'x'.repeat(METRICS_AUTH_LIMITS.maxTokenBytes + 1)}`;
    expect(bearerToken(huge)).toMatchObject({ refusal: { status: 401 } });
    expect(bearerToken(['Bearer a', 'Bearer b'])).toMatchObject({ refusal: { status: 401 } });
  });
});

describe('review decisions', () => {
  it('an authenticated TokenReview names the user, groups, uid and extra the SubjectAccessReview asks about', () => {
    const decided = tokenReviewDecision({ status: { authenticated: true, user: PROMETHEUS } });
    expect(decided).toEqual({ user: PROMETHEUS });
    expect(subjectAccessReviewBody(PROMETHEUS)).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: PROMETHEUS.username,
        uid: 'u-1',
        groups: PROMETHEUS.groups,
        extra: PROMETHEUS.extra,
        nonResourceAttributes: { path: '/metrics', verb: 'get' },
      },
    });
  });

  it('an unauthenticated or malformed TokenReview is a 401 that carries the API server error', () => {
    expect(tokenReviewDecision({ status: { authenticated: false, error: 'token expired' } })).toMatchObject({
      refusal: { status: 401, reason: expect.stringContaining('token expired') },
    });
    expect(tokenReviewDecision({})).toMatchObject({ refusal: { status: 401 } });
    expect(tokenReviewDecision({ status: { authenticated: true, user: {} } })).toMatchObject({
      refusal: { status: 401 },
    });
  });

  it('a SubjectAccessReview allows, or refuses with 403 naming the user and the grant to add', () => {
    expect(accessReviewDecision({ status: { allowed: true } }, PROMETHEUS)).toEqual({
      allowed: true,
      user: PROMETHEUS.username,
    });
    const denied = accessReviewDecision(
      { status: { allowed: false, reason: 'no RBAC policy matched' } },
      PROMETHEUS,
    );
    expect(denied).toMatchObject({ allowed: false, status: 403 });
    expect(!denied.allowed && denied.reason).toContain(
      `user "${PROMETHEUS.username}" may not get /metrics: no RBAC policy matched; grant it`,
    );
    // An explicit deny wins over allowed (authorizer chains answer so).
    expect(accessReviewDecision({ status: { allowed: true, denied: true } }, PROMETHEUS)).toMatchObject({
      status: 403,
    });
  });
});

describe('MetricsDecisionCache', () => {
  const allowed: MetricsAuthDecision = { allowed: true, user: 'u' };
  const forbidden: MetricsAuthDecision = { allowed: false, status: 403, reason: 'no' };

  it('keeps allowed decisions for allowTtlMs and refusals for denyTtlMs; never 429 or 503', () => {
    const cache = new MetricsDecisionCache({ ...METRICS_AUTH_LIMITS, allowTtlMs: 1000, denyTtlMs: 100 });
    cache.set('a', allowed, 0);
    cache.set('f', forbidden, 0);
    cache.set('busy', { allowed: false, status: 429, reason: 'busy' }, 0);
    cache.set('down', { allowed: false, status: 503, reason: 'down' }, 0);
    expect(cache.get('a', 99)).toEqual(allowed);
    expect(cache.get('f', 99)).toEqual(forbidden);
    expect(cache.get('busy', 0)).toBeUndefined();
    expect(cache.get('down', 0)).toBeUndefined();
    expect(cache.get('f', 100)).toBeUndefined();
    expect(cache.get('a', 999)).toEqual(allowed);
    expect(cache.get('a', 1000)).toBeUndefined();
    expect(cache.size()).toEqual({ entries: 0, bytes: 0 });
  });

  it('stays within its byte budget however many distinct tokens arrive, dropping the oldest first', () => {
    const maxCacheBytes = 4096;
    const cache = new MetricsDecisionCache({ ...METRICS_AUTH_LIMITS, maxCacheBytes });
    const keys: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      const key = tokenKey(`stranger-${i}`);
      keys.push(key);
      cache.set(key, { allowed: false, status: 401, reason: 'the API server did not authenticate' }, 0);
      expect(cache.size().bytes).toBeLessThanOrEqual(maxCacheBytes);
    }
    expect(cache.get(keys[0] ?? '', 1)).toBeUndefined();
    expect(cache.get(keys[keys.length - 1] ?? '', 1)).toBeDefined();
  });

  it('stays within its entry budget too', () => {
    const cache = new MetricsDecisionCache({ ...METRICS_AUTH_LIMITS, maxCacheEntries: 3 });
    for (const k of ['a', 'b', 'c', 'd']) cache.set(k, allowed, 0);
    expect(cache.size().entries).toBe(3);
    expect(cache.get('a', 0)).toBeUndefined();
  });

  it('keeps an allowed decision however many refusals of strangers arrive: refusals are dropped first', () => {
    const maxCacheBytes = 4096;
    const cache = new MetricsDecisionCache({ ...METRICS_AUTH_LIMITS, maxCacheBytes, maxCacheEntries: 8 });
    cache.set('prometheus', allowed, 0);
    for (let i = 0; i < 10_000; i++) {
      cache.set(tokenKey(`stranger-${i}`), { allowed: false, status: 401, reason: 'not authenticated' }, 0);
      expect(cache.size().bytes).toBeLessThanOrEqual(maxCacheBytes);
      expect(cache.size().entries).toBeLessThanOrEqual(8);
    }
    expect(cache.get('prometheus', 1)).toEqual(allowed);
  });

  it('keys by SHA-256, so no credential is held', () => {
    expect(tokenKey('secret-token')).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenKey('secret-token')).not.toContain('secret');
  });
});

/**
 * The filter's budgets, with an API server that answers only when the test says so (the reviews' answers are the
 * API server's shapes; the integration test proves them against a real one).
 */
describe('MetricsAuthFilter budgets', () => {
  function heldApiServer() {
    const waiting: { path: string; token?: string; answer: (body: unknown) => void }[] = [];
    return {
      waiting,
      client: {
        request: <T>(opts: { path: string; body?: unknown }): Promise<T> =>
          new Promise<T>((resolve) => {
            const spec = (opts.body as { spec?: { token?: string } }).spec;
            waiting.push({ path: opts.path, token: spec?.token, answer: (body) => resolve(body as T) });
          }),
      },
    };
  }
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  it('answers 429 without an API call once maxConcurrentReviews reviews are in flight', async () => {
    const api = heldApiServer();
    const filter = new MetricsAuthFilter({ client: api.client, limits: { maxConcurrentReviews: 2 } });
    const first = filter.decide('GET', 'Bearer stranger-1', '10.0.0.1');
    const second = filter.decide('GET', 'Bearer stranger-2', '10.0.0.2');
    await flush();
    const refused = await filter.decide('GET', 'Bearer stranger-3', '10.0.0.3');
    expect(refused).toMatchObject({ allowed: false, status: 429 });
    expect(api.waiting).toHaveLength(2);
    expect(filter.reviewsSent()).toBe(2);
    for (const w of api.waiting.splice(0)) w.answer({ status: { authenticated: false } });
    expect(await first).toMatchObject({ status: 401 });
    expect(await second).toMatchObject({ status: 401 });
  });

  it('gives one client at most maxConcurrentReviewsPerClient reviews, so a stranger cannot starve the scraper', async () => {
    const api = heldApiServer();
    const filter = new MetricsAuthFilter({
      client: api.client,
      limits: { maxConcurrentReviews: 4, maxConcurrentReviewsPerClient: 1 },
    });
    const stranger = filter.decide('GET', 'Bearer stranger-1', '10.0.0.66');
    await flush();
    for (let i = 2; i < 50; i++)
      expect(await filter.decide('GET', `Bearer stranger-${i}`, '10.0.0.66')).toMatchObject({ status: 429 });
    const prometheus = filter.decide('GET', 'Bearer prometheus', '10.0.0.7');
    await flush();
    expect(api.waiting.map((w) => w.token)).toEqual(['stranger-1', 'prometheus']);
    for (const w of api.waiting.splice(0)) w.answer({ status: { authenticated: false } });
    expect(await stranger).toMatchObject({ status: 401 });
    expect(await prometheus).toMatchObject({ status: 401 });
    // The client's slot is free again once its review is answered.
    void filter.decide('GET', 'Bearer stranger-99', '10.0.0.66');
    await flush();
    expect(api.waiting).toHaveLength(1);
  });

  it('lets one scraper address review two identities at once by default (a third waits with 429)', async () => {
    const api = heldApiServer();
    const filter = new MetricsAuthFilter({ client: api.client });
    const platform = filter.decide('GET', 'Bearer platform-prometheus', '10.0.0.9');
    const userWorkload = filter.decide('GET', 'Bearer user-workload-prometheus', '10.0.0.9');
    await flush();
    expect(api.waiting.map((w) => w.token)).toEqual(['platform-prometheus', 'user-workload-prometheus']);
    expect(await filter.decide('GET', 'Bearer third', '10.0.0.9')).toMatchObject({ status: 429 });
    for (const w of api.waiting.splice(0)) w.answer({ status: { authenticated: false } });
    expect(await platform).toMatchObject({ status: 401 });
    expect(await userWorkload).toMatchObject({ status: 401 });
  });

  it('shares one review between concurrent requests with the same token, then answers from the cache', async () => {
    const api = heldApiServer();
    const clock = new FakeClock(0);
    const filter = new MetricsAuthFilter({ client: api.client, clock });
    const a = filter.decide('GET', 'Bearer prometheus');
    const b = filter.decide('GET', 'Bearer prometheus');
    await flush();
    expect(api.waiting).toHaveLength(1);
    api.waiting.shift()?.answer({ status: { authenticated: true, user: PROMETHEUS } });
    await flush();
    expect(api.waiting[0]?.path).toBe('/apis/authorization.k8s.io/v1/subjectaccessreviews');
    api.waiting.shift()?.answer({ status: { allowed: true } });
    expect(await a).toEqual({ allowed: true, user: PROMETHEUS.username });
    expect(await b).toEqual({ allowed: true, user: PROMETHEUS.username });
    expect(await filter.decide('GET', 'Bearer prometheus')).toMatchObject({ allowed: true });
    expect(filter.reviewsSent()).toBe(2);
    // After allowTtlMs the next request is reviewed again.
    clock.step(METRICS_AUTH_LIMITS.allowTtlMs);
    void filter.decide('GET', 'Bearer prometheus');
    await flush();
    expect(api.waiting).toHaveLength(1);
  });

  it('checks HEAD as the verb head, as the API server and controller-runtime do: a get grant does not cover it', async () => {
    const api = heldApiServer();
    const filter = new MetricsAuthFilter({ client: api.client });
    const get = filter.decide('GET', 'Bearer prometheus');
    await flush();
    api.waiting.shift()?.answer({ status: { authenticated: true, user: PROMETHEUS } });
    await flush();
    api.waiting.shift()?.answer({ status: { allowed: true } });
    expect(await get).toMatchObject({ allowed: true });
    // The allowed get is not reused for HEAD: a review of its own, for the verb head.
    const head = filter.decide('HEAD', 'Bearer prometheus');
    await flush();
    api.waiting.shift()?.answer({ status: { authenticated: true, user: PROMETHEUS } });
    await flush();
    const access = api.waiting.shift();
    expect(access?.path).toBe('/apis/authorization.k8s.io/v1/subjectaccessreviews');
    access?.answer({ status: { allowed: false } });
    expect(await head).toMatchObject({
      allowed: false,
      status: 403,
      reason: expect.stringContaining('may not head'),
    });
  });

  it('a request without a token costs no API call', async () => {
    const api = heldApiServer();
    const filter = new MetricsAuthFilter({ client: api.client });
    expect(await filter.decide('GET', undefined)).toMatchObject({ status: 401 });
    expect(filter.reviewsSent()).toBe(0);
  });

  it('a failed review answers 503 and is not cached', async () => {
    let calls = 0;
    const filter = new MetricsAuthFilter({
      client: {
        request: () => {
          calls++;
          return Promise.reject(new Error('connection refused'));
        },
      },
    });
    expect(await filter.decide('GET', 'Bearer t')).toMatchObject({ status: 503 });
    expect(await filter.decide('GET', 'Bearer t')).toMatchObject({ status: 503 });
    expect(calls).toBe(2);
  });
});
