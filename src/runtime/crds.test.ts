// applyCrds: one server-side apply per CRD, then a wait until each is Established, paced by the caller's clock and
// bounded by timeoutMs. A stand-in client answers as the API server would (the integration tests of every area run
// the real one).
import { describe, expect, it, vi } from 'vitest';
import type { KubeClient } from './client.js';
import { applyCrds, CrdNotEstablishedError } from './crds.js';
import { FakeClock } from './testing/index.js';

interface Request {
  method: string;
  path: string;
  query?: Record<string, unknown>;
  contentType?: string;
}

/** A client whose CRDs become Established after `establishedAfterGets` reads (never when undefined). */
function crdServer(establishedAfterGets: number | undefined): { client: KubeClient; requests: Request[] } {
  const requests: Request[] = [];
  let gets = 0;
  const client = {
    request: <T>(r: Request): Promise<T> => {
      requests.push({ method: r.method, path: r.path, query: r.query, contentType: r.contentType });
      if (r.method !== 'GET') return Promise.resolve({} as T);
      gets++;
      const established = establishedAfterGets !== undefined && gets > establishedAfterGets;
      return Promise.resolve({
        status: {
          conditions: [
            established
              ? { type: 'Established', status: 'True' }
              : { type: 'Established', status: 'False', message: 'the initial names have not been accepted' },
          ],
        },
      } as T);
    },
  };
  return { client: client as unknown as KubeClient, requests };
}

const crd = (name: string) => ({ metadata: { name } });

describe('applyCrds', () => {
  it('applies every CRD with its field manager, then resolves once each is Established', async () => {
    const clock = new FakeClock();
    const { client, requests } = crdServer(1);
    const done = applyCrds(client, [crd('a.example.com'), crd('b.example.com')], {
      fieldManager: 'tessera-test',
      clock,
    });
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
    clock.step(100);
    await done;
    const patches = requests.filter((r) => r.method === 'PATCH');
    expect(patches.map((r) => r.path)).toEqual([
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/a.example.com',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/b.example.com',
    ]);
    expect(patches.every((r) => r.contentType === 'application/apply-patch+yaml')).toBe(true);
    expect(patches.every((r) => r.query?.['fieldManager'] === 'tessera-test' && r.query['force'])).toBe(true);
  });

  it("fails after timeoutMs naming the CRD and the API server's reason, when it never becomes Established", async () => {
    const clock = new FakeClock();
    const { client } = crdServer(undefined);
    const done = applyCrds(client, [crd('a.example.com')], { fieldManager: 't', timeoutMs: 1_000, clock });
    const failed = done.catch((err: unknown) => err);
    for (let waited = 0; waited <= 1_000; waited += 100) {
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
      clock.step(100);
    }
    const err = await failed;
    expect(err).toBeInstanceOf(CrdNotEstablishedError);
    expect((err as CrdNotEstablishedError).code).toBe('TESSERA_CRD_NOT_ESTABLISHED');
    expect((err as Error).message).toContain(
      'CRD a.example.com was applied but not Established after 1000 ms',
    );
    expect((err as Error).message).toContain('the initial names have not been accepted');
  });
});
