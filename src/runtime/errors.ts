// Typed errors of the controller runtime, and TesseraError, the one base of every Tessera error (each area's
// errors.ts extends it with its own codes). Every error carries a stable `code`; callers branch on `code`
// (or `instanceof`), never on the message. Messages say what happened and what the user can do about it.

export type RuntimeErrorCode =
  | 'TESSERA_INVALID_ARGUMENT'
  | 'TESSERA_API_STATUS'
  | 'TESSERA_API_TRANSPORT'
  | 'TESSERA_API_RESPONSE_TOO_LARGE'
  | 'TESSERA_API_RESPONSE_MALFORMED'
  | 'TESSERA_WATCH_EXPIRED'
  | 'TESSERA_WATCH_STALLED'
  | 'TESSERA_QUEUE_SHUT_DOWN'
  | 'TESSERA_TERMINAL'
  | 'TESSERA_LEADER_ELECTION'
  | 'TESSERA_WEBHOOK_BAD_REQUEST'
  | 'TESSERA_WEBHOOK_HANDLER_TIMEOUT'
  | 'TESSERA_CERTIFICATE'
  | 'TESSERA_INVALID_LABEL_SELECTOR'
  | 'TESSERA_JSON_TOO_LARGE'
  | 'TESSERA_CRD_NOT_ESTABLISHED';

/**
 * Root of every Tessera error, whatever the area: `code` is stable (`TESSERA_<AREA>_<WHAT>`), so callers and
 * users branch on it, never on the message. Each area narrows `Code` to its own union in its errors.ts.
 */
export class TesseraError<Code extends string = string> extends Error {
  readonly code: Code;
  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
  }
}

/** Root of all runtime errors. */
export class RuntimeError extends TesseraError<RuntimeErrorCode> {}

/**
 * An option, command-line flag or argument was malformed, out of range or inconsistent: the one such error of
 * every area (code TESSERA_INVALID_ARGUMENT). `field` names it: an option (`maxBytes`) reads "invalid option
 * maxBytes: ...", a flag (`--output`) or an argument (`NAMESPACE/NAME`, kind 'argument') "invalid value for
 * --output: ...".
 */
export class InvalidArgumentError extends RuntimeError {
  readonly field: string;
  constructor(
    field: string,
    detail: string,
    kind: 'option' | 'argument' = field.startsWith('-') ? 'argument' : 'option',
  ) {
    super(
      'TESSERA_INVALID_ARGUMENT',
      kind === 'argument' ? `invalid value for ${field}: ${detail}` : `invalid option ${field}: ${detail}`,
    );
    this.field = field;
  }
}

/** The API server answered with a non-2xx status (a metav1.Status body when it sent one). */
export class ApiStatusError extends RuntimeError {
  readonly statusCode: number;
  /** metav1.Status `reason` such as `Conflict`, `NotFound`, `Expired`, `AlreadyExists`; '' when absent. */
  readonly reason: string;
  readonly body: unknown;
  constructor(
    method: string,
    path: string,
    statusCode: number,
    reason: string,
    message: string,
    body: unknown,
  ) {
    super(
      'TESSERA_API_STATUS',
      `${method} ${path}: HTTP ${statusCode}${reason ? ` ${reason}` : ''}: ${message}`,
    );
    this.statusCode = statusCode;
    this.reason = reason;
    this.body = body;
  }
}

/** The request never got an HTTP answer (connection refused/reset, TLS failure, timeout). Retrying may help. */
export class ApiTransportError extends RuntimeError {
  constructor(method: string, path: string, cause: unknown) {
    super(
      'TESSERA_API_TRANSPORT',
      `${method} ${path}: no answer from the API server (${cause instanceof Error ? cause.message : String(cause)}); check that it is reachable`,
      { cause },
    );
  }
}

/**
 * An answer of the API server broke a budget of the client (`TOO_LARGE`: one object, or a list's envelope, larger
 * than the limit) or is not what the request returns (`MALFORMED`: not JSON, truncated, not a list). The answer
 * was read no further than the point where it broke the rule. `budget` names the option that sets the limit.
 */
export class ApiResponseError extends RuntimeError {
  readonly budget: string | undefined;
  constructor(
    code: 'TESSERA_API_RESPONSE_TOO_LARGE' | 'TESSERA_API_RESPONSE_MALFORMED',
    message: string,
    options?: { budget?: string; cause?: unknown },
  ) {
    super(code, message, options);
    this.budget = options?.budget;
  }
}

/** The watch's resourceVersion is too old (HTTP 410 / ERROR event with code 410): the reflector must relist. */
export class WatchExpiredError extends RuntimeError {
  constructor(message: string) {
    super('TESSERA_WATCH_EXPIRED', message);
  }
}

/** No event nor bookmark arrived within the watchdog period: the watch is presumed dead and is restarted. */
export class WatchStalledError extends RuntimeError {
  constructor(quietMs: number) {
    super('TESSERA_WATCH_STALLED', `watch received nothing for ${quietMs} ms; restarting it`);
  }
}

/**
 * Thrown by a reconciler to say "retrying will not help": the controller logs it and forgets the key instead of
 * re-queueing it with backoff. Wrap the real cause.
 */
export class TerminalError extends RuntimeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TESSERA_TERMINAL', message, options);
  }
}

/**
 * A JSON document was refused before parsing because its shape broke a budget (see json-budget.ts): nested deeper
 * than `limit` levels, or more than `limit` values. `what` names the document; the message says which budget.
 */
export class JsonTooLargeError extends RuntimeError {
  readonly what: string;
  readonly budget: 'depth' | 'values';
  readonly limit: number;
  constructor(what: string, budget: 'depth' | 'values', limit: number) {
    super(
      'TESSERA_JSON_TOO_LARGE',
      budget === 'depth'
        ? `${what} nests arrays and objects deeper than ${limit} levels, the most accepted; it was not parsed`
        : `${what} has more than ${limit} JSON values (arrays, objects and their items), the most accepted; it was not parsed`,
    );
    this.what = what;
    this.budget = budget;
    this.limit = limit;
  }
}

/** Helpers for branching on API errors without reading messages. */
export function isNotFound(err: unknown): boolean {
  return err instanceof ApiStatusError && err.statusCode === 404;
}
export function isConflict(err: unknown): boolean {
  return err instanceof ApiStatusError && err.statusCode === 409 && err.reason === 'Conflict';
}
export function isAlreadyExists(err: unknown): boolean {
  return err instanceof ApiStatusError && err.statusCode === 409 && err.reason === 'AlreadyExists';
}
export function isGone(err: unknown): boolean {
  return (err instanceof ApiStatusError && err.statusCode === 410) || err instanceof WatchExpiredError;
}

/**
 * The result of an API read, or undefined when the API server answered 404 (the object, or its kind, is not
 * there): for reads of what may be absent. Every other failure is rethrown, so a caller that goes on without the
 * object can say why it could not read it.
 */
export async function ignoreNotFound<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** What went wrong, for a log line or a message: an Error's message, anything else as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
