// Installs this area's development CRDs into a cluster and waits until the API server serves them.
// Idempotent: existing CRDs are updated in place. For dev clusters, tests, the demo and the benchmark.
import {
  type Clock,
  CustomResourceDefinitions,
  isNotFound,
  type KubeClient,
  type KubeObject,
  realClock,
  ResourceClient,
} from '../../runtime/index.js';
import { CrdNotEstablishedError } from '../errors.js';
import { crdsFor } from './crd.js';

interface Crd extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

export interface InstallCrdsOptions {
  /** How long to wait for every CRD to be Established, in milliseconds. Default: 30,000. */
  timeoutMs?: number;
  clock?: Clock;
  signal?: AbortSignal;
}

/** Creates or updates the CRDs the `management` or `hosted` cluster needs, then waits for Established. */
export async function installNodePoolCrds(
  client: KubeClient,
  cluster: 'management' | 'hosted',
  options: InstallCrdsOptions = {},
): Promise<void> {
  const clock = options.clock ?? realClock;
  const crds = new ResourceClient<Crd>(client, CustomResourceDefinitions);
  const wanted = crdsFor(cluster);
  for (const crd of wanted) {
    const body = crd.object as unknown as Crd;
    try {
      const current = await crds.get({ name: crd.name }, options.signal);
      await crds.update({
        ...body,
        metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await crds.create(body);
    }
  }
  const deadline = clock.now() + (options.timeoutMs ?? 30_000);
  for (const crd of wanted) {
    for (;;) {
      const current = await crds.get({ name: crd.name }, options.signal);
      if (current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (clock.now() > deadline) throw new CrdNotEstablishedError(crd.name);
      await clock.sleep(100, options.signal);
    }
  }
}
