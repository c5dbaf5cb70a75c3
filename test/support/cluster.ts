// What an integration test needs from the shared control plane: an admin KubeConfig and a namespace of its own.
import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, inject } from 'vitest';
import { startDevCluster, type DevCluster, type DevClusterOptions } from '../../src/devcluster/cluster.js';

/** Admin credentials for the run's shared cluster. */
export function testKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfigPath'));
  return kc;
}

/** A name unlikely to collide across parallel test files: `<prefix>-<8 hex>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/**
 * Call at describe level: creates a fresh namespace before the tests (and waits for its `default` service
 * account, which pods need) and deletes it afterwards. `.name` is valid inside tests and hooks.
 */
export function useTestNamespace(prefix: string): { readonly name: string } {
  const ns = { name: '' };
  beforeAll(async () => {
    const core = testKubeConfig().makeApiClient(CoreV1Api);
    ns.name = uniqueName(prefix);
    await core.createNamespace({
      body: { metadata: { name: ns.name, labels: { 'tessera.dev/test': prefix } } },
    });
    await eventually(
      async () => {
        await core.readNamespacedServiceAccount({ name: 'default', namespace: ns.name });
      },
      { timeoutMs: 30_000, what: `service account default in ${ns.name}` },
    );
  });
  afterAll(async () => {
    if (!ns.name) return;
    const core = testKubeConfig().makeApiClient(CoreV1Api);
    await core.deleteNamespace({ name: ns.name }).catch(() => undefined);
  });
  return ns;
}

/** A private cluster for tests that restart the apiserver or need a second cluster; stop it in afterAll. */
export async function startTestCluster(options: Omit<DevClusterOptions, 'stateRoot'>): Promise<DevCluster> {
  return startDevCluster({ ...options, stateRoot: inject('stateRoot') });
}

/**
 * A private cluster of etcd and kube-apiserver only: no controllers, scheduler, kwok or nodes, so nothing but the
 * test changes its objects. Starts fastest; stop it in afterAll.
 */
export async function startApiServerOnlyTestCluster(name: string): Promise<DevCluster> {
  return startTestCluster({ name, nodes: 'none', controllerManager: false, scheduler: false, kwok: false });
}

/**
 * Retries `check` until it resolves (returning its value) or `timeoutMs` passes, then rethrows the last error
 * with `what` in the message. For waiting on controllers, which act asynchronously.
 */
export async function eventually<T>(
  check: () => Promise<T>,
  options: {
    timeoutMs?: number;
    intervalMs?: number;
    what?: string;
    /** What to add to the error when it gives up (logs, the objects as they are then). */
    explain?: () => Promise<string>;
  } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let lastError: unknown;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? lastError.message : String(lastError);
      const explained = options.explain
        ? `\n${await options.explain().catch((e: unknown) => `(could not explain: ${String(e)})`)}`
        : '';
      throw new Error(`timed out waiting for ${options.what ?? 'condition'}: ${reason}${explained}`, {
        cause: lastError,
      });
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 200));
  }
}

/**
 * Waits until every CRD `kubectl get` names (`crd/NAME...`, or `crd` for all of them) is Established. Polls rather than
 * `kubectl wait --for=condition=Established`, which fails at once ("accessor error: <nil>") for a CRD the API server
 * has not yet given any condition, a race of the first moment after the CRD is created.
 */
export async function waitForCrdsEstablished(
  kubectl: (args: string[]) => Promise<string>,
  crds: readonly string[],
  timeoutMs = 60_000,
): Promise<void> {
  interface Crd {
    metadata: { name: string };
    status?: { conditions?: { type: string; status: string }[] };
  }
  await eventually(
    async () => {
      // One name prints the object, several (or --all) a List.
      const got = JSON.parse(await kubectl(['get', ...crds, '-o', 'json'])) as Crd | { items: Crd[] };
      const items = 'items' in got ? got.items : [got];
      const waiting = items
        .filter(
          (c) => !(c.status?.conditions ?? []).some((k) => k.type === 'Established' && k.status === 'True'),
        )
        .map((c) => c.metadata.name);
      if (items.length === 0 || waiting.length > 0)
        throw new Error(`not Established yet: ${waiting.join(', ')}`);
    },
    { timeoutMs, intervalMs: 250, what: `CRDs Established (${crds.join(' ')})` },
  );
}
