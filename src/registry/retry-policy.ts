// When to retry a registry request and how long to wait: 429 and 5xx (except 501/505, which will not change)
// and transport failures are retried with exponential backoff; a `Retry-After` header (seconds or HTTP date)
// replaces the computed delay, bounded by `maxDelayMs`. Pure: `now` and `random` are passed in.

export interface RetryPolicy {
  /** Retries after the first attempt. Default: 3. */
  readonly maxRetries: number;
  /** First backoff delay in ms, doubled per attempt. Default: 200. */
  readonly baseDelayMs: number;
  /** Longest wait in ms, also the cap for Retry-After. Default: 10_000. */
  readonly maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { maxRetries: 3, baseDelayMs: 200, maxDelayMs: 10_000 };

export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

/** Milliseconds a `Retry-After` value asks for; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/**
 * Delay before retry number `retry` (1-based). Backoff is "equal jitter": half fixed, half random, so that
 * many clients do not retry in lockstep; Retry-After, when given, is honoured exactly (capped).
 */
export function retryDelayMs(
  retry: number,
  retryAfterMs: number | undefined,
  policy: RetryPolicy,
  random: () => number,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxDelayMs);
  const exponential = Math.min(policy.baseDelayMs * 2 ** (retry - 1), policy.maxDelayMs);
  return exponential / 2 + (exponential / 2) * random();
}
