// Where the API server reaches the webhook, resolved from the options (pure).
import { MUTATING_WEBHOOK } from '../constants.js';
import type { WebhookEndpoint } from '../webhook-configurations.js';
import { WEBHOOK_DEPLOYMENT_NAME, olmServiceName } from './olm-ca.js';
import type { WebhookTlsMode } from './options.js';

/**
 * The endpoint the webhook configurations name. Default: the webhook Service in `namespace`, port 443. A URL on
 * port 0 follows `port()`, the port the webhook server bound.
 */
export function resolveEndpoint(
  given: WebhookEndpoint | undefined,
  namespace: string,
  port: () => number,
  serviceName: string = MUTATING_WEBHOOK.serviceName,
): WebhookEndpoint {
  if (!given) return { kind: 'service', namespace, name: serviceName, port: 443 };
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
export function knownEndpoint(
  given: WebhookEndpoint | undefined,
  namespace: string,
  serviceName?: string,
): WebhookEndpoint | undefined {
  if (given?.kind === 'url' && new URL(given.baseUrl).port === '0') return undefined;
  return resolveEndpoint(given, namespace, () => 0, serviceName);
}

/**
 * The webhook Service's name: under OLM the one OLM creates for the webhook Deployment (its certificate names only
 * that Service), else the Service of deploy/.
 */
export function webhookServiceName(tls: WebhookTlsMode | undefined): string {
  return tls?.mode === 'olm' ? olmServiceName(WEBHOOK_DEPLOYMENT_NAME) : MUTATING_WEBHOOK.serviceName;
}
