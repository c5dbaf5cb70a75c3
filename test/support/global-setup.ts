// Vitest global setup for the integration tier: one real control plane per test run, shared by all files
// (each test takes its own namespace). The system tools the tests run (podman, Chromium, ...: hack/system-tools.ts)
// are installed first when missing (as root; otherwise it stops with the command to run), and binaries that are not
// built yet (control plane, registry, crane) are built from the Go module proxy, as `npm start` does, so
// `npm ci && npm test` works on a fresh machine.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureSystemTools } from '../../hack/system-tools.js';
import { ensureBinaries, TEST_BINARIES } from '../../src/devcluster/binaries.js';
import { startDevCluster } from '../../src/devcluster/cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfigPath: string;
    stateRoot: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await ensureSystemTools();
  await ensureBinaries(TEST_BINARIES);
  const stateRoot = mkdtempSync(path.join(os.tmpdir(), 'tessera-it-'));
  // Clusters that tests start themselves (startDevCluster without stateRoot) land here too, and are wiped with it.
  process.env.TESSERA_STATE_DIR = stateRoot;
  const started = Date.now();
  const cluster = await startDevCluster({
    name: 'integration',
    stateRoot,
    nodes: 'default',
    log: (line) => process.stderr.write(`[integration cluster] ${line}\n`),
  });
  process.stderr.write(
    `[integration cluster] up at ${cluster.server} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  project.provide('kubeconfigPath', cluster.kubeconfigPath);
  project.provide('stateRoot', stateRoot);
  return async () => {
    await cluster.stop({ wipe: true });
    rmSync(stateRoot, { recursive: true, force: true });
  };
}
