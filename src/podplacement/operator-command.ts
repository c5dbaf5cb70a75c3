// The `tessera podplacement operator` action: turns flags into PodPlacementOperatorOptions and runs until stopped.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { InvalidArgumentError, validateClientCa, type Logger, type LogLevel } from '../runtime/index.js';
import { AddressPolicy, loopbackRanges } from '../registry/index.js';
import { runPodPlacementOperator, type WebhookTlsMode } from './operator.js';
import { WEBHOOK_DEPLOYMENT_NAME, olmCertSecretName } from './operator/olm-ca.js';
import type { WebhookEndpoint } from './webhook-configurations.js';

function int(v: unknown, flag: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${flag} must be a non-negative integer, got ${String(v)}`);
  return n;
}

/** The PEM of --webhook-client-ca, checked to hold certificates; InvalidArgumentError naming the flag otherwise. */
export async function readWebhookClientCa(file: string): Promise<string> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(
      '--webhook-client-ca',
      `cannot read ${file} (${err instanceof Error ? err.message : String(err)}); give the PEM file of the CA that signs the API server's client certificate`,
    );
  }
  validateClientCa(pem, '--webhook-client-ca');
  return pem;
}

export function loadKubeConfig(file: unknown): KubeConfig {
  const kc = new KubeConfig();
  if (typeof file === 'string' && file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  return kc;
}

/** The context client-node's loadFromDefault builds from a pod's service account (KubeConfig.loadFromCluster). */
const IN_CLUSTER_CONTEXT = 'inClusterContext';

/** A repeatable flag's values, each possibly comma-separated. */
function listFlag(value: unknown): string[] {
  const values = Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];
  return values
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
export function registryAddressPolicy(opts: Record<string, unknown>, inPod: boolean): AddressPolicy {
  const deny = listFlag(opts['registryDenyCidr']);
  return new AddressPolicy({
    deny: inPod ? [...loopbackRanges, ...deny] : deny,
    allow: listFlag(opts['registryAllowCidr']),
    fieldNames: { deny: '--registry-deny-cidr', allow: '--registry-allow-cidr' },
  });
}

export async function runOperatorCommand(
  opts: Record<string, unknown>,
  logging: { logger: Logger; logLevel: LogLevel },
): Promise<void> {
  const certDir = String(opts['certDir']);
  const namespace = String(opts['namespace']);
  const files = { certFile: path.join(certDir, 'tls.crt'), keyFile: path.join(certDir, 'tls.key') };
  const tls: WebhookTlsMode =
    opts['tls'] === 'service-ca'
      ? { mode: 'service-ca', ...files }
      : opts['tls'] === 'olm'
        ? { mode: 'olm', ...files, caSecretName: olmCertSecretName(WEBHOOK_DEPLOYMENT_NAME) }
        : { mode: 'self-managed', certDir };
  const cas = Array.isArray(opts['registryCa'])
    ? await Promise.all(opts['registryCa'].map((f) => readFile(String(f), 'utf8')))
    : [];
  const kubeConfig = loadKubeConfig(opts['kubeconfig']);
  const addressPolicy = registryAddressPolicy(opts, kubeConfig.getCurrentContext() === IN_CLUSTER_CONTEXT);
  const url = typeof opts['webhookUrl'] === 'string' ? opts['webhookUrl'] : undefined;
  const endpoint: WebhookEndpoint | undefined = url ? { kind: 'url', baseUrl: url } : undefined;
  await runPodPlacementOperator({
    kubeConfig,
    namespace,
    components:
      opts['components'] === 'controller' || opts['components'] === 'webhook' ? opts['components'] : 'all',
    webhookHost: String(opts['webhookHost']),
    webhookPort: int(opts['webhookPort'], '--webhook-port'),
    webhookBudgets: {
      maxRequestBytes: int(opts['webhookMaxRequestBytes'], '--webhook-max-request-bytes'),
      maxConnections: int(opts['webhookMaxConnections'], '--webhook-max-connections'),
    },
    ...(typeof opts['webhookClientCa'] === 'string'
      ? { webhookClientCa: await readWebhookClientCa(opts['webhookClientCa']) }
      : {}),
    endpoint,
    probes: { port: int(opts['probePort'], '--probe-port') },
    tls,
    leaderElection: opts['leaderElect'] !== false,
    installCrds: opts['installCrds'] === true,
    manageValidatingWebhook: opts['manageValidatingWebhook'] === true,
    registry: {
      caCertificates: cas,
      trustedRealmHosts: Array.isArray(opts['trustedRealmHost']) ? opts['trustedRealmHost'].map(String) : [],
      addressPolicy,
    },
    globalPullSecret: {
      namespace: String(opts['globalPullSecretNamespace']),
      name: String(opts['globalPullSecretName']),
    },
    workers: int(opts['workers'], '--workers'),
    retryBaseDelayMs: int(opts['retryBaseDelayMs'], '--retry-base-delay-ms'),
    inspectionDeadlineMs: int(opts['inspectionDeadlineMs'], '--inspection-deadline-ms'),
    controllerLeaseStaleAfterMs: int(
      opts['controllerLeaseStaleAfterMs'],
      '--controller-lease-stale-after-ms',
    ),
    ...(opts['maxInspectionsPerNamespace'] === undefined
      ? {}
      : {
          maxInspectionsPerNamespace: int(
            opts['maxInspectionsPerNamespace'],
            '--max-inspections-per-namespace',
          ),
        }),
    ...(opts['maxInspectionsPerRegistry'] === undefined
      ? {}
      : {
          maxInspectionsPerRegistry: int(opts['maxInspectionsPerRegistry'], '--max-inspections-per-registry'),
        }),
    logger: logging.logger,
    logLevel: logging.logLevel,
  });
}
