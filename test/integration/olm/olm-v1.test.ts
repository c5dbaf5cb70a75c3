// The pod placement operator as OLM v1 (operator-controller v1.11.0) installs a registry+v1 bundle with webhooks
// through its cert-manager provider, on the local control plane with cert-manager v1.21 running (hack/cert-manager,
// test/support/cert-manager.ts): what OLM v1 renders for the bundle (the CSV's permissions, the Service
// `<deployment>-service`, the self-signed Issuer and leaf Certificate whose Secret is mounted into the webhook
// Deployment at /tmp/k8s-webhook-server/serving-certs, the CSV's Deployments, its validating webhooks and the CRD's
// conversion webhook annotated `cert-manager.io/inject-ca-from`), with the certificate issued and the CA injected by
// cert-manager itself. Both halves then run as the CSV says (test/support/csv-process.ts) with the files of that
// Secret. cert-manager's Secret has no `olmCAKey`: the controller must register the gating webhook with the CA
// found in `ca.crt`. Every admission and conversion call below is the apiserver calling the webhook over TLS through
// the Service's ClusterIP (a ServiceRouter, src/devcluster/service-router.ts), verified against the caBundle that
// cert-manager injected or the controller published.
// Not here (see the report of issue #22): operator-controller and catalogd themselves, whose dependency
// pkg.package-operator.run/boxcutter v0.14.0 this build environment's Go module proxy refuses; the objects above are
// rendered by the test as operator-controller v1.11.0's registry+v1 renderer would.
import { X509Certificate } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../src/devcluster/processes.js';
import { MUTATING_WEBHOOK, SCHEDULING_GATE } from '../../../src/podplacement/constants.js';
import { BUNDLE_METADATA } from '../../../hack/bundle/metadata.js';
import {
  WEBHOOK_DEPLOYMENT_NAME,
  olmCertSecretName,
  olmServiceName,
} from '../../../src/podplacement/operator/olm-ca.js';
import { bundleCsv, bundleManifests, type BundleManifest } from '../../support/bundle-manifests.js';
import { certManagerCertificate, startCertManager } from '../../support/cert-manager.js';
import { uniqueName } from '../../support/cluster.js';
import { csvDeployment, csvDeployments } from '../../support/csv-process.js';
import { csvPermissionObjects, type CsvPermissions } from '../../support/olm-install.js';
import { useOlmTestbed } from '../../support/olm-testbed.js';

interface MutatingWebhookConfiguration {
  metadata: { annotations?: Record<string, string> };
  webhooks: {
    clientConfig: { caBundle?: string; service?: { name: string; namespace: string; port?: number } };
  }[];
}
interface Pod {
  metadata: { name: string };
  spec: { schedulingGates?: { name: string }[] };
}

