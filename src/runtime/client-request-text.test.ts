// Text answers (a container's log through pods/log) are read only up to the caller's budget, whatever the server
// sends; a refusal is still read and thrown.
import { describe, expect, it } from 'vitest';
import { ApiStatusError } from './errors.js';
import { withScriptedApiServer } from './testing/index.js';

describe('requestText', () => {
  it('returns at most maxBytes of a large answer, and the next request still works', async () => {
    await withScriptedApiServer(
      (call) => ({ status: 200, body: call === 1 ? 'x'.repeat(4_000_000) : 'short' }),
      async (client) => {
        const path = '/api/v1/namespaces/ns/pods/p/log';
        const text = await client.requestText({ method: 'GET', path }, 2048);
        expect(text).toHaveLength(2048);
        expect(text.startsWith('"xxx')).toBe(true);
        expect(await client.requestText({ method: 'GET', path }, 2048)).toBe('"short"');
      },
    );
  });

  it('throws a refusal with its message', async () => {
    await withScriptedApiServer(
      () => ({
        status: 400,
        body: {
          kind: 'Status',
          status: 'Failure',
          code: 400,
          message: 'previous terminated container not found',
        },
      }),
      async (client) => {
        const err = await client
          .requestText({ method: 'GET', path: '/api/v1/namespaces/ns/pods/p/log' }, 2048)
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ApiStatusError);
        expect((err as ApiStatusError).message).toContain('previous terminated container not found');
      },
    );
  });
});
