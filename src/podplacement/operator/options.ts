// The operator's public options and handle, and the settings every component derives from them.
import type {
  BackoffOptions,
  KubeConnection,
  Logger,
  LogLevel,
  Manager,
  ManagerOptions,
} from '../../runtime/index.js';
import { InvalidArgumentError } from '../../runtime/light.js';
import type { AddressPolicy, ImageInspector, ProxyConfig } from '../../registry/index.js';
import { DEFAULT_OPERATOR_NAMESPACE, LEADER_ELECTION_ID } from '../constants.js';
import type { PlacementPlan } from '../placement-plan.js';
import type { WebhookEndpoint } from '../webhook-configurations.js';

/** How the webhook server gets its certificate and how the API server learns to trust it. */
export type WebhookTlsMode =
  /** The operator creates a CA and serving certificate (Secret in its namespace), renews them and patches caBundle. */
  | { readonly mode: 'self-managed'; readonly certDir?: string; readonly renewBeforeDays?: number }
  /** OpenShift's service CA: certificate files mounted from the serving-cert Secret, caBundle injected. */
  | { readonly mode: 'service-ca'; readonly certFile: string; readonly keyFile: string }
  /**
   * OLM: the webhook Deployment serves the certificate OLM mounts (from the Secret named by `caSecretName`) and OLM
   * registers the validating and conversion webhooks of the CSV itself; for the gating webhook, the one
   * configuration the controller still owns, it takes the CA of the provider that issued that Secret (OLM v0's
   * olmCAKey, cert-manager's ca.crt, or the service CA's injection under OLM v1: olm-ca.ts).
   */
  | {
      readonly mode: 'olm';
      readonly certFile: string;
      readonly keyFile: string;
      readonly caSecretName: string;
    };

/** Which halves run in this process. */
export type OperatorComponents = 'all' | 'controller' | 'webhook';
/** Default of `components` (and of --components): both halves in one process. */
export const DEFAULT_COMPONENTS: OperatorComponents = 'all';
/** Default of `tls` (and of --tls): the operator issues and renews its own webhook certificate. */
export const DEFAULT_TLS_MODE: WebhookTlsMode['mode'] = 'self-managed';

export interface PodPlacementOperatorOptions {
  kubeConfig: KubeConnection;
  /** The operator's namespace (never gated; TLS Secret and lease live here). Default: openshift-multiarch-tuning-operator. */
  namespace?: string;
  /** Stops the operator when aborted. */
  signal?: AbortSignal;
  /** Default: 'all'. 'controller' judges the webhook's readiness from its Service's EndpointSlices. */
  components?: OperatorComponents;
  /** Webhook server listen address. Defaults: host 0.0.0.0, port 9443 (0 picks a free port). */
  webhookHost?: string;
  webhookPort?: number;
  /** Webhook budgets an admin may need to change (the rest keep WEBHOOK_BUDGET_DEFAULTS). */
  webhookBudgets?: { maxRequestBytes?: number; maxConnections?: number };
  /**
   * PEM CA bundle that verifies the API server's client certificate (`--webhook-client-ca`). Connections presenting
   * a certificate it verifies get their own connection pool and two thirds of the in-flight memory budget, which
   * other callers cannot take; those are still served, within the rest. Default: none (all callers share).
   */
  webhookClientCa?: string;
  /**
   * How the API server reaches the webhook. Default: Service pod-placement-web-hook in `namespace`, port 443.
   * For an operator outside the cluster use `{ kind: 'url', baseUrl: 'https://127.0.0.1:PORT' }` (PORT 0 = the bound port).
   */
  endpoint?: WebhookEndpoint;
  /** Default: self-managed, with names for the Service (and 127.0.0.1 for URL endpoints). */
  tls?: WebhookTlsMode;
  /** Probe/metrics server (/healthz, /readyz, /metrics); false disables. Default: { port: 8081 }. */
  probes?: false | { host?: string; port?: number };
  /** Where /metrics is served (--metrics-bind-address...). Default: on the probe port. */
  metrics?: ManagerOptions['metrics'];
  /** Leader election for the reconcilers. Default: true. */
  leaderElection?: boolean;
  /** Install/upgrade the CRDs at start (needs CRD write access). Default: false. */
  installCrds?: boolean;
  /** Create (and keep current) the ValidatingWebhookConfiguration; with a URL endpoint it is deleted at exit. Default: false. */
  manageValidatingWebhook?: boolean;
  /** Default: openshift-config/pull-secret. */
  globalPullSecret?: { namespace: string; name: string };
  /** Concurrent pod reconciles. Default: DEFAULT_WORKERS (8, inspection-slots.ts). */
  workers?: number;
  /**
   * Image inspector; default: CachingInspector(RegistryInspector) with `registry` settings and the cluster's
   * registry policy (ImageDigestMirrorSet, ImageTagMirrorSet, ImageContentSourcePolicy, image.config.openshift.io
   * registrySources; kinds the cluster does not serve are skipped).
   */
  inspector?: ImageInspector;
  /** `insecureRegistries` are added to the cluster's. */
  registry?: {
    caCertificates?: readonly string[];
    insecureRegistries?: readonly string[];
    /** Token service hosts that may receive pull-secret credentials besides the registry's own domain. */
    trustedRealmHosts?: readonly string[];
    /**
     * Address ranges registry connections may not dial (images, mirrors, redirects, token realms; resolved names
     * too). Default: only link-local and unspecified addresses are refused (always, whatever the policy).
     */
    addressPolicy?: AddressPolicy;
    /**
     * Egress proxy for registry connections (HTTPS_PROXY / HTTP_PROXY / NO_PROXY of the operator's environment, as
     * OLM sets them from the cluster proxy). Default: none, every connection is direct.
     */
    proxy?: ProxyConfig;
  };
  /** Wait before the 2nd inspection attempt, in ms (doubles each time). Default: 2,000. */
  retryBaseDelayMs?: number;
  /**
   * Longest wait of a pod for its images' registries, in ms, over all its attempts; then the pod is ungated
   * (fallback architecture if set) with an event naming the registry. Registry requests time out below it
   * (connect: a third, whole request: two thirds, capped at 10 s and 30 s). Default: 15,000.
   */
  inspectionDeadlineMs?: number;
  /** Pods of one namespace inspected at once. Default: a quarter of `workers` (at least 1). */
  maxInspectionsPerNamespace?: number;
  /** Pods inspected at once per registry host. Default: half of `workers` (at least 1). */
  maxInspectionsPerRegistry?: number;
  /**
   * Webhook half: when the controller's leader Lease has not changed for this long (ms, by this process's monotonic
   * clock), new pods are admitted without the scheduling gate, with a Warning event on the Lease and the gauge
   * tessera_podplacement_webhook_gating_suspended, until the Lease is renewed. At least 1,000; 0 disables. Default:
   * 300,000 (5 minutes); always off in a process that runs the controller without leader election (no Lease).
   */
  controllerLeaseStaleAfterMs?: number;
  /** Told about every plan applied to a pod. */
  onPlanned?: (key: string, plan: PlacementPlan) => void;
  /**
   * Contribute Health insights to the UpdateStatus (pods gated for long, registries failing) while this process
   * leads; a cluster without the UpdateStatus API is logged once and looked at again. Default: true.
   */
  updateInsights?: boolean;
  logger?: Logger;
  logLevel?: LogLevel;
  /** Stop on SIGTERM/SIGINT. Default: true. */
  handleSignals?: boolean;
}

