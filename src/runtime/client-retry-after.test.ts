// When the KubeClient asks the API server again: as client-go's rest client does, on a 429 with Retry-After (for
// any method: the server did not process it) or a 5xx with Retry-After to a read; never more than 10 attempts.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeClient, MAX_RETRY_AFTER_ATTEMPTS, retryAfterDelayMs } from './client.js';
import { ApiStatusError } from './errors.js';

describe('retryAfterDelayMs', () => {
  it('waits what the server says on a 429, for any method', () => {
    expect(retryAfterDelayMs(429, '1', 'GET', 1)).toBe(1000);
    expect(retryAfterDelayMs(429, '2', 'PATCH', 1)).toBe(2000);
    expect(retryAfterDelayMs(429, ['1', '5'], 'POST', 3)).toBe(1000);
  });
  it('retries a 5xx only for reads, and nothing without a Retry-After in whole seconds', () => {
    expect(retryAfterDelayMs(503, '1', 'GET', 1)).toBe(1000);
    expect(retryAfterDelayMs(503, '1', 'POST', 1)).toBeUndefined();
    expect(retryAfterDelayMs(429, undefined, 'GET', 1)).toBeUndefined();
    expect(retryAfterDelayMs(429, 'Wed, 21 Oct 2015 07:28:00 GMT', 'GET', 1)).toBeUndefined();
    expect(retryAfterDelayMs(409, '1', 'GET', 1)).toBeUndefined();
  });
  it('caps the wait and the attempts', () => {
    expect(retryAfterDelayMs(429, '3600', 'GET', 1)).toBe(10_000);
    expect(retryAfterDelayMs(429, '1', 'GET', MAX_RETRY_AFTER_ATTEMPTS)).toBeUndefined();
  });
});

describe('KubeClient and Retry-After', () => {
  it('asks again after "storage is (re)initializing", then gives the answer', async () => {
    let calls = 0;
    const server = createServer((_req, res) => {
      calls++;
      if (calls <= 2) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' });
        res.end(
          JSON.stringify({
            kind: 'Status',
            code: 429,
            reason: 'TooManyRequests',
            message: 'storage is (re)initializing',
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Thing', ok: true }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: 'c',
          server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const client = new KubeClient(kc);
    try {
      await expect(client.request({ method: 'GET', path: '/apis/x' })).resolves.toEqual({
        kind: 'Thing',
        ok: true,
      });
      expect(calls).toBe(3);
    } finally {
      await client.close();
      server.close();
    }
  });

  it('gives up after 10 attempts with the last answer', async () => {
    let calls = 0;
    const server = createServer((_req, res) => {
      calls++;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'busy' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: 'c',
          server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const client = new KubeClient(kc);
    try {
      const err = await client.request({ method: 'GET', path: '/apis/x' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiStatusError);
      expect((err as ApiStatusError).statusCode).toBe(429);
      expect(calls).toBe(MAX_RETRY_AFTER_ATTEMPTS);
    } finally {
      await client.close();
      server.close();
    }
  });
});
