// The OLM bundle as a cluster admin installing from OperatorHub gets it: the Deployments of deploy/ with OLM's TLS,
// the same RBAC minus what OLM does itself, webhook definitions naming the paths the webhook serves, examples that
// the operator itself accepts, and metadata that matches the catalog.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { parse } from 'yaml';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONVERSION_WEBHOOK_PATH } from '../../src/podplacement/api/conversion.js';
import {
  ClusterPodPlacementConfigSpecV1beta1,
  PodPlacementConfigSpecV1beta1,
  type ClusterPodPlacementConfig,
  type PodPlacementConfig,
} from '../../src/podplacement/api/schema.js';
import { validateClusterConfig, validatePodPlacementConfig } from '../../src/podplacement/config-validation.js';
import { VALIDATING_WEBHOOK } from '../../src/podplacement/constants.js';
import { olmCertSecretName, WEBHOOK_DEPLOYMENT_NAME } from '../../src/podplacement/operator/olm-ca.js';
import { OLM_WEBHOOK_CERT_DIR, bundleAnnotations, renderBundle } from './bundle.js';
import { catalogHead, compareVersions, upgradeEdges } from './catalog.js';
import { BUNDLE_METADATA } from './metadata.js';
import { readBundleSources } from './sources.js';

const root = path.resolve(import.meta.dirname, '../..');
const IMAGE = 'registry.example/tessera/tessera@sha256:' + 'a'.repeat(64);

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}
interface Csv {
  metadata: { name: string; labels?: Record<string, string>; annotations: Record<string, string> };
  spec: {
    version: string;
    replaces?: string;
    maturity?: string;
    provider: { name: string; url?: string };
    maintainers: { name: string; email: string }[];
    links: { name: string; url: string }[];
    icon: { base64data: string; mediatype: string }[];
    installModes: { type: string; supported: boolean }[];
    relatedImages: { name: string; image: string }[];
    install: {
      spec: {
        deployments: { name: string; spec: { template: { spec: PodSpec } } }[];
        permissions: { serviceAccountName: string; rules: Rule[] }[];
        clusterPermissions: { serviceAccountName: string; rules: Rule[] }[];
      };
    };
    webhookdefinitions: {
      type: string;
      generateName: string;
      deploymentName: string;
      webhookPath: string;
      targetPort: number;
      conversionCRDs?: string[];
    }[];
    customresourcedefinitions: {
      owned: { name: string; version: string; specDescriptors: { path: string }[] }[];
    };
  };
}
interface PodSpec {
  serviceAccountName: string;
  containers: { image: string; args: string[]; volumeMounts?: { mountPath: string }[] }[];
  volumes?: { name: string }[];
}

async function render(overrides: { replaces?: string; version?: string; createdAt?: string } = {}) {
  const files = renderBundle(await readBundleSources(root, { image: IMAGE, ...overrides }));
  const byPath = new Map(files.map((f) => [f.path, f.content]));
  const csv = parse(byPath.get('manifests/tessera.clusterserviceversion.yaml') ?? '') as Csv;
  return { files, byPath, csv };
}

