import { defineConfig } from 'vitest/config';

// Two tiers: `unit` needs no server and runs in parallel; `integration` shares one real control plane
// (etcd + kube-apiserver + controllers + kwok), started once per run by test/support/global-setup.ts.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/unit/**/*.test.ts', 'hack/**/*.test.ts'],
          environment: 'node',
          // Unit tests run first: they are fast and need no server.
          sequence: { groupOrder: 0 },
          // A timeout only catches a hang; it must not measure the machine. Some unit tests drive a fake clock
          // through simulated hours (thousands of timers): 2.7 s on an idle core, over vitest's 5 s default on a
          // shared, loaded one.
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // One control plane for the whole run; files share it, so keep their number in check.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
