// Public surface of the Tessera controller runtime: client-go semantics (informers, work queues, leader election)
// and controller-runtime conveniences (Manager, Controller, webhooks, events, conditions) in TypeScript.
// Controllers import from here only ('../runtime/index.js'), or from light.ts on a command's start-up path;
// everything else under src/runtime is internal (eslint.config.js enforces it).
//
// Typical wiring:
//   const mgr = new Manager({ kubeConfig, name: 'tessera-podplacement', leaderElection: { leaseNamespace: ns } });
//   const pods = mgr.informers.informerFor<V1Pod>({ type: Pods });
//   const ctrl = mgr.newController({ name: 'podplacement', reconciler, workers: 4 });
//   ctrl.watch(pods);
//   await mgr.start();   // until SIGTERM/SIGINT, then graceful shutdown

// Time
export { realClock, MAX_TIMER_DELAY_MS, type Clock, type Timer } from './clock.js';

// Errors, JSON shape checks, label selectors, conditions (also importable alone from light.ts, which loads no
// third-party module)
export * from './light.js';

// Objects, resources, API access and writes
export {
  objectKey,
  splitObjectKey,
  resourceVersionOf,
  type KubeObject,
  type KubeObjectMeta,
  type KubeList,
} from './object.js';
export {
  resourcePath,
  apiVersionOf,
  Pods,
  Nodes,
  Namespaces,
  ConfigMaps,
  Secrets,
  CoreEvents,
  Services,
  EndpointSlices,
  Events,
  Leases,
  MutatingWebhookConfigurations,
  ValidatingWebhookConfigurations,
  CustomResourceDefinitions,
  type ResourceType,
} from './resources.js';
export {
  KubeClient,
  type KubeClientOptions,
  type RequestOptions,
  type ListRequestOptions,
  type QueryValue,
  type WatchStream,
} from './client.js';
export {
  loadKubeConfig,
  loadKubeConnection,
  SERVICE_ACCOUNT_DIR,
  applyConnectionOverrides,
  resolveConnection,
  type ConnectionOverrides,
  type KubeConfigEntries,
  type KubeConnection,
  type ResolvedConnection,
} from './kubeconfig.js';
export { decodeWatchStream, type WatchEvent, type WatchDecodeOptions } from './watch-decoder.js';
export {
  decodeListStream,
  ListPageDecoder,
  DEFAULT_MAX_OBJECT_BYTES,
  type ListDecodeOptions,
} from './list-decoder.js';
export {
  ResourceClient,
  MERGE_PATCH,
  JSON_PATCH,
  APPLY_PATCH,
  type ObjectRef,
  type ListOptions,
  type ListPageOptions,
  type WriteOptions,
  type ApplyOptions,
} from './resource-client.js';
export { retryOnConflict, type RetryOptions } from './retry.js';
export { Backoff, retryForever, type BackoffOptions, type RetryForeverOptions } from './backoff.js';

// Work queues
export { WorkQueue, type Queue, type QueueOptions } from './workqueue/queue.js';
export { DelayingWorkQueue, type DelayingQueue } from './workqueue/delaying-queue.js';
export { FifoOrder, type KeyOrder } from './workqueue/key-order.js';
export { FairOrder } from './workqueue/fair-order.js';
export {
  RateLimitingWorkQueue,
  type RateLimitingQueue,
  type RateLimitingQueueOptions,
} from './workqueue/rate-limiting-queue.js';
export {
  ItemExponentialFailureRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  type RateLimiter,
} from './workqueue/rate-limiters.js';
export {
  noopQueueMetrics,
  type WorkQueueMetrics,
  type WorkQueueMetricsProvider,
} from './workqueue/metrics.js';
export { prometheusWorkQueueMetrics } from './workqueue/prometheus-metrics.js';

