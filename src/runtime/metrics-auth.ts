// Who may read /metrics, decided as controller-runtime's filters.WithAuthenticationAndAuthorization decides it:
// the caller's bearer token is checked with a TokenReview, then the user it names with a SubjectAccessReview for
// `get` on the non-resource URL /metrics. This file is the pure core: reading the Authorization header, the two
// review bodies, the decisions taken from their answers, and the bounded cache of decisions. The imperative shell
// that calls the API server is ./metrics-auth-filter.ts.
//
// Budgets (a stranger controls the header, so everything is bounded before an API call):
//  - a request without a bearer token, or with one over MAX_TOKEN_BYTES, gets 401 and costs no API call;
//  - decisions are cached by the token's SHA-256 (never the token itself) for a short time, in a cache bounded by
//    bytes as well as entries, so Prometheus' scrapes cost one review pair a minute, not one per scrape;
//  - reviews in flight at once are bounded by the filter, in all and per client address (see
//    MetricsAuthLimits.maxConcurrentReviews): past either a request gets 429 without an API call, so strangers
//    cannot make the operator flood the API server, nor one stranger take every slot from the scraper.
import { createHash } from 'node:crypto';
import { isRecord } from './json.js';

/** Budgets and lifetimes of the metrics filter. */
export interface MetricsAuthLimits {
  /** A bearer token longer than this is refused (401) unread. Service account JWTs are 1-2 KiB. */
  readonly maxTokenBytes: number;
  /** Review pairs (TokenReview, then SubjectAccessReview) in flight at once; past it: 429, no API call. */
  readonly maxConcurrentReviews: number;
  /**
   * Of those, review pairs in flight for one client address; past it: 429, no API call. So one stranger sending new
   * tokens cannot hold every review slot while the scraper's cached decision expires (its scrapes would get 429).
   * Two, not one: one scraper may scrape with two identities at once (a Prometheus with two jobs, platform and
   * user-workload monitoring behind one address), and its second review must not be refused.
   */
  readonly maxConcurrentReviewsPerClient: number;
  /** Bytes the decision cache may hold (keys, user names and reasons counted). */
  readonly maxCacheBytes: number;
  /** Entries the decision cache may hold. */
  readonly maxCacheEntries: number;
  /** How long an allowed decision is reused (controller-runtime: 1 min authentication, 5 min authorization). */
  readonly allowTtlMs: number;
  /** How long a refusal (401 or 403) is reused (controller-runtime: 30 s authorization). */
  readonly denyTtlMs: number;
  /** Longest wait for each review (ms). */
  readonly reviewTimeoutMs: number;
}

export const METRICS_AUTH_LIMITS: MetricsAuthLimits = {
  maxTokenBytes: 8 * 1024,
  maxConcurrentReviews: 4,
  maxConcurrentReviewsPerClient: 2,
  maxCacheBytes: 256 * 1024,
  maxCacheEntries: 1024,
  allowTtlMs: 60_000,
  denyTtlMs: 30_000,
  reviewTimeoutMs: 10_000,
};

/** The path and verb every metrics caller must be allowed (as controller-runtime's filter checks them). */
export const METRICS_PATH = '/metrics';

export type MetricsAuthDecision =
  | { readonly allowed: true; readonly user: string }
  | { readonly allowed: false; readonly status: 401 | 403 | 429 | 503; readonly reason: string };

/** The user a TokenReview names: what the SubjectAccessReview asks about. */
export interface ReviewedUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The bearer token of an Authorization header, or the 401 that answers a request without a usable one. */
export function bearerToken(
  authorization: string | readonly string[] | undefined,
  limits: Pick<MetricsAuthLimits, 'maxTokenBytes'> = METRICS_AUTH_LIMITS,
): { token: string } | { refusal: MetricsAuthDecision & { allowed: false } } {
  const refuse = (reason: string) => ({ refusal: { allowed: false as const, status: 401 as const, reason } });
  if (authorization === undefined || authorization.length === 0)
    return refuse('no bearer token: send Authorization: Bearer <service account token>');
  if (typeof authorization !== 'string') return refuse('more than one Authorization header');
  if (authorization.length > limits.maxTokenBytes + 16)
    return refuse(`bearer token over ${limits.maxTokenBytes} bytes`);
  const space = authorization.indexOf(' ');
  if (space === -1 || authorization.slice(0, space).toLowerCase() !== 'bearer')
    return refuse('not a bearer token: only Authorization: Bearer is accepted');
  const token = authorization.slice(space + 1).trim();
  if (token === '' || /\s/.test(token)) return refuse('empty or malformed bearer token');
  if (Buffer.byteLength(token) > limits.maxTokenBytes)
    return refuse(`bearer token over ${limits.maxTokenBytes} bytes`);
  return { token };
}

