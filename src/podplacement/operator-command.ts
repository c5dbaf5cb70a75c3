// The `tessera podplacement operator` action: turns flags into PodPlacementOperatorOptions and runs until stopped.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  InvalidArgumentError,
  loadKubeConnection,
  metricsServing,
  type MetricsFlags,
  validateClientCa,
  type Logger,
  type LogLevel,
  errorMessage,
} from '../runtime/index.js';
import {
  AddressPolicy,
  loopbackRanges,
  proxyConfigFromEnvironment,
  readTrustedCaBundle,
} from '../registry/index.js';
import { runPodPlacementOperator, type OperatorComponents, type WebhookTlsMode } from './operator/start.js';
import { WEBHOOK_DEPLOYMENT_NAME, olmCertSecretName } from './operator/olm-ca.js';
import type { WebhookEndpoint } from './webhook-configurations.js';

/**
 * The flags of `tessera podplacement operator`, as commander has parsed them (src/podplacement/cli.ts). A flag
 * without a default is undefined when not given: the operator's own default applies.
 */
export interface OperatorFlags extends MetricsFlags {
  kubeconfig?: string;
  namespace: string;
  components?: OperatorComponents;
  webhookPort?: number;
  webhookHost?: string;
  webhookMaxRequestBytes?: number;
  webhookMaxConnections?: number;
  webhookClientCa?: string;
  webhookUrl?: string;
  probePort?: number;
  tls?: WebhookTlsMode['mode'];
  certDir: string;
  /** False with --no-leader-elect. */
  leaderElect: boolean;
  installCrds?: boolean;
  manageValidatingWebhook?: boolean;
  registryCa?: string[];
  trustedCaBundle?: string;
  registryDenyCidr?: string[];
  registryAllowCidr?: string[];
  trustedRealmHost?: string[];
  globalPullSecretNamespace: string;
  globalPullSecretName: string;
  workers?: number;
  retryBaseDelayMs?: number;
  inspectionDeadlineMs?: number;
  maxInspectionsPerNamespace?: number;
  maxInspectionsPerRegistry?: number;
  controllerLeaseStaleAfterMs?: number;
}

/** The PEM of --webhook-client-ca, checked to hold certificates; InvalidArgumentError naming the flag otherwise. */
export async function readWebhookClientCa(file: string): Promise<string> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(
      '--webhook-client-ca',
      `cannot read ${file} (${errorMessage(err)}); give the PEM file of the CA that signs the API server's client certificate`,
    );
  }
  validateClientCa(pem, '--webhook-client-ca');
  return pem;
}

/** The context client-node's loadFromDefault builds from a pod's service account (KubeConfig.loadFromCluster). */
const IN_CLUSTER_CONTEXT = 'inClusterContext';

/** A repeatable flag's values, each possibly comma-separated. */
function listFlag(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/**
 * The registry address policy of --registry-deny-cidr / --registry-allow-cidr. An operator that authenticates with
 * its pod's service account also denies loopback (unless --registry-allow-cidr allows it): there loopback is the
 * operator pod itself (its probe, webhook and debug listeners, any sidecar), never a registry. Out of a pod (the dev
 * cluster, tests, `npm start`) the local registry listens on loopback, so it is not denied by default. The
 * pod, service and node networks cannot be learnt without RBAC on nodes and network configs, which the operator
 * does not have: the admin lists them. Throws InvalidArgumentError naming the flag.
 */
export function registryAddressPolicy(
  opts: Pick<OperatorFlags, 'registryDenyCidr' | 'registryAllowCidr'>,
  inPod: boolean,
): AddressPolicy {
  const deny = listFlag(opts.registryDenyCidr);
  return new AddressPolicy({
    deny: inPod ? [...loopbackRanges, ...deny] : deny,
    allow: listFlag(opts.registryAllowCidr),
    fieldNames: { deny: '--registry-deny-cidr', allow: '--registry-allow-cidr' },
  });
}

export async function runOperatorCommand(
  opts: OperatorFlags,
  logging: { logger: Logger; logLevel: LogLevel },
): Promise<void> {
  const { certDir, namespace } = opts;
  const files = { certFile: path.join(certDir, 'tls.crt'), keyFile: path.join(certDir, 'tls.key') };
  const tls: WebhookTlsMode =
    opts.tls === 'service-ca'
      ? { mode: 'service-ca', ...files }
      : opts.tls === 'olm'
        ? { mode: 'olm', ...files, caSecretName: olmCertSecretName(WEBHOOK_DEPLOYMENT_NAME) }
        : { mode: 'self-managed', certDir };
  const cas = await Promise.all((opts.registryCa ?? []).map((f) => readFile(f, 'utf8')));
  // The cluster's trusted CA bundle (proxy trustedCA included): for an https proxy and every registry.
  const trustedBundle =
    opts.trustedCaBundle === undefined
      ? undefined
      : await readTrustedCaBundle(opts.trustedCaBundle, '--trusted-ca-bundle');
  if (opts.trustedCaBundle !== undefined && trustedBundle === undefined)
    logging.logger.info(
      { file: opts.trustedCaBundle },
      'no trusted CA bundle injected (file absent or empty): trusting the built-in roots and --registry-ca',
    );
  // As OLM sets it from the cluster proxy; InvalidArgumentError naming the variable when malformed.
  const proxy = proxyConfigFromEnvironment(process.env);
  // A long-running process: without client-node's generated API in memory when the kubeconfig allows.
  const kubeConfig = await loadKubeConnection(opts.kubeconfig, { env: process.env });
  const addressPolicy = registryAddressPolicy(opts, kubeConfig.getCurrentContext() === IN_CLUSTER_CONTEXT);
  const endpoint: WebhookEndpoint | undefined = opts.webhookUrl
    ? { kind: 'url', baseUrl: opts.webhookUrl }
    : undefined;
  await runPodPlacementOperator({
    kubeConfig,
    namespace,
    components: opts.components,
    webhookHost: opts.webhookHost,
    webhookPort: opts.webhookPort,
    webhookBudgets: {
      maxRequestBytes: opts.webhookMaxRequestBytes,
      maxConnections: opts.webhookMaxConnections,
    },
    ...(opts.webhookClientCa === undefined
      ? {}
      : { webhookClientCa: await readWebhookClientCa(opts.webhookClientCa) }),
    endpoint,
    probes: opts.probePort === undefined ? undefined : { port: opts.probePort },
    metrics: metricsServing(opts),
    tls,
    leaderElection: opts.leaderElect,
    installCrds: opts.installCrds === true,
    manageValidatingWebhook: opts.manageValidatingWebhook === true,
    registry: {
      caCertificates: trustedBundle === undefined ? cas : [...cas, trustedBundle],
      ...(proxy ? { proxy } : {}),
      trustedRealmHosts: opts.trustedRealmHost ?? [],
      addressPolicy,
    },
    globalPullSecret: { namespace: opts.globalPullSecretNamespace, name: opts.globalPullSecretName },
    workers: opts.workers,
    retryBaseDelayMs: opts.retryBaseDelayMs,
    inspectionDeadlineMs: opts.inspectionDeadlineMs,
    controllerLeaseStaleAfterMs: opts.controllerLeaseStaleAfterMs,
    maxInspectionsPerNamespace: opts.maxInspectionsPerNamespace,
    maxInspectionsPerRegistry: opts.maxInspectionsPerRegistry,
    logger: logging.logger,
    logLevel: logging.logLevel,
  });
}
