// ConversionReview parsing and answering, as pure functions and over HTTPS through WebhookServer on loopback.
import https from 'node:https';
import { afterEach, describe, expect, it } from 'vitest';
import { convertReview, parseConversionReview, type Converter } from './conversion.js';
import { WebhookServer } from './server.js';
import { FakeClock } from '../testing/index.js';

const review = (request: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request,
  ...extra,
});

/** Rewrites apiVersion and marks the object; refuses objects named "bad". */
const marker: Converter = {
  convert(object, desiredAPIVersion) {
    const meta = object.metadata as { name?: string } | undefined;
    if (meta?.name === 'bad') throw new Error('field x cannot be expressed');
    return { ...object, apiVersion: desiredAPIVersion, converted: true };
  },
};

describe('parseConversionReview', () => {
  it('returns uid, desired version and objects of a valid review', () => {
    const req = parseConversionReview(
      review({ uid: 'u1', desiredAPIVersion: 'g.io/v1', objects: [{ apiVersion: 'g.io/v2' }] }),
    );
    expect(req).toEqual({ uid: 'u1', desiredAPIVersion: 'g.io/v1', objects: [{ apiVersion: 'g.io/v2' }] });
  });

  it.each([
    ['a non-object body', 'x', 'not a JSON object'],
    ['an AdmissionReview', { ...review({}), kind: 'AdmissionReview' }, 'expected "ConversionReview"'],
    [
      'v1beta1 reviews',
      { ...review({}), apiVersion: 'apiextensions.k8s.io/v1beta1' },
      'conversionReviewVersions',
    ],
    ['a missing request', review(undefined), 'request is missing'],
    ['a missing uid', review({ desiredAPIVersion: 'g/v1', objects: [] }), 'request.uid'],
    [
      'a version without group',
      review({ uid: 'u', desiredAPIVersion: 'v1', objects: [] }),
      'desiredAPIVersion',
    ],
    [
      'objects that are not a list',
      review({ uid: 'u', desiredAPIVersion: 'g/v1', objects: {} }),
      'not a list',
    ],
    ['a non-object item', review({ uid: 'u', desiredAPIVersion: 'g/v1', objects: [1] }), 'objects[0]'],
  ])('rejects %s with a bad-request error', (_what, body, message) => {
    expect(() => parseConversionReview(body)).toThrow(
      expect.objectContaining({
        code: 'TESSERA_WEBHOOK_BAD_REQUEST',
        message: expect.stringContaining(message),
      }),
    );
  });

  it('names the first non-object item, and the envelope before the request', () => {
    expect(() =>
      parseConversionReview(
        review({ uid: 'u', desiredAPIVersion: 'g/v1', objects: [{}, {}, 'x', {}, null] }),
      ),
    ).toThrow(/^request\.objects\[2\] is not an object$/);
    expect(() => parseConversionReview({ ...review({}), kind: 'X', apiVersion: 'v1' })).toThrow(
      /^kind is "X"/,
    );
    expect(() => parseConversionReview(review({ objects: 'x', desiredAPIVersion: 'v1' }))).toThrow(
      /^request\.uid is missing$/,
    );
  });
});

describe('convertReview', () => {
  it('converts every object in order and echoes the uid', () => {
    const res = convertReview(
      {
        uid: 'u2',
        desiredAPIVersion: 'g.io/v1',
        objects: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }],
      },
      marker,
    );
    expect(res.uid).toBe('u2');
    expect(res.result).toEqual({ status: 'Success' });
    expect(res.convertedObjects.map((o) => (o.metadata as { name: string }).name)).toEqual(['a', 'b']);
    expect(res.convertedObjects.every((o) => o.apiVersion === 'g.io/v1' && o.converted === true)).toBe(true);
  });

  it('fails the whole review, naming the object, when one object cannot be converted', () => {
    const res = convertReview(
      {
        uid: 'u3',
        desiredAPIVersion: 'g.io/v1',
        objects: [{ metadata: { name: 'a' } }, { metadata: { name: 'bad' } }],
      },
      marker,
    );
    expect(res.result.status).toBe('Failure');
    expect(res.result).toMatchObject({ message: expect.stringContaining('cannot convert bad to g.io/v1') });
    expect(res.convertedObjects).toEqual([]);
  });
});

describe('WebhookServer conversion endpoint', () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  async function serve(): Promise<{
    post(path: string, body: string): Promise<{ status: number; body: string }>;
  }> {
    const server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      devCertificate: {},
      clock: new FakeClock(0),
    });
    server.registerConversion('/convert', marker);
    const abort = new AbortController();
    const running = server.start(abort.signal);
    await server.ready();
    stops.push(async () => {
      abort.abort();
      await running;
    });
    const ca = server.caBundle();
    return {
      post: (path, body) =>
        new Promise((resolve, reject) => {
          const req = https.request(
            {
              host: '127.0.0.1',
              port: server.port(),
              path,
              method: 'POST',
              ca,
              servername: 'localhost',
              agent: false,
              headers: { 'content-type': 'application/json', connection: 'close' },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
              );
            },
          );
          req.on('error', reject);
          req.end(body);
        }),
    };
  }

  it('answers a ConversionReview with the converted objects', async () => {
    const { post } = await serve();
    const res = await post(
      '/convert',
      JSON.stringify(
        review({ uid: 'u4', desiredAPIVersion: 'g.io/v1', objects: [{ metadata: { name: 'a' } }] }),
      ),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'u4',
        result: { status: 'Success' },
        convertedObjects: [{ metadata: { name: 'a' }, apiVersion: 'g.io/v1', converted: true }],
      },
    });
  });

  it('answers 400 to a malformed review and to invalid JSON, and 404 to an unknown path', async () => {
    const { post } = await serve();
    expect((await post('/convert', JSON.stringify(review({ uid: 'u5' })))).status).toBe(400);
    expect((await post('/convert', '{')).status).toBe(400);
    expect((await post('/other', JSON.stringify(review({})))).status).toBe(404);
  });

  it('refuses to serve admission and conversion at the same path', () => {
    const server = new WebhookServer({ host: '127.0.0.1', port: 0, devCertificate: {} });
    server.registerConversion('/convert', marker);
    expect(() => server.register('/convert', { handle: () => ({ allowed: true }) })).toThrow(
      /already serves/,
    );
  });
});
