// The OLM bundle (registry+v1) of the pod placement operator, derived from the same sources as deploy/: the
// kustomize base's Deployments, RBAC, Services, PodDisruptionBudget, NetworkPolicies and PrometheusRule, the CRDs
// built from the TypeBox schemas, and the webhook configurations the operator builds at run time. Pure: the caller
// reads the files (hack/generate.ts, hack/bundle/build.ts) and writes the result.
//
// What changes under OLM, and why:
//  - TLS: OLM issues the webhook Deployment's certificate (CSV webhookdefinitions) and mounts it, so the
//    components run with --tls=olm; the self-managed certificate's Roles are dropped.
//  - The validating webhooks and the CRD conversion webhook become webhookdefinitions, registered by OLM with its
//    CA; the controller no longer manages them (no --manage-validating-webhook). The gating MutatingWebhook stays
//    the controller's: it must exist only while a ClusterPodPlacementConfig does, which OLM cannot express.
//  - Namespaced RBAC in the operator's namespace becomes CSV `permissions`. RBAC in other namespaces (openshift-config)
//    cannot be a bundle Role (OLM creates bundle objects in the install namespace), so it becomes cluster-wide
//    `clusterPermissions`: only rules restricted by resource name may widen so, or the few listed with their reason in
//    FOREIGN_NAMESPACE_GRANTS; any other one fails the generation.
//  - ServiceAccounts and the Namespace are created by OLM, and so is the webhook's Service (OLM's certificate names
//    only OLM's); other objects ship as they are, without a namespace. The CRD's conversion names OLM's Service.
//  - Monitoring is OpenShift's (as deploy/podplacement/openshift has it): the service CA issues the metrics
//    certificate, the ServiceMonitor verifies it with the service CA bundle platform Prometheus mounts (serverName
//    names the suggested namespace: the one name the certificate can be checked against), Prometheus' discovery
//    Role is bound to openshift-monitoring/prometheus-k8s and ships as bundle objects (it grants to someone else,
//    so it is no CSV permission), and the CSV carries `operatorframework.io/cluster-monitoring: "true"`, so the
//    console offers to label the namespace for platform monitoring. The PrometheusRule names no namespace.
//  - The console plugin (src/dashboard/console-plugin/manifests.ts) runs as a third Deployment. OLM creates no
//    ConsolePlugin from a bundle, so its pods' init container applies it (`tessera console-plugin register`, with the
//    ClusterRole the manifests grant, as clusterPermissions), and the CSV's `console.openshift.io/plugins`
//    annotation makes OperatorHub offer to enable it.
import { stringify } from 'yaml';
import { TesseraError, isRecord } from '../../src/runtime/light.js';
import { CONVERSION_WEBHOOK_PATH } from '../../src/podplacement/api/conversion.js';
import { API_GROUP, CLUSTER_CONFIG_PLURAL } from '../../src/podplacement/constants.js';
import { crdConversion } from '../../src/podplacement/crd-conversion.js';
import { olmCertSecretName, olmServiceName, WEBHOOK_DEPLOYMENT_NAME } from '../../src/podplacement/operator/olm-ca.js';
import { validatingWebhookConfiguration } from '../../src/podplacement/webhook-configurations.js';
import {
  consolePluginManifests,
  csvConsolePluginAnnotation,
} from '../../src/dashboard/console-plugin/manifests.js';
import { BUNDLE_METADATA, type CsvMetadata } from './metadata.js';

/** A Kubernetes object as read from a manifest file. */
export type Manifest = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

export interface BundleSources {
  /** The operator version (package.json). */
  readonly version: string;
  /** The operator image every Deployment runs: by digest in a release build, by tag in the committed bundle. */
  readonly image: string;
  /** The CSV this one replaces (upgrade edge), e.g. `tessera.v0.1.0`. */
  readonly replaces?: string;
  /** The CSV's `createdAt` (RFC 3339, UTC); default: the version's date in the metadata's releaseDates. */
  readonly createdAt?: string;
  /** Every object of deploy/podplacement/base, in file order. */
  readonly deployObjects: readonly Manifest[];
  /** The CRDs of the pod placement API (deploy/crds/multiarch.openshift.io_*). */
  readonly crds: readonly Manifest[];
  readonly metadata?: CsvMetadata;
}

