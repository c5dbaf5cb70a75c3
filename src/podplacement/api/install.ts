// Installs (server-side apply) the generated pod placement CRDs and waits until the API server serves them.
// Idempotent; safe to call from several processes. Callers need RBAC on customresourcedefinitions. The conversion
// webhook's live clientConfig (patched at run time by the operator, see ../crd-conversion.ts) is kept, not reset.
import {
  applyCrds,
  CustomResourceDefinitions,
  ignoreNotFound,
  type KubeClient,
  type KubeObject,
  ResourceClient,
} from '../../runtime/index.js';
import { podPlacementCrd } from './crd.js';
import { API_GROUP } from '../constants.js';
import { CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG, type KindDefinition } from './schema.js';

interface Crd extends KubeObject {
  spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: Record<string, unknown> } } };
}

export interface InstallCrdsOptions {
  /** How long to wait for Established, in ms. Default: 30,000. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /**
   * `spec.conversion` for kinds with several versions (see ../crd-conversion.ts). Default: the live CRD's webhook
   * clientConfig if there is one, else the in-cluster Service without caBundle.
   */
  readonly conversion?: Record<string, unknown>;
}

/** Applies both CRDs and resolves once both are Established. */
export async function installPodPlacementCrds(
  client: KubeClient,
  options: InstallCrdsOptions = {},
): Promise<void> {
  const crds = new ResourceClient<Crd>(client, CustomResourceDefinitions);
  const wanted: Crd[] = [];
  for (const kind of [CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG]) {
    const conversion =
      kind.versions.length < 2
        ? undefined
        : options.conversion === undefined
          ? await liveConversion(crds, kind, options.signal)
          : await switchEndpointKind(crds, kind, options.conversion, options.signal);
    wanted.push(podPlacementCrd(kind, { conversion }) as unknown as Crd);
  }
  await applyCrds(client, wanted, {
    fieldManager: 'tessera-podplacement',
    timeoutMs: options.timeoutMs,
    signal: options.signal,
  });
}

/**
 * The conversion to apply: the live webhook clientConfig when there is one. Applying the default Service endpoint
 * over a patched URL would leave both set (the URL is owned by another field manager), which the API server refuses.
 */
async function liveConversion(
  crds: ResourceClient<Crd>,
  kind: KindDefinition,
  signal: AbortSignal | undefined,
): Promise<Record<string, unknown> | undefined> {
  const conversion = (await liveCrd(crds, kind, signal))?.spec?.conversion;
  const clientConfig = conversion?.webhook?.clientConfig;
  if (conversion?.strategy !== 'Webhook' || clientConfig === undefined) return undefined;
  return { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } };
}

async function liveCrd(
  crds: ResourceClient<Crd>,
  kind: KindDefinition,
  signal: AbortSignal | undefined,
): Promise<Crd | undefined> {
  return ignoreNotFound(crds.get({ name: `${kind.plural}.${API_GROUP}` }, signal));
}

/**
 * Returns `desired`, first switching a live url clientConfig to a service one (or back) by merge patch when another
 * field manager may own the old kind: applying only the new one would leave both set, which the API server refuses.
 */
async function switchEndpointKind(
  crds: ResourceClient<Crd>,
  kind: KindDefinition,
  desired: Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<Record<string, unknown>> {
  const webhook = desired['webhook'] as { clientConfig?: Record<string, unknown> } | undefined;
  const want = webhook?.clientConfig ?? {};
  const have = (await liveCrd(crds, kind, signal))?.spec?.conversion?.webhook?.clientConfig;
  if (have === undefined) return desired;
  const stale = (['url', 'service'] as const).filter((k) => have[k] !== undefined && want[k] === undefined);
  if (stale.length === 0) return desired;
  const clientConfig: Record<string, unknown> = { ...want };
  for (const k of stale) clientConfig[k] = null;
  await crds.mergePatch(
    { name: `${kind.plural}.${API_GROUP}` },
    { spec: { conversion: { ...desired, webhook: { ...webhook, clientConfig } } } },
    { signal },
  );
  return desired;
}
