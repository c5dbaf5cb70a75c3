// Runs the pod placement operand: the gating webhook and config-validation webhooks (every replica), the pod
// reconciler and the cluster-config controller (leader only), the global pull-secret watch, metrics and probes.
// `components` splits it into a webhook Deployment and a controller Deployment, as the reference operator does.
// startPodPlacementOperator() resolves once it is serving; `stopped` settles after a graceful shutdown (abort
// the signal, or SIGTERM when handleSignals). The caller owns the KubeConfig and the namespace.
// This file is the composition root: each component lives in ./operator/ and is a Runnable or start-up step the
// Manager runs; the Manager alone sequences start-up (TLS, then the CRDs, then registry policy discovery, then
// caches and runnables).
import { Manager, Trigger, type StartupStep, type WebhookServer } from '../../runtime/index.js';
import { EVENT_RECORDER_COMPONENT, GLOBAL_PULL_SECRET, LEADER_ELECTION_ID } from '../constants.js';
import { DEFAULT_CONTROLLER_LEASE_STALE_AFTER_MS } from '../controller-liveness.js';
import { PodPlacementMetrics } from '../metrics.js';
import { DEFAULT_INSPECTION_DEADLINE_MS } from '../pod-reconciler.js';
import { InspectionBreaker } from '../inspection-breaker.js';
import { addPodPlacementUpdateInsights } from '../update-insights.js';
import { DEFAULT_WORKERS } from '../inspection-slots.js';
import { ConfigCaches } from './config-caches.js';
import { addClusterConfigController } from './cluster-config-controller.js';
import { CrdConversionRegistrar, crdInstallStep } from './crd-installer.js';
import { knownEndpoint, resolveEndpoint, webhookServiceName } from './endpoint.js';
import { ExecFormatErrorMetrics, addExecFormatErrorMonitor } from './exec-format-error-monitor.js';
import { createImageInspection } from './image-inspection.js';
import { followLogVerbosity } from './log-verbosity.js';
import {
  managerOptions,
  operatorSettings,
  type OperatorSettings,
  type PodPlacementOperatorHandle,
  type PodPlacementOperatorOptions,
} from './options.js';
import { addPodController, gatedPodInformer } from './pod-controller.js';
import { GlobalPullSecretWatch, createPullSecretResolver } from './pull-secret-watch.js';
import { ReconcilerReadiness, WebhookReadiness } from './readiness.js';
import { WebhookTlsSource } from './webhook-tls-source.js';
import { ValidatingWebhookGate, ValidatingWebhookRegistrar } from './webhook-registrar.js';
import { addWebhookServer } from './webhook-server.js';
import { ControllerLeaseWatch } from './controller-lease-watch.js';
import type { WebhookEndpoint } from '../webhook-configurations.js';

export type {
  OperatorComponents,
  PodPlacementOperatorHandle,
  PodPlacementOperatorOptions,
  WebhookTlsMode,
} from './options.js';

/**
 * Starts the operator and resolves once its webhook is serving (a controller-only process: once its start-up steps
 * are done), or rejects when it failed or `signal` aborted first.
 */