/** The ClusterExtension's spec.namespace. */
const NS = 'tessera-operator';
const manifests = bundleManifests();
const csv = bundleCsv(manifests);
const SECRET = olmCertSecretName(WEBHOOK_DEPLOYMENT_NAME);
const SERVICE = olmServiceName(WEBHOOK_DEPLOYMENT_NAME);
const clusterConfigs = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';
const gatingWebhookPath = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING_WEBHOOK.configurationName}`;

const bed = useOlmTestbed({
  name: uniqueName('olm-v1'),
  namespace: NS,
  issuerName: 'cert-manager',
  startIssuer: startCertManager,
});

const post = <T>(apiPath: string, body: object): Promise<T> =>
  bed.client.request<T>({ method: 'POST', path: apiPath, body });
interface TlsSecret {
  metadata: { uid: string };
  data?: Record<string, string>;
}
const pem = (secret: TlsSecret, key: string): string =>
  Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
const fingerprints = (bundlePem: string): string[] =>
  (bundlePem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []).map(
    (block) => new X509Certificate(block).fingerprint256,
  );

/** The caBundle of the gating webhook once the controller has registered it. */
async function publishedCaBundle(): Promise<string> {
  const cfg = await bed.get<MutatingWebhookConfiguration>(gatingWebhookPath);
  const caBundle = cfg.webhooks[0]?.clientConfig.caBundle;
  if (!caBundle) throw new Error('no caBundle yet');
  return Buffer.from(caBundle, 'base64').toString('utf8');
}

/** A tenant's new pod, which the apiserver must have sent through the gating webhook. */
async function gatedPod(tenant: string): Promise<Pod> {
  return bed.waitFor('a new pod to be gated', async () => {
    const created = await post<Pod>(`/api/v1/namespaces/${tenant}/pods`, {
      metadata: { generateName: 'app-' },
      spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }] },
    });
    expect(created.spec.schedulingGates ?? []).toContainEqual({ name: SCHEDULING_GATE });
    return created;
  });
}

/** The webhook Deployment as OLM v1 renders it: the certificate Secret at both protected paths. */
function renderDeployment(d: ReturnType<typeof csvDeployments>[number]): object {
  const template = d.spec.template as {
    metadata?: object;
    spec: Record<string, unknown> & { containers: object[] };
  };
  const certs = d.name === WEBHOOK_DEPLOYMENT_NAME;
  const mounts = [
    {
      name: 'webhook-cert',
      mountPath: '/tmp/k8s-webhook-server/serving-certs',
      crt: 'tls.crt',
      key: 'tls.key',
    },
    {
      name: 'apiservice-cert',
      mountPath: '/apiserver.local.config/certificates',
      crt: 'apiserver.crt',
      key: 'apiserver.key',
    },
  ];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: d.name, namespace: NS },
    spec: {
      ...d.spec,
      template: {
        ...template,
        spec: {
          ...template.spec,
          ...(certs
            ? {
                volumes: mounts.map((m) => ({
                  name: m.name,
                  secret: {
                    secretName: SECRET,
                    items: [
                      { key: 'tls.crt', path: m.crt },
                      { key: 'tls.key', path: m.key },
                    ],
                  },
                })),
                containers: template.spec.containers.map((c) => ({
                  ...c,
                  volumeMounts: mounts.map((m) => ({ name: m.name, mountPath: m.mountPath })),
                })),
              }
            : {}),
        },
      },
    },
  };
}

/** The Secret cert-manager issued (another one than `notUid`), once it holds a certificate. */
async function issuedSecret(notUid?: string): Promise<TlsSecret> {
  const secret = await bed.get<TlsSecret>(`/api/v1/namespaces/${NS}/secrets/${SECRET}`);
  if (secret.metadata.uid === notUid) throw new Error('still the Secret of the first issuance');
  if (!secret.data?.['tls.crt'] || !secret.data['ca.crt']) throw new Error('not issued yet');
  return secret;
}

interface WebhookDefinition {
  type: string;
  generateName: string;
  containerPort: number;
  webhookPath: string;
  admissionReviewVersions: string[];
  sideEffects: string;
  failurePolicy?: string;
  timeoutSeconds?: number;
  rules?: object[];
  conversionCRDs?: string[];
}
const webhookDefinitions = (csv.spec as { webhookdefinitions: WebhookDefinition[] }).webhookdefinitions;
const injectCaFrom = { 'cert-manager.io/inject-ca-from': `${NS}/${SECRET}` };

/** The CSV's validating webhooks as OLM v1 renders them: one configuration each, CA injected by cert-manager. */
function renderValidatingWebhooks(): object[] {
  return webhookDefinitions
    .filter((w) => w.type === 'ValidatingAdmissionWebhook')
    .map((w) => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: w.generateName, annotations: injectCaFrom },
      webhooks: [
        {
          name: w.generateName,
          clientConfig: {
            service: { namespace: NS, name: SERVICE, path: w.webhookPath, port: w.containerPort },
          },
          admissionReviewVersions: w.admissionReviewVersions,
          sideEffects: w.sideEffects,
          failurePolicy: w.failurePolicy,
          timeoutSeconds: w.timeoutSeconds,
          rules: w.rules,
        },
      ],
    }));
}

/** A CRD as OLM v1 renders it: a conversion webhook on the webhook Service, CA injected by cert-manager. */
function renderCrd(crd: BundleManifest): object {
  const conversion = webhookDefinitions.find(
    (w) => w.type === 'ConversionWebhook' && (w.conversionCRDs ?? []).includes(crd.metadata.name),
  );
  if (!conversion) return crd;
  return {
    ...crd,
    metadata: { ...crd.metadata, annotations: injectCaFrom },
    spec: {
      ...crd.spec,
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: conversion.admissionReviewVersions,
          clientConfig: {
            service: {
              namespace: NS,
              name: SERVICE,
              path: conversion.webhookPath,
              port: conversion.containerPort,
            },
          },
        },
      },
    },
  };
}

describe('the operator as OLM v1 installs it with the cert-manager webhook provider', () => {
  it('serves OLM v1’s webhooks with cert-manager’s certificate, gates pods with its CA, and follows a re-issue', async () => {
    const { client, cluster, router } = bed;
    await post('/api/v1/namespaces', { metadata: { name: NS } });
    for (const crd of manifests.filter((m) => m.kind === 'CustomResourceDefinition'))
      await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', renderCrd(crd));
    for (const object of csvPermissionObjects(csv as unknown as CsvPermissions, NS))
      await post(object.path, object.body);
    const deployments = csvDeployments(csv);
    const webhookDeployment = csvDeployment(csv, WEBHOOK_DEPLOYMENT_NAME);
    await post(`/api/v1/namespaces/${NS}/services`, {
      metadata: { name: SERVICE },
      spec: {
        selector: webhookDeployment.spec.selector.matchLabels,
        ports: [{ name: '443', port: 443, targetPort: 9443 }],
      },
    });
    const { issuer, certificate } = certManagerCertificate({ namespace: NS, service: SERVICE });
    await post(`/apis/cert-manager.io/v1/namespaces/${NS}/issuers`, issuer);
    await post(`/apis/cert-manager.io/v1/namespaces/${NS}/certificates`, certificate);
    for (const configuration of renderValidatingWebhooks())
      await post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', configuration);
    const issued = await bed.waitFor('cert-manager to issue the certificate', () => issuedSecret());
    // cert-manager's Secret, not OLM v0's: a self-signed leaf, no olmCAKey.
    expect(Object.keys(issued.data ?? {}).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    expect(new X509Certificate(pem(issued, 'tls.crt')).ca).toBe(false);
    for (const d of deployments)
      await post(`/apis/apps/v1/namespaces/${NS}/deployments`, renderDeployment(d));
    // kwok marks the pods Running: the Deployments become Available, and the webhook Service gets endpoints.
    await bed.waitFor('the Deployments to be Available', async () => {
      for (const d of deployments) {
        const live = await bed.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
          `/apis/apps/v1/namespaces/${NS}/deployments/${d.name}`,
        );
        expect(live.status?.conditions ?? []).toContainEqual(
          expect.objectContaining({ type: 'Available', status: 'True' }),
        );
      }
    });

    // The files the kubelet mounts from the Secret, and the processes that stand in for the pods.
    const certDir = path.join(cluster.stateDir, 'olm-v1-serving-certs');
    mkdirSync(certDir, { recursive: true });
    const mount = (secret: TlsSecret): void => {
      for (const key of ['tls.crt', 'tls.key']) writeFileSync(path.join(certDir, key), pem(secret, key));
    };
    mount(issued);
    const webhookPort = await freePort();
    await bed.startDeployment(webhookDeployment, [
      ...['--cert-dir', certDir, '--webhook-host', '127.0.0.1', '--webhook-port', String(webhookPort)],
    ]);
    const { spec } = await bed.get<{ spec: { clusterIP: string } }>(
      `/api/v1/namespaces/${NS}/services/${SERVICE}`,
    );
    router.route(`${spec.clusterIP}:443`, { host: '127.0.0.1', port: webhookPort });
    const controllerDeployment = deployments.find((d) => d.name !== WEBHOOK_DEPLOYMENT_NAME);
    if (!controllerDeployment) throw new Error('the CSV has no controller Deployment');
    await bed.startDeployment(controllerDeployment, []);

    // OLM v1's validating webhooks answer with cert-manager's certificate and the CA cert-manager injected: a
    // PodPlacementConfig before the ClusterPodPlacementConfig is refused with the operator's own message (an
    // unreachable or untrusted webhook would fail with "failed calling webhook" instead).
    const tenant = uniqueName('tenant');
    await post('/api/v1/namespaces', { metadata: { name: tenant } });
    const podConfig = BUNDLE_METADATA.examples[1] as { metadata: Record<string, unknown> };
    const refused = await bed.waitFor('the validating webhook to answer', async () => {
      const message = await post(
        `/apis/multiarch.openshift.io/v1beta1/namespaces/${tenant}/podplacementconfigs`,
        {
          ...podConfig,
          metadata: { ...podConfig.metadata, namespace: tenant },
        },
      ).then(
        () => 'created',
        (err: Error) => err.message,
      );
      expect(message).not.toMatch(/failed calling webhook/);
      return message;
    });
    expect(refused).toMatch(/denied the request: ClusterPodPlacementConfig does not exist/);
    await post(clusterConfigs, BUNDLE_METADATA.examples[0] as object);

    // The gating webhook names OLM v1's Service and carries cert-manager's ca.crt: the self-signed leaf itself.
    const first = await bed.waitFor('the controller to register the gating webhook', publishedCaBundle);
    expect(fingerprints(first)).toEqual(fingerprints(pem(issued, 'ca.crt')));
    const registered = await bed.get<MutatingWebhookConfiguration>(gatingWebhookPath);
    expect(registered.webhooks[0]?.clientConfig.service).toMatchObject({
      name: SERVICE,
      namespace: NS,
      port: 443,
    });
    const pod = await gatedPod(tenant);

    // The CRD's conversion webhook (CA injected by cert-manager) answers too: the config read as v1alpha1.
    const v1alpha1 = await bed.waitFor('the conversion webhook to answer', () =>
      bed.get<{ apiVersion: string }>(
        '/apis/multiarch.openshift.io/v1alpha1/clusterpodplacementconfigs/cluster',
      ),
    );
    expect(v1alpha1.apiVersion).toBe('multiarch.openshift.io/v1alpha1');

    // cert-manager re-issues (here because its Secret was lost): a new self-signed certificate in the Secret, new
    // files in the pods a little later. The controller publishes the new CA beside the old one, so the apiserver
    // trusts the webhook before and after the kubelet swaps the files.
    await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${NS}/secrets/${SECRET}` });
    const renewed = await bed.waitFor('cert-manager to issue the certificate again', () =>
      issuedSecret(issued.metadata.uid),
    );
    await bed.waitFor('the controller to publish the renewed CA beside the old one', async () => {
      expect(fingerprints(await publishedCaBundle()).sort()).toEqual(
        [...fingerprints(pem(renewed, 'ca.crt')), ...fingerprints(pem(issued, 'ca.crt'))].sort(),
      );
    });
    await gatedPod(tenant);
    mount(renewed);
    await bed.waitFor('the webhook to serve the renewed certificate', async () => {
      const served = await new Promise<string>((resolve, reject) => {
        // Only which certificate is served matters here, not whether it verifies.
        const socket = tls.connect(
          { host: '127.0.0.1', port: webhookPort, rejectUnauthorized: false },
          () => {
            resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
            socket.end();
          },
        );
        socket.once('error', reject);
      });
      expect(served).toBe(fingerprints(pem(renewed, 'tls.crt'))[0]);
    });
    await gatedPod(tenant);

    // Uninstalling pod placement (the ClusterPodPlacementConfig first, as the CSV's uninstall message asks)
    // removes the gating webhook and leaves no pod gated.
    await client.request({ method: 'DELETE', path: `${clusterConfigs}/cluster` });
    await bed.waitFor('every pod to be released', async () => {
      const live = await bed.get<{ items: Pod[] }>(`/api/v1/namespaces/${tenant}/pods`);
      expect(live.items.map((p) => p.metadata.name)).toContain(pod.metadata.name);
      expect(live.items.filter((p) => (p.spec.schedulingGates ?? []).length > 0)).toEqual([]);
    });
    await bed.waitFor('the gating webhook to be removed', async () => {
      expect(await bed.getStatus(gatingWebhookPath)).toBe(404);
    });
    // Every Service the apiserver dialled led to a process, and nothing either half needed was left out of the
    // CSV's permissions.
    expect(bed.leftovers()).toEqual({ unrouted: [], forbidden: [] });
  }, 600_000);
});
