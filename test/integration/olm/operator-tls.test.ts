// The pod placement operator running as OLM installs it (--tls=olm), with only the permissions the CSV grants:
// OLM (v0.36, built from its module, test/support/olm.ts) installs the bundle's CSV, issues the webhook Deployment's
// certificate, and registers the CSV's validating and conversion webhooks on its own Service with its own CA. Both
// halves then run as `tessera` processes with their containers' arguments from the CSV, their ServiceAccounts'
// tokens and the certificate files OLM put in its Secret, as the kubelet would mount them. kwok runs no containers,
// so the cluster's kube-apiserver reaches OLM's Service through a ServiceRouter (its egress proxy,
// src/devcluster/service-router.ts) that sends the Service's ClusterIP:443 to the webhook process: every admission
// and conversion call below crosses the same TLS hop as in a cluster, verified by the apiserver against the
// caBundle OLM or the controller set.
import { X509Certificate } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../src/devcluster/processes.js';
import { MUTATING_WEBHOOK, SCHEDULING_GATE } from '../../../src/podplacement/constants.js';
import { BUNDLE_METADATA } from '../../../hack/bundle/metadata.js';
import {
  OLM_CA_KEY,
  WEBHOOK_DEPLOYMENT_NAME,
  olmCertSecretName,
  olmServiceName,
} from '../../../src/podplacement/operator/olm-ca.js';
import { bundleCsv, bundleManifests } from '../../support/bundle-manifests.js';
import { uniqueName } from '../../support/cluster.js';
import { csvDeployment } from '../../support/csv-process.js';
import { OPERATORS_NAMESPACE, startOlm } from '../../support/olm.js';
import { csvPermissionObjects, type CsvPermissions } from '../../support/olm-install.js';
import { useOlmTestbed } from '../../support/olm-testbed.js';

interface MutatingWebhookConfiguration {
  webhooks: {
    clientConfig: {
      caBundle?: string;
      service?: { name: string; namespace: string; port?: number; path?: string };
    };
  }[];
}

const NS = OPERATORS_NAMESPACE;
const manifests = bundleManifests();
const csv = bundleCsv(manifests);

