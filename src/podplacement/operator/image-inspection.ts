// The image inspector the pod reconciler asks: the one given in the options, or a CachingInspector over a
// RegistryInspector that follows the cluster's registry policy (mirror sets, registrySources; kinds the cluster
// does not serve are skipped) and trusts its additionalTrustedCA bundles, each for its own registry host, re-read while
// it runs (TrustedCaWatch); the --registry-ca files are trusted for every host.
// The cache is purged whenever the policy, the trusted CAs or the global pull secret change. Which policy kinds the
// cluster serves, and the trusted CAs at start, are read by a Manager start-up step (after the CRDs, before any
// cache or controller starts), so the Manager alone sequences start-up I/O and retries it.
import type { KubeObject, Manager, StartupStep } from '../../runtime/index.js';
import {
  CachingInspector,
  RegistryInspector,
  createInspectionCacheMetrics,
  type ImageInspector,
} from '../../registry/index.js';
import { ImageConfigs, hostCaCertificatesOf } from '../registry-policy.js';
import {
  RegistryPolicyWatch,
  TrustedCaWatch,
  discoverPolicyKinds,
  fetchAdditionalTrustedCa,
  reportTrustedCaRead,
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
  /** The cluster's current search registries for short names (none for an inspector given in the options). */
  searchRegistries(): readonly string[];
  /**
   * Discovers the policy kinds, reads the trusted CAs and starts following both: for Manager.addStartupStep, after
   * the CRDs are installed. Undefined for an inspector given in the options.
   */
  readonly startupStep?: StartupStep;
}

/**
 * Builds the inspector, and the start-up step that discovers the policy kinds, reads the trusted CAs and registers
 * the watch that keeps them current.
 */
export function createImageInspection(
  manager: Manager,
  options: Pick<PodPlacementOperatorOptions, 'inspector' | 'registry'>,
  inspectionDeadlineMs: number,
): ImageInspection {
  if (options.inspector)
    return { inspector: options.inspector, purge: () => undefined, searchRegistries: () => [] };
  const { client, logger } = manager;
  const flagCas = options.registry?.caCertificates ?? [];
  // Follows no kind until the start-up step has discovered which ones the cluster serves.
  const policyWatch = new RegistryPolicyWatch({
    informerFor: (type) => manager.informers.informerFor<KubeObject>({ type }),
    extraInsecureRegistries: options.registry?.insecureRegistries,
    onChange: () => caching.purge(),
    logger,
  });
  const addressPolicy = options.registry?.addressPolicy;
  if (addressPolicy) logger.info(addressPolicy.describe(), 'registry address policy');
  const proxy = options.registry?.proxy;
  if (proxy)
    logger.info(
      { https: proxy.https?.display, http: proxy.http?.display },
      'registry connections go through the egress proxy (NO_PROXY exceptions direct)',
    );
  const registry = new RegistryInspector({
    caCertificates: flagCas,
    ...(addressPolicy ? { addressPolicy } : {}),
    ...(proxy ? { proxy } : {}),
    trustedRealmHosts: options.registry?.trustedRealmHosts ?? [],
    policy: () => policyWatch.current(),
    ...registryTimeouts(inspectionDeadlineMs),
    // Tenants see one uniform "cannot be reached" message; why (refused, silent, TLS) is for the operator.
    onUnreachable: (event) => logger.warn(event, 'registry unreachable'),
  });
  const caching = new CachingInspector(registry, {
    metrics: createInspectionCacheMetrics(manager.registry),
    negativeTtlMs: 1_000,
  });
  const startupStep: StartupStep = {
    name: 'registry-policy',
    run: async (signal) => {
      // Discovery once: the policy kinds exist on OpenShift (or with the dev CRDs), not on plain Kubernetes.
      const policyKinds = await discoverPolicyKinds(client, logger, signal);
      // The cluster's additionalTrustedCA bundles, read before the first inspection; TrustedCaWatch follows changes.
      const initialCas = await fetchAdditionalTrustedCa(client, policyKinds, signal);
      reportTrustedCaRead(initialCas, logger);
      registry.setCaCertificates(flagCas, hostCaCertificatesOf(initialCas.bundles));
      // Informers and runnables added by a start-up step start with the others, after the last step.
      policyWatch.follow(policyKinds);
      // Without the image config kind (plain Kubernetes) there is no additionalTrustedCA to follow.
      if (policyKinds.includes(ImageConfigs))
        manager.add(
          new TrustedCaWatch({
            client,
            kinds: policyKinds,
            imageConfigs: manager.informers.informerFor<KubeObject>({ type: ImageConfigs }),
            initial: initialCas,
            onChange: (hostCaCertificates) => {
              registry.setCaCertificates(flagCas, hostCaCertificates);
              // Answers cached under the old trust may differ under the new one.
              caching.purge();
            },
            clock: manager.clock,
            logger,
          }),
        );
    },
  };
  return {
    inspector: caching,
    purge: () => caching.purge(),
    searchRegistries: () => policyWatch.current().searchRegistries ?? [],
    startupStep,
  };
}
