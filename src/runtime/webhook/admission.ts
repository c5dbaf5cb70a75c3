// AdmissionReview v1 in and out, as pure functions: parseAdmissionReview() validates what the API server sent
// (throwing WebhookBadRequestError with a reason fit for a 400 answer and a log line), and the response
// constructors (allowed, denied, patched, errored) build what a handler returns. patched() computes the RFC 6902
// JSON patch between the original and the mutated object, which the server base64-encodes into the response.
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { badRequest, validateReview, WebhookBadRequestError } from './review-schema.js';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export { WebhookBadRequestError };

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** admission.k8s.io/v1 AdmissionRequest (the fields handlers use). */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  /** The object being admitted (absent on DELETE). */
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

/** What a handler decides. */
export interface AdmissionResult {
  allowed: boolean;
  /** Shown to the user on denial. */
  status?: { code?: number; message?: string; reason?: string };
  /** JSON patch to apply (mutating webhooks). */
  patch?: Operation[];
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/**
 * What the server answers for a handler that throws or misses its time budget, named after the webhook
 * configuration's failurePolicy: 'Fail' denies (allowed=false, code 500, the reason in the message); 'Ignore'
 * admits the object unchanged (allowed=true, no patch). Either way the failure is logged and counted.
 */
export type HandlerFailurePolicy = 'Fail' | 'Ignore';

export interface AdmissionHandler {
  /** Decides on one request; `signal` aborts when the handler's time budget runs out. */
  handle(request: AdmissionRequest, signal: AbortSignal): Promise<AdmissionResult> | AdmissionResult;
  /** Default: 'Fail'. Mutating webhooks that must never block admission say 'Ignore'. */
  readonly failurePolicy?: HandlerFailurePolicy;
}

export function allowed(message?: string): AdmissionResult {
  return message ? { allowed: true, status: { code: 200, message } } : { allowed: true };
}

export function denied(message: string, code = 403, reason = 'Forbidden'): AdmissionResult {
  return { allowed: false, status: { code, message, reason } };
}

export function errored(code: number, err: unknown): AdmissionResult {
  return { allowed: false, status: { code, message: err instanceof Error ? err.message : String(err) } };
}

/** Allows with the JSON patch turning `original` into `mutated` (no patch when equal). */
export function patched(original: unknown, mutated: unknown, warnings?: string[]): AdmissionResult {
  const ops = fastJsonPatch.compare(original as object, mutated as object);
  const result: AdmissionResult = { allowed: true };
  if (ops.length > 0) result.patch = ops;
  if (warnings?.length) result.warnings = warnings;
  return result;
}

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;

const requestKind = badRequest(6, () => 'request.kind is missing');
const requestResource = badRequest(7, () => 'request.resource is missing');

/** The parts of an admission.k8s.io/v1 AdmissionReview the server relies on; other fields pass through. */
const AdmissionReviewSchema = Type.Object(
  {
    kind: Type.Literal(
      'AdmissionReview',
      badRequest(1, (v) => `kind is ${JSON.stringify(v)}, expected "AdmissionReview"`),
    ),
    apiVersion: Type.Literal(
      ADMISSION_API_VERSION,
      badRequest(
        2,
        (v) =>
          `apiVersion is ${JSON.stringify(v)}, expected "${ADMISSION_API_VERSION}" (set admissionReviewVersions: ["v1"])`,
      ),
    ),
    request: Type.Object(
      {
        uid: Type.String({ minLength: 1, ...badRequest(4, () => 'request.uid is missing') }),
        operation: Type.Union(
          OPERATIONS.map((op) => Type.Literal(op)),
          badRequest(
            5,
            (v) => `request.operation ${JSON.stringify(v)} is not one of ${OPERATIONS.join(', ')}`,
          ),
        ),
        kind: Type.Object({ kind: Type.String(requestKind) }, requestKind),
        resource: Type.Object({ resource: Type.String(requestResource) }, requestResource),
        userInfo: Type.Optional(
          Type.Object(
            {},
            badRequest(8, () => 'request.userInfo is not an object'),
          ),
        ),
      },
      badRequest(3, () => 'request is missing'),
    ),
  },
  badRequest(0, () => 'body is not a JSON object'),
);
const admissionReviewCheck = TypeCompiler.Compile(AdmissionReviewSchema);

/** Validates a decoded request body as an admission.k8s.io/v1 AdmissionReview and returns its request. */
export function parseAdmissionReview(body: unknown): AdmissionRequest {
  const req = validateReview(admissionReviewCheck, body).request;
  return {
    ...(req as unknown as AdmissionRequest),
    userInfo: (req.userInfo ?? {}) as AdmissionRequest['userInfo'],
  };
}

/** The AdmissionReview to send back for request `uid`. */
export function admissionReviewResponse(uid: string, result: AdmissionResult): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: result.allowed };
  if (result.status) response.status = result.status;
  if (result.patch && result.patch.length > 0) {
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(result.patch)).toString('base64');
  }
  if (result.warnings?.length) response.warnings = result.warnings;
  if (result.auditAnnotations) response.auditAnnotations = result.auditAnnotations;
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}
