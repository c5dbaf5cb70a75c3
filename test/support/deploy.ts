// Installing deploy/ on a local control plane as a cluster admin would (README "Install"), on a cluster prepared
// with what an OpenShift cluster (and a hosted cluster) already has that deploy/ refers to.
import path from 'node:path';
import { projectRoot } from '../../src/devcluster/binaries.js';
import { installNodePoolCrds } from '../../src/nodepool/api/install.js';
import { DEFAULT_OPERATOR_NAMESPACE } from '../../src/podplacement/constants.js';
import type { KubeClient } from '../../src/runtime/index.js';
import { eventually, waitForCrdsEstablished } from './cluster.js';
import { installOpenShiftDevCrds } from '../../src/updatestatus/api/dev-crds.js';

export const DEPLOY = path.join(projectRoot, 'deploy');

/** The OpenShift namespaces deploy/'s Roles live in. */
export const OPENSHIFT_NAMESPACES = [
  'openshift-config',
  'openshift-machine-config-operator',
  'openshift-monitoring',
  'openshift-cluster-node-tuning-operator',
] as const;

/**
 * A minimal, schema-less stand-in for one of the Prometheus operator's CRDs, as OpenShift has them: PrometheusRule
 * and ServiceMonitor so pod placement's rule and ServiceMonitor apply as shipped (deploy/ and the OLM bundle), Prometheus so `kubectl auth can-i`
 * resolves `prometheuses/api` (it checks an unknown resource type in the core group instead).
 */
export function prometheusOperatorCrd(kind: 'PrometheusRule' | 'Prometheus' | 'ServiceMonitor'): object {
  const plural = {
    PrometheusRule: 'prometheusrules',
    Prometheus: 'prometheuses',
    ServiceMonitor: 'servicemonitors',
  }[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.monitoring.coreos.com` },
    spec: {
      group: 'monitoring.coreos.com',
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

/** The OpenShift namespaces (and `extraNamespaces`), the CRDs the controllers read (dev stand-ins), monitoring. */
export async function prepareOpenShiftLikeCluster(
  client: KubeClient,
  extraNamespaces: readonly string[] = [],
): Promise<void> {
  for (const ns of [...OPENSHIFT_NAMESPACES, ...extraNamespaces])
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } });
  await installOpenShiftDevCrds(client);
  await installNodePoolCrds(client, 'management');
  await installNodePoolCrds(client, 'hosted');
  for (const kind of ['PrometheusRule', 'Prometheus', 'ServiceMonitor'] as const)
    await client.request({
      method: 'POST',
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      body: prometheusOperatorCrd(kind),
    });
}

/** The admin's commands: the CRDs, every component, and the hosted cluster's RBAC (the same cluster here). */
export async function applyDeploy(kubectl: (args: string[]) => Promise<string>): Promise<void> {
  await kubectl(['apply', '--server-side', '-f', path.join(DEPLOY, 'crds')]);
  await waitForCrdsEstablished(kubectl, ['crd']);
  await kubectl(['apply', '--server-side', '-k', DEPLOY]);
  await kubectl(['apply', '--server-side', '-k', path.join(DEPLOY, 'nodepool/hosted')]);
}

/** Where deploy/nodepool/hosted puts the Node Tuning status writer's identity in the hosted cluster. */
/** The namespaces deploy/ installs the controllers in. */
export const DEPLOY_NAMESPACES = {
  podPlacement: DEFAULT_OPERATOR_NAMESPACE,
  updateStatus: 'tessera-update-status',
  nodePool: 'tessera-nodepool',
} as const;
export const NTO_STATUS_WRITER_NAMESPACE = 'tessera-nto-status';

/**
 * The long-lived token of the status writer's ServiceAccount in the hosted cluster (deploy/nodepool/hosted's token
 * Secret, filled in by the token controller): what the management side's kubeconfig for that cluster is built from.
 */
export function hostedStatusWriterToken(client: KubeClient): Promise<string> {
  return eventually(
    async () => {
      const secret = await client.request<{ data?: { token?: string } }>({
        method: 'GET',
        path: `/api/v1/namespaces/${NTO_STATUS_WRITER_NAMESPACE}/secrets/nto-status-writer-token`,
      });
      const value = secret.data?.token;
      if (!value) throw new Error('token not issued yet');
      return Buffer.from(value, 'base64').toString('utf8');
    },
    { what: 'the nto-status-writer token Secret filled in' },
  );
}
