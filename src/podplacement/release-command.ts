// The `tessera podplacement release` action: removes the operator's scheduling gate from gated pods by hand, for when
// the controller cannot run (uninstalled, crashing, its namespace gone) and pods would otherwise stay Pending. It
// refuses while the controller holds its leader Lease (it would place those pods itself) unless --force, and it
// acts with the caller's own credentials, so it releases only pods the caller may patch.
import {
  ApiStatusError,
  KubeClient,
  Leases,
  MutatingWebhookConfigurations,
  Pods,
  ResourceClient,
  InvalidArgumentError,
  ignoreNotFound,
  isConflict,
  isNotFound,
  loadKubeConfig,
  TesseraError,
  type KubeList,
  type Lease,
  type LeaseSpec,
  errorMessage,
} from '../runtime/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_OPERATOR_NAMESPACE, LEADER_ELECTION_ID, MUTATING_WEBHOOK } from './constants.js';
import { manualReleasePatch } from './placement-plan.js';
import { hasSchedulingGate } from './pod-model.js';
import { projectGatedPod } from './pod-projection.js';
import type { Pod } from './pod-types.js';
import {
  controllerState,
  leaseConfirmMs,
  leaseRenewed,
  renderReleaseResults,
  type ReleaseResult,
} from './release.js';

/** How often an apparently expired Lease is re-read while confirming it. */
const LEASE_POLL_MS = 500;
/** Pods patched at once. */
const RELEASE_CONCURRENCY = 8;
/**
 * Pods listed per page. Each page is decoded pod by pod and only projectGatedPod of each is kept, so a page costs
 * one raw pod plus small projections; the limit bounds what one request transfers (100 pods of 1.5 MiB: 150 MiB,
 * read within the request timeout) and what the API server assembles for it.
 */
const LIST_PAGE = 100;
/** Attempts per pod when it changes between the read and the patch (409). */
const CONFLICT_ATTEMPTS = 3;

export interface ReleaseOutput {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

type NamedPod = Pod & { metadata: { name: string } };

/** The caller may not do what the command needs (e.g. list pods in every namespace). */
export class ReleaseForbiddenError extends TesseraError<'TESSERA_PODPLACEMENT_RELEASE_FORBIDDEN'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TESSERA_PODPLACEMENT_RELEASE_FORBIDDEN', message, options);
  }
}

/** The flags of `tessera podplacement release`, as commander gives them (src/podplacement/cli.ts). */
export interface ReleaseFlags {
  kubeconfig?: string;
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  dryRun?: boolean;
  force?: boolean;
  operatorNamespace?: string;
}

/** Runs the command; resolves with the exit code (0 done, 1 a pod failed, 2 refused: the controller is running). */
export async function runReleaseCommand(
  opts: ReleaseFlags,
  out: ReleaseOutput = {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
  },
): Promise<number> {
  const namespace = opts.namespace;
  const all = opts.allNamespaces === true;
  // `-n "$NS"` with NS unset must not mean every namespace.
  if (namespace === '') throw new InvalidArgumentError('--namespace', 'must not be empty');
  if (all === (namespace !== undefined))
    throw new InvalidArgumentError(
      '-n/-A',
      'name one namespace with -n NAMESPACE, or every namespace with -A (not both)',
    );
  const dryRun = opts.dryRun === true;
  const operatorNamespace = opts.operatorNamespace || DEFAULT_OPERATOR_NAMESPACE;
  const client = new KubeClient(await loadKubeConfig(opts.kubeconfig));
  try {
    if (!(await mayRelease(client, operatorNamespace, { dryRun, force: opts.force === true }, out))) return 2;
    await warnIfStillGating(client, out);
    const pods = new ResourceClient<NamedPod>(client, Pods);
    const labelSelector = opts.selector || undefined;
    const results: ReleaseResult[] = [];
    // Page by page, so only one page of pods is held however many a cluster has.
    for await (const queue of gatedPages(pods, { namespace, all, labelSelector })) {
      const workers = Array.from({ length: Math.min(RELEASE_CONCURRENCY, queue.length) }, async () => {
        for (let pod = queue.shift(); pod; pod = queue.shift())
          results.push(await releaseOne(pods, pod, dryRun));
      });
      await Promise.all(workers);
    }
    results.sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0));
    out.stdout(renderReleaseResults(results, dryRun));
    if (!results.some((r) => r.outcome === 'failed')) return 0;
    out.stderr('Pods that failed are still gated; fix the cause shown and run the command again.\n');
    return 1;
  } finally {
    await client.close();
  }
}

/**
 * Whether to go on, judged by the controller's leader Lease: not while the controller runs (unless forced), since it
 * places and releases gated pods itself. A dry run only warns.
 */
