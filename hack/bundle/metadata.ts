// What the OLM bundle says about the operator that deploy/ has no place for: the OperatorHub listing (names,
// description, icon, links, maintainers, architectures, release dates), the package and its channels, what the
// console says and offers at uninstall, and the examples it offers. The examples are checked by the operator's own
// config validation in the unit test, so they never go stale.
import { EXCLUDE_NAMESPACE_LABEL } from '../../src/podplacement/constants.js';
import { PROJECT_REPOSITORY_URL } from '../../src/runtime/light.js';

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
  /** The `repository` annotation: where the source lives (OperatorHub links it as "Repository"). */
  readonly repository: string;
  /**
   * The platforms (linux) the operator image is built for: hack/image/build.sh's `all_platforms`, checked by the unit
   * test. Each becomes an `operatorframework.io/arch.<arch>: supported` label; without one OLM and the console
   * treat the operator as amd64-only.
   */
  readonly architectures: readonly string[];
  /**
   * The `createdAt` annotation of each version, RFC 3339 (UTC). Taken from here, never from the clock, so the
   * committed bundle and a release's bundle image are the same whenever they are built. Add the version's date
   * when package.json's version changes; a bundle of an unlisted version needs an explicit date (`--created-at`).
   */
  readonly releaseDates: Readonly<Record<string, string>>;
  /** `operator.openshift.io/uninstall-message`: what the console's Uninstall Operator dialog tells the admin. */
  readonly uninstallMessage: string;
  /**
   * `console.openshift.io/disable-operand-delete`: "true" hides the console's "Delete all operand instances" box in
   * that dialog, so the console never deletes the configs as part of removing the operator.
   */
  readonly disableOperandDelete: boolean;
  /**
   * CRDs (by name) the console hides as `operators.operatorframework.io/internal-objects`: those the operator
   * creates for itself, which users never edit. The annotation is left out while there is none.
   */
  readonly internalObjects: readonly string[];
  /** OpenShift's `features.operators.openshift.io/*` infrastructure annotations. */
  readonly featureAnnotations: Readonly<Record<string, string>>;
  readonly examples: readonly Record<string, unknown>[];
  readonly kindDisplayNames: Readonly<Record<string, string>>;
  readonly specDescriptorTypes: Readonly<Record<string, readonly string[]>>;
}

/**
 * The project's source repository, on the same account as the image (quay.io/tessera/tessera): the CSV's
 * `repository` annotation, Source link and provider URL.
 */
const REPOSITORY = PROJECT_REPOSITORY_URL;

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
  provider: { name: 'Tessera', url: REPOSITORY },
  maintainers: [{ name: 'Tessera maintainers', email: 'maintainers@tessera.dev' }],
  links: [
    { name: 'Source', url: REPOSITORY },
    { name: 'Documentation', url: `${REPOSITORY}#installing-with-olm` },
  ],
  keywords: ['multiarch', 'multi-architecture', 'arm64', 'ppc64le', 's390x', 'scheduling', 'node affinity'],
  iconSvg: ICON_SVG,
  repository: REPOSITORY,
  architectures: ['amd64', 'arm64', 'ppc64le', 's390x'],
  releaseDates: { '0.1.0': '2026-12-02T00:00:00Z' },
  uninstallMessage:
    'Before you uninstall, delete every PodPlacementConfig and then the ClusterPodPlacementConfig "cluster" while ' +
    'the operator still runs: it removes its webhook and releases every pod it gated, and the delete returns when ' +
    'none is left. Pods still gated when the operator is gone stay Pending until released with ' +
    '`tessera podplacement release -A`. The console plugin\'s ConsolePlugin, which its pods created, stays: remove ' +
    'it from the console operator\'s plugins and delete it with `oc delete consoleplugin tessera-console-plugin`.',
  // The ClusterPodPlacementConfig's finalizer, which releases the gated pods, needs the running operator. Deleted
  // by the console in the same step that removes the operator, the config could be left Terminating with pods
  // still gated; without the box the admin deletes it first, as the uninstall message says.
  disableOperandDelete: true,
  // Both CRDs are the admin's configuration; none is the operator's own bookkeeping.
  internalObjects: [],
  featureAnnotations: {
    // The operator reads images from the registries the cluster's mirror policies name (disconnected clusters).
    'features.operators.openshift.io/disconnected': 'true',
    'features.operators.openshift.io/fips-compliant': 'false',
    'features.operators.openshift.io/proxy-aware': 'true',
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