export async function startPodPlacementOperator(
  options: PodPlacementOperatorOptions,
): Promise<PodPlacementOperatorHandle> {
  const settings = operatorSettings(options);
  const { namespace } = settings;
  const manager = new Manager(managerOptions(options, settings));
  const metrics = new PodPlacementMetrics(manager.registry);
  const configs = new ConfigCaches(manager.informers);
  followLogVerbosity(configs.clusterConfigs, manager);
  // Readiness changes the cluster config's status reports (the controller half watches it).
  const readinessChanged = new Trigger();
  const serviceName = webhookServiceName(options.tls);
  const tls = new WebhookTlsSource({
    mode: options.tls ?? { mode: 'self-managed' },
    namespace,
    ownsSecret: settings.runsController,
    client: manager.client,
    clock: manager.clock,
    logger: manager.logger,
  });

  const webhookReadiness = new WebhookReadiness(configs, () => readinessChanged.fire());
  const leaseWatch = settings.runsWebhook
    ? controllerLeaseWatch(manager, options, settings, metrics)
    : undefined;
  if (leaseWatch) manager.add(leaseWatch);
  const server = settings.runsWebhook
    ? addWebhookServer({
        manager,
        configs,
        tls,
        metrics,
        readiness: webhookReadiness,
        operatorNamespace: namespace,
        listen: options,
        gatingSuspended: leaseWatch && (() => leaseWatch.gatingSuspended()),
      })
    : undefined;
  const endpoint = resolveEndpoint(options.endpoint, namespace, () => server?.port() ?? 0, serviceName);
  const validatingWebhookGate = new ValidatingWebhookGate(
    !(settings.runsController && options.manageValidatingWebhook),
  );
  const controllerSteps = settings.runsController
    ? addControllerHalf({
        manager,
        options,
        settings,
        configs,
        metrics,
        tls,
        server,
        endpoint,
        readinessChanged,
        webhookReadiness,
        validatingWebhookGate,
      })
    : [];
  manager.add(tls);
  // Start-up steps, in order: TLS before anything serves or publishes; the CRDs after it, so a new CRD already
  // names this endpoint and CA; then the controller's own (which registry policy kinds the cluster serves).
  const startedUp = addStartupSteps(manager, [
    tls.startupStep({ serves: settings.runsWebhook }),
    ...(options.installCrds
      ? [
          crdInstallStep(manager.client, knownEndpoint(options.endpoint, namespace, serviceName), () =>
            tls.trust(),
          ),
        ]
      : []),
    ...controllerSteps,
  ]);

  const stopped = manager.start(options.signal);
  try {
    await Promise.race([
      server ? server.ready() : startedUp,
      // Stopped before serving: aborted during start-up (a failure rejects `stopped` itself).
      stopped.then(() => options.signal?.throwIfAborted()),
    ]);
  } catch (err) {
    // The manager stops on the failure too; wait for it, so nothing is left running or unhandled.
    await stopped.catch(() => undefined);
    throw err;
  }
  return {
    webhookPort: server?.port() ?? 0,
    probePort: () => manager.probePort(),
    manager,
    validatingWebhookConfigured: validatingWebhookGate.opened,
    stopped,
  };
}

/**
 * Adds `steps` to the Manager, in order; resolves once the last one is done (never, if the Manager stops first):
 * a process without a webhook server is started then.
 */
function addStartupSteps(manager: Manager, steps: readonly StartupStep[]): Promise<void> {
  return new Promise((resolve) =>
    steps.forEach((step, i) =>
      manager.addStartupStep(
        i < steps.length - 1
          ? step
          : {
              name: step.name,
              run: async (signal) => {
                await step.run(signal);
                resolve();
              },
            },
      ),
    ),
  );
}

/**
 * The webhook's watch on the controller's Lease, unless disabled (0) or there is no Lease to watch: this process
 * runs the controller itself without leader election.
 */
function controllerLeaseWatch(
  manager: Manager,
  options: PodPlacementOperatorOptions,
  settings: OperatorSettings,
  metrics: PodPlacementMetrics,
): ControllerLeaseWatch | undefined {
  const staleAfterMs = options.controllerLeaseStaleAfterMs ?? DEFAULT_CONTROLLER_LEASE_STALE_AFTER_MS;
  if (staleAfterMs === 0 || (settings.runsController && options.leaderElection === false)) return undefined;
  return new ControllerLeaseWatch({
    client: manager.client,
    namespace: settings.namespace,
    leaseName: LEADER_ELECTION_ID,
    staleAfterMs,
    clock: manager.clock,
    events: manager.eventRecorder(EVENT_RECORDER_COMPONENT, { api: 'v1' }),
    metrics,
    logger: manager.logger.child({ component: 'controller-lease-watch' }),
  });
}

interface ControllerHalf {
  manager: Manager;
  options: PodPlacementOperatorOptions;
  settings: OperatorSettings;
  configs: ConfigCaches;
  metrics: PodPlacementMetrics;
  tls: WebhookTlsSource;
  server: WebhookServer | undefined;
  endpoint: WebhookEndpoint;
  readinessChanged: Trigger;
  webhookReadiness: WebhookReadiness;
  validatingWebhookGate: ValidatingWebhookGate;
}

/**
 * The reconcilers and what they publish: pod placement, cluster-config status, webhook and CRD registration.
 * Returns the start-up steps they need, for the Manager to run after the TLS and CRD steps.
 */
