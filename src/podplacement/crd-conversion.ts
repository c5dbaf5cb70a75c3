// The ClusterPodPlacementConfig CRD's conversion webhook settings. Pure. crdConversion() is what the generated CRD
// carries; crdConversionPatch() is the JSON merge patch the operator sends at run time so the API server reaches
// its webhook (URL out of cluster, Service otherwise) and trusts its CA. The patch nulls the other endpoint kind,
// because a clientConfig holding both a url and a service is invalid.
import { CONVERSION_WEBHOOK_PATH } from './api/conversion.js';
import { DEFAULT_OPERATOR_NAMESPACE, MUTATING_WEBHOOK, SERVICE_CA_INJECT_ANNOTATION } from './constants.js';
import { clientConfig, type WebhookEndpoint, type WebhookTlsTrust } from './webhook-configurations.js';

/** The in-cluster endpoint the static CRD names until the operator patches it. */
export const DEFAULT_CONVERSION_ENDPOINT: WebhookEndpoint = {
  kind: 'service',
  namespace: DEFAULT_OPERATOR_NAMESPACE,
  name: MUTATING_WEBHOOK.serviceName,
  port: 443,
};

/** `spec.conversion` of a CRD converted by the operator's webhook. */
export function crdConversion(endpoint: WebhookEndpoint, trust: WebhookTlsTrust): Record<string, unknown> {
  return {
    strategy: 'Webhook',
    webhook: {
      conversionReviewVersions: ['v1'],
      clientConfig: clientConfig(endpoint, CONVERSION_WEBHOOK_PATH, trust),
    },
  };
}

/**
 * JSON merge patch pointing the CRD's conversion webhook at `endpoint`. Without a CA bundle in `trust` the live
 * caBundle is left alone (OpenShift's service CA injects it when `trust.serviceCaInjection`).
 */
export function crdConversionPatch(
  endpoint: WebhookEndpoint,
  trust: WebhookTlsTrust,
): Record<string, unknown> {
  const cc: Record<string, unknown> = { ...clientConfig(endpoint, CONVERSION_WEBHOOK_PATH, trust) };
  if (endpoint.kind === 'url') cc.service = null;
  else cc.url = null;
  const patch: Record<string, unknown> = {
    spec: {
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: cc } },
    },
  };
  if (trust.serviceCaInjection) patch.metadata = { annotations: { [SERVICE_CA_INJECT_ANNOTATION]: 'true' } };
  return patch;
}