export interface BundleFile {
  /** Relative to the bundle root (`manifests/...`, `metadata/annotations.yaml`). */
  readonly path: string;
  readonly content: string;
}

/** Where OLM mounts the serving certificate of a webhook Deployment (install.WebhookCertsPath in OLM). */
export const OLM_WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';
/** The image the kustomize base names; the bundle replaces it. */
const KUSTOMIZE_IMAGE_NAME = 'tessera';

export class BundleSourceError extends TesseraError<'TESSERA_PODPLACEMENT_BUNDLE_SOURCE'> {
  constructor(message: string) {
    super('TESSERA_PODPLACEMENT_BUNDLE_SOURCE', message);
  }
}

// YAML 1.1 quoting: OLM and opm read bundles with Go's YAML 1.1 parsers, to which an unquoted createdAt is a
// timestamp and `yes`/`on` are booleans; 1.1 quotes every string such a parser would take for something else.
const YAML_OPTIONS = {
  lineWidth: 0,
  sortMapEntries: false,
  aliasDuplicateObjects: false,
  version: '1.1',
} as const;
const yaml = (o: unknown): string => stringify(o, YAML_OPTIONS);

export const csvName = (packageName: string, version: string): string => `${packageName}.v${version}`;

/** The bundle's files: the CSV, the CRDs, the extra objects, metadata/annotations.yaml. */
export function renderBundle(input: BundleSources): BundleFile[] {
  const meta = input.metadata ?? BUNDLE_METADATA;
  const operatorNamespace = namespaceOf(input.deployObjects);
  const sources = { ...input, deployObjects: withOpenShiftMonitoring(input.deployObjects, operatorNamespace) };
  const consolePlugin = consolePluginManifests({
    namespace: operatorNamespace,
    image: KUSTOMIZE_IMAGE_NAME,
    registration: 'pods',
  });
  const csv = clusterServiceVersion(sources, consolePlugin, meta, operatorNamespace);
  const files: BundleFile[] = [
    { path: `manifests/${meta.packageName}.clusterserviceversion.yaml`, content: yaml(csv) },
  ];
  for (const crd of sources.crds)
    files.push({
      path: `manifests/${crdFileName(crd)}`,
      content: yaml(withOlmConversion(crd, operatorNamespace)),
    });
  for (const object of extraObjects([...sources.deployObjects, ...consolePlugin], operatorNamespace))
    files.push({ path: `manifests/${manifestFileName(object)}`, content: yaml(object) });
  files.push({ path: 'metadata/annotations.yaml', content: yaml({ annotations: bundleAnnotations(meta) }) });
  return files;
}

/** The labels a bundle image carries: the same as metadata/annotations.yaml (OLM reads either). */
export function bundleAnnotations(meta: CsvMetadata = BUNDLE_METADATA): Record<string, string> {
  return {
    'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
    'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
    'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
    'operators.operatorframework.io.bundle.package.v1': meta.packageName,
    'operators.operatorframework.io.bundle.channels.v1': meta.channels.join(','),
    'operators.operatorframework.io.bundle.channel.default.v1': meta.defaultChannel,
    'com.redhat.openshift.versions': meta.openshiftVersions,
  };
}

function namespaceOf(objects: readonly Manifest[]): string {
  const ns = objects.find((o) => o.kind === 'Namespace');
  if (!ns)
    throw new BundleSourceError(
      'deploy/podplacement/base has no Namespace; the bundle needs the operator namespace',
    );
  return ns.metadata.name;
}

/**
 * The CRD with its conversion webhook on OLM's Service (the suggested namespace; OLM rewrites namespace and
 * caBundle when it installs the CSV): until then, and while an upgrade re-applies the CRD, it names the Service
 * whose certificate OLM issues rather than deploy/'s, which OLM does not create.
 */
function withOlmConversion(crd: Manifest, operatorNamespace: string): Manifest {
  const conversion = (crd['spec'] as { conversion?: { strategy?: string } }).conversion;
  if (conversion?.strategy !== 'Webhook') return crd;
  const spec = crd['spec'] as Record<string, unknown>;
  return {
    ...crd,
    spec: {
      ...spec,
      conversion: crdConversion(
        {
          kind: 'service',
          namespace: operatorNamespace,
          name: olmServiceName(WEBHOOK_DEPLOYMENT_NAME),
          port: 443,
        },
        {},
      ),
    },
  };
}

