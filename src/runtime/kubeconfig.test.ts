import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from './errors.js';
import { loadKubeConfig } from './kubeconfig.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-kubeconfig-'));

describe('loadKubeConfig', () => {
  it('loads the file the flag names', async () => {
    const file = path.join(dir, 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    const kubeConfig = await loadKubeConfig(file);
    expect(kubeConfig.getCurrentContext()).toBe('x');
    expect(kubeConfig.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
  });

  it('refuses a file it cannot load, naming the flag and the file', async () => {
    const missing = path.join(dir, 'absent');
    const err: unknown = await loadKubeConfig(missing, '--hosted-kubeconfig').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).field).toBe('--hosted-kubeconfig');
    expect((err as Error).message).toMatch(
      new RegExp(`^invalid value for --hosted-kubeconfig: cannot load ${missing} \\(ENOENT`),
    );
  });
});