describe('OLM bundle', () => {
  it('runs every Deployment of deploy/ on the given image, with the certificate OLM issues', async () => {
    const { csv } = await render();
    const all = csv.spec.install.spec.deployments;
    expect(all.map((d) => d.name).sort()).toEqual([
      'pod-placement-controller',
      'pod-placement-web-hook',
      'tessera-console-plugin',
    ]);
    const deployments = all.filter((d) => d.name.startsWith('pod-placement-'));
    for (const d of deployments) {
      for (const c of d.spec.template.spec.containers) {
        expect(c.image).toBe(IMAGE);
        expect(c.args).toContain('--tls=olm');
        // OLM registers the validating webhooks: the controller must not fight it for them.
        expect(c.args).not.toContain('--manage-validating-webhook');
      }
    }
    const webhook = deployments.find((d) => d.name === WEBHOOK_DEPLOYMENT_NAME)?.spec.template.spec;
    expect(webhook?.containers[0]?.args).toContain(`--cert-dir=${OLM_WEBHOOK_CERT_DIR}`);
    // The self-managed certificate's emptyDir would shadow OLM's mount: it is gone.
    // (The one volume left is the service CA's metrics certificate, mounted elsewhere.)
    expect((webhook?.volumes ?? []).map((v) => v.name)).toEqual(['metrics-tls']);
    // The console plugin's server and the init container that registers its ConsolePlugin run the same image.
    const plugin = all.find((d) => d.name === 'tessera-console-plugin')?.spec.template.spec as unknown as {
      containers: { image: string }[];
      initContainers: { image: string }[];
    };
    expect([...plugin.containers, ...plugin.initContainers].map((c) => c.image)).toEqual([IMAGE, IMAGE]);
    // OperatorHub offers to enable the plugin; its service account may apply that one ConsolePlugin, nothing else.
    expect(csv.metadata.annotations['console.openshift.io/plugins']).toBe('["tessera-console-plugin"]');
    expect(
      csv.spec.install.spec.clusterPermissions.find((p) => p.serviceAccountName === 'tessera-console-plugin')?.rules,
    ).toEqual([
      {
        apiGroups: ['console.openshift.io'],
        resources: ['consoleplugins'],
        resourceNames: ['tessera-console-plugin'],
        verbs: ['patch', 'create'],
      },
    ]);
    expect(csv.spec.install.spec.permissions.map((p) => p.serviceAccountName)).not.toContain('tessera-console-plugin');
    expect(csv.spec.relatedImages).toEqual([{ name: 'tessera', image: IMAGE }]);
    expect(csv.metadata.annotations['containerImage']).toBe(IMAGE);
  });

  it("grants each ServiceAccount deploy/'s rules, without what OLM owns, plus reading OLM's CA", async () => {
    const { csv } = await render();
    const { permissions, clusterPermissions } = csv.spec.install.spec;
    const all = [...permissions, ...clusterPermissions];
    for (const d of csv.spec.install.spec.deployments)
      expect(all.map((p) => p.serviceAccountName)).toContain(d.spec.template.spec.serviceAccountName);
    const rules = all.flatMap((p) => p.rules);
    const resources = rules.flatMap((r) => r.resources ?? []);
    expect(resources).not.toContain('validatingwebhookconfigurations');
    expect(resources).not.toContain('customresourcedefinitions');
    expect(resources).toContain('mutatingwebhookconfigurations');
    // No secret may be written: OLM writes the certificate Secret.
    for (const r of rules.filter((x) => x.resources?.includes('secrets')))
      expect(r.verbs.filter((v) => !['get', 'list', 'watch'].includes(v))).toEqual([]);
    const controller = permissions.find((p) => p.serviceAccountName === 'pod-placement-controller');
    expect(controller?.rules).toContainEqual({
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: [olmCertSecretName(WEBHOOK_DEPLOYMENT_NAME)],
      verbs: ['get'],
    });
    // The global pull secret lives in openshift-config: cluster-wide, but still only by its name.
    const controllerCluster = clusterPermissions.find(
      (p) => p.serviceAccountName === 'pod-placement-controller',
    );
    expect(controllerCluster?.rules).toContainEqual(
      expect.objectContaining({ resources: ['secrets'], resourceNames: ['pull-secret'] }),
    );
  });

  it('refuses to widen an unrestricted rule of another namespace to the whole cluster', async () => {
    const sources = await readBundleSources(root, { image: IMAGE });
    const binding = (ns: string) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'extra', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'extra' },
      subjects: [{ kind: 'ServiceAccount', name: 'pod-placement-controller', namespace: 'x' }],
    });
    const role = (ns: string) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'extra', namespace: ns },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }],
    });
    expect(() =>
      renderBundle({
        ...sources,
        deployObjects: [...sources.deployObjects, role('kube-system'), binding('kube-system')],
      }),
    ).toThrow(/a Role in kube-system grants list on secrets without resourceNames/);
  });

  it("names OLM's Service, not deploy/'s, wherever the API server is sent to the webhook", async () => {
    const { byPath } = await render();
    const crd = parse(
      byPath.get('manifests/multiarch.openshift.io_clusterpodplacementconfigs.yaml') ?? '',
    ) as {
      spec: { conversion: { webhook: { clientConfig: { service: { name: string; path: string } } } } };
    };
    expect(crd.spec.conversion.webhook.clientConfig.service).toMatchObject({
      name: 'pod-placement-web-hook-service',
      path: CONVERSION_WEBHOOK_PATH,
    });
    // OLM creates the webhook's Service; deploy/'s would be a second name its certificate does not cover.
    expect(byPath.has('manifests/pod-placement-web-hook_v1_service.yaml')).toBe(false);
    expect(byPath.has('manifests/pod-placement-metrics_v1_service.yaml')).toBe(true);
  });

  it('defines the validating and conversion webhooks on the paths the webhook serves', async () => {
    const { csv } = await render();
    const defs = csv.spec.webhookdefinitions;
    expect(new Set(defs.map((d) => d.deploymentName))).toEqual(new Set([WEBHOOK_DEPLOYMENT_NAME]));
    expect(defs.every((d) => d.targetPort === 9443)).toBe(true);
    expect(
      defs
        .filter((d) => d.type === 'ValidatingAdmissionWebhook')
        .map((d) => d.webhookPath)
        .sort(),
    ).toEqual(
      [
        VALIDATING_WEBHOOK.clusterConfigPath,
        VALIDATING_WEBHOOK.clusterConfigPath,
        VALIDATING_WEBHOOK.podConfigPath,
      ].sort(),
    );
    expect(defs.filter((d) => d.type === 'ConversionWebhook')).toEqual([
      expect.objectContaining({
        webhookPath: CONVERSION_WEBHOOK_PATH,
        conversionCRDs: ['clusterpodplacementconfigs.multiarch.openshift.io'],
      }),
    ]);
    // OLM labels what it creates with each definition's name: a label value, at most 63 characters.
    for (const d of csv.spec.webhookdefinitions)
      expect(d.generateName.length, d.generateName).toBeLessThanOrEqual(63);
    // The gating webhook stays the controller's (it exists only while a ClusterPodPlacementConfig does).
    expect(defs.some((d) => d.type === 'MutatingAdmissionWebhook')).toBe(false);
    // OLM installs a CSV with a conversion webhook only for all namespaces.
    expect(csv.spec.installModes.filter((m) => m.supported).map((m) => m.type)).toEqual(['AllNamespaces']);
  });

  it('owns the storage version of both CRDs (the one the console offers) and ships the CRDs themselves', async () => {
    const { csv, byPath } = await render();
    expect(csv.spec.customresourcedefinitions.owned.map((o) => `${o.name}/${o.version}`).sort()).toEqual([
      'clusterpodplacementconfigs.multiarch.openshift.io/v1beta1',
      'podplacementconfigs.multiarch.openshift.io/v1beta1',
    ]);
    expect(byPath.has('manifests/multiarch.openshift.io_clusterpodplacementconfigs.yaml')).toBe(true);
    expect(byPath.has('manifests/multiarch.openshift.io_podplacementconfigs.yaml')).toBe(true);
    const beta = csv.spec.customresourcedefinitions.owned.find(
      (o) => o.version === 'v1beta1' && o.name.startsWith('cluster'),
    );
    expect(beta?.specDescriptors.map((d) => d.path)).toContain('namespaceSelector');
  });

  it('offers examples the operator accepts', () => {
    const [cluster, namespaced] = BUNDLE_METADATA.examples as unknown as [
      ClusterPodPlacementConfig,
      PodPlacementConfig,
    ];
    expect(Value.Check(ClusterPodPlacementConfigSpecV1beta1, cluster.spec)).toBe(true);
    expect(validateClusterConfig(cluster)).toEqual({ allowed: true });
    expect(Value.Check(PodPlacementConfigSpecV1beta1, namespaced.spec)).toBe(true);
    expect(
      validatePodPlacementConfig({
        operation: 'CREATE',
        config: namespaced,
        clusterConfigExists: true,
        namespaceConfigs: [],
      }),
    ).toEqual({ allowed: true });
  });

  it('names its version, its upgrade edge and the channels the catalog lists', async () => {
    const { csv, byPath } = await render({
      version: '0.2.0',
      replaces: 'tessera.v0.1.0',
      createdAt: '2027-01-15T00:00:00Z',
    });
    expect(csv.metadata.name).toBe('tessera.v0.2.0');
    expect(csv.spec.version).toBe('0.2.0');
    expect(csv.spec.replaces).toBe('tessera.v0.1.0');
    const annotations = (
      parse(byPath.get('metadata/annotations.yaml') ?? '') as { annotations: Record<string, string> }
    ).annotations;
    expect(annotations).toEqual(bundleAnnotations());
    const channels = catalogHead(['0.1.0'])
      .filter((b) => b['schema'] === 'olm.channel')
      .map((b) => b['name']);
    expect(annotations['operators.operatorframework.io.bundle.channels.v1']?.split(',')).toEqual(channels);
  });
});

