// Cluster-wide trust for the demo registry, the way an OpenShift cluster trusts a private registry.
import {
  ConfigMaps,
  isAlreadyExists,
  type KubeClient,
  type KubeObject,
  ResourceClient,
} from '../runtime/index.js';
import {
  ADDITIONAL_TRUSTED_CA_NAMESPACE,
  IMAGE_CONFIG_NAME,
  ImageConfigs,
} from '../podplacement/registry-policy.js';
import { installOpenShiftDevCrds } from '../updatestatus/api/dev-crds.js';

/** Name of the demo's additionalTrustedCA ConfigMap in openshift-config. */
export const DEMO_REGISTRY_CA_CONFIGMAP = 'tessera-demo-registry-ca';

/**
 * Trusts the demo registry the way an OpenShift cluster trusts a private registry: image.config.openshift.io/cluster
 * spec.additionalTrustedCA names a ConfigMap in openshift-config whose key is the registry host (`host..port`). The
 * operator follows it while it runs and `podplacement explain` reads it on each run, so both trust the same registries. A plain
 * Kubernetes API server gets a stand-in CRD for the image config.
 */
export async function trustRegistryClusterWide(
  client: KubeClient,
  host: string,
  caPem: string,
): Promise<void> {
  await installOpenShiftDevCrds(client, { types: [ImageConfigs] });
  const fieldManager = 'tessera-demo';
  try {
    await client.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { metadata: { name: ADDITIONAL_TRUSTED_CA_NAMESPACE } },
    });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  await new ResourceClient<KubeObject>(client, ConfigMaps).apply(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: DEMO_REGISTRY_CA_CONFIGMAP, namespace: ADDITIONAL_TRUSTED_CA_NAMESPACE },
      data: { [host.replace(':', '..')]: caPem },
    } as KubeObject,
    { fieldManager, force: true },
  );
  await new ResourceClient<KubeObject>(client, ImageConfigs).apply(
    {
      apiVersion: 'config.openshift.io/v1',
      kind: 'Image',
      metadata: { name: IMAGE_CONFIG_NAME },
      spec: { additionalTrustedCA: { name: DEMO_REGISTRY_CA_CONFIGMAP } },
    } as KubeObject,
    { fieldManager, force: true },
  );
}
