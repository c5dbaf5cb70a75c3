// ConversionReview (apiextensions.k8s.io/v1) in and out, as pure functions: parseConversionReview() validates what
// the API server sent (throwing WebhookBadRequestError, answered with 400 like a malformed AdmissionReview), and
// convertReview() runs a Converter over every object, answering Failure (never a partial list) if any one fails.
// Converters must be pure and keep metadata other than labels/annotations: the API server rejects anything else.
import { WebhookBadRequestError } from './admission.js';

export const CONVERSION_API_VERSION = 'apiextensions.k8s.io/v1';

/** apiextensions.k8s.io/v1 ConversionRequest. */
export interface ConversionRequest {
  uid: string;
  /** group/version the objects must be converted to, e.g. `multiarch.openshift.io/v1beta1`. */
  desiredAPIVersion: string;
  objects: Record<string, unknown>[];
}

/** Converts one custom resource; throws (any error) when it cannot, which fails the whole review. */
export interface Converter {
  convert(object: Record<string, unknown>, desiredAPIVersion: string): Record<string, unknown>;
}

/** apiextensions.k8s.io/v1 ConversionResponse. */
export interface ConversionResponse {
  uid: string;
  result: { status: 'Success' } | { status: 'Failure'; message: string };
  convertedObjects: Record<string, unknown>[];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validates a decoded request body as an apiextensions.k8s.io/v1 ConversionReview and returns its request. */
export function parseConversionReview(body: unknown): ConversionRequest {
  if (!isRecord(body)) throw new WebhookBadRequestError('body is not a JSON object');
  if (body.kind !== 'ConversionReview')
    throw new WebhookBadRequestError(`kind is ${JSON.stringify(body.kind)}, expected "ConversionReview"`);
  if (body.apiVersion !== CONVERSION_API_VERSION) {
    throw new WebhookBadRequestError(
      `apiVersion is ${JSON.stringify(body.apiVersion)}, expected "${CONVERSION_API_VERSION}" (set conversionReviewVersions: ["v1"])`,
    );
  }
  const req = body.request;
  if (!isRecord(req)) throw new WebhookBadRequestError('request is missing');
  if (typeof req.uid !== 'string' || req.uid === '')
    throw new WebhookBadRequestError('request.uid is missing');
  if (typeof req.desiredAPIVersion !== 'string' || !req.desiredAPIVersion.includes('/'))
    throw new WebhookBadRequestError(
      `request.desiredAPIVersion ${JSON.stringify(req.desiredAPIVersion)} is not a group/version`,
    );
  if (!Array.isArray(req.objects)) throw new WebhookBadRequestError('request.objects is not a list');
  const objects: Record<string, unknown>[] = [];
  for (const [i, o] of req.objects.entries()) {
    if (!isRecord(o)) throw new WebhookBadRequestError(`request.objects[${i}] is not an object`);
    objects.push(o);
  }
  return { uid: req.uid, desiredAPIVersion: req.desiredAPIVersion, objects };
}

/** Converts every object of `request`; a converter error becomes a Failure result naming the object. */
export function convertReview(request: ConversionRequest, converter: Converter): ConversionResponse {
  const convertedObjects: Record<string, unknown>[] = [];
  for (const object of request.objects) {
    try {
      convertedObjects.push(converter.convert(object, request.desiredAPIVersion));
    } catch (err) {
      const meta = isRecord(object.metadata) ? object.metadata : {};
      const name = typeof meta.name === 'string' ? meta.name : '<unnamed>';
      const message = err instanceof Error ? err.message : String(err);
      return {
        uid: request.uid,
        result: {
          status: 'Failure',
          message: `cannot convert ${name} to ${request.desiredAPIVersion}: ${message}`,
        },
        convertedObjects: [],
      };
    }
  }
  return { uid: request.uid, result: { status: 'Success' }, convertedObjects };
}

/** The ConversionReview to send back. */
export function conversionReviewResponse(response: ConversionResponse): Record<string, unknown> {
  return { apiVersion: CONVERSION_API_VERSION, kind: 'ConversionReview', response };
}
