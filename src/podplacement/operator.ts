// Runs the pod placement operand: the gating webhook and config-validation webhooks (every replica), the pod
// reconciler and the cluster-config controller (leader only), the global pull-secret watch, metrics and probes.
// `components` splits it into a webhook Deployment and a controller Deployment, as the reference operator does.
// startPodPlacementOperator() resolves once it is serving; `stopped` settles after a graceful shutdown (abort
// the signal, or SIGTERM when handleSignals). The caller owns the KubeConfig and the namespace.
import os from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  CustomResourceDefinitions,
  Manager,
  NAMESPACE_INDEX,
  Pods,
  ResourceClient,
  Secrets,
  MutatingWebhookConfigurations,
  ValidatingWebhookConfigurations,
  WebhookServer,
  isNotFound,
  namespaceIndexFunc,
  type Clock,
  type KubeObject,
  type Logger,
  type LogLevel,
  type ResourceType,
} from '../runtime/index.js';
import {
  CachingInspector,
  RegistryInspector,
  type ImageInspector,
  type PullSecretLike,
} from '../registry/index.js';
import { createInspectionCacheMetrics } from '../registry/metrics.js';
import { CONVERSION_WEBHOOK_PATH, convertClusterPodPlacementConfig } from './api/conversion.js';
import { installPodPlacementCrds } from './api/install.js';
import type { ClusterPodPlacementConfig, LogVerbosity, PodPlacementConfig } from './api/schema.js';
import { ClusterConfigController } from './cluster-config-controller.js';
import { crdConversion, crdConversionPatch } from './crd-conversion.js';
import {
  ClusterConfigValidator,
  PodPlacementConfigValidator,
  type ConfigReader,
} from './config-validation.js';
import {
  API_GROUP,
  CLUSTER_CONFIG_NAME,
  CLUSTER_CONFIG_PLURAL,
  DEFAULT_OPERATOR_NAMESPACE,
  EVENT_RECORDER_COMPONENT,
  GLOBAL_PULL_SECRET,
  LABELS,
  LABEL_VALUES,
  LEADER_ELECTION_ID,
  MUTATING_WEBHOOK,
  VALIDATING_WEBHOOK,
} from './constants.js';
import { GatingWebhook } from './gating-webhook.js';
import { PodPlacementMetrics } from './metrics.js';
import type { PlacementPlan } from './placement-plan.js';
import { DEFAULT_INSPECTION_DEADLINE_MS, PodReconciler } from './pod-reconciler.js';
import type { Pod } from './pod-types.js';
import { briefSecretCache } from './pull-secret-cache.js';
import { PullSecretResolver } from './pull-secrets.js';
import {
  RegistryPolicyWatch,
  discoverPolicyKinds,
  readAdditionalTrustedCAs,
} from './registry-policy-watch.js';
import { ClusterPodPlacementConfigs, PodPlacementConfigs } from './resources.js';
import {
  validatingWebhookConfiguration,
  type WebhookConfigurationObject,
  type WebhookEndpoint,
  type WebhookTlsTrust,
} from './webhook-configurations.js';
import { SelfManagedTls, type TlsSecret } from './webhook-tls.js';

/** How the webhook server gets its certificate and how the API server learns to trust it. */
export type WebhookTlsMode =
  /** The operator creates a CA and serving certificate (Secret in its namespace), renews them and patches caBundle. */
  | { readonly mode: 'self-managed'; readonly certDir?: string; readonly renewBeforeDays?: number }
  /** OpenShift's service CA: certificate files mounted from the serving-cert Secret, caBundle injected. */
  | { readonly mode: 'service-ca'; readonly certFile: string; readonly keyFile: string };

/** Which halves run in this process. */
export type OperatorComponents = 'all' | 'controller' | 'webhook';