/** The platforms hack/image/build.sh builds the operator image for (its `all_platforms`). */
function imagePlatforms(): string[] {
  const script = readFileSync(path.join(root, 'hack/image/build.sh'), 'utf8');
  const line = /^all_platforms=(.+)$/m.exec(script)?.[1];
  if (!line) throw new Error('hack/image/build.sh has no all_platforms= line');
  return line.trim().split(',');
}

describe('the CSV as OperatorHub and the console read it', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('declares every platform the operator image is built for, so it is not listed as amd64-only', async () => {
    const { csv } = await render();
    const platforms = imagePlatforms();
    expect(platforms).toEqual(['amd64', 'arm64', 'ppc64le', 's390x']);
    expect(csv.metadata.labels).toEqual({
      ...Object.fromEntries(platforms.map((a) => [`operatorframework.io/arch.${a}`, 'supported'])),
      'operatorframework.io/os.linux': 'supported',
    });
  });

  it('carries the listing fields: createdAt, repository, links, provider, maintainers, maturity, icon', async () => {
    const { csv } = await render();
    const a = csv.metadata.annotations;
    expect(a['createdAt']).toBe(BUNDLE_METADATA.releaseDates['0.1.0']);
    expect(a['repository']).toMatch(/^https:\/\//);
    expect(a['containerImage']).toBe(IMAGE);
    expect(a['support']).toBeTruthy();
    expect(a['capabilities']).toBe('Seamless Upgrades');
    expect(a['categories']).toBeTruthy();
    expect(csv.spec.links.map((l) => l.name)).toEqual(['Source', 'Documentation']);
    for (const l of csv.spec.links) expect(new URL(l.url).protocol).toBe('https:');
    expect(csv.spec.links[0]?.url).toBe(a['repository']);
    expect(csv.spec.provider).toEqual({ name: 'Tessera', url: a['repository'] });
    expect(csv.spec.maintainers.every((m) => m.name && /^[^@\s]+@[^@\s]+$/.test(m.email))).toBe(true);
    expect(csv.spec.maturity).toBe('alpha');
    expect(csv.spec.icon).toHaveLength(1);
    expect(csv.spec.icon[0]?.mediatype).toBe('image/svg+xml');
  });

  it('takes createdAt from the release date, never the clock, and refuses a version without one', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-06-01T12:00:00Z'));
    const later = await render();
    vi.setSystemTime(new Date('2031-02-03T04:05:06Z'));
    const evenLater = await render();
    vi.useRealTimers();
    expect(evenLater.files).toEqual(later.files);
    expect(later.csv.metadata.annotations['createdAt']).toBe('2026-12-02T00:00:00Z');
    // Go's YAML 1.1 readers would take an unquoted one for a timestamp.
    expect(later.byPath.get('manifests/tessera.clusterserviceversion.yaml')).toContain(
      'createdAt: "2026-12-02T00:00:00Z"',
    );

    await expect(render({ version: '0.3.0' })).rejects.toThrow(
      /no release date for version 0\.3\.0: add it to releaseDates in hack\/bundle\/metadata\.ts, or pass --created-at/,
    );
    const given = await render({ version: '0.3.0', createdAt: '2027-03-04T05:06:07Z' });
    expect(given.csv.metadata.annotations['createdAt']).toBe('2027-03-04T05:06:07Z');
    await expect(render({ version: '0.3.0', createdAt: '2027-03-04' })).rejects.toThrow(
      /createdAt "2027-03-04" is not an RFC 3339 UTC time/,
    );
  });

  it('hides the console\'s operand delete and says in the uninstall dialog what to delete first', async () => {
    const { csv } = await render();
    const a = csv.metadata.annotations;
    // Deleted together with the operator, the ClusterPodPlacementConfig's finalizer would have nobody to run it.
    expect(a['console.openshift.io/disable-operand-delete']).toBe('true');
    const message = a['operator.openshift.io/uninstall-message'] ?? '';
    expect(message).toMatch(/^Before you uninstall, delete every PodPlacementConfig and then the ClusterPodPlacementConfig/);
    expect(message).toContain('tessera podplacement release -A');
  });

  it('lists internal objects only when there are some, and only CRDs the bundle ships', async () => {
    const { csv } = await render();
    // Both CRDs are the admin's configuration: the console must show them.
    expect(csv.metadata.annotations).not.toHaveProperty('operators.operatorframework.io/internal-objects');
    const sources = await readBundleSources(root, { image: IMAGE });
    const withInternal = (internalObjects: string[]) =>
      renderBundle({ ...sources, metadata: { ...BUNDLE_METADATA, internalObjects } });
    const rendered = withInternal(['podplacementconfigs.multiarch.openshift.io']).find((f) =>
      f.path.endsWith('.clusterserviceversion.yaml'),
    );
    expect((parse(rendered?.content ?? '') as Csv).metadata.annotations).toMatchObject({
      'operators.operatorframework.io/internal-objects': '["podplacementconfigs.multiarch.openshift.io"]',
    });
    expect(() => withInternal(['enoexecevents.multiarch.openshift.io'])).toThrow(
      /internalObjects names CRDs the bundle does not ship: enoexecevents\.multiarch\.openshift\.io/,
    );
  });
});