/** `<group>_<plural>.yaml`, as in deploy/crds. */
function crdFileName(crd: Manifest): string {
  const [plural, ...group] = crd.metadata.name.split('.');
  return `${group.join('.')}_${plural}.yaml`;
}

/** operator-sdk's naming: `<name>_<group>_<version>_<kind>.yaml` (no group for the core API). */
function manifestFileName(o: Manifest): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  return [o.metadata.name, group, version, o.kind.toLowerCase()].filter(Boolean).join('_') + '.yaml';
}

/** Kinds OLM creates from a bundle besides the CSV and CRDs, as they are in deploy/ (without a namespace). */
const EXTRA_KINDS = new Set([
  'Service',
  'PodDisruptionBudget',
  'NetworkPolicy',
  'PrometheusRule',
  'ServiceMonitor',
  // The trusted CA bundle ConfigMap, which OpenShift fills (config.openshift.io/inject-trusted-cabundle).
  'ConfigMap',
]);

function extraObjects(objects: readonly Manifest[], operatorNamespace: string): Manifest[] {
  // Prometheus' discovery grant: a Role and its RoleBinding to another namespace's service account.
  const toOthers = ofKind(objects, 'RoleBinding').filter((b) => grantsToOthers(b, operatorNamespace));
  const theirRoles = new Set(toOthers.map((b) => (b['roleRef'] as { name: string }).name));
  return (
    objects
      .filter(
        (o) =>
          EXTRA_KINDS.has(o.kind) ||
          toOthers.includes(o) ||
          (o.kind === 'Role' && o.metadata.namespace === operatorNamespace && theirRoles.has(o.metadata.name)),
      )
      // OLM creates the webhook's Service itself (`<deployment>-service`, the name its certificate covers).
      .filter((o) => !(o.kind === 'Service' && o.metadata.name === WEBHOOK_DEPLOYMENT_NAME))
      .map((o) => {
        const { namespace: _dropped, ...metadata } = o.metadata;
        return { ...o, metadata };
      })
  );
}

function ofKind(objects: readonly Manifest[], kind: string): Manifest[] {
  return objects.filter((o) => o.kind === kind);
}

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** The CSV's `createdAt`: given, or the version's release date; never the clock (the bundle must not go stale). */
function createdAt(s: BundleSources, meta: CsvMetadata): string {
  const date = s.createdAt ?? meta.releaseDates[s.version];
  if (date === undefined)
    throw new BundleSourceError(
      `no release date for version ${s.version}: add it to releaseDates in hack/bundle/metadata.ts, or pass --created-at`,
    );
  if (!RFC3339_UTC.test(date) || Number.isNaN(Date.parse(date)))
    throw new BundleSourceError(`createdAt ${JSON.stringify(date)} is not an RFC 3339 UTC time (2026-12-02T00:00:00Z)`);
  return date;
}

/** The console hides internal objects by CRD name: each must be a CRD the bundle ships. */
function internalObjects(crds: readonly Manifest[], meta: CsvMetadata): Record<string, string> {
  if (meta.internalObjects.length === 0) return {};
  const owned = new Set(crds.map((c) => c.metadata.name));
  const unknown = meta.internalObjects.filter((name) => !owned.has(name));
  if (unknown.length > 0)
    throw new BundleSourceError(`internalObjects names CRDs the bundle does not ship: ${unknown.join(', ')}`);
  return { 'operators.operatorframework.io/internal-objects': JSON.stringify(meta.internalObjects) };
}

