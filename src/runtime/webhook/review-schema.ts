// Validation of the review bodies the API server posts (AdmissionReview, ConversionReview) with TypeBox schemas,
// compiled once. Each schema part that can fail carries `badRequest`: the reason of the 400 answer when the value
// there is wrong, and a rank. The fast path is one compiled Check; on failure the lowest-ranked problem is
// reported (TypeBox lists missing properties before wrong ones, so rank, not discovery order, decides which
// reason a body with several problems gets: the envelope's before the request's, in reading order).
// The body was decoded within the server's byte, depth and value budgets before it reaches this module.
import type { Static, TSchema } from '@sinclair/typebox';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import { RuntimeError } from '../errors.js';

/** A review body the API server would not send: answered with HTTP 400 and the message as reason. */
export class WebhookBadRequestError extends RuntimeError {
  constructor(message: string) {
    super('TESSERA_WEBHOOK_BAD_REQUEST', message);
  }
}

/** Why the value at a schema part is refused; lower ranks are reported first. */
export interface BadRequestReason {
  readonly rank: number;
  /** `value` is what was found (undefined when missing); `path` its JSON pointer, e.g. `/request/objects/3`. */
  readonly message: (value: unknown, path: string) => string;
}

/** Schema options attaching a bad-request reason to a schema part. */
export function badRequest(
  rank: number,
  message: BadRequestReason['message'],
): { readonly badRequest: BadRequestReason } {
  return { badRequest: { rank, message } };
}

/** Returns `body` typed by the compiled schema, or throws WebhookBadRequestError with the first reason. */
export function validateReview<T extends TSchema>(check: TypeCheck<T>, body: unknown): Static<T> {
  if (check.Check(body)) return body;
  let best: { rank: number; message: string } | undefined;
  for (const error of check.Errors(body)) {
    const reason = (error.schema as { badRequest?: BadRequestReason }).badRequest;
    if (reason === undefined || (best !== undefined && reason.rank >= best.rank)) continue;
    best = { rank: reason.rank, message: reason.message(error.value, error.path) };
    if (reason.rank === 0) break;
  }
  throw new WebhookBadRequestError(best?.message ?? 'body is not a valid review');
}
