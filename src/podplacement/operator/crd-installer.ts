// The pod placement CRDs: installed at start when asked (before any cache lists them), and their conversion
// webhook kept pointing at this operator. The half that publishes CA bundles (the controller) patches the
// conversion webhook, whether it installed the CRDs or not, like the webhook configurations; with the service CA
// it sets the Service and the inject annotation and leaves the injected caBundle alone. Without a reachable,
// trusted webhook every v1alpha1 request fails (v1beta1, the storage version, needs no conversion).
import {
  Backoff,
  CustomResourceDefinitions,
  ResourceClient,
  retryForever,
  type Clock,
  type KubeClient,
  type KubeObject,
  type Logger,
  type Runnable,
  type StartupStep,
} from '../../runtime/index.js';
import { installPodPlacementCrds } from '../api/install.js';
import { API_GROUP, CLUSTER_CONFIG_PLURAL } from '../constants.js';
import { crdConversion, crdConversionPatch } from '../crd-conversion.js';
import type { WebhookEndpoint, WebhookTlsTrust } from '../webhook-configurations.js';
import { REGISTRATION_BACKOFF } from './options.js';

/**
 * Installs or upgrades the CRDs. Called after TLS is ready, so a CRD created now already names this endpoint and
 * CA when both are known (`endpoint` is undefined for a URL on a port picked at listen time): changing a CRD's
 * spec later makes the API server swap the resource's storage, and requests in that window fail with 503.
 */
export async function installCrds(
  client: KubeClient,
  endpoint: WebhookEndpoint | undefined,
  trust: WebhookTlsTrust,
  signal: AbortSignal | undefined,
): Promise<void> {
  await installPodPlacementCrds(client, {
    signal,
    conversion: endpoint ? crdConversion(endpoint, trust) : undefined,
  });
}

/** installCrds() as the Manager's start-up step; `trust` is read when it runs, after the TLS step. */
export function crdInstallStep(
  client: KubeClient,
  endpoint: WebhookEndpoint | undefined,
  trust: () => WebhookTlsTrust,
): StartupStep {
  return {
    name: 'podplacement-crds',
    run: (signal) => installCrds(client, endpoint, trust(), signal),
  };
}

export interface CrdConversionRegistrarOptions {
  client: KubeClient;
  endpoint: WebhookEndpoint;
  trust: () => WebhookTlsTrust;
  /** Resolves once this process's webhook server listens (at once when it runs none). */
  webhookServing: () => Promise<void>;
  clock: Clock;
  logger: Logger;
}

/** Leader runnable: points the ClusterPodPlacementConfig CRD's conversion webhook at this operator. */
export class CrdConversionRegistrar implements Runnable {
  readonly name = 'podplacement-crd-conversion-webhook';
  readonly needsLeaderElection = true;
  private readonly crds: ResourceClient<KubeObject>;
  private readonly crdName = `${CLUSTER_CONFIG_PLURAL}.${API_GROUP}`;

  constructor(private readonly o: CrdConversionRegistrarOptions) {
    this.crds = new ResourceClient<KubeObject>(o.client, CustomResourceDefinitions);
  }

  /** Re-patches with the current trust (after a certificate renewal); failures are logged. */
  refresh(): void {
    void this.patch().catch((err: unknown) =>
      this.o.logger.error({ err, crd: this.crdName }, 'could not update the CRD conversion webhook'),
    );
  }

  /** Patches once (retried until it succeeds) and returns: renewals re-patch through refresh(). */
  async start(signal: AbortSignal): Promise<void> {
    await this.o.webhookServing();
    const patched = await retryForever(() => this.patch(signal), {
      what: `configure the conversion webhook of CRD ${this.crdName}`,
      impact: 'v1alpha1 requests fail until it is configured',
      log: this.o.logger,
      signal,
      backoff: new Backoff(REGISTRATION_BACKOFF),
      clock: this.o.clock,
    });
    if (patched) this.o.logger.info({ crd: this.crdName }, 'CRD conversion webhook configured');
  }

  private patch(signal?: AbortSignal): Promise<KubeObject> {
    return this.crds.mergePatch({ name: this.crdName }, crdConversionPatch(this.o.endpoint, this.o.trust()), {
      fieldManager: 'tessera-podplacement-conversion',
      signal,
    });
  }
}
