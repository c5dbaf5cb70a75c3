// Writes whose answer the caller does not use (Events, the pod placement patch) leave it unparsed: the call
// resolves with undefined, the connection is kept for the next request, and a refusal is still read and thrown.
import { describe, expect, it } from 'vitest';
import { ApiStatusError } from './errors.js';
import { ResourceClient } from './resource-client.js';
import { Pods } from './resources.js';
import { withScriptedApiServer } from './testing/index.js';

const pod = { metadata: { name: 'p', namespace: 'ns', labels: { big: 'x'.repeat(10_000) } } };

describe('discardAnswer', () => {
  it('resolves a successful write with undefined and reuses the connection', async () => {
    await withScriptedApiServer(
      () => ({ status: 200, body: pod }),
      async (client, { connections }) => {
        const pods = new ResourceClient(client, Pods);
        const ref = { namespace: 'ns', name: 'p' };
        // Without the option the answer is parsed as before.
        expect((await pods.mergePatch(ref, { metadata: {} })).metadata?.name).toBe('p');
        await expect(
          pods.mergePatch(ref, { metadata: {} }, { discardAnswer: true }),
        ).resolves.toBeUndefined();
        const warm = connections();
        for (let i = 0; i < 5; i++) {
          await expect(pods.create(pod, { discardAnswer: true })).resolves.toBeUndefined();
          await expect(
            pods.mergePatch(ref, { metadata: {} }, { discardAnswer: true }),
          ).resolves.toBeUndefined();
        }
        // Each answer was read to its end, so the connection went back to the pool.
        expect(connections()).toBe(warm);
      },
    );
  });

  it('still reads and throws a refusal', async () => {
    await withScriptedApiServer(
      () => ({
        status: 409,
        body: {
          kind: 'Status',
          status: 'Failure',
          reason: 'Conflict',
          code: 409,
          message: 'object was modified',
        },
      }),
      async (client) => {
        const pods = new ResourceClient(client, Pods);
        const err = await pods
          .mergePatch({ namespace: 'ns', name: 'p' }, { metadata: {} }, { discardAnswer: true })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ApiStatusError);
        expect((err as ApiStatusError).message).toContain('object was modified');
      },
    );
  });
});
