// Issue #20 items 2 and 5: list pages of large tenant pods. A page used to be read as one string, then parsed
// whole, then cached whole: 60 gated pods of 1.4 MB took the controller (heap 160 MiB) down, and one page of 500
// pods of 1.2 MB is a string over V8's limit, so `tessera podplacement release -A` released nothing. Both now decode
// pages pod by pod and keep only what they read (projectGatedPod). Here the real gated-pod informer and the real
// release command run in child processes under the controller Deployment's heap flags, against a loopback API
// server that streams the pods (no real API server: the integration tier has that, test/integration/hostile).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBigPodsApiServer, type BigPodsApiServer } from './big-pods-apiserver.js';
import { controllerHeapFlags, repositoryRoot, runChild } from './child-process.js';

const MB = 1_000_000;
let api: BigPodsApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('large tenant pods in list pages, under the controller heap limit', () => {
  it('the gated-pod informer of the controller syncs 60 pods of 1.4 MB and caches them small', async () => {
    api = await startBigPodsApiServer({ namespaces: [['tenant', 60]], podBytes: 1.4 * MB });
    const outcome = await runChild<{ cached: number; images: string[]; cachedBytes: number }>(
      'test/unit/hostile/gated-pod-cache-child.ts',
      controllerHeapFlags,
      { KUBECONFIG_PATH: api.kubeconfigPath },
    );
    expect({ exitCode: outcome.exitCode, signal: outcome.signal }).toEqual({ exitCode: 0, signal: null });
    expect(outcome.printed?.cached).toBe(60);
    expect(outcome.printed?.images).toEqual(['registry.example/app:1']);
    // 84 MB of pods on the wire; the cache keeps a few hundred bytes of each.
    expect(outcome.printed?.cachedBytes).toBeLessThan(60 * 1024);
  }, 120_000);

  it('release -A releases 520 pods when 500 of 1.2 MB sort first, listing in bounded pages', async () => {
    api = await startBigPodsApiServer({
      namespaces: [
        ['aaa-tenant', 500],
        ['zzz-other', 20],
      ],
      podBytes: 1.2 * MB,
    });
    const kubeconfig = api.kubeconfigPath;
    const run = await new Promise<{
      code: number | null;
      signal: string | null;
      stdout: string;
      stderr: string;
    }>((resolve, reject) => {
      const proc = spawn(
        process.execPath,
        [
          ...controllerHeapFlags,
          '--import',
          'tsx',
          path.join(repositoryRoot, 'src/cli/main.ts'),
          'podplacement',
          'release',
          '-A',
          '--kubeconfig',
          kubeconfig,
        ],
        { cwd: repositoryRoot, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      proc.on('error', reject);
      proc.on('close', (code, signal) => resolve({ code, signal, stdout, stderr: stderr.slice(-2000) }));
    });
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toMatchObject({
      code: 0,
      signal: null,
    });
    expect(run.stdout).toContain('520 pod(s) released');
    expect(api.patches.size).toBe(520);
    const patch = api.patches.get('aaa-tenant/pod-0000') as {
      metadata: { resourceVersion?: string };
      spec: { schedulingGates: unknown[] };
    };
    expect(patch.spec.schedulingGates).toEqual([]);
    expect(patch.metadata.resourceVersion).toBe('10');
    expect(JSON.stringify(patch)).not.toContain('BLOB');
    expect(api.lists.largestLimit).toBeLessThanOrEqual(100);
  }, 300_000);
});
