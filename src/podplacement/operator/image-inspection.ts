// The image inspector the pod reconciler asks: the one given in the options, or a CachingInspector over a
// RegistryInspector that follows the cluster's registry policy (mirror sets, registrySources; kinds the cluster
// does not serve are skipped) and trusts its additionalTrustedCA bundles. The cache is purged whenever the policy
// or the global pull secret changes.
import type { KubeObject, Manager } from '../../runtime/index.js';
import {
  CachingInspector,
  RegistryInspector,
  createInspectionCacheMetrics,
  type ImageInspector,
} from '../../registry/index.js';
import {
  RegistryPolicyWatch,
  discoverPolicyKinds,
  readAdditionalTrustedCAs,
} from '../registry-policy-watch.js';
import type { PodPlacementOperatorOptions } from './options.js';

/** Registry request timeouts that give up before the pod's deadline does, so a silent registry costs bounded time. */
export function registryTimeouts(inspectionDeadlineMs: number): {
  connectTimeoutMs: number;
  attemptTimeoutMs: number;
} {
  return {
    connectTimeoutMs: Math.min(10_000, Math.max(500, Math.floor(inspectionDeadlineMs / 3))),
    attemptTimeoutMs: Math.min(30_000, Math.max(1_000, Math.floor((inspectionDeadlineMs * 2) / 3))),
  };
}

export interface ImageInspection {
  readonly inspector: ImageInspector;
  /** Forgets cached inspections (no-op for an inspector given in the options). */
  purge(): void;
}

/** Reads the policy kinds and trusted CAs once (at start), then builds the inspector. */
export async function createImageInspection(
  manager: Manager,
  options: Pick<PodPlacementOperatorOptions, 'inspector' | 'registry' | 'signal'>,
  inspectionDeadlineMs: number,
): Promise<ImageInspection> {
  if (options.inspector) return { inspector: options.inspector, purge: () => undefined };
  const { client, logger } = manager;
  // Discovery once: the policy kinds exist on OpenShift (or with the dev CRDs), not on plain Kubernetes.
  const policyKinds = await discoverPolicyKinds(client, logger, options.signal);
  // The cluster's additionalTrustedCA bundles, read once at start (as `podplacement explain` reads them).
  const clusterCAs = await readAdditionalTrustedCAs(client, policyKinds, logger, options.signal);
  const policyWatch = new RegistryPolicyWatch({
    kinds: policyKinds,
    informerFor: (type) => manager.informers.informerFor<KubeObject>({ type }),
    extraInsecureRegistries: options.registry?.insecureRegistries,
    onChange: () => caching.purge(),
    logger,
  });
  const caching = new CachingInspector(
    new RegistryInspector({
      caCertificates: [...(options.registry?.caCertificates ?? []), ...clusterCAs],
      trustedRealmHosts: options.registry?.trustedRealmHosts ?? [],
      policy: () => policyWatch.current(),
      ...registryTimeouts(inspectionDeadlineMs),
      // Tenants see one uniform "cannot be reached" message; why (refused, silent, TLS) is for the operator.
      onUnreachable: (event) => logger.warn(event, 'registry unreachable'),
    }),
    { metrics: createInspectionCacheMetrics(manager.registry), negativeTtlMs: 1_000 },
  );
  return { inspector: caching, purge: () => caching.purge() };
}