/** The cache key of a token: its SHA-256, so the cache never holds a credential. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function tokenReviewBody(token: string): object {
  return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } };
}

/** The user an answered TokenReview authenticated, or the 401 decision. */
export function tokenReviewDecision(
  review: unknown,
): { user: ReviewedUser } | { refusal: MetricsAuthDecision & { allowed: false } } {
  const status = isRecord(review) && isRecord(review['status']) ? review['status'] : {};
  const user = isRecord(status['user']) ? status['user'] : {};
  const username = typeof user['username'] === 'string' ? user['username'] : '';
  if (status['authenticated'] !== true || username === '') {
    const error = typeof status['error'] === 'string' ? status['error'].slice(0, 200) : '';
    return {
      refusal: {
        allowed: false,
        status: 401,
        reason: `the API server did not authenticate the bearer token${error ? `: ${error}` : ''}`,
      },
    };
  }
  const groups = Array.isArray(user['groups'])
    ? user['groups'].filter((g): g is string => typeof g === 'string')
    : [];
  const extra: Record<string, string[]> = {};
  if (isRecord(user['extra']))
    for (const [key, values] of Object.entries(user['extra']))
      if (Array.isArray(values)) extra[key] = values.filter((v): v is string => typeof v === 'string');
  return {
    user: {
      username,
      ...(typeof user['uid'] === 'string' ? { uid: user['uid'] } : {}),
      groups,
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
    },
  };
}

/** The SubjectAccessReview of `VERB /metrics` for `user` (the API server's `extra` map is passed on as it was). */
export function subjectAccessReviewBody(user: ReviewedUser, verb = 'get'): object {
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: user.username,
      ...(user.uid === undefined ? {} : { uid: user.uid }),
      groups: user.groups,
      ...(user.extra === undefined ? {} : { extra: user.extra }),
      nonResourceAttributes: { path: METRICS_PATH, verb },
    },
  };
}

/** Allowed, or the 403 decision, from an answered SubjectAccessReview. */
export function accessReviewDecision(review: unknown, user: ReviewedUser, verb = 'get'): MetricsAuthDecision {
  const status = isRecord(review) && isRecord(review['status']) ? review['status'] : {};
  if (status['allowed'] === true && status['denied'] !== true) return { allowed: true, user: user.username };
  const why = typeof status['reason'] === 'string' && status['reason'] !== '' ? `: ${status['reason']}` : '';
  return {
    allowed: false,
    status: 403,
    reason: `user "${user.username.slice(0, 256)}" may not ${verb} ${METRICS_PATH}${why.slice(0, 200)}; grant it with a (Cluster)Role rule nonResourceURLs: ["${METRICS_PATH}"], verbs: ["${verb}"]`,
  };
}

/**
 * The Kubernetes verb of an HTTP method for a non-resource URL: the lower-cased method, as the API server's
 * request-info resolver and controller-runtime's filter take it (so HEAD needs a `head` grant, not `get`).
 */
export function metricsVerb(method: string | undefined): 'get' | 'head' | undefined {
  if (method === 'GET') return 'get';
  if (method === 'HEAD') return 'head';
  return undefined;
}

interface CacheEntry {
  readonly decision: MetricsAuthDecision;
  readonly expiresAt: number;
  readonly bytes: number;
}

/** Bytes an entry is counted as: the key, the decision's strings, and a fixed overhead for the Map slot. */
const ENTRY_OVERHEAD_BYTES = 96;

function entryBytes(key: string, decision: MetricsAuthDecision): number {
  const text = decision.allowed ? decision.user : decision.reason;
  return ENTRY_OVERHEAD_BYTES + key.length + 2 * text.length;
}

/**
 * Decisions by token key, each until its expiry, within `maxCacheBytes` and `maxCacheEntries`: past either, the
 * oldest refusals go first, and allowed decisions only when no refusal is left, so strangers sending new tokens
 * cannot push the scraper's decision out. Only 401, 403 and allowed decisions are kept (a 429 or 503 says nothing
 * about the token). Time comes from the caller, so the cache is a pure data structure.
 */
export class MetricsDecisionCache {
  private readonly allowed = new Map<string, CacheEntry>();
  private readonly refused = new Map<string, CacheEntry>();
  private bytes = 0;

  constructor(
    private readonly limits: Pick<
      MetricsAuthLimits,
      'maxCacheBytes' | 'maxCacheEntries' | 'allowTtlMs' | 'denyTtlMs'
    > = METRICS_AUTH_LIMITS,
  ) {}

  get(key: string, now: number): MetricsAuthDecision | undefined {
    const entry = this.allowed.get(key) ?? this.refused.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.remove(key, entry);
      return undefined;
    }
    return entry.decision;
  }

  set(key: string, decision: MetricsAuthDecision, now: number): void {
    if (!decision.allowed && decision.status !== 401 && decision.status !== 403) return;
    const bytes = entryBytes(key, decision);
    if (bytes > this.limits.maxCacheBytes) return;
    const old = this.allowed.get(key) ?? this.refused.get(key);
    if (old) this.remove(key, old);
    const ttl = decision.allowed ? this.limits.allowTtlMs : this.limits.denyTtlMs;
    (decision.allowed ? this.allowed : this.refused).set(key, { decision, expiresAt: now + ttl, bytes });
    this.bytes += bytes;
    for (const map of [this.refused, this.allowed])
      for (const [oldestKey, oldest] of map) {
        if (!this.overBudget()) return;
        this.remove(oldestKey, oldest);
      }
  }

  /** Entries and bytes held (for tests and metrics). */
  size(): { entries: number; bytes: number } {
    return { entries: this.allowed.size + this.refused.size, bytes: this.bytes };
  }

  private overBudget(): boolean {
    return (
      this.bytes > this.limits.maxCacheBytes ||
      this.allowed.size + this.refused.size > this.limits.maxCacheEntries
    );
  }

  private remove(key: string, entry: CacheEntry): void {
    (entry.decision.allowed ? this.allowed : this.refused).delete(key);
    this.bytes -= entry.bytes;
  }
}