function clusterServiceVersion(
  s: BundleSources,
  consolePlugin: readonly Manifest[],
  meta: CsvMetadata,
  operatorNamespace: string,
) {
  const deployments = [
    ...ofKind(s.deployObjects, 'Deployment').map((d) => olmDeployment(d, s.image)),
    ...ofKind(consolePlugin, 'Deployment').map((d) => withImage(d, s.image)),
  ];
  const { permissions, clusterPermissions } = rbac([...s.deployObjects, ...consolePlugin], operatorNamespace);
  const spec: Record<string, unknown> = {
    displayName: meta.displayName,
    description: meta.description,
    version: s.version,
    ...(s.replaces ? { replaces: s.replaces } : {}),
    minKubeVersion: meta.minKubeVersion,
    maturity: meta.maturity,
    provider: meta.provider,
    maintainers: meta.maintainers,
    links: meta.links,
    keywords: meta.keywords,
    icon: [{ base64data: Buffer.from(meta.iconSvg).toString('base64'), mediatype: 'image/svg+xml' }],
    installModes: [
      { type: 'OwnNamespace', supported: false },
      { type: 'SingleNamespace', supported: false },
      { type: 'MultiNamespace', supported: false },
      // Pods of every namespace are gated and placed; and OLM installs a CSV with a conversion webhook only in
      // this mode.
      { type: 'AllNamespaces', supported: true },
    ],
    install: {
      strategy: 'deployment',
      spec: { deployments, permissions, clusterPermissions },
    },
    customresourcedefinitions: { owned: ownedCrds(s.crds, meta) },
    webhookdefinitions: webhookDefinitions(s.deployObjects, operatorNamespace),
    relatedImages: [{ name: 'tessera', image: s.image }],
  };
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: csvName(meta.packageName, s.version),
      // What OLM and the console filter on: the platforms the operator runs on (no label means amd64 only).
      labels: {
        ...Object.fromEntries(meta.architectures.map((a) => [`operatorframework.io/arch.${a}`, 'supported'])),
        'operatorframework.io/os.linux': 'supported',
      },
      annotations: {
        'alm-examples': JSON.stringify(meta.examples, null, 2),
        capabilities: meta.capabilities,
        categories: meta.categories.join(', '),
        containerImage: s.image,
        createdAt: createdAt(s, meta),
        description: meta.shortDescription,
        repository: meta.repository,
        support: meta.provider.name,
        'operatorframework.io/suggested-namespace': operatorNamespace,
        // The console offers to label the install namespace `openshift.io/cluster-monitoring: "true"`, so platform
        // Prometheus picks up the ServiceMonitor and the PrometheusRule.
        'operatorframework.io/cluster-monitoring': 'true',
        'operators.openshift.io/valid-subscription': '[]',
        'console.openshift.io/disable-operand-delete': String(meta.disableOperandDelete),
        'operator.openshift.io/uninstall-message': meta.uninstallMessage,
        ...internalObjects(s.crds, meta),
        ...meta.featureAnnotations,
        // OperatorHub offers to enable the plugin on install; its pods create the ConsolePlugin it names.
        ...csvConsolePluginAnnotation(),
      },
    },
    spec,
  };
}

function containersOf(deployment: Manifest): Record<string, unknown>[] {
  const spec = deployment['spec'];
  const template = isRecord(spec) ? spec['template'] : undefined;
  const podSpec = isRecord(template) ? template['spec'] : undefined;
  const containers = isRecord(podSpec) ? podSpec['containers'] : undefined;
  if (!Array.isArray(containers) || !containers.every(isRecord))
    throw new BundleSourceError(`Deployment ${deployment.metadata.name} has no containers`);
  return containers;
}

/** A Deployment that needs nothing of OLM but the image, as the CSV runs it. */
function withImage(d: Manifest, image: string): Record<string, unknown> {
  const copy = structuredClone(d) as Manifest & { spec: { template: { spec: Record<string, unknown> } } };
  const podSpec = copy.spec.template.spec;
  for (const list of [podSpec['containers'], podSpec['initContainers']])
    for (const container of Array.isArray(list) ? list.filter(isRecord) : [])
      if (container['image'] === KUSTOMIZE_IMAGE_NAME) container['image'] = image;
  return { name: d.metadata.name, label: d.metadata.labels ?? {}, spec: copy['spec'] };
}

