// When the KubeClient asks the API server again: as client-go's rest client does, on a 429 or a 5xx with Retry-After,
// for any method (the server sends it only for requests it turned away); never more than 10 attempts.
import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_ATTEMPTS, retryAfterDelayMs } from './client.js';
import { ApiStatusError } from './errors.js';
import { withScriptedApiServer } from './testing/index.js';

describe('retryAfterDelayMs', () => {
  it('waits what the server says on a 429 or a 5xx', () => {
    expect(retryAfterDelayMs(429, '1', 1)).toBe(1000);
    expect(retryAfterDelayMs(503, '2', 1)).toBe(2000);
    expect(retryAfterDelayMs(500, ['1', '5'], 3)).toBe(1000);
  });
  it('takes any other answer as it is, and nothing without a Retry-After in whole seconds', () => {
    expect(retryAfterDelayMs(429, undefined, 1)).toBeUndefined();
    expect(retryAfterDelayMs(503, undefined, 1)).toBeUndefined();
    expect(retryAfterDelayMs(429, 'Wed, 21 Oct 2015 07:28:00 GMT', 1)).toBeUndefined();
    expect(retryAfterDelayMs(409, '1', 1)).toBeUndefined();
    expect(retryAfterDelayMs(404, '1', 1)).toBeUndefined();
  });
  it('caps the wait and the attempts', () => {
    expect(retryAfterDelayMs(429, '3600', 1)).toBe(10_000);
    expect(retryAfterDelayMs(429, '1', MAX_RETRY_AFTER_ATTEMPTS)).toBeUndefined();
  });
});

const tooManyRequests = (message: string) => ({
  status: 429,
  headers: { 'retry-after': '0' },
  body: { kind: 'Status', code: 429, reason: 'TooManyRequests', message },
});

describe('KubeClient and Retry-After', () => {
  it('asks again after "storage is (re)initializing", then gives the answer', async () => {
    await withScriptedApiServer(
      (call) =>
        call <= 2
          ? tooManyRequests('storage is (re)initializing')
          : { status: 200, body: { kind: 'Thing', ok: true } },
      async (client, { calls }) => {
        await expect(client.request({ method: 'GET', path: '/apis/x' })).resolves.toEqual({
          kind: 'Thing',
          ok: true,
        });
        expect(calls()).toBe(3);
      },
    );
  });

  it('gives up after 10 attempts with the last answer', async () => {
    await withScriptedApiServer(
      () => tooManyRequests('busy'),
      async (client, { calls }) => {
        const err = await client.request({ method: 'GET', path: '/apis/x' }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ApiStatusError);
        expect((err as ApiStatusError).statusCode).toBe(429);
        expect(calls()).toBe(MAX_RETRY_AFTER_ATTEMPTS);
      },
    );
  });

  it('creates the object when a CRD update first turned the POST away with 503 and Retry-After', async () => {
    await withScriptedApiServer(
      (call) =>
        call === 1
          ? {
              status: 503,
              headers: { 'retry-after': '0' },
              body: {
                kind: 'Status',
                code: 503,
                reason: 'ServiceUnavailable',
                message: 'apiserver is shutting down',
              },
            }
          : { status: 201, body: { kind: 'Thing', metadata: { name: 'a' } } },
      async (client, { calls }) => {
        const created = await client.request({ method: 'POST', path: '/apis/x', body: { kind: 'Thing' } });
        expect(created).toMatchObject({ metadata: { name: 'a' } });
        expect(calls()).toBe(2);
      },
    );
  });

  it('does not ask again when a write fails with a 5xx without Retry-After', async () => {
    await withScriptedApiServer(
      () => ({
        status: 500,
        body: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd leader changed' },
      }),
      async (client, { calls }) => {
        const err = await client
          .request({ method: 'POST', path: '/apis/x', body: { kind: 'Thing' } })
          .catch((e: unknown) => e);
        expect((err as ApiStatusError).statusCode).toBe(500);
        expect(calls()).toBe(1);
      },
    );
  });
});
