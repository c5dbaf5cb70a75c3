// The `tessera podplacement operator` action: turns flags into PodPlacementOperatorOptions and runs until stopped.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger, LogLevel } from '../runtime/index.js';
import { runPodPlacementOperator, type WebhookTlsMode } from './operator.js';
import { WEBHOOK_DEPLOYMENT_NAME, olmCertSecretName } from './operator/olm-ca.js';
import type { WebhookEndpoint } from './webhook-configurations.js';

function int(v: unknown, flag: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${flag} must be a non-negative integer, got ${String(v)}`);
  return n;
}

export function loadKubeConfig(file: unknown): KubeConfig {
  const kc = new KubeConfig();
  if (typeof file === 'string' && file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  return kc;
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
  const url = typeof opts['webhookUrl'] === 'string' ? opts['webhookUrl'] : undefined;
  const endpoint: WebhookEndpoint | undefined = url ? { kind: 'url', baseUrl: url } : undefined;
  await runPodPlacementOperator({
    kubeConfig: loadKubeConfig(opts['kubeconfig']),
    namespace,
    components:
      opts['components'] === 'controller' || opts['components'] === 'webhook' ? opts['components'] : 'all',
    webhookHost: String(opts['webhookHost']),
    webhookPort: int(opts['webhookPort'], '--webhook-port'),
    webhookBudgets: {
      maxRequestBytes: int(opts['webhookMaxRequestBytes'], '--webhook-max-request-bytes'),
      maxConnections: int(opts['webhookMaxConnections'], '--webhook-max-connections'),
    },
    endpoint,
    probes: { port: int(opts['probePort'], '--probe-port') },
    tls,
    leaderElection: opts['leaderElect'] !== false,
    installCrds: opts['installCrds'] === true,
    manageValidatingWebhook: opts['manageValidatingWebhook'] === true,
    registry: {
      caCertificates: cas,
      trustedRealmHosts: Array.isArray(opts['trustedRealmHost']) ? opts['trustedRealmHost'].map(String) : [],
    },
    globalPullSecret: {
      namespace: String(opts['globalPullSecretNamespace']),
      name: String(opts['globalPullSecretName']),
    },
    workers: int(opts['workers'], '--workers'),
    retryBaseDelayMs: int(opts['retryBaseDelayMs'], '--retry-base-delay-ms'),
    inspectionDeadlineMs: int(opts['inspectionDeadlineMs'], '--inspection-deadline-ms'),
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