/** A Deployment as the CSV runs it: OLM-issued TLS, no self-managed certificate volume, the given image. */
function olmDeployment(d: Manifest, image: string): Record<string, unknown> {
  const copy = structuredClone(d) as Manifest & { spec: { template: { spec: Record<string, unknown> } } };
  const podSpec = copy.spec.template.spec;
  const droppedVolumes = new Set<string>();
  for (const container of containersOf(copy)) {
    if (container['image'] === KUSTOMIZE_IMAGE_NAME) container['image'] = image;
    const args = Array.isArray(container['args']) ? container['args'].map(String) : [];
    if (!args.includes('--tls=self-managed'))
      throw new BundleSourceError(
        `Deployment ${d.metadata.name}: expected --tls=self-managed in the base to replace`,
      );
    const certDir = args.find((a) => a.startsWith('--cert-dir='))?.slice('--cert-dir='.length);
    container['args'] = args
      .filter((a) => a !== '--manage-validating-webhook')
      .map((a) => (a === '--tls=self-managed' ? '--tls=olm' : a))
      .map((a) => (a.startsWith('--cert-dir=') ? `--cert-dir=${OLM_WEBHOOK_CERT_DIR}` : a));
    if (certDir && Array.isArray(container['volumeMounts'])) {
      const mounts = container['volumeMounts'].filter(isRecord);
      for (const m of mounts) if (m['mountPath'] === certDir) droppedVolumes.add(String(m['name']));
      container['volumeMounts'] = mounts.filter((m) => m['mountPath'] !== certDir);
      if ((container['volumeMounts'] as unknown[]).length === 0) delete container['volumeMounts'];
    }
  }
  if (Array.isArray(podSpec['volumes'])) {
    podSpec['volumes'] = podSpec['volumes'].filter(
      (v) => !(isRecord(v) && droppedVolumes.has(String(v['name']))),
    );
    if ((podSpec['volumes'] as unknown[]).length === 0) delete podSpec['volumes'];
  }
  return { name: d.metadata.name, label: d.metadata.labels ?? {}, spec: copy['spec'] };
}

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
}

/**
 * Rules of Roles outside the operator's namespace that may become cluster-wide under OLM although no resource name
 * restricts them, each with the reason. Keyed `<namespace>/<apiGroup>/<resource>/<verbs>`.
 */
const FOREIGN_NAMESPACE_GRANTS: Readonly<Record<string, string>> = {
  // The registry CA ConfigMap named by image.config.openshift.io/cluster spec.additionalTrustedCA: its name is the
  // admin's choice, unknown here. `get` only (no list or watch), read only in openshift-config by the code, and less
  // than the cluster-wide `get` on Secrets by name that pull secrets already need.
  'openshift-config//configmaps/get': 'registry CA bundle named by the cluster image config',
};

function foreignRulesAllowed(namespace: string, rules: readonly PolicyRule[]): void {
  for (const r of rules) {
    if (r.resourceNames?.length) continue;
    for (const group of r.apiGroups ?? [''])
      for (const resource of r.resources ?? []) {
        const key = `${namespace}/${group}/${resource}/${[...r.verbs].sort().join(',')}`;
        if (!FOREIGN_NAMESPACE_GRANTS[key])
          throw new BundleSourceError(
            `a Role in ${namespace} grants ${r.verbs.join(',')} on ${resource} without resourceNames; under OLM it would ` +
              'apply in every namespace. Restrict it by name, or list it with its reason in FOREIGN_NAMESPACE_GRANTS',
          );
      }
  }
}

/** Self-managed certificate Roles: OLM issues the certificate instead. */
const SELF_MANAGED_TLS_ROLE = /-webhook-tls-(writer|reader)$/;
/** What OLM registers from the CSV itself, so the operator's grants to write them are left out. */
const OLM_OWNED_RESOURCES = new Set(['validatingwebhookconfigurations', 'customresourcedefinitions']);

function withoutOlmOwned(rules: readonly PolicyRule[]): PolicyRule[] {
  return rules
    .map((r) => ({ ...r, resources: r.resources?.filter((x) => !OLM_OWNED_RESOURCES.has(x)) }))
    .filter((r) => r.nonResourceURLs || (r.resources && r.resources.length > 0));
}

/**
 * CSV permissions from the bindings of deploy/: each ServiceAccount's rules, namespaced (operator namespace) or
 * cluster-wide, plus reading OLM's certificate Secret for the controller (it copies OLM's CA, see olm-ca.ts).
 */