// Informers and caches
export {
  IndexedStore,
  NAMESPACE_INDEX,
  namespaceIndexFunc,
  type Store,
  type Indexer,
  type IndexFunc,
} from './cache/store.js';
export {
  Reflector,
  type ReflectorOptions,
  type ReflectorSink,
  type ReflectorStats,
  type ListWatchClient,
} from './cache/reflector.js';
export {
  DefaultSharedInformer,
  type SharedInformer,
  type InformerOptions,
  type ResourceEventHandler,
  type HandlerRegistration,
  type HandlerOptions,
} from './cache/shared-informer.js';
export { compactForCache, shareStrings, stripManagedFields } from './cache/transforms.js';
export {
  SharedInformerFactory,
  type SharedInformerFactoryOptions,
  type InformerRequest,
} from './cache/informer-factory.js';

// Controllers, lifecycle, leader election
export { Controller, type ControllerOptions, type Reconciler, type WatchPredicate } from './controller.js';
export { OwnWrites } from './own-writes.js';
export { decideRequeue, type ReconcileResult, type QueueAction } from './requeue-policy.js';
export { waitForAbort, type Runnable, type StartupStep } from './runnable.js';
export { Trigger, type TriggerSource } from './trigger.js';
export { runTogether } from './run-together.js';
export {
  LeaderElector,
  validateLeaderElectionTimings,
  LEADER_ELECTION_JITTER_FACTOR,
  type LeaderElectionOptions,
  type LeaderCallbacks,
  type LeaseClient,
  type Lease,
} from './leader-election.js';
export {
  Manager,
  LeaderElectionLostError,
  type ManagerOptions,
  metricsServing,
  type MetricsFlags,
  type MetricsServingOptions,
} from './manager.js';
export { Cluster, type ClusterOptions } from './cluster.js';
export {
  applyCrds,
  waitForCrdsEstablished,
  CrdNotEstablishedError,
  DEFAULT_CRD_ESTABLISHED_TIMEOUT_MS,
  type ApplyCrdsOptions,
} from './crds.js';
export { ProbeServer, type Check, type ProbeServerOptions } from './probe-server.js';
export {
  createLogger,
  silentLogger,
  isLogLevel,
  isLogFormat,
  formatTextLine,
  LOG_LEVELS,
  LOG_FORMATS,
  type Logger,
  type LogLevel,
  type LogFormat,
  type LoggerOptions,
} from './logging.js';

// Status conditions and events
export {
  EventCorrelator,
  AGGREGATED_PREFIX,
  type EventInput,
  type EventRecord,
  type EventType,
  type ObjectReference,
  type CorrelationResult,
  type EventCorrelatorOptions,
} from './event-correlator.js';
export { KubeEventRecorder, type EventRecorder, type EventRecorderOptions } from './event-recorder.js';

// Admission webhooks
export {
  allowed,
  denied,
  errored,
  patched,
  parseAdmissionReview,
  admissionReviewResponse,
  WebhookBadRequestError,
  ADMISSION_API_VERSION,
  type AdmissionHandler,
  type HandlerFailurePolicy,
  type AdmissionRequest,
  type AdmissionResult,
  type AdmissionOperation,
  type GroupVersionKind,
  type GroupVersionResource,
} from './webhook/admission.js';
export {
  WebhookServer,
  WEBHOOK_BUDGET_DEFAULTS,
  API_SERVER_WEBHOOK_TIMEOUT_SECONDS,
  handlerBudgetMs,
  validateClientCa,
  type ConnectionPool,
  type WebhookServerOptions,
  type WebhookRefusalReason,
} from './webhook/server.js';
export {
  generateDevCertificate,
  type DevCertificate,
  type DevCertificateOptions,
} from './webhook/dev-certificate.js';
export {
  CertificateError,
  FileCertificateWatcher,
  validateKeyPair,
  type KeyPair,
} from './webhook/certificate-source.js';
export {
  createCertificateAuthority,
  loadCertificateAuthority,
  generateSigningKeyPair,
  type CertificateAuthority,
  type CertificateAuthorityOptions,
  type CertificatePem,
  type KeyPairPem,
  type LeafOptions,
} from './pki/certificates.js';
