// Readiness of both halves, as the cluster-config controller reports it (and /readyz for the webhook). Computed
// synchronously from state set before any reconcile runs, so a restart never sees a spurious "not ready". A split
// controller judges the webhook from its Service's EndpointSlices.
import {
  EndpointSlices,
  type KubeObject,
  type Runnable,
  type SharedInformer,
  type SharedInformerFactory,
  waitForAbort,
} from '../../runtime/index.js';
import { MUTATING_WEBHOOK } from '../constants.js';
import type { ConfigCaches } from './config-caches.js';

export interface EndpointSlice extends KubeObject {
  endpoints?: { conditions?: { ready?: boolean } }[];
}

/** True when a Service's slices hold an endpoint that is ready (or does not say: the API treats unset as ready). */
export function serviceHasReadyEndpoint(slices: readonly EndpointSlice[]): boolean {
  return slices.some((s) => (s.endpoints ?? []).some((e) => e.conditions?.ready !== false));
}

/** Whether the webhook serves: this process's server, or (split controller) the webhook Service's endpoints. */
export class WebhookReadiness {
  private listening = false;
  private service: SharedInformer<EndpointSlice> | undefined;

  constructor(
    private readonly configs: ConfigCaches,
    private readonly onChange: () => void,
  ) {}

  /** This process serves the webhook: ready once `server` listens. */
  follow(server: { ready(): Promise<void> }): void {
    // A server that cannot listen rejects ready(); the manager reports that failure, so it is not one here.
    void server.ready().then(
      () => {
        this.listening = true;
        this.onChange();
      },
      () => undefined,
    );
  }

  /** The webhook runs in another Deployment: watch its Service's EndpointSlices in `namespace`. */
  watchService(
    informers: SharedInformerFactory,
    namespace: string,
    serviceName: string = MUTATING_WEBHOOK.serviceName,
  ): void {
    const slices = informers.informerFor<EndpointSlice>({
      type: EndpointSlices,
      namespace,
      labelSelector: `kubernetes.io/service-name=${serviceName}`,
    });
    const changed = (): void => this.onChange();
    slices.addEventHandler({ onAdd: changed, onUpdate: changed, onDelete: changed });
    this.service = slices;
  }

  /** This process's server listens and the caches it answers from have synced. */
  local(): boolean {
    return this.listening && this.configs.hasSynced();
  }

  ready(): boolean {
    const service = this.service;
    if (!service) return this.local();
    return (
      service.hasSynced() && this.configs.hasSynced() && serviceHasReadyEndpoint(service.getIndexer().list())
    );
  }
}

/**
 * Leader runnable marking the reconcilers as running. It sets the flag synchronously in start(): the manager
 * starts all leader runnables before any reconcile runs.
 */
export class ReconcilerReadiness implements Runnable {
  readonly name = 'podplacement-reconciler-readiness';
  readonly needsLeaderElection = true;
  private running = false;

  constructor(
    private readonly caches: readonly { hasSynced(): boolean }[],
    private readonly onChange: () => void,
  ) {}

  /** The reconcilers run and every cache they read has synced. */
  ready(): boolean {
    return this.running && this.caches.every((c) => c.hasSynced());
  }

  async start(signal: AbortSignal): Promise<void> {
    this.running = true;
    this.onChange();
    await waitForAbort(signal);
    this.running = false;
  }
}
