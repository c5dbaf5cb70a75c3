// Installs (server-side apply) the generated pod placement CRDs and waits until the API server serves them.
// Idempotent; safe to call from several processes. Callers need RBAC on customresourcedefinitions.
import type { KubeClient } from '../../runtime/index.js';
import { ResourceClient } from '../../runtime/index.js';
import { CustomResourceDefinitions } from '../../runtime/index.js';
import type { KubeObject } from '../../runtime/index.js';
import { buildCrd } from './crd.js';
import { CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG } from './schema.js';

interface Crd extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

export class CrdNotEstablishedError extends Error {
  readonly code = 'TESSERA_PODPLACEMENT_CRD_NOT_ESTABLISHED' as const;
  constructor(name: string, waitedMs: number) {
    super(
      `CRD ${name} was not Established after ${waitedMs} ms; check the API server log and the CRD's conditions`,
    );
    this.name = 'CrdNotEstablishedError';
  }
}

export interface InstallCrdsOptions {
  /** How long to wait for Established, in ms. Default: 30,000. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** Applies both CRDs and resolves once both are Established. */
export async function installPodPlacementCrds(
  client: KubeClient,
  options: InstallCrdsOptions = {},
): Promise<void> {
  const crds = new ResourceClient<Crd>(client, CustomResourceDefinitions);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const names: string[] = [];
  for (const kind of [CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG]) {
    const crd = buildCrd(kind) as unknown as Crd;
    await crds.apply(crd, { fieldManager: 'tessera-podplacement', force: true, signal: options.signal });
    names.push(crd.metadata?.name ?? '');
  }
  const started = Date.now();
  for (const name of names) {
    for (;;) {
      const got = await crds.get({ name }, options.signal);
      if (got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() - started > timeoutMs) throw new CrdNotEstablishedError(name, timeoutMs);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