export interface PodPlacementOperatorHandle {
  /** Bound webhook port (0 without a webhook). */
  readonly webhookPort: number;
  /** Bound probe/metrics port (0 when disabled). */
  probePort(): number;
  readonly manager: Manager;
  /**
   * Resolves once this process has (re)written the ValidatingWebhookConfiguration with its current URL/Service and
   * caBundle (at once without manageValidatingWebhook). Needs the lease with leader election, so it may never
   * settle on a standby replica: race it with `stopped`.
   */
  readonly validatingWebhookConfigured: Promise<void>;
  /** Settles when the operator has stopped; rejects if it failed. */
  readonly stopped: Promise<void>;
}

/** What this process runs, derived once from the options. */
export interface OperatorSettings {
  readonly namespace: string;
  /** Serves the gating, validating and conversion webhooks. */
  readonly runsWebhook: boolean;
  /** Runs the reconcilers, owns the TLS Secret and publishes CA bundles. */
  readonly runsController: boolean;
}

export function operatorSettings(options: PodPlacementOperatorOptions): OperatorSettings {
  const components = options.components ?? DEFAULT_COMPONENTS;
  // Under OLM the CSV's definitions own the CRDs and the validating webhooks; writing them too would fight OLM
  // (and the CSV grants no such access, so it would retry forever).
  if (options.tls?.mode === 'olm' && (options.manageValidatingWebhook || options.installCrds))
    throw new InvalidArgumentError(
      '--tls',
      'olm cannot be combined with --manage-validating-webhook or --install-crds: OLM registers the validating webhooks and installs the CRDs',
    );
  return {
    namespace: options.namespace ?? DEFAULT_OPERATOR_NAMESPACE,
    runsWebhook: components !== 'controller',
    runsController: components !== 'webhook',
  };
}

/** The manager: leader election only where reconcilers run (the lease lives in the operator's namespace). */
export function managerOptions(
  options: PodPlacementOperatorOptions,
  settings: OperatorSettings,
): ManagerOptions {
  return {
    kubeConfig: options.kubeConfig,
    name: 'tessera-podplacement',
    leaderElection:
      options.leaderElection === false || !settings.runsController
        ? false
        : { leaseNamespace: settings.namespace, leaseName: LEADER_ELECTION_ID },
    // Undefined: the runtime's probe server on its default port (8081).
    probes: options.probes,
    metrics: options.metrics,
    logLevel: options.logLevel,
    logger: options.logger,
    handleSignals: options.handleSignals,
  };
}

/** Backoff of the start-up writes retried until they succeed (certificate load, webhook and CRD registration). */
export const REGISTRATION_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, jitter: 0.2 };
