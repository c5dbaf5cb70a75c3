import { describe, expect, it } from 'vitest';
import {
  WebhookBadRequestError,
  admissionReviewResponse,
  denied,
  parseAdmissionReview,
  patched,
} from './admission.js';

const review = (request: unknown, extra: Record<string, unknown> = {}): unknown => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request,
  ...extra,
});
const validRequest = {
  uid: 'abc',
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  operation: 'CREATE',
  userInfo: { username: 'u' },
  object: { metadata: { name: 'p' } },
};

describe('parseAdmissionReview', () => {
  it('returns the request of a valid v1 review', () => {
    expect(parseAdmissionReview(review(validRequest))).toMatchObject({
      uid: 'abc',
      operation: 'CREATE',
      kind: { kind: 'Pod' },
    });
  });

  it.each([
    ['not an object', 'hello', /not a JSON object/],
    ['wrong kind', { ...(review(validRequest) as object), kind: 'Pod' }, /kind is "Pod"/],
    [
      'v1beta1',
      { ...(review(validRequest) as object), apiVersion: 'admission.k8s.io/v1beta1' },
      /admissionReviewVersions/,
    ],
    ['no request', review(undefined), /request is missing/],
    ['no uid', review({ ...validRequest, uid: '' }), /uid is missing/],
    ['bad operation', review({ ...validRequest, operation: 'PATCH' }), /operation "PATCH"/],
    ['no resource', review({ ...validRequest, resource: undefined }), /resource is missing/],
  ])('rejects %s with a readable reason', (_name, body, message) => {
    expect(() => parseAdmissionReview(body)).toThrow(WebhookBadRequestError);
    expect(() => parseAdmissionReview(body)).toThrow(message);
  });

  it('names the first problem in reading order when several parts are wrong', () => {
    // The schema lists missing properties before wrong ones; the reason must still follow the envelope's order.
    expect(() => parseAdmissionReview({ kind: 'Pod', apiVersion: 'v1' })).toThrow(/^kind is "Pod"/);
    expect(() => parseAdmissionReview({ kind: 'AdmissionReview', apiVersion: 'v1' })).toThrow(
      /^apiVersion is "v1"/,
    );
    expect(() => parseAdmissionReview(review({ operation: 'PATCH', userInfo: [] }))).toThrow(
      /^request\.uid is missing$/,
    );
    expect(() =>
      parseAdmissionReview(
        review({ ...validRequest, kind: { kind: 1 }, resource: undefined, userInfo: 'u' }),
      ),
    ).toThrow(/^request\.kind is missing$/);
    expect(() => parseAdmissionReview(review({ ...validRequest, userInfo: [] }))).toThrow(
      /^request\.userInfo is not an object$/,
    );
    expect(() => parseAdmissionReview([review(validRequest)])).toThrow(/^body is not a JSON object$/);
  });
});

describe('admission responses', () => {
  it('encodes the JSON patch between original and mutated as base64 JSONPatch', () => {
    const original = { metadata: { name: 'p', labels: { a: '1' } }, spec: { nodeSelector: {} } };
    const mutated = {
      metadata: { name: 'p', labels: { a: '1', b: '2' } },
      spec: { nodeSelector: { 'kubernetes.io/arch': 'arm64' } },
    };
    const out = admissionReviewResponse('abc', patched(original, mutated)) as {
      response: { patch: string; patchType: string; allowed: boolean; uid: string };
    };
    expect(out).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'abc', allowed: true, patchType: 'JSONPatch' },
    });
    const ops = JSON.parse(Buffer.from(out.response.patch, 'base64').toString('utf8')) as unknown[];
    expect(ops).toEqual(
      expect.arrayContaining([
        { op: 'add', path: '/metadata/labels/b', value: '2' },
        { op: 'add', path: '/spec/nodeSelector/kubernetes.io~1arch', value: 'arm64' },
      ]),
    );
  });

  it('omits the patch when nothing changed', () => {
    const out = admissionReviewResponse('u', patched({ a: 1 }, { a: 1 })) as {
      response: Record<string, unknown>;
    };
    expect(out.response).toEqual({ uid: 'u', allowed: true });
  });

  it('carries the denial status', () => {
    const out = admissionReviewResponse('u', denied('no arm64 image', 400, 'BadRequest')) as {
      response: Record<string, unknown>;
    };
    expect(out.response).toEqual({
      uid: 'u',
      allowed: false,
      status: { code: 400, message: 'no arm64 image', reason: 'BadRequest' },
    });
  });
});
