// Installs (server-side applies) the UpdateStatus CRD and waits until the API server serves it. Idempotent; the
// caller needs permission to write CustomResourceDefinitions. `sleep` is injected so tests control waiting.
import { setTimeout as delay } from 'node:timers/promises';
import {
  KubeClient,
  type KubeObject,
  ResourceClient,
  CustomResourceDefinitions,
  type ResourceType,
} from '../../runtime/index.js';
import { UpdateStatusError } from '../errors.js';
import { updateStatusCrd } from './crd.js';
import { GROUP, KIND, PLURAL, VERSION } from './schema.js';

export const UpdateStatuses: ResourceType = {
  group: GROUP,
  version: VERSION,
  plural: PLURAL,
  kind: KIND,
  namespaced: false,
};

/** Options for {@link installUpdateStatusCrd}. */
export interface InstallCrdOptions {
  /** Field manager of the apply. Default: `tessera-updatestatus`. */
  readonly fieldManager?: string;
  /** How long to wait for the Established condition (ms). Default: 30,000. */
  readonly timeoutMs?: number;
  /** Waits `ms`; default: a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Stops the requests and the wait (the install then rejects). */
  readonly signal?: AbortSignal;
}

interface CrdWithStatus extends KubeObject {
  status?: { conditions?: { type?: string; status?: string; message?: string }[] };
}

export async function installUpdateStatusCrd(
  client: KubeClient,
  options: InstallCrdOptions = {},
): Promise<void> {
  const crds = new ResourceClient<CrdWithStatus>(client, CustomResourceDefinitions);
  const { signal } = options;
  const sleep = options.sleep ?? ((ms: number) => delay(ms, undefined, { signal }));
  await crds.apply(updateStatusCrd() as unknown as CrdWithStatus, {
    fieldManager: options.fieldManager ?? 'tessera-updatestatus',
    force: true,
    signal,
  });
  const name = `${PLURAL}.${GROUP}`;
  const attempts = Math.ceil((options.timeoutMs ?? 30_000) / 200);
  let last = '';
  for (let i = 0; i < attempts; i++) {
    const crd = await crds.get({ name }, signal);
    const established = crd.status?.conditions?.find((c) => c.type === 'Established');
    if (established?.status === 'True') return;
    last = established?.message ?? 'no Established condition yet';
    await sleep(200);
  }
  throw new UpdateStatusError(
    'TESSERA_UPDATESTATUS_CRD_NOT_ESTABLISHED',
    `CRD ${name} was applied but is not served (${last}); check the API server log`,
  );
}