export interface PodPlacementOperatorOptions {
  kubeConfig: KubeConfig;
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
   * How the API server reaches the webhook. Default: Service pod-placement-web-hook in `namespace`, port 443.
   * For an operator outside the cluster use `{ kind: 'url', baseUrl: 'https://127.0.0.1:PORT' }` (PORT 0 = the bound port).
   */
  endpoint?: WebhookEndpoint;
  /** Default: self-managed, with names for the Service (and 127.0.0.1 for URL endpoints). */
  tls?: WebhookTlsMode;
  /** Probe/metrics server (/healthz, /readyz, /metrics); false disables. Default: { port: 8081 }. */
  probes?: false | { host?: string; port?: number };
  /** Leader election for the reconcilers. Default: true. */
  leaderElection?: boolean;
  /** Install/upgrade the CRDs at start (needs CRD write access). Default: false. */
  installCrds?: boolean;
  /** Create (and keep current) the ValidatingWebhookConfiguration; with a URL endpoint it is deleted at exit. Default: false. */
  manageValidatingWebhook?: boolean;
  /** Default: openshift-config/pull-secret. */
  globalPullSecret?: { namespace: string; name: string };
  /** Concurrent pod reconciles. Default: 8. */
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
  /** Told about every plan applied to a pod. */
  onPlanned?: (key: string, plan: PlacementPlan) => void;
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

const VERBOSITY_TO_LEVEL: Record<LogVerbosity, LogLevel> = {
  Normal: 'info',
  Debug: 'debug',
  Trace: 'trace',
  TraceAll: 'trace',
};

const EndpointSlices: ResourceType = {
  group: 'discovery.k8s.io',
  version: 'v1',
  plural: 'endpointslices',
  kind: 'EndpointSlice',
  namespaced: true,
};
interface EndpointSlice extends KubeObject {
  endpoints?: { conditions?: { ready?: boolean } }[];
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

/** Starts the operator and resolves once its webhook is serving (or it failed). */
export async function startPodPlacementOperator(
  options: PodPlacementOperatorOptions,
): Promise<PodPlacementOperatorHandle> {
  const namespace = options.namespace ?? DEFAULT_OPERATOR_NAMESPACE;
  const components = options.components ?? 'all';
  const runsWebhook = components !== 'controller';
  const runsController = components !== 'webhook';
  const manager = new Manager({
    kubeConfig: options.kubeConfig,
    name: 'tessera-podplacement',
    leaderElection:
      options.leaderElection === false || !runsController
        ? false
        : { leaseNamespace: namespace, leaseName: LEADER_ELECTION_ID },
    probes: options.probes === undefined ? { port: 8081 } : options.probes,
    logLevel: options.logLevel,
    logger: options.logger,
    handleSignals: options.handleSignals,
  });
  const { client, logger, clock } = manager;
  const metrics = new PodPlacementMetrics(manager.registry);

  // Caches shared by both halves: the cluster config and every PodPlacementConfig.
  const cppcInformer = manager.informers.informerFor<ClusterPodPlacementConfig & KubeObject>({
    type: ClusterPodPlacementConfigs,
  });
  const ppcInformer = manager.informers.informerFor<PodPlacementConfig & KubeObject>({
    type: PodPlacementConfigs,
    indexers: { [NAMESPACE_INDEX]: namespaceIndexFunc },
  });
  const clusterConfig = (): ClusterPodPlacementConfig | undefined =>
    cppcInformer.getIndexer().get(CLUSTER_CONFIG_NAME);
  const podPlacementConfigs = (ns: string): PodPlacementConfig[] =>
    ppcInformer.getIndexer().byIndex(NAMESPACE_INDEX, ns);

  // Log verbosity follows the cluster config at run time.
  let verbosity: LogVerbosity | undefined;
  const applyVerbosity = (c: ClusterPodPlacementConfig): void => {
    const v = c.spec?.logVerbosity ?? 'Normal';
    if (v === verbosity) return;
    verbosity = v;
    manager.setLogLevel(VERBOSITY_TO_LEVEL[v]);
  };
  cppcInformer.addEventHandler({ onAdd: (c) => applyVerbosity(c), onUpdate: (_o, c) => applyVerbosity(c) });

  // TLS: both halves need it (the webhook serves the certificate, the controller publishes the CA bundle).
  const tlsMode: WebhookTlsMode = options.tls ?? { mode: 'self-managed' };
  const certDir =
    (tlsMode.mode === 'self-managed' ? tlsMode.certDir : undefined) ??
    path.join(os.tmpdir(), `tessera-podplacement-${process.pid}`);
  let tls: SelfManagedTls | undefined;
  let trust: () => WebhookTlsTrust = () => ({ serviceCaInjection: true });
  if (tlsMode.mode === 'self-managed') {
    const svc = MUTATING_WEBHOOK.serviceName;
    const selfTls = new SelfManagedTls({
      secrets: new ResourceClient<TlsSecret>(client, Secrets),
      namespace,
      dnsNames: [
        svc,
        `${svc}.${namespace}`,
        `${svc}.${namespace}.svc`,
        `${svc}.${namespace}.svc.cluster.local`,
        'localhost',
      ],
      ipAddresses: ['127.0.0.1'],
      renewBeforeDays: tlsMode.renewBeforeDays,
    });
    // Only the controller writes the Secret; the webhook's service account may just `get` it (by name).
    if (runsController) await selfTls.ensure(new Date(clock.now()), options.signal);
    else await loadControllerCertificate(selfTls, clock, logger, options.signal);
    tls = selfTls;
    trust = () => ({ caBundlePem: selfTls.certificate()?.caBundlePem });
  }
  const onCertificateRenewed: (() => void)[] = [];
  // After TLS, so a CRD created now already names this endpoint and CA when both are known (not so for a URL on a
  // port picked at listen time): changing a CRD's spec later makes the API server swap the resource's storage, and
  // requests in that window fail with 503.
  if (options.installCrds) {
    const known = knownEndpoint(options.endpoint, namespace);
    await installPodPlacementCrds(client, {
      signal: options.signal,
      conversion: known ? crdConversion(known, trust()) : undefined,
    });
  }

  // The webhook half.
  let server: WebhookServer | undefined;
  let webhookListening = false;
  if (runsWebhook) {
    if (tlsMode.mode === 'service-ca') {
      server = new WebhookServer({
        host: options.webhookHost,
        port: options.webhookPort ?? 9443,
        ...options.webhookBudgets,
        certFile: tlsMode.certFile,
        keyFile: tlsMode.keyFile,
        registry: manager.registry,
        clock,
        logger,
      });
    } else {
      const files = await (tls as SelfManagedTls).writeFiles(certDir);
      server = new WebhookServer({
        host: options.webhookHost,
        port: options.webhookPort ?? 9443,
        ...options.webhookBudgets,
        ...files,
        certPollIntervalMs: 5_000,
        registry: manager.registry,
        clock,
        logger,
      });
    }
    const configReader: ConfigReader = {
      cachedClusterConfigExists: () => clusterConfig() !== undefined,
      clusterConfigExists: async (signal) => {
        try {
          await new ResourceClient<KubeObject>(client, ClusterPodPlacementConfigs).get(
            { name: CLUSTER_CONFIG_NAME },
            signal,
          );
          return true;
        } catch (err) {
          if (isNotFound(err)) return false;
          throw err;
        }
      },
      cachedPodPlacementConfigs: podPlacementConfigs,
      podPlacementConfigs: async (ns, signal) =>
        (
          await new ResourceClient<PodPlacementConfig & KubeObject>(client, PodPlacementConfigs).list({
            namespace: ns,
            signal,
          })
        ).items,
      cachedPodPlacementConfigCount: () => ppcInformer.getIndexer().size(),
    };
    server.register(
      MUTATING_WEBHOOK.path,
      new GatingWebhook({
        clusterConfig,
        podPlacementConfigs,
        operatorNamespace: namespace,
        clock,
        logger,
        metrics,
      }),
    );
    server.register(
      VALIDATING_WEBHOOK.podConfigPath,
      new PodPlacementConfigValidator(configReader, { clock }),
    );
    server.register(VALIDATING_WEBHOOK.clusterConfigPath, new ClusterConfigValidator(configReader));
    server.registerConversion(CONVERSION_WEBHOOK_PATH, { convert: convertClusterPodPlacementConfig });
    manager.add(server);
    const s = server;
    void s.ready().then(() => {
      webhookListening = true;
      kick();
    });
    if (tls) onCertificateRenewed.push(() => void (tls as SelfManagedTls).writeFiles(certDir));
  }
  const webhookPortNow = (): number => server?.port() ?? 0;
  const endpoint = resolveEndpoint(options.endpoint, namespace, webhookPortNow);
  const synced = (...informers: { hasSynced(): boolean }[]): boolean => informers.every((i) => i.hasSynced());
  const localWebhookReady = (): boolean => webhookListening && synced(ppcInformer, cppcInformer);
  if (runsWebhook)
    manager.addReadyCheck('webhook', () => localWebhookReady() || 'webhook server not serving yet');

  // A configuration left by an earlier process may name a URL nobody answers (a killed operator, another port), and
  // its failurePolicy Fail refuses every config change: nothing that writes configs may run before it is rewritten.
  let vwcWritten = false;
  let markVwcWritten: () => void = () => undefined;
  const validatingWebhookConfigured = new Promise<void>((resolve) => {
    markVwcWritten = () => {
      vwcWritten = true;
      resolve();
    };
  });
  if (!(runsController && options.manageValidatingWebhook)) markVwcWritten();

  // The controller half.
  const controllerHandle: { current?: { enqueue(key: string): void } } = {};
  function kick(): void {
    controllerHandle.current?.enqueue(CLUSTER_CONFIG_NAME);
  }
  if (runsController) {
    const globalRef = options.globalPullSecret ?? GLOBAL_PULL_SECRET;
    const workers = options.workers ?? 8;
    const inspectionDeadlineMs = options.inspectionDeadlineMs ?? DEFAULT_INSPECTION_DEADLINE_MS;
    const gatedInformer = manager.informers.informerFor<Pod & KubeObject>({
      type: Pods,
      labelSelector: `${LABELS.schedulingGate}=${LABEL_VALUES.gated}`,
      indexers: { [NAMESPACE_INDEX]: namespaceIndexFunc },
    });
    const globalSecretInformer = manager.informers.informerFor<PullSecretLike & KubeObject>({
      type: Secrets,
      namespace: globalRef.namespace,
      fieldSelector: `metadata.name=${globalRef.name}`,
    });

    // Image inspection: the cache is purged whenever the global pull secret or the registry policy changes.
    let caching: CachingInspector | undefined;
    if (options.inspector === undefined) {
      // Discovery once: the policy kinds exist on OpenShift (or with the dev CRDs), not on plain Kubernetes.
      const policyKinds = await discoverPolicyKinds(client, logger, options.signal);
      // The cluster's additionalTrustedCA bundles, read once at start (as `podplacement explain` reads them).
      const clusterCAs = await readAdditionalTrustedCAs(client, policyKinds, logger, options.signal);
      const policyWatch = new RegistryPolicyWatch({
        kinds: policyKinds,
        informerFor: (type) => manager.informers.informerFor<KubeObject>({ type }),
        extraInsecureRegistries: options.registry?.insecureRegistries,
        onChange: () => caching?.purge(),
        logger,
      });
      caching = new CachingInspector(
        new RegistryInspector({
          caCertificates: [...(options.registry?.caCertificates ?? []), ...clusterCAs],
          trustedRealmHosts: options.registry?.trustedRealmHosts ?? [],
          policy: () => policyWatch.current(),
          // Each request gives up before the pod's deadline does, so a silent registry costs bounded time.
          connectTimeoutMs: Math.min(10_000, Math.max(500, Math.floor(inspectionDeadlineMs / 3))),
          attemptTimeoutMs: Math.min(30_000, Math.max(1_000, Math.floor((inspectionDeadlineMs * 2) / 3))),
          // Tenants see one uniform "cannot be reached" message; why (refused, silent, TLS) is for the operator.
          onUnreachable: (event) => logger.warn(event, 'registry unreachable'),
        }),
        { metrics: createInspectionCacheMetrics(manager.registry), negativeTtlMs: 1_000 },
      );
    }
    const inspector: ImageInspector = options.inspector ?? (caching as ImageInspector);
    let globalSecretData: string | undefined;
    const onGlobalSecret = (secret: (PullSecretLike & KubeObject) | undefined): void => {
      const data = JSON.stringify(secret?.data ?? null);
      if (data === globalSecretData) return;
      const first = globalSecretData === undefined;
      globalSecretData = data;
      if (first) return;
      caching?.purge();
      logger.info(
        { secret: `${globalRef.namespace}/${globalRef.name}` },
        'global pull secret changed; image inspection cache purged',
      );
    };
    globalSecretInformer.addEventHandler({
      onAdd: (s) => onGlobalSecret(s),
      onUpdate: (_o, s) => onGlobalSecret(s),
      onDelete: () => onGlobalSecret(undefined),
    });
    const secrets = new ResourceClient<PullSecretLike & KubeObject>(client, Secrets);
    const pullSecrets = new PullSecretResolver({
      getSecret: briefSecretCache(async (ns, name, signal) => {
        try {
          return await secrets.get({ namespace: ns, name }, signal);
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      }),
      globalSecret: () => globalSecretInformer.getIndexer().get(`${globalRef.namespace}/${globalRef.name}`),
      onSkipped: (secret, reason) => logger.debug({ secret, reason }, 'pull secret skipped'),
    });

    const pods = new ResourceClient<Pod & KubeObject>(client, Pods);
    const podReconciler = new PodReconciler({
      getPod: (key) => gatedInformer.getIndexer().get(key),
      patchPod: (ns, name, patch, signal) => pods.mergePatch({ namespace: ns, name }, patch, { signal }),
      clusterConfig,
      podPlacementConfigs,
      inspector,
      pullSecrets,
      events: manager.eventRecorder(EVENT_RECORDER_COMPONENT, { api: 'v1' }),
      operatorNamespace: namespace,
      clock,
      logger: logger.child({ controller: 'podplacement-pods' }),
      metrics,
      retryBaseDelayMs: options.retryBaseDelayMs,
      inspectionDeadlineMs,
      // A tenant (namespace) or a registry never holds every worker: the rest requeue instead of waiting.
      maxInspectionsPerNamespace: options.maxInspectionsPerNamespace ?? Math.max(1, Math.floor(workers / 4)),
      maxInspectionsPerRegistry: options.maxInspectionsPerRegistry ?? Math.max(1, Math.floor(workers / 2)),
      wake: (key) => podController.enqueue(key),
      onPlanned: options.onPlanned,
    });
    const podController = manager.newController({
      name: 'podplacement-pods',
      reconciler: podReconciler,
      workers,
    });
    podController.watch(gatedInformer);
    // A new or changed PodPlacementConfig must reach pods still gated in its namespace.
    podController.watch(ppcInformer, (ppc) =>
      gatedInformer
        .getIndexer()
        .byIndex(NAMESPACE_INDEX, ppc.metadata?.namespace ?? '')
        .map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`),
    );

    // Readiness, computed synchronously from state set before any reconcile runs (so a restart never sees a
    // spurious "not ready"); a split webhook is ready when its Service has a ready endpoint.
    let reconcilerRunning = false;
    const controllerReady = (): boolean =>
      reconcilerRunning && synced(gatedInformer, ppcInformer, cppcInformer);
    let webhookReady = localWebhookReady;
    if (!runsWebhook) {
      const slices = manager.informers.informerFor<EndpointSlice>({
        type: EndpointSlices,
        namespace,
        labelSelector: `kubernetes.io/service-name=${MUTATING_WEBHOOK.serviceName}`,
      });
      slices.addEventHandler({ onAdd: kick, onUpdate: kick, onDelete: kick });
      webhookReady = () =>
        synced(slices, ppcInformer, cppcInformer) &&
        slices
          .getIndexer()
          .list()
          .some((s) => (s.endpoints ?? []).some((e) => e.conditions?.ready !== false));
    }
    manager.add({
      name: 'podplacement-reconciler-readiness',
      needsLeaderElection: true,
      async start(signal) {
        reconcilerRunning = true; // synchronously: leader runnables all start before any reconcile runs
        kick();
        await waitForAbort(signal);
        reconcilerRunning = false;
      },
    });

    const configReconciler = new ClusterConfigController({
      getClusterConfig: clusterConfig,
      clusterConfigs: new ResourceClient<
        ClusterPodPlacementConfig & KubeObject & { metadata: { name: string } }
      >(client, ClusterPodPlacementConfigs),
      webhookConfigurations: new ResourceClient<WebhookConfigurationObject & KubeObject>(
        client,
        MutatingWebhookConfigurations,
      ),
      podPlacementConfigCount: () => ppcInformer.getIndexer().list().length,
      gatedPodCount: () => gatedInformer.getIndexer().list().length,
      controllerReady,
      webhookReady: () => webhookReady(),
      endpoint,
      operatorNamespace: namespace,
      trust: () => trust(),
      clock,
      logger: logger.child({ controller: 'podplacement-config' }),
    });
    const cfgController = manager.newController({
      name: 'podplacement-config',
      reconciler: {
        // Adding or removing the finalizer is an UPDATE the validating webhook sees.
        reconcile: async (key, signal) => {
          if (!vwcWritten) await Promise.race([validatingWebhookConfigured, waitForAbort(signal)]);
          if (signal.aborted) return;
          return configReconciler.reconcile(key, signal);
        },
      },
    });
    controllerHandle.current = cfgController;
    cfgController.watch(cppcInformer, () => [CLUSTER_CONFIG_NAME]);
    cfgController.watch(ppcInformer, () => [CLUSTER_CONFIG_NAME]);
    // While deprovisioning, each released pod may be the last one.
    cfgController.watch(gatedInformer, () =>
      clusterConfig()?.metadata.deletionTimestamp ? [CLUSTER_CONFIG_NAME] : [],
    );
    onCertificateRenewed.push(kick);

    if (options.manageValidatingWebhook) {
      const vwc = new ResourceClient<WebhookConfigurationObject & KubeObject>(
        client,
        ValidatingWebhookConfigurations,
      );
      const applyVwc = (signal?: AbortSignal) =>
        vwc.apply(validatingWebhookConfiguration(endpoint, trust(), { operatorNamespace: namespace }), {
          fieldManager: 'tessera-podplacement',
          force: true,
          signal,
        });
      onCertificateRenewed.push(
        () =>
          void applyVwc().catch((err: unknown) =>
            logger.error({ err }, 'could not update the validating webhook configuration'),
          ),
      );
      manager.add({
        name: 'podplacement-validating-webhook-configuration',
        needsLeaderElection: true,
        async start(signal) {
          await server?.ready();
          // Retried: a failed write must not take the whole operator down, nor leave a stale URL in place.
          for (let delayMs = 500; !signal.aborted; delayMs = Math.min(delayMs * 2, 30_000)) {
            try {
              await applyVwc(signal);
              logger.info(
                { name: VALIDATING_WEBHOOK.configurationName },
                'validating webhook configuration written',
              );
              markVwcWritten();
              break;
            } catch (err) {
              if (signal.aborted) break;
              logger.warn(
                { err, retryInMs: delayMs },
                'could not write the validating webhook configuration; config changes are refused until it is',
              );
              await clock.sleep(delayMs, signal);
            }
          }
          await waitForAbort(signal);
          // Outside the cluster nothing answers once this process is gone: a Fail-policy webhook left behind
          // would block every config change.
          if (endpoint.kind === 'url')
            await vwc.delete({ name: VALIDATING_WEBHOOK.configurationName }).catch(() => undefined);
        },
      });
    }
  }

  // The CRD's conversion webhook must name this endpoint and trust this CA, like the webhook configurations: the
  // half that publishes CA bundles (the controller) patches it, whether it installed the CRDs or not. With the
  // service CA it sets the Service and the inject annotation and leaves the injected caBundle alone. Without a
  // reachable, trusted webhook every v1alpha1 request fails (v1beta1, the storage version, needs no conversion).
  if (runsController) {
    const crds = new ResourceClient<KubeObject>(client, CustomResourceDefinitions);
    const crdName = `${CLUSTER_CONFIG_PLURAL}.${API_GROUP}`;
    const patchConversion = (signal?: AbortSignal) =>
      crds.mergePatch({ name: crdName }, crdConversionPatch(endpoint, trust()), {
        fieldManager: 'tessera-podplacement-conversion',
        signal,
      });
    onCertificateRenewed.push(
      () =>
        void patchConversion().catch((err: unknown) =>
          logger.error({ err, crd: crdName }, 'could not update the CRD conversion webhook'),
        ),
    );
    manager.add({
      name: 'podplacement-crd-conversion-webhook',
      needsLeaderElection: true,
      async start(signal) {
        await server?.ready();
        for (let delayMs = 500; !signal.aborted; delayMs = Math.min(delayMs * 2, 30_000)) {
          try {
            await patchConversion(signal);
            logger.info({ crd: crdName }, 'CRD conversion webhook configured');
            // Done: renewals re-patch through onCertificateRenewed; holding the signal would only add a listener.
            return;
          } catch (err) {
            if (signal.aborted) return;
            logger.warn(
              { err, crd: crdName, retryInMs: delayMs },
              'could not configure the CRD conversion webhook; v1alpha1 requests fail until it is',
            );
            await clock.sleep(delayMs, signal);
          }
        }
      },
    });
  }

  if (tls) {
    const selfTls = tls;
    manager.add({
      name: 'podplacement-webhook-cert-renewal',
      async start(signal) {
        while (!signal.aborted) {
          await clock.sleep(60 * 60 * 1000, signal);
          if (signal.aborted) break;
          try {
            const now = new Date(clock.now());
            const renewed = runsController
              ? (await selfTls.ensure(now, signal)).renewed
              : (await selfTls.load(now, signal)).changed;
            if (renewed) for (const f of onCertificateRenewed) f();
          } catch (err) {
            logger.error({ err }, 'webhook certificate renewal failed; will retry in an hour');
          }
        }
      },
    });
  }

  const stopped = manager.start(options.signal);
  if (server) await Promise.race([server.ready(), stopped]);
  return {
    webhookPort: webhookPortNow(),
    probePort: () => manager.probePort(),
    manager,
    validatingWebhookConfigured,
    stopped,
  };
}

/** Waits (with backoff) until the controller has stored the webhook certificate, then adopts it. */
async function loadControllerCertificate(
  tls: SelfManagedTls,
  clock: Clock,
  logger: Logger,
  signal: AbortSignal | undefined,
): Promise<void> {
  for (let delayMs = 500; ; delayMs = Math.min(delayMs * 2, 30_000)) {
    try {
      await tls.load(new Date(clock.now()), signal);
      return;
    } catch (err) {
      if (signal?.aborted) throw err;
      logger.warn(
        { err, retryInMs: delayMs },
        'webhook certificate not available yet; not serving until it is',
      );
      await clock.sleep(delayMs, signal);
    }
  }
}

/** Runs the operator until `signal` aborts (or SIGTERM); for `tessera start` and the in-cluster command. */
export async function runPodPlacementOperator(options: PodPlacementOperatorOptions): Promise<void> {
  const handle = await startPodPlacementOperator(options);
  await handle.stopped;
}

function resolveEndpoint(
  given: WebhookEndpoint | undefined,
  namespace: string,
  port: () => number,
): WebhookEndpoint {
  if (!given) return { kind: 'service', namespace, name: MUTATING_WEBHOOK.serviceName, port: 443 };
  if (given.kind === 'url') {
    const url = new URL(given.baseUrl);
    if (url.port === '0') {
      return {
        kind: 'url',
        get baseUrl() {
          return `${url.protocol}//${url.hostname}:${port()}`;
        },
      };
    }
  }
  return given;
}

/** The endpoint when it is known before the webhook server listens (not a URL on port 0). */
function knownEndpoint(given: WebhookEndpoint | undefined, namespace: string): WebhookEndpoint | undefined {
  if (given?.kind === 'url' && new URL(given.baseUrl).port === '0') return undefined;
  return resolveEndpoint(given, namespace, () => 0);
}
