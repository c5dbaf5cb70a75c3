// `tessera nodepool status`: the only place that fetches for the view; assess/render are in status-view.ts.
// Returns the process exit code: 0 when printed, 1 when the named NodePool does not exist.
import {
  InvalidArgumentError,
  isNotFound,
  KubeClient,
  loadKubeConfig,
  ResourceClient,
} from '../../runtime/index.js';
import type { NodePool } from '../api/types.js';
import { NodePools } from '../resources.js';
import { assessNodePoolStatus, renderNodePoolStatus } from './status-view.js';

export interface NodePoolStatusCommandOptions {
  /** `namespace/name`, or undefined for all NodePools. */
  target?: string;
  /** Kubeconfig path; default: $KUBECONFIG, then ~/.kube/config. */
  kubeconfig?: string;
  namespace?: string;
  allConditions: boolean;
  out: NodeJS.WritableStream;
  /** Where errors go. Default: process.stderr. */
  err?: NodeJS.WritableStream;
  /** Evaluation time for ages. Default: Date.now(). */
  now?: number;
}

/** `NAMESPACE/NAME` -> its parts; throws InvalidArgumentError naming the expected form. */
export function parseNodePoolTarget(target: string): { namespace: string; name: string } {
  const slash = target.indexOf('/');
  if (slash <= 0 || slash === target.length - 1 || target.indexOf('/', slash + 1) >= 0) {
    throw new InvalidArgumentError(
      'the NodePool',
      `expected NAMESPACE/NAME, got "${target}" (for example clusters/my-nodepool)`,
      'argument',
    );
  }
  return { namespace: target.slice(0, slash), name: target.slice(slash + 1) };
}

export async function runNodePoolStatus(opts: NodePoolStatusCommandOptions): Promise<number> {
  const ref = opts.target !== undefined ? parseNodePoolTarget(opts.target) : undefined;
  const client = new KubeClient(await loadKubeConfig(opts.kubeconfig));
  try {
    const nodePools = new ResourceClient<NodePool>(client, NodePools);
    let items: NodePool[];
    if (ref) {
      try {
        items = [await nodePools.get(ref)];
      } catch (err) {
        if (!isNotFound(err)) throw err;
        await nodePools.list({ namespace: ref.namespace, limit: 1 }).catch(apiMissing(client.server));
        (opts.err ?? process.stderr).write(`NodePool ${opts.target} not found in ${client.server}\n`);
        return 1;
      }
    } else {
      items = (await nodePools.list({ namespace: opts.namespace }).catch(apiMissing(client.server))).items;
      items.sort((a, b) =>
        `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(
          `${b.metadata.namespace}/${b.metadata.name}`,
        ),
      );
    }
    const now = opts.now ?? Date.now();
    opts.out.write(
      renderNodePoolStatus(items.map((np) => assessNodePoolStatus(np, now, opts.allConditions))),
    );
    return 0;
  } finally {
    await client.close();
  }
}

/** A 404 on the collection means the NodePool API itself is missing: say so instead of printing the raw status. */
function apiMissing(server: string): (err: unknown) => never {
  return (err: unknown): never => {
    if (isNotFound(err)) {
      throw new InvalidArgumentError(
        '--kubeconfig',
        `${server} does not serve NodePools (${NodePools.group}/${NodePools.version}); point --kubeconfig at a HyperShift management cluster`,
      );
    }
    throw err;
  };
}
