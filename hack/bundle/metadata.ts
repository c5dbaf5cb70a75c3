// What the OLM bundle says about the operator that deploy/ has no place for: the OperatorHub listing (names,
// description, icon, links, maintainers), the package and its channels, and the examples the console offers.
// The examples are checked by the operator's own config validation in the unit test, so they never go stale.
import { EXCLUDE_NAMESPACE_LABEL } from '../../src/podplacement/constants.js';

export interface CsvMetadata {
  readonly packageName: string;
  readonly channels: readonly string[];
  readonly defaultChannel: string;
  /** `com.redhat.openshift.versions`: the OpenShift releases the bundle is offered on. */
  readonly openshiftVersions: string;
  readonly displayName: string;
  readonly shortDescription: string;
  /** Markdown, shown on the OperatorHub page. */
  readonly description: string;
  /** matchConditions on webhooks are GA since Kubernetes 1.30. */
  readonly minKubeVersion: string;
  readonly maturity: string;
  readonly capabilities: string;
  readonly categories: readonly string[];
  readonly provider: { readonly name: string; readonly url?: string };
  readonly maintainers: readonly { readonly name: string; readonly email: string }[];
  readonly links: readonly { readonly name: string; readonly url: string }[];
  readonly keywords: readonly string[];
  readonly iconSvg: string;
  /** OpenShift's `features.operators.openshift.io/*` infrastructure annotations. */
  readonly featureAnnotations: Readonly<Record<string, string>>;
  readonly examples: readonly Record<string, unknown>[];
  readonly kindDisplayNames: Readonly<Record<string, string>>;
  readonly specDescriptorTypes: Readonly<Record<string, readonly string[]>>;
}

/** A 2x2 tessellation in the four architectures' colours. */
const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="8" fill="#1f2937"/><rect x="8" y="8" width="22" height="22" rx="3" fill="#60a5fa"/><rect x="34" y="8" width="22" height="22" rx="3" fill="#34d399"/><rect x="8" y="34" width="22" height="22" rx="3" fill="#fbbf24"/><rect x="34" y="34" width="22" height="22" rx="3" fill="#f87171"/></svg>`;

export const BUNDLE_METADATA: CsvMetadata = {
  packageName: 'tessera',
  channels: ['stable', 'candidate'],
  defaultChannel: 'stable',
  openshiftVersions: 'v4.16',
  displayName: 'Tessera',
  shortDescription:
    'Architecture-aware pod placement for multi-architecture clusters: each pod gets a kubernetes.io/arch node affinity matching its images.',
  description: [
    'Tessera places pods on nodes whose CPU architecture their images support. A mutating webhook gates each new',
    "pod; a controller inspects its images (with the pod's pull secrets), adds a `kubernetes.io/arch` node",
    'affinity, and removes the gate. It is a drop-in for the Multiarch Tuning Operator: the same API',
    '(`multiarch.openshift.io` ClusterPodPlacementConfig and PodPlacementConfig), labels, events and metrics.',
    '',
    '## Enable',
    'Create the ClusterPodPlacementConfig named `cluster` (the example below). Deleting it removes the webhook and',
    'ungates every pod still gated, so uninstalling never leaves pods waiting.',
    '',
    '## Namespaces',
    `Pods in \`kube-*\`, \`openshift-*\` and the operator's namespace are never gated; label a namespace`,
    `\`${EXCLUDE_NAMESPACE_LABEL}\` to exclude it too with the recommended namespaceSelector.`,
  ].join('\n'),
  minKubeVersion: '1.30.0',
  maturity: 'alpha',
  capabilities: 'Seamless Upgrades',
  categories: ['OpenShift Optional'],
  provider: { name: 'Tessera' },
  maintainers: [{ name: 'Tessera maintainers', email: 'maintainers@tessera.dev' }],
  // The project has no public home yet; add Source and Documentation links when it has one.
  links: [],
  keywords: ['multiarch', 'multi-architecture', 'arm64', 'ppc64le', 's390x', 'scheduling', 'node affinity'],
  iconSvg: ICON_SVG,
  featureAnnotations: {
    // The operator reads images from the registries the cluster's mirror policies name (disconnected clusters).
    'features.operators.openshift.io/disconnected': 'true',
    'features.operators.openshift.io/fips-compliant': 'false',
    'features.operators.openshift.io/proxy-aware': 'false',
    'features.operators.openshift.io/tls-profiles': 'false',
    'features.operators.openshift.io/token-auth-aws': 'false',
    'features.operators.openshift.io/token-auth-azure': 'false',
    'features.operators.openshift.io/token-auth-gcp': 'false',
    'features.operators.openshift.io/cnf': 'false',
    'features.operators.openshift.io/cni': 'false',
    'features.operators.openshift.io/csi': 'false',
  },
  examples: [
    {
      apiVersion: 'multiarch.openshift.io/v1beta1',
      kind: 'ClusterPodPlacementConfig',
      metadata: { name: 'cluster' },
      spec: {
        logVerbosity: 'Normal',
        namespaceSelector: {
          matchExpressions: [{ key: EXCLUDE_NAMESPACE_LABEL, operator: 'DoesNotExist' }],
        },
      },
    },
    {
      apiVersion: 'multiarch.openshift.io/v1beta1',
      kind: 'PodPlacementConfig',
      metadata: { name: 'prefer-arm64', namespace: 'my-app' },
      spec: {
        priority: 50,
        labelSelector: { matchLabels: { app: 'web' } },
        plugins: {
          nodeAffinityScoring: { enabled: true, platforms: [{ architecture: 'arm64', weight: 80 }] },
        },
      },
    },
  ],
  kindDisplayNames: {
    ClusterPodPlacementConfig: 'Cluster Pod Placement Config',
    PodPlacementConfig: 'Pod Placement Config',
  },
  specDescriptorTypes: {
    logVerbosity: [
      'urn:alm:descriptor:com.tectonic.ui:select:Normal',
      'urn:alm:descriptor:com.tectonic.ui:select:Debug',
      'urn:alm:descriptor:com.tectonic.ui:select:Trace',
      'urn:alm:descriptor:com.tectonic.ui:select:TraceAll',
    ],
    namespaceSelector: ['urn:alm:descriptor:com.tectonic.ui:selector:core:v1:Namespace'],
    labelSelector: ['urn:alm:descriptor:com.tectonic.ui:selector:core:v1:Pod'],
    priority: ['urn:alm:descriptor:com.tectonic.ui:number'],
    fallbackArchitecture: [
      'urn:alm:descriptor:com.tectonic.ui:select:amd64',
      'urn:alm:descriptor:com.tectonic.ui:select:arm64',
      'urn:alm:descriptor:com.tectonic.ui:select:ppc64le',
      'urn:alm:descriptor:com.tectonic.ui:select:s390x',
    ],
  },
};