function rbac(objects: readonly Manifest[], operatorNamespace: string) {
  const roles = new Map<string, PolicyRule[]>();
  for (const r of [...ofKind(objects, 'Role'), ...ofKind(objects, 'ClusterRole')])
    roles.set(
      `${r.kind}/${r.metadata.namespace ?? ''}/${r.metadata.name}`,
      (r['rules'] as PolicyRule[]) ?? [],
    );
  const permissions = new Map<string, PolicyRule[]>();
  const clusterPermissions = new Map<string, PolicyRule[]>();
  const add = (into: Map<string, PolicyRule[]>, sa: string, rules: PolicyRule[]) =>
    into.set(sa, [...(into.get(sa) ?? []), ...withoutOlmOwned(structuredClone(rules))]);
  for (const b of [...ofKind(objects, 'RoleBinding'), ...ofKind(objects, 'ClusterRoleBinding')]) {
    const ref = b['roleRef'] as { kind: string; name: string };
    if (SELF_MANAGED_TLS_ROLE.test(ref.name)) continue;
    if (grantsToOthers(b, operatorNamespace)) continue; // shipped as bundle objects (extraObjects)
    const roleKey = `${ref.kind}/${ref.kind === 'Role' ? (b.metadata.namespace ?? '') : ''}/${ref.name}`;
    const rules = roles.get(roleKey);
    if (!rules)
      throw new BundleSourceError(
        `${b.kind} ${b.metadata.name} refers to ${roleKey}, which deploy/ does not define`,
      );
    const namespaced = b.kind === 'RoleBinding' && b.metadata.namespace === operatorNamespace;
    if (b.kind === 'RoleBinding' && !namespaced) foreignRulesAllowed(b.metadata.namespace ?? '', rules);
    for (const subject of (b['subjects'] as { kind: string; name: string }[]) ?? []) {
      if (subject.kind !== 'ServiceAccount') continue;
      add(namespaced ? permissions : clusterPermissions, subject.name, rules);
    }
  }
  const controller = ofKind(objects, 'Deployment').find((d) =>
    containersOf(d).some((c) => Array.isArray(c['args']) && c['args'].includes('--components=controller')),
  );
  if (!controller) throw new BundleSourceError('deploy/podplacement/base has no controller Deployment');
  const controllerSa = serviceAccountOf(controller);
  add(permissions, controllerSa, [
    {
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: [olmCertSecretName(WEBHOOK_DEPLOYMENT_NAME)],
      verbs: ['get'],
    },
  ]);
  const list = (m: Map<string, PolicyRule[]>) =>
    [...m.entries()].map(([serviceAccountName, rules]) => ({ serviceAccountName, rules }));
  // Every ServiceAccount a Deployment runs as must appear, even without rules, or OLM does not create it.
  for (const d of ofKind(objects, 'Deployment')) {
    const sa = serviceAccountOf(d);
    if (!permissions.has(sa) && !clusterPermissions.has(sa)) permissions.set(sa, []);
  }
  return { permissions: list(permissions), clusterPermissions: list(clusterPermissions) };
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

/**
 * A RoleBinding in the operator namespace whose subjects are all service accounts of other namespaces (Prometheus'
 * discovery grant): not the operator's own permissions, so it ships as a bundle object with its Role.
 */
function grantsToOthers(b: Manifest, operatorNamespace: string): boolean {
  if (b.kind !== 'RoleBinding' || b.metadata.namespace !== operatorNamespace) return false;
  const subjects = (b['subjects'] as Subject[] | undefined) ?? [];
  return (
    subjects.length > 0 &&
    subjects.every((s) => s.kind === 'ServiceAccount' && s.namespace !== undefined && s.namespace !== operatorNamespace)
  );
}

/** OpenShift's monitoring namespace, where platform Prometheus (service account prometheus-k8s) runs. */
export const OPENSHIFT_MONITORING_NAMESPACE = 'openshift-monitoring';
/** The service CA bundle platform Prometheus mounts (as OpenShift's own ServiceMonitors name it). */
export const PLATFORM_PROMETHEUS_SERVICE_CA_FILE = '/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt';
/** Where the Deployments mount the service CA's metrics certificate (as deploy/podplacement/openshift does). */
export const METRICS_CERT_DIR = '/var/run/metrics/tls';
const METRICS_COMPONENT_LABEL = 'app.kubernetes.io/component';

type Peer = { namespaceSelector?: { matchLabels?: Record<string, string> } };

/**
 * deploy/podplacement/base's monitoring made OpenShift's, as the openshift overlay makes it: the service CA's
 * certificate on the metrics Service, mounted (as an optional volume, unlike the overlay: the bundle also goes to
 * clusters without the service CA) into every Deployment that serves secure metrics, verified by the ServiceMonitor;
 * Prometheus' grant and the NetworkPolicy name openshift-monitoring.
 */
function withOpenShiftMonitoring(objects: readonly Manifest[], operatorNamespace: string): Manifest[] {
  const metricsServices = ofKind(objects, 'Service').filter(
    (svc) => svc.metadata.labels?.[METRICS_COMPONENT_LABEL] === 'metrics',
  );
  const metricsService = metricsServices[0];
  if (metricsServices.length !== 1 || !metricsService)
    throw new BundleSourceError(
      `deploy/podplacement/base must have exactly one Service labelled ${METRICS_COMPONENT_LABEL}: metrics; found ${metricsServices.length}`,
    );
  const secretName = `${metricsService.metadata.name}-tls`;
  return objects.map((o) => {
    const copy = structuredClone(o);
    if (o === metricsService)
      copy.metadata = {
        ...copy.metadata,
        annotations: { 'service.beta.openshift.io/serving-cert-secret-name': secretName },
      } as Manifest['metadata'];
    if (o.kind === 'Deployment') {
      const template = (copy['spec'] as { template: { spec: Record<string, unknown> } }).template;
      let serves = false;
      for (const c of containersOf(copy)) {
        const args = Array.isArray(c['args']) ? c['args'].map(String) : [];
        if (!args.includes('--metrics-secure')) continue;
        serves = true;
        c['args'] = [...args, `--metrics-cert-dir=${METRICS_CERT_DIR}`];
        const mounts: unknown[] = Array.isArray(c['volumeMounts']) ? c['volumeMounts'] : [];
        c['volumeMounts'] = [...mounts, { name: 'metrics-tls', mountPath: METRICS_CERT_DIR, readOnly: true }];
      }
      if (serves) {
        const volumes: unknown[] = Array.isArray(template.spec['volumes']) ? template.spec['volumes'] : [];
        // Optional: only OpenShift's service CA creates the Secret, and OLM runs on other clusters too. A required
        // Secret would hold the pods in ContainerCreating (FailedMount) there; the metrics server serves a self-signed
        // certificate until the kubelet fills the volume.
        template.spec['volumes'] = [...volumes, { name: 'metrics-tls', secret: { secretName, optional: true } }];
      }
    }
    if (o.kind === 'ServiceMonitor')
      for (const endpoint of (copy['spec'] as { endpoints: Record<string, unknown>[] }).endpoints)
        endpoint['tlsConfig'] = {
          caFile: PLATFORM_PROMETHEUS_SERVICE_CA_FILE,
          serverName: `${metricsService.metadata.name}.${operatorNamespace}.svc`,
        };
    if (grantsToOthers(o, operatorNamespace))
      for (const subject of copy['subjects'] as Subject[]) subject.namespace = OPENSHIFT_MONITORING_NAMESPACE;
    if (o.kind === 'NetworkPolicy')
      for (const rule of ((copy['spec'] as { ingress?: { from?: Peer[] }[] }).ingress ?? []))
        for (const peer of rule.from ?? []) {
          const labels = peer.namespaceSelector?.matchLabels;
          if (labels?.['kubernetes.io/metadata.name'] === 'monitoring')
            labels['kubernetes.io/metadata.name'] = OPENSHIFT_MONITORING_NAMESPACE;
        }
    return copy;
  });
}

function serviceAccountOf(d: Manifest): string {
  const spec = (d['spec'] as { template?: { spec?: { serviceAccountName?: string } } }).template?.spec;
  if (!spec?.serviceAccountName)
    throw new BundleSourceError(`Deployment ${d.metadata.name} names no serviceAccountName`);
  return spec.serviceAccountName;
}

/** The webhook container's port (named `webhook`) OLM's Service targets. */
function webhookTargetPort(objects: readonly Manifest[]): number {
  const d = ofKind(objects, 'Deployment').find((x) => x.metadata.name === WEBHOOK_DEPLOYMENT_NAME);
  if (!d)
    throw new BundleSourceError(`deploy/podplacement/base has no Deployment ${WEBHOOK_DEPLOYMENT_NAME}`);
  for (const c of containersOf(d))
    for (const p of Array.isArray(c['ports']) ? c['ports'].filter(isRecord) : [])
      if (p['name'] === 'webhook' && typeof p['containerPort'] === 'number') return p['containerPort'];
  throw new BundleSourceError(`Deployment ${WEBHOOK_DEPLOYMENT_NAME} has no container port named webhook`);
}

/** The validating webhooks the operator registers itself outside OLM, and the CRD conversion, as OLM definitions. */
function webhookDefinitions(objects: readonly Manifest[], operatorNamespace: string) {
  const targetPort = webhookTargetPort(objects);
  const served = { deploymentName: WEBHOOK_DEPLOYMENT_NAME, containerPort: 443, targetPort };
  const endpoint = {
    kind: 'service',
    namespace: operatorNamespace,
    name: WEBHOOK_DEPLOYMENT_NAME,
    port: 443,
  } as const;
  const validating = validatingWebhookConfiguration(endpoint, {}, { operatorNamespace }).webhooks.map((w) => {
    const clientConfig = w['clientConfig'] as { service: { path: string } };
    // matchConditions (system namespaces skipped) have no OLM field; the webhook server answers those quickly.
    return {
      type: 'ValidatingAdmissionWebhook',
      generateName: w['name'],
      ...served,
      webhookPath: clientConfig.service.path,
      admissionReviewVersions: w['admissionReviewVersions'],
      sideEffects: w['sideEffects'],
      failurePolicy: w['failurePolicy'],
      timeoutSeconds: w['timeoutSeconds'],
      rules: w['rules'],
    };
  });
  return [
    ...validating,
    {
      type: 'ConversionWebhook',
      generateName: `conversion.${CLUSTER_CONFIG_PLURAL}.${API_GROUP}`,
      ...served,
      webhookPath: CONVERSION_WEBHOOK_PATH,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      conversionCRDs: [`${CLUSTER_CONFIG_PLURAL}.${API_GROUP}`],
    },
  ];
}

interface SchemaNode {
  type?: string;
  description?: string;
  properties?: Record<string, SchemaNode>;
}

/** One spec descriptor per top-level spec field, described as the CRD describes it. */
function specDescriptors(schema: SchemaNode | undefined, meta: CsvMetadata) {
  return Object.entries(schema?.properties ?? {}).map(([field, node]) => ({
    path: field,
    displayName: humanize(field),
    description: firstSentence(node.description ?? ''),
    ...(meta.specDescriptorTypes[field] ? { 'x-descriptors': meta.specDescriptorTypes[field] } : {}),
  }));
}

function statusDescriptors(schema: SchemaNode | undefined) {
  return Object.entries(schema?.properties ?? {}).map(([field, node]) => ({
    path: field,
    displayName: humanize(field),
    description: firstSentence(node.description ?? ''),
    ...(field === 'conditions' ? { 'x-descriptors': ['urn:alm:descriptor:io.kubernetes.conditions'] } : {}),
  }));
}

function ownedCrds(crds: readonly Manifest[], meta: CsvMetadata) {
  const owned: Record<string, unknown>[] = [];
  for (const crd of crds) {
    const spec = crd['spec'] as {
      names: { kind: string };
      versions: {
        name: string;
        served: boolean;
        storage: boolean;
        schema: { openAPIV3Schema: SchemaNode };
      }[];
    };
    const kind = spec.names.kind;
    // The storage version only: the console offers that one (v1alpha1 is served for old clients and converted).
    for (const v of spec.versions.filter((x) => x.served && x.storage)) {
      const root = v.schema.openAPIV3Schema;
      owned.push({
        name: crd.metadata.name,
        version: v.name,
        kind,
        displayName: meta.kindDisplayNames[kind] ?? humanize(kind),
        description: firstSentence(root.description ?? ''),
        resources: [
          { kind: 'Deployment', name: '', version: 'v1' },
          { kind: 'MutatingWebhookConfiguration', name: '', version: 'v1' },
        ],
        specDescriptors: specDescriptors(root.properties?.['spec'], meta),
        statusDescriptors: statusDescriptors(root.properties?.['status']),
      });
    }
  }
  return owned;
}

function humanize(field: string): string {
  const words = field.replace(/([a-z0-9])([A-Z])/g, '$1 $2');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function firstSentence(text: string): string {
  const end = text.indexOf('. ');
  return (end === -1 ? text : text.slice(0, end + 1)).trim();
}