function addControllerHalf(c: ControllerHalf): StartupStep[] {
  const { manager, options, configs, tls, endpoint, readinessChanged } = c;
  const { client, clock, logger } = manager;
  const namespace = c.settings.namespace;
  const trust = () => tls.trust();
  const webhookServing = async (): Promise<void> => c.server?.ready();
  const inspectionDeadlineMs = options.inspectionDeadlineMs ?? DEFAULT_INSPECTION_DEADLINE_MS;

  const gatedPods = gatedPodInformer(manager.informers);
  // Reported by the leader only, once its cache is complete: every replica caches the gated pods, and a sum over
  // replicas must not count a pod twice.
  c.metrics.countGatedPodsFrom(() =>
    manager.isLeader() && gatedPods.hasSynced() ? gatedPods.getIndexer().size() : undefined,
  );
  const inspection = createImageInspection(manager, options, inspectionDeadlineMs);
  const steps = inspection.startupStep ? [inspection.startupStep] : [];
  const globalPullSecret = new GlobalPullSecretWatch({
    informers: manager.informers,
    ref: options.globalPullSecret ?? GLOBAL_PULL_SECRET,
    purgeInspectionCache: () => inspection.purge(),
    logger,
  });
  const updateInsights =
    options.updateInsights === false
      ? undefined
      : addPodPlacementUpdateInsights(manager, gatedPods, () => inspection.searchRegistries());
  const workers = options.workers ?? DEFAULT_WORKERS;
  const breaker = new InspectionBreaker({
    client,
    namespace,
    maxInFlight: workers,
    clock,
    logger: logger.child({ component: 'inspection-breaker' }),
    metrics: c.metrics,
  });
  manager.add(breaker);
  addPodController({
    manager,
    configs,
    gatedPods,
    inspector: inspection.inspector,
    searchRegistries: () => inspection.searchRegistries(),
    pullSecrets: createPullSecretResolver(client, globalPullSecret, logger),
    metrics: c.metrics,
    operatorNamespace: namespace,
    workers,
    inspectionDeadlineMs,
    breaker,
    onInspectionFailure: updateInsights && ((failure) => updateInsights.record(failure)),
    tuning: options,
  });

  // Its pod cache starts once the ClusterPodPlacementConfig enables the plugin.
  addExecFormatErrorMonitor({ manager, configs, metrics: new ExecFormatErrorMetrics(manager.registry) });

  if (!c.settings.runsWebhook)
    c.webhookReadiness.watchService(
      manager.informers,
      namespace,
      endpoint.kind === 'service' ? endpoint.name : webhookServiceName(options.tls),
    );
  const reconcilerReadiness = new ReconcilerReadiness([gatedPods, configs], () => readinessChanged.fire());
  manager.add(reconcilerReadiness);
  addClusterConfigController({
    manager,
    configs,
    gatedPods,
    controllerReady: () => reconcilerReadiness.ready(),
    webhookReady: () => c.webhookReadiness.ready(),
    endpoint,
    operatorNamespace: namespace,
    trust,
    gate: c.validatingWebhookGate,
    triggers: [readinessChanged, tls.renewals],
  });

  const registration = { client, endpoint, trust, webhookServing, clock, logger };
  if (options.manageValidatingWebhook) {
    const gate = c.validatingWebhookGate;
    const registrar = new ValidatingWebhookRegistrar({ ...registration, operatorNamespace: namespace, gate });
    tls.renewals.subscribe(() => registrar.refresh());
    manager.add(registrar);
  }
  // Under OLM the CSV's ConversionWebhook definition points the CRD at OLM's Service and CA; OLM owns it.
  if (options.tls?.mode === 'olm') return steps;
  const conversion = new CrdConversionRegistrar(registration);
  tls.renewals.subscribe(() => conversion.refresh());
  manager.add(conversion);
  return steps;
}

/** Runs the operator until `signal` aborts (or SIGTERM); for `tessera start` and the in-cluster command. */
export async function runPodPlacementOperator(options: PodPlacementOperatorOptions): Promise<void> {
  const handle = await startPodPlacementOperator(options);
  await handle.stopped;
}
