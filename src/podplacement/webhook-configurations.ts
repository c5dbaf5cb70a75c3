// Builds the admission webhook configurations the operator owns. Pure. The mutating one (pod gating) exists only
// while the operand can gate and ungate; the validating one (config rules) exists while the operator runs.
// The webhook is reached either through a Service (in-cluster) or a URL (operator running outside the cluster).
// Off switches never depend on the operator: the API server itself skips system namespaces (matchConditions; the
// platform's openshift-* ones unless the cluster config's namespaceSelector opts them in), and deleting the
// ClusterPodPlacementConfig is not blocked when the webhook cannot answer (DELETE fails open).
import { InvalidArgumentError } from '../runtime/light.js';
import type { LabelSelector } from './api/schema.js';
import {
  API_GROUP,
  CLUSTER_CONFIG_PLURAL,
  MUTATING_WEBHOOK,
  POD_CONFIG_PLURAL,
  SERVICE_CA_INJECT_ANNOTATION,
  VALIDATING_WEBHOOK,
} from './constants.js';
import { OPENSHIFT_NAMESPACE_PREFIX, selectorOptsInOpenShiftNamespaces } from './pod-model.js';

/** How the API server reaches the webhook server. */
export type WebhookEndpoint =
  | { readonly kind: 'service'; readonly namespace: string; readonly name: string; readonly port: number }
  | { readonly kind: 'url'; readonly baseUrl: string };

export interface WebhookTlsTrust {
  /** PEM CA bundle; omitted when OpenShift's service CA injects it. */
  readonly caBundlePem?: string;
  /** Ask OpenShift's service-ca operator to inject the caBundle. */
  readonly serviceCaInjection?: boolean;
}

export interface ClientConfig {
  service?: { namespace: string; name: string; path: string; port: number };
  url?: string;
  caBundle?: string;
}

/** The clientConfig of one webhook at `path` (url or service, plus the base64 caBundle when given). */
export function clientConfig(endpoint: WebhookEndpoint, path: string, trust: WebhookTlsTrust): ClientConfig {
  const cc: ClientConfig =
    endpoint.kind === 'service'
      ? { service: { namespace: endpoint.namespace, name: endpoint.name, path, port: endpoint.port } }
      : { url: `${endpoint.baseUrl.replace(/\/$/, '')}${path}` };
  if (trust.caBundlePem) cc.caBundle = Buffer.from(trust.caBundlePem).toString('base64');
  return cc;
}

export interface WebhookConfigurationObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
  };
  webhooks: Record<string, unknown>[];
}

const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'tessera-podplacement' };

/**
 * Name of the DELETE-only hook for the ClusterPodPlacementConfig (failure policy Ignore, see below). At most 63
 * characters: OLM uses a webhook definition's name as a label value.
 */
export const CLUSTER_CONFIG_DELETE_WEBHOOK_NAME = 'delete-clusterpodplacementconfig.multiarch.openshift.io';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * matchConditions that keep the API server from calling the webhook for requests in `kube-*`, `openshift-*` (unless
 * `openshiftNamespaces` is true) and the operator's own namespace. A namespaceSelector cannot match name prefixes;
 * CEL can (GA since Kubernetes 1.30). Cluster-scoped requests have an empty namespace and still match.
 */
export function systemNamespaceMatchConditions(
  operatorNamespace: string,
  openshiftNamespaces = false,
): Record<string, string>[] {
  // The name is embedded in a CEL string literal: a DNS label has no quote or backslash to escape.
  if (!DNS_LABEL.test(operatorNamespace))
    throw new InvalidArgumentError(
      'namespace',
      `the operator namespace ${JSON.stringify(operatorNamespace)} is not a valid namespace name`,
    );
  return [
    { name: 'exclude-kube-namespaces', expression: '!request.namespace.startsWith("kube-")' },
    ...(openshiftNamespaces
      ? []
      : [
          {
            name: 'exclude-openshift-namespaces',
            expression: `!request.namespace.startsWith("${OPENSHIFT_NAMESPACE_PREFIX}")`,
          },
        ]),
    { name: 'exclude-operator-namespace', expression: `request.namespace != "${operatorNamespace}"` },
  ];
}

/**
 * The pod gating webhook, scoped by the cluster config's namespaceSelector (empty = all namespaces); never called
 * for `kube-*` or `operatorNamespace`, nor for `openshift-*` unless the selector opts them in
 * (selectorOptsInOpenShiftNamespaces: it requires a label, which the namespace must then carry).
 */