describe('catalog upgrade graph', () => {
  it('orders releases by version, not as strings, and chains each to the one before', () => {
    expect(upgradeEdges(['0.10.0', '0.2.0', '0.2.0-rc.1'])).toEqual([
      { name: 'tessera.v0.2.0-rc.1' },
      { name: 'tessera.v0.2.0', replaces: 'tessera.v0.2.0-rc.1' },
      { name: 'tessera.v0.10.0', replaces: 'tessera.v0.2.0' },
    ]);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
    // SemVer §11: numeric identifiers numerically, below words, shorter lists first.
    expect(upgradeEdges(['1.0.0-rc.10', '1.0.0-rc.2']).map((e) => e.name)).toEqual([
      'tessera.v1.0.0-rc.2',
      'tessera.v1.0.0-rc.10',
    ]);
    expect(compareVersions('1.0.0-1', '1.0.0-alpha')).toBeLessThan(0);
    expect(compareVersions('1.0.0-alpha', '1.0.0-alpha.1')).toBeLessThan(0);
  });

  it('keeps release candidates out of stable: only candidate carries pre-releases', () => {
    const [, stable, candidate] = catalogHead(['0.1.0', '0.2.0-rc.1']);
    expect(stable).toMatchObject({ name: 'stable', entries: [{ name: 'tessera.v0.1.0' }] });
    expect(candidate).toMatchObject({
      name: 'candidate',
      entries: [{ name: 'tessera.v0.1.0' }, { name: 'tessera.v0.2.0-rc.1', replaces: 'tessera.v0.1.0' }],
    });
    expect(() => catalogHead(['0.2.0-rc.1'])).toThrow(/only pre-releases.*stable would be empty/);
  });

  it('refuses an empty catalog, a repeated version and a version that is not a release', () => {
    expect(() => catalogHead([])).toThrow(/at least one bundle/);
    expect(() => upgradeEdges(['0.1.0', '0.1.0'])).toThrow(/listed twice/);
    expect(() => upgradeEdges(['0.1.0', 'latest'])).toThrow(/not a release version: "latest"/);
  });

  it('gives the package its default channel and every channel the same line of releases', () => {
    const [pkg, ...channels] = catalogHead(['0.1.0', '0.2.0']);
    expect(pkg).toMatchObject({ schema: 'olm.package', name: 'tessera', defaultChannel: 'stable' });
    expect(channels.map((c) => c['name'])).toEqual(['stable', 'candidate']);
    for (const c of channels) expect(c['entries']).toEqual(upgradeEdges(['0.1.0', '0.2.0']));
  });
});
