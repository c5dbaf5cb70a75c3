// The `tessera podplacement release` action: removes the operator's scheduling gate from gated pods by hand, for when
// the controller cannot run (uninstalled, crashing, its namespace gone) and pods would otherwise stay Pending. It
// refuses while the controller holds its leader Lease (it would place those pods itself) unless --force, and it
// acts with the caller's own credentials, so it releases only pods the caller may patch.
import {
  ApiStatusError,
  KubeClient,
  Leases,
  Pods,
  ResourceClient,
  InvalidArgumentError,
  isConflict,
  isNotFound,
  resourcePath,
  type Lease,
} from '../runtime/index.js';
import { DEFAULT_OPERATOR_NAMESPACE, LABELS, LABEL_VALUES, LEADER_ELECTION_ID } from './constants.js';
import { loadKubeConfig } from './operator-command.js';
import { manualReleasePatch } from './placement-plan.js';
import type { Pod } from './pod-types.js';
import { controllerState, renderReleaseResults, type ReleaseResult } from './release.js';

/** Pods patched at once. */
const RELEASE_CONCURRENCY = 8;
/** Pods listed per page. */
const LIST_PAGE = 500;
/** Attempts per pod when it changes between the read and the patch (409). */
const CONFLICT_ATTEMPTS = 3;

export interface ReleaseOutput {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** Runs the command; resolves with the exit code (0 done, 1 a pod failed, 2 refused: the controller is running). */
export async function runReleaseCommand(
  opts: Record<string, unknown>,
  out: ReleaseOutput = {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
  },
): Promise<number> {
  const namespace = typeof opts['namespace'] === 'string' ? opts['namespace'] : undefined;
  const all = opts['allNamespaces'] === true;
  if (all === (namespace !== undefined))
    throw new InvalidArgumentError(
      '--namespace',
      'name one namespace with -n NAMESPACE, or every namespace with -A (not both)',
    );
  const dryRun = opts['dryRun'] === true;
  const operatorNamespace =
    typeof opts['operatorNamespace'] === 'string' ? opts['operatorNamespace'] : DEFAULT_OPERATOR_NAMESPACE;
  const client = new KubeClient(loadKubeConfig(opts['kubeconfig']));

  const lease = await readControllerLease(client, operatorNamespace, out);
  const state = controllerState(lease, Date.now());
  if (state.running) {
    const where = `${operatorNamespace}/${LEADER_ELECTION_ID}`;
    const message =
      `the pod placement controller is running (Lease ${where} held by ${state.holder}, renewed ` +
      `${Math.round(state.renewedAgoMs / 1000)} s ago): it places and releases gated pods itself, and releasing ` +
      'them by hand skips their placement.';
    if (opts['force'] !== true) {
      out.stderr(`error: ${message} Pass --force to release them anyway.\n`);
      return 2;
    }
    out.stderr(`warning: ${message} Releasing anyway (--force).\n`);
  }

  const pods = new ResourceClient<Pod & { metadata: { name: string } }>(client, Pods);
  const results: ReleaseResult[] = [];
  const queue: Pod[] = [];
  let next: string | undefined;
  do {
    const page = await pods.list({
      namespace,
      labelSelector: `${LABELS.schedulingGate}=${LABEL_VALUES.gated}`,
      limit: LIST_PAGE,
      continue: next,
    });
    queue.push(...(page.items ?? []));
    next = page.metadata?.continue || undefined;
  } while (next);

  const releaseOne = async (pod: Pod): Promise<ReleaseResult> => {
    const ref = { namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '' };
    const name = `${ref.namespace}/${ref.name}`;
    let current: Pod = pod;
    for (let attempt = 1; ; attempt++) {
      const patch = manualReleasePatch(current);
      if (!patch) return { pod: name, outcome: 'not-gated' };
      try {
        await pods.mergePatch(ref, patch, { dryRun, fieldManager: 'tessera-release' });
        return { pod: name, outcome: dryRun ? 'would-release' : 'released' };
      } catch (err) {
        if (isNotFound(err)) return { pod: name, outcome: 'not-gated' };
        if (!isConflict(err) || attempt >= CONFLICT_ATTEMPTS)
          return { pod: name, outcome: 'failed', error: err instanceof Error ? err.message : String(err) };
        current = await pods.get(ref).catch(() => current);
      }
    }
  };
  const workers = Array.from({ length: Math.min(RELEASE_CONCURRENCY, queue.length) }, async () => {
    for (let pod = queue.shift(); pod; pod = queue.shift()) results.push(await releaseOne(pod));
  });
  await Promise.all(workers);
  results.sort((a, b) => a.pod.localeCompare(b.pod));
  out.stdout(renderReleaseResults(results, dryRun));
  return results.some((r) => r.outcome === 'failed') ? 1 : 0;
}

/** The controller's leader Lease; undefined when absent. A caller who may not read it is told, and not stopped. */
async function readControllerLease(
  client: KubeClient,
  namespace: string,
  out: ReleaseOutput,
): Promise<Lease['spec'] | undefined> {
  try {
    const lease = await client.request<Lease>({
      method: 'GET',
      path: resourcePath(Leases, namespace, LEADER_ELECTION_ID),
    });
    return lease.spec;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    if (err instanceof ApiStatusError && err.statusCode === 403) {
      out.stderr(
        `warning: cannot read the controller's Lease ${namespace}/${LEADER_ELECTION_ID} (forbidden), so cannot ` +
          'tell whether the controller is running; releasing as asked.\n',
      );
      return undefined;
    }
    throw err;
  }
}