export function mutatingWebhookConfiguration(
  endpoint: WebhookEndpoint,
  trust: WebhookTlsTrust,
  namespaceSelector: LabelSelector | undefined,
  operatorNamespace: string,
): WebhookConfigurationObject {
  const metadata: WebhookConfigurationObject['metadata'] = {
    name: MUTATING_WEBHOOK.configurationName,
    labels: { ...MANAGED_BY },
  };
  if (trust.serviceCaInjection) metadata.annotations = { [SERVICE_CA_INJECT_ANNOTATION]: 'true' };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata,
    webhooks: [
      {
        name: MUTATING_WEBHOOK.webhookName,
        admissionReviewVersions: ['v1'],
        clientConfig: clientConfig(endpoint, MUTATING_WEBHOOK.path, trust),
        failurePolicy: 'Ignore',
        sideEffects: 'None',
        matchPolicy: 'Equivalent',
        reinvocationPolicy: 'Never',
        timeoutSeconds: 10,
        rules: [
          {
            operations: ['CREATE'],
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['pods'],
            scope: 'Namespaced',
          },
        ],
        namespaceSelector: namespaceSelector ?? {},
        objectSelector: {},
        matchConditions: systemNamespaceMatchConditions(
          operatorNamespace,
          selectorOptsInOpenShiftNamespaces(namespaceSelector),
        ),
      },
    ],
  };
}

/**
 * Validating webhooks for both config kinds. CREATE and UPDATE fail closed (the rules must hold). DELETE of the
 * ClusterPodPlacementConfig fails open, so the off switch works while the operator is down: its rule ("not while
 * PodPlacementConfigs exist") is still upheld then by the `no-pod-placement-config` finalizer, which holds the
 * object until they are gone; the webhook only adds the early, explicit refusal. `podConfigNamespaceSelector`
 * limits the PodPlacementConfig hook to some namespaces (default: all); `kube-*` and the operator's namespace are never
 * sent to it.
 */
export function validatingWebhookConfiguration(
  endpoint: WebhookEndpoint,
  trust: WebhookTlsTrust,
  options: { podConfigNamespaceSelector?: LabelSelector; operatorNamespace: string },
): WebhookConfigurationObject {
  const metadata: WebhookConfigurationObject['metadata'] = {
    name: VALIDATING_WEBHOOK.configurationName,
    labels: { ...MANAGED_BY },
  };
  if (trust.serviceCaInjection) metadata.annotations = { [SERVICE_CA_INJECT_ANNOTATION]: 'true' };
  const hook = (
    name: string,
    path: string,
    plural: string,
    operations: string[],
    failurePolicy: 'Fail' | 'Ignore' = 'Fail',
  ) => ({
    name,
    admissionReviewVersions: ['v1'],
    clientConfig: clientConfig(endpoint, path, trust),
    failurePolicy,
    sideEffects: 'None',
    timeoutSeconds: 10,
    rules: [
      { operations, apiGroups: [API_GROUP], apiVersions: ['v1beta1', 'v1alpha1'], resources: [plural] },
    ],
  });
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata,
    webhooks: [
      hook(
        VALIDATING_WEBHOOK.clusterConfigWebhookName,
        VALIDATING_WEBHOOK.clusterConfigPath,
        CLUSTER_CONFIG_PLURAL,
        ['CREATE', 'UPDATE'],
      ),
      hook(
        CLUSTER_CONFIG_DELETE_WEBHOOK_NAME,
        VALIDATING_WEBHOOK.clusterConfigPath,
        CLUSTER_CONFIG_PLURAL,
        ['DELETE'],
        'Ignore',
      ),
      {
        ...hook(
          VALIDATING_WEBHOOK.podConfigWebhookName,
          VALIDATING_WEBHOOK.podConfigPath,
          POD_CONFIG_PLURAL,
          ['CREATE', 'UPDATE'],
        ),
        namespaceSelector: options.podConfigNamespaceSelector ?? {},
        // openshift-* included: a PodPlacementConfig there takes effect once the cluster config opts its namespace
        // in, so its rules must hold there too (these writes are rare and never the platform's own).
        matchConditions: systemNamespaceMatchConditions(options.operatorNamespace, true),
      },
    ],
  };
}
