// Installs CustomResourceDefinitions the one way every area does: server-side apply (idempotent, safe from several
// processes; fields other managers own are kept), then a wait until the API server serves each one (Established),
// polled on the caller's clock. Callers need RBAC on customresourcedefinitions.
import { realClock, type Clock } from './clock.js';
import type { KubeClient } from './client.js';
import { RuntimeError } from './errors.js';
import type { KubeObject } from './object.js';
import { ResourceClient } from './resource-client.js';
import { CustomResourceDefinitions } from './resources.js';

/** How long a CRD may take to become Established before the install fails. */
export const DEFAULT_CRD_ESTABLISHED_TIMEOUT_MS = 30_000;
/** Poll interval of the Established wait. */
const ESTABLISHED_POLL_MS = 100;

/** A CRD was applied but the API server did not serve it (not Established) before the deadline. */
export class CrdNotEstablishedError extends RuntimeError {
  constructor(name: string, waitedMs: number, lastMessage: string | undefined) {
    super(
      'TESSERA_CRD_NOT_ESTABLISHED',
      `CRD ${name} was applied but not Established after ${waitedMs} ms (${lastMessage ?? 'no Established condition yet'}); check the API server log and the CRD's conditions`,
    );
  }
}

interface CrdStatus extends KubeObject {
  status?: { conditions?: { type?: string; status?: string; message?: string }[] };
}

export interface ApplyCrdsOptions {
  /** Field manager of the applies. */
  readonly fieldManager: string;
  /** How long to wait for every CRD to be Established (ms). Default: 30,000. */
  readonly timeoutMs?: number;
  readonly clock?: Clock;
  /** Stops the requests and the wait (the install then rejects). */
  readonly signal?: AbortSignal;
}

/** Applies `crds` (force: this installer owns them) and resolves once every one is Established. */
export async function applyCrds(
  client: KubeClient,
  crds: readonly KubeObject[],
  options: ApplyCrdsOptions,
): Promise<void> {
  const resources = new ResourceClient<KubeObject>(client, CustomResourceDefinitions);
  for (const crd of crds)
    await resources.apply(crd, { fieldManager: options.fieldManager, force: true, signal: options.signal });
  await waitForCrdsEstablished(
    client,
    crds.map((crd) => crd.metadata?.name ?? ''),
    options,
  );
}

/** Resolves once every named CRD is Established; throws CrdNotEstablishedError after `timeoutMs`. */
export async function waitForCrdsEstablished(
  client: KubeClient,
  names: readonly string[],
  options: Pick<ApplyCrdsOptions, 'timeoutMs' | 'clock' | 'signal'> = {},
): Promise<void> {
  const clock = options.clock ?? realClock;
  const timeoutMs = options.timeoutMs ?? DEFAULT_CRD_ESTABLISHED_TIMEOUT_MS;
  const resources = new ResourceClient<CrdStatus>(client, CustomResourceDefinitions);
  const started = clock.now();
  for (const name of names) {
    for (;;) {
      const crd = await resources.get({ name }, options.signal);
      const established = crd.status?.conditions?.find((c) => c.type === 'Established');
      if (established?.status === 'True') break;
      if (clock.now() - started > timeoutMs)
        throw new CrdNotEstablishedError(name, timeoutMs, established?.message);
      await clock.sleep(ESTABLISHED_POLL_MS, options.signal);
      options.signal?.throwIfAborted();
    }
  }
}
