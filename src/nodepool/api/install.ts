// Installs this area's development CRDs into a cluster (server-side apply) and waits until the API server serves
// them. Idempotent. For dev clusters, tests, the demo and the benchmark.
import { applyCrds, type Clock, type KubeClient, type KubeObject } from '../../runtime/index.js';
import { crdsFor } from './crd.js';

export interface InstallCrdsOptions {
  /** How long to wait for every CRD to be Established, in milliseconds. Default: 30,000. */
  timeoutMs?: number;
  clock?: Clock;
  signal?: AbortSignal;
}

/** Applies the CRDs the `management` or `hosted` cluster needs, then waits for Established. */
export async function installNodePoolCrds(
  client: KubeClient,
  cluster: 'management' | 'hosted',
  options: InstallCrdsOptions = {},
): Promise<void> {
  await applyCrds(
    client,
    crdsFor(cluster).map((crd) => crd.object as unknown as KubeObject),
    { ...options, fieldManager: 'tessera-nodepool' },
  );
}
