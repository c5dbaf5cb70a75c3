// ConversionReview (apiextensions.k8s.io/v1) in and out, as pure functions: parseConversionReview() validates what
// the API server sent (throwing WebhookBadRequestError, answered with 400 like a malformed AdmissionReview), and
// convertReview() runs a Converter over every object, answering Failure (never a partial list) if any one fails.
// Converters must be pure and keep metadata other than labels/annotations: the API server rejects anything else.
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { isRecord } from '../json.js';
import { badRequest, validateReview } from './review-schema.js';
import { errorMessage } from '../errors.js';

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

/** An apiextensions.k8s.io/v1 ConversionReview; other fields pass through. */
const ConversionReviewSchema = Type.Object(
  {
    kind: Type.Literal(
      'ConversionReview',
      badRequest(1, (v) => `kind is ${JSON.stringify(v)}, expected "ConversionReview"`),
    ),
    apiVersion: Type.Literal(
      CONVERSION_API_VERSION,
      badRequest(
        2,
        (v) =>
          `apiVersion is ${JSON.stringify(v)}, expected "${CONVERSION_API_VERSION}" (set conversionReviewVersions: ["v1"])`,
      ),
    ),
    request: Type.Object(
      {
        uid: Type.String({ minLength: 1, ...badRequest(4, () => 'request.uid is missing') }),
        // A group/version has a slash (a constant pattern: nothing from the request goes into an expression).
        desiredAPIVersion: Type.String({
          pattern: '/',
          ...badRequest(5, (v) => `request.desiredAPIVersion ${JSON.stringify(v)} is not a group/version`),
        }),
        objects: Type.Array(
          Type.Object(
            {},
            badRequest(
              7,
              (_v, path) => `request.objects[${path.slice(path.lastIndexOf('/') + 1)}] is not an object`,
            ),
          ),
          badRequest(6, () => 'request.objects is not a list'),
        ),
      },
      badRequest(3, () => 'request is missing'),
    ),
  },
  badRequest(0, () => 'body is not a JSON object'),
);
const conversionReviewCheck = TypeCompiler.Compile(ConversionReviewSchema);

/** Validates a decoded request body as an apiextensions.k8s.io/v1 ConversionReview and returns its request. */
export function parseConversionReview(body: unknown): ConversionRequest {
  const { uid, desiredAPIVersion, objects } = validateReview(conversionReviewCheck, body).request;
  return { uid, desiredAPIVersion, objects: objects as Record<string, unknown>[] };
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
      const message = errorMessage(err);
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