const bed = useOlmTestbed({
  name: uniqueName('olm-tls'),
  namespace: NS,
  issuerName: 'OLM',
  startIssuer: startOlm,
});
const gatingWebhookPath = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING_WEBHOOK.configurationName}`;

describe('the operator as OLM runs it', () => {
  it('serves OLM’s webhooks with OLM’s certificate, and gates pods through OLM’s Service with OLM’s CA', async () => {
    const { client, cluster, router } = bed;
    for (const crd of manifests.filter((m) => m.kind === 'CustomResourceDefinition')) {
      await client.request({
        method: 'POST',
        path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        body: crd,
      });
    }
    for (const object of csvPermissionObjects(csv as unknown as CsvPermissions, NS))
      await client.request({ method: 'POST', path: object.path, body: object.body });
    await client.request({
      method: 'POST',
      path: `/apis/operators.coreos.com/v1alpha1/namespaces/${NS}/clusterserviceversions`,
      body: { ...csv, metadata: { ...csv.metadata, namespace: NS } },
    });
    await bed.waitFor('the CSV to succeed', async () => {
      const live = await bed.get<{ status?: { phase?: string; message?: string } }>(
        `/apis/operators.coreos.com/v1alpha1/namespaces/${NS}/clusterserviceversions/${csv.metadata.name}`,
      );
      if (live.status?.phase !== 'Succeeded')
        throw new Error(`phase ${live.status?.phase}: ${live.status?.message}`);
    });

    // The files the kubelet would mount into the webhook Deployment, from the Secret OLM made for it.
    const secret = await bed.get<{ data: Record<string, string> }>(
      `/api/v1/namespaces/${NS}/secrets/${olmCertSecretName(WEBHOOK_DEPLOYMENT_NAME)}`,
    );
    const certDir = path.join(cluster.stateDir, 'olm-serving-certs');
    mkdirSync(certDir, { recursive: true });
    for (const key of ['tls.crt', 'tls.key'])
      writeFileSync(path.join(certDir, key), Buffer.from(secret.data[key] ?? '', 'base64'));
    const olmCa = Buffer.from(secret.data[OLM_CA_KEY] ?? '', 'base64').toString('utf8');
    expect(olmCa).toContain('BEGIN CERTIFICATE');

    // Each half as `tessera` with its container's arguments from the CSV, as its Deployment's ServiceAccount (the
    // CSV's permissions only). Only where it listens and finds the mounted files differ from a pod: later flags
    // override the CSV's.
    const webhookPort = await freePort();
    await bed.startDeployment(csvDeployment(csv, WEBHOOK_DEPLOYMENT_NAME), [
      ...['--cert-dir', certDir, '--webhook-host', '127.0.0.1', '--webhook-port', String(webhookPort)],
    ]);
    // kube-apiserver dials OLM's Service at its ClusterIP: that address leads to the webhook half.
    const olmService = { namespace: NS, name: olmServiceName(WEBHOOK_DEPLOYMENT_NAME), port: 443 };
    const { spec } = await bed.get<{ spec: { clusterIP: string } }>(
      `/api/v1/namespaces/${NS}/services/${olmService.name}`,
    );
    router.route(`${spec.clusterIP}:${olmService.port}`, { host: '127.0.0.1', port: webhookPort });
    await bed.startDeployment(csvDeployment(csv, 'pod-placement-controller'), []);

    // OLM's validating webhook answers: a PodPlacementConfig before the ClusterPodPlacementConfig is refused with
    // the operator's own message (an unreachable webhook would fail with "failed calling webhook" instead).
    const tenant = uniqueName('tenant');
    await client.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { metadata: { name: tenant } },
    });
    const podConfig = BUNDLE_METADATA.examples[1] as { metadata: Record<string, unknown> };
    const refused = await client
      .request({
        method: 'POST',
        path: `/apis/multiarch.openshift.io/v1beta1/namespaces/${tenant}/podplacementconfigs`,
        body: { ...podConfig, metadata: { ...podConfig.metadata, namespace: tenant } },
      })
      .then(
        () => 'created',
        (err: Error) => err.message,
      );
    expect(refused).toMatch(/denied the request: ClusterPodPlacementConfig does not exist/);
    const clusterConfigs = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';
    await client.request({ method: 'POST', path: clusterConfigs, body: BUNDLE_METADATA.examples[0] });

    // The controller registers the gating webhook on OLM's Service with the CA OLM issued the certificate with.
    const registered = await bed.waitFor('the controller to register the gating webhook', async () => {
      const cfg = await bed.get<MutatingWebhookConfiguration>(gatingWebhookPath);
      const hook = cfg.webhooks[0];
      if (!hook?.clientConfig.caBundle) throw new Error('no caBundle yet');
      return hook.clientConfig;
    });
    expect(registered.service).toMatchObject({ name: olmService.name, namespace: NS, port: 443 });
    const published = new X509Certificate(Buffer.from(registered.caBundle ?? '', 'base64'));
    expect(published.fingerprint256).toBe(new X509Certificate(olmCa).fingerprint256);

    // A tenant's pod is gated by the apiserver calling that webhook.
    const pod = await bed.waitFor('a new pod to be gated', async () => {
      const created = await client.request<{
        metadata: { name: string };
        spec: { schedulingGates?: { name: string }[] };
      }>({
        method: 'POST',
        path: `/api/v1/namespaces/${tenant}/pods`,
        body: {
          metadata: { generateName: 'app-' },
          spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }] },
        },
      });
      expect(created.spec.schedulingGates ?? []).toContainEqual({ name: SCHEDULING_GATE });
      return created;
    });

    // OLM's conversion webhook answers too: the config read as v1alpha1.
    const v1alpha1 = await bed.get<{ apiVersion: string; spec: { namespaceSelector?: unknown } }>(
      '/apis/multiarch.openshift.io/v1alpha1/clusterpodplacementconfigs/cluster',
    );
    expect(v1alpha1.apiVersion).toBe('multiarch.openshift.io/v1alpha1');
    expect(v1alpha1.spec.namespaceSelector).toEqual(
      (BUNDLE_METADATA.examples[0] as { spec: { namespaceSelector: unknown } }).spec.namespaceSelector,
    );

    // Turning pod placement off removes the gating webhook and leaves no pod gated (this one's image cannot be
    // inspected, so it may already have been released with an inspection error; either way it must not stay gated).
    await client.request({ method: 'DELETE', path: `${clusterConfigs}/cluster` });
    await bed.waitFor('the pod to be released', async () => {
      const live = await bed.get<{ spec: { schedulingGates?: { name: string }[] } }>(
        `/api/v1/namespaces/${tenant}/pods/${pod.metadata.name}`,
      );
      expect(live.spec.schedulingGates ?? []).toEqual([]);
    });

    await bed.waitFor('the gating webhook to be removed', async () => {
      expect(await bed.getStatus(gatingWebhookPath)).toBe(404);
    });
    // Every Service the apiserver dialled led to a process, and nothing either half needed was left out of the
    // CSV's permissions.
    expect(bed.leftovers()).toEqual({ unrouted: [], forbidden: [] });
  }, 600_000);
});
