// The imperative shell of the metrics filter (decisions in ./metrics-auth.ts): asks the API server a TokenReview
// and a SubjectAccessReview with the process's own credentials, caches the outcome by token hash, shares one review
// between concurrent requests that carry the same token, and refuses with 429 (no API call) once
// `maxConcurrentReviews` reviews are in flight, or `maxConcurrentReviewsPerClient` for the request's client
// address. A review that fails (API server unreachable, 5xx, forbidden to the operator's own service account)
// answers 503 and is not cached.
import type { KubeClient } from './client.js';
import { realClock, type Clock } from './clock.js';
import { silentLogger, type Logger } from './logging.js';
import {
  METRICS_AUTH_LIMITS,
  MetricsDecisionCache,
  accessReviewDecision,
  bearerToken,
  metricsVerb,
  subjectAccessReviewBody,
  tokenKey,
  tokenReviewBody,
  tokenReviewDecision,
  type MetricsAuthDecision,
  type MetricsAuthLimits,
} from './metrics-auth.js';
import { errorMessage } from './errors.js';

export interface MetricsAuthFilterOptions {
  client: Pick<KubeClient, 'request'>;
  limits?: Partial<MetricsAuthLimits>;
  clock?: Clock;
  logger?: Logger;
}

export class MetricsAuthFilter {
  private readonly limits: MetricsAuthLimits;
  private readonly cache: MetricsDecisionCache;
  private readonly clock: Clock;
  private readonly logger: Logger;
  /** Reviews in flight by token key; its size is the concurrency the limit bounds. */
  private readonly inFlight = new Map<string, Promise<MetricsAuthDecision>>();
  /** Reviews in flight by client address (at most one entry per review in flight). */
  private readonly inFlightByClient = new Map<string, number>();
  private apiCalls = 0;

  constructor(private readonly options: MetricsAuthFilterOptions) {
    this.limits = { ...METRICS_AUTH_LIMITS, ...options.limits };
    this.cache = new MetricsDecisionCache(this.limits);
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
  }

  /** API calls made so far (TokenReviews and SubjectAccessReviews). */
  reviewsSent(): number {
    return this.apiCalls;
  }

  /** The decision for a request with these method, Authorization header and client address. */
  async decide(
    method: string | undefined,
    authorization: string | readonly string[] | undefined,
    client = '',
  ): Promise<MetricsAuthDecision> {
    const parsed = bearerToken(authorization, this.limits);
    if ('refusal' in parsed) return parsed.refusal;
    const verb = metricsVerb(method) ?? 'get';
    // A decision is for one verb: a token allowed `get` is not thereby allowed `head`.
    const key = `${verb}:${tokenKey(parsed.token)}`;
    const cached = this.cache.get(key, this.clock.now());
    if (cached) return cached;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    if (this.inFlight.size >= this.limits.maxConcurrentReviews)
      return {
        allowed: false,
        status: 429,
        reason: `${this.limits.maxConcurrentReviews} credential reviews already in flight; retry shortly`,
      };
    const ofClient = this.inFlightByClient.get(client) ?? 0;
    if (ofClient >= this.limits.maxConcurrentReviewsPerClient)
      return {
        allowed: false,
        status: 429,
        reason: `${ofClient} credential reviews of this client already in flight; retry shortly`,
      };
    const review = this.review(parsed.token, verb).then((decision) => {
      this.cache.set(key, decision, this.clock.now());
      return decision;
    });
    this.inFlight.set(key, review);
    this.inFlightByClient.set(client, ofClient + 1);
    try {
      return await review;
    } finally {
      this.inFlight.delete(key);
      const left = (this.inFlightByClient.get(client) ?? 1) - 1;
      if (left > 0) this.inFlightByClient.set(client, left);
      else this.inFlightByClient.delete(client);
    }
  }

  private async review(token: string, verb: string): Promise<MetricsAuthDecision> {
    const timeoutMs = this.limits.reviewTimeoutMs;
    try {
      this.apiCalls++;
      const tokenReview = await this.options.client.request<unknown>({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: tokenReviewBody(token),
        timeoutMs,
      });
      const authenticated = tokenReviewDecision(tokenReview);
      if ('refusal' in authenticated) return authenticated.refusal;
      this.apiCalls++;
      const accessReview = await this.options.client.request<unknown>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: subjectAccessReviewBody(authenticated.user, verb),
        timeoutMs,
      });
      return accessReviewDecision(accessReview, authenticated.user, verb);
    } catch (err) {
      this.logger.warn(
        { err: errorMessage(err) },
        "cannot review a metrics caller's credentials; answering 503 (the operator needs create on tokenreviews and subjectaccessreviews)",
      );
      return {
        allowed: false,
        status: 503,
        reason: 'credentials cannot be reviewed right now; retry later',
      };
    }
  }
}