async function mayRelease(
  client: KubeClient,
  operatorNamespace: string,
  o: { dryRun: boolean; force: boolean },
  out: ReleaseOutput,
): Promise<boolean> {
  const where = `${operatorNamespace}/${LEADER_ELECTION_ID}`;
  const leases = new ResourceClient<Lease>(client, Leases);
  const readLease = async (): Promise<LeaseSpec | undefined> =>
    (await leases.get({ namespace: operatorNamespace, name: LEADER_ELECTION_ID })).spec;
  let lease: LeaseSpec | undefined;
  try {
    lease = await readLease();
  } catch (err) {
    if (isNotFound(err)) {
      out.stderr(
        `note: no controller Lease ${where}; taking the controller as not running ` +
          '(if it runs in another namespace, pass --operator-namespace).\n',
      );
      return true;
    }
    if (err instanceof ApiStatusError && err.statusCode === 403) {
      out.stderr(
        `warning: cannot read the controller's Lease ${where} (forbidden), so cannot tell whether the controller ` +
          'is running; releasing as asked.\n',
      );
      return true;
    }
    throw err;
  }
  let state = controllerState(lease, Date.now());
  if (!state.running && state.why === 'expired' && lease) {
    // The renewal time is the holder's clock, not ours: believe "expired" only once the record stays unchanged for
    // a lease duration, as a candidate for the lease would (runtime/lease-decision.ts).
    const confirmMs = leaseConfirmMs(lease);
    out.stderr(
      `checking that the controller no longer renews its Lease ${where} (${confirmMs / 1000} s)...\n`,
    );
    for (const deadline = Date.now() + confirmMs; Date.now() < deadline;) {
      await sleep(Math.min(LEASE_POLL_MS, Math.max(0, deadline - Date.now())));
      const now = await readLease().catch((err: unknown) => (isNotFound(err) ? undefined : lease));
      if (leaseRenewed(lease, now)) {
        state = now?.holderIdentity
          ? { running: true, holder: now.holderIdentity, renewedAgoMs: 0 }
          : { running: false, why: 'released' };
        break;
      }
    }
  }
  if (!state.running) return true;
  const message =
    `the pod placement controller is running (Lease ${where} held by ${state.holder}, renewed ` +
    `${state.renewedAgoMs === 0 ? 'just now' : `${Math.round(state.renewedAgoMs / 1000)} s ago`}): it places and ` +
    'releases gated pods itself, and releasing them by hand skips their placement.';
  if (o.dryRun || o.force) {
    out.stderr(`warning: ${message}${o.dryRun ? '' : ' Releasing anyway (--force).'}\n`);
    return true;
  }
  out.stderr(`error: ${message} Pass --force to release them anyway.\n`);
  return false;
}

/** While the gating webhook is registered, new pods keep being gated: say so, and how to stop it. */
async function warnIfStillGating(client: KubeClient, out: ReleaseOutput): Promise<void> {
  const name = MUTATING_WEBHOOK.configurationName;
  let webhook: unknown;
  try {
    webhook = await ignoreNotFound(new ResourceClient(client, MutatingWebhookConfigurations).get({ name }));
  } catch (err) {
    // Typically forbidden: a namespace admin may release its pods without reading cluster-scoped webhooks.
    out.stderr(
      `note: could not check whether the mutating webhook configuration ${name} is still registered ` +
        `(${errorMessage(err)}); while it is, new pods keep being gated.\n`,
    );
    return;
  }
  if (webhook === undefined) return;
  out.stderr(
    `warning: the mutating webhook configuration ${MUTATING_WEBHOOK.configurationName} is still registered, so ` +
      'new pods keep being gated; to stop that without the operator, delete it (README: "Off switch").\n',
  );
}

/**
 * Every pod carrying the operator's gate (and matching `labelSelector`), a page at a time. Not by the gate label: a pod can
 * carry the gate without it (a manifest re-applied with its gate, a label edited), and those are the pods nothing
 * else releases. Only unscheduled pods are listed (a gated pod has no node): the API server filters, not this client.
 */
async function* gatedPages(
  pods: ResourceClient<NamedPod>,
  scope: { namespace: string | undefined; all: boolean; labelSelector: string | undefined },
): AsyncGenerator<NamedPod[]> {
  const { namespace, all, labelSelector } = scope;
  let next: string | undefined;
  do {
    let page: KubeList<NamedPod>;
    try {
      page = await pods.list({
        namespace,
        labelSelector,
        fieldSelector: 'spec.nodeName=',
        limit: LIST_PAGE,
        continue: next,
        // What the release reads (metadata, gates, node name); the rest of each pod is dropped as it is decoded.
        item: (raw) => projectGatedPod(raw as NamedPod),
      });
    } catch (err) {
      if (all && err instanceof ApiStatusError && err.statusCode === 403)
        throw new ReleaseForbiddenError(
          `you may not list pods in every namespace (${err.message}); name one you may with -n NAMESPACE`,
          { cause: err },
        );
      throw err;
    }
    yield (page.items ?? []).filter(hasSchedulingGate);
    next = page.metadata?.continue || undefined;
  } while (next);
}

async function releaseOne(
  pods: ResourceClient<NamedPod>,
  pod: NamedPod,
  dryRun: boolean,
): Promise<ReleaseResult> {
  const ref = { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name };
  const name = `${ref.namespace}/${ref.name}`;
  const failed = (err: unknown): ReleaseResult => ({
    pod: name,
    outcome: 'failed',
    error: errorMessage(err),
  });
  let current: Pod = pod;
  for (let attempt = 1; ; attempt++) {
    const patch = manualReleasePatch(current, new Date());
    if (!patch) return { pod: name, outcome: 'not-gated' };
    try {
      await pods.mergePatch(ref, patch, { dryRun, fieldManager: 'tessera-release' });
      return { pod: name, outcome: dryRun ? 'would-release' : 'released' };
    } catch (err) {
      if (isNotFound(err)) return { pod: name, outcome: 'not-gated' };
      if (!isConflict(err) || attempt >= CONFLICT_ATTEMPTS) return failed(err);
    }
    // Changed since it was read (409): read it again and decide again.
    try {
      current = projectGatedPod(await pods.get(ref));
    } catch (err) {
      return isNotFound(err) ? { pod: name, outcome: 'not-gated' } : failed(err);
    }
  }
}
