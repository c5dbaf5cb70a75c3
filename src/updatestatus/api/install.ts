// Installs (server-side applies) the UpdateStatus CRD and waits until the API server serves it. Idempotent; the
// caller needs permission to write CustomResourceDefinitions.
import {
  applyCrds,
  type Clock,
  type KubeClient,
  type KubeObject,
  type ResourceType,
} from '../../runtime/index.js';
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
  /** Paces the wait. Default: the real clock. */
  readonly clock?: Clock;
  /** Stops the requests and the wait (the install then rejects). */
  readonly signal?: AbortSignal;
}

export async function installUpdateStatusCrd(
  client: KubeClient,
  options: InstallCrdOptions = {},
): Promise<void> {
  await applyCrds(client, [updateStatusCrd() as unknown as KubeObject], {
    ...options,
    fieldManager: options.fieldManager ?? 'tessera-updatestatus',
  });
}
