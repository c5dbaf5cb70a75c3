// Proves the local control plane is a real one: the apiserver enforces CEL rules and RBAC, the scheduler binds
// pods by node labels, kwok runs them, and kube-controller-manager's namespace and garbage collectors work.
import {
  ApiextensionsV1Api,
  AuthenticationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, testKubeConfig, uniqueName, useTestNamespace } from '../support/cluster.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);

function pausePod(name: string, nodeSelector: Record<string, string>): V1Pod {
  return {
    metadata: { name },
    spec: { nodeSelector, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
  };
}

describe('local control plane', () => {
  const ns = useTestNamespace('smoke');

  it('rejects an object that breaks a CRD CEL rule, and accepts a valid one', async () => {
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    const group = `${uniqueName('smoke')}.tessera.dev`;
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `widgets.${group}` },
        spec: {
          group,
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          scope: 'Namespaced',
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: {
                      type: 'object',
                      properties: { min: { type: 'integer' }, max: { type: 'integer' } },
                      x_kubernetes_validations: [
                        { rule: 'self.min <= self.max', message: 'min must not exceed max' },
                      ],
                    },
                  },
                },
              },
            },
          ],
        },
      },
    });
    afterAll(() => ext.deleteCustomResourceDefinition({ name: `widgets.${group}` }));
    await eventually(
      async () => {
        const crd = await ext.readCustomResourceDefinition({ name: `widgets.${group}` });
        if (!crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'))
          throw new Error('not established');
      },
      { what: 'CRD established' },
    );
    const custom = kc.makeApiClient(CustomObjectsApi);
    const create = (name: string, spec: object): Promise<unknown> =>
      custom.createNamespacedCustomObject({
        group,
        version: 'v1',
        namespace: ns.name,
        plural: 'widgets',
        body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec },
      });
    // A freshly established CRD can take a moment to be served; retry the valid create until it is.
    await eventually(() => create('good', { min: 1, max: 2 }), { what: 'valid widget created' });
    await expect(create('bad', { min: 3, max: 2 })).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining('min must not exceed max'),
    });
  });

  it('schedules a pod onto a node of the requested architecture, and kwok runs it', async () => {
    for (const arch of ['arm64', 's390x']) {
      const name = `pause-${arch}`;
      await core.createNamespacedPod({
        namespace: ns.name,
        body: pausePod(name, { 'kubernetes.io/arch': arch }),
      });
      const pod = await eventually(
        async () => {
          const p = await core.readNamespacedPod({ name, namespace: ns.name });
          if (p.status?.phase !== 'Running') throw new Error(`phase ${p.status?.phase}`);
          return p;
        },
        { what: `pod ${name} Running` },
      );
      const node = await core.readNode({ name: pod.spec?.nodeName ?? '' });
      expect(node.metadata?.labels?.['kubernetes.io/arch']).toBe(arch);
    }
  });

  it('leaves a pod Pending when no node has the requested architecture', async () => {
    await core.createNamespacedPod({
      namespace: ns.name,
      body: pausePod('nowhere', { 'kubernetes.io/arch': 'riscv64' }),
    });
    const pod = await eventually(
      async () => {
        const p = await core.readNamespacedPod({ name: 'nowhere', namespace: ns.name });
        const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
        if (scheduled?.status !== 'False') throw new Error('scheduler has not reported yet');
        return p;
      },
      { what: 'PodScheduled=False' },
    );
    expect(pod.spec?.nodeName).toBeUndefined();
    expect(pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.reason).toBe('Unschedulable');
  });

  it('denies a service account that RBAC grants nothing', async () => {
    await core.createNamespacedServiceAccount({ namespace: ns.name, body: { metadata: { name: 'nobody' } } });
    const token = await core.createNamespacedServiceAccountToken({
      name: 'nobody',
      namespace: ns.name,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const asNobody = new KubeConfig();
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('test kubeconfig has no cluster');
    asNobody.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'nobody', token: token.status?.token ?? '' }],
      contexts: [{ name: 'nobody', cluster: cluster.name, user: 'nobody' }],
      currentContext: 'nobody',
    });
    // The token authenticates (the identity is known) ...
    const review = await asNobody.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${ns.name}:nobody`);
    // ... but authorization refuses it.
    await expect(
      asNobody.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: ns.name }),
    ).rejects.toMatchObject({ code: 403 });
  });

  it('garbage-collects dependents when their owner is deleted', async () => {
    const owner = await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: 'owner' } },
    });
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '' },
          ],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: ns.name });
    await eventually(
      async () => {
        const list = await core.listNamespacedConfigMap({ namespace: ns.name });
        if (list.items.some((cm) => cm.metadata?.name === 'dependent'))
          throw new Error('dependent still present');
      },
      { what: 'dependent garbage-collected' },
    );
  });
});

describe('namespace deletion', () => {
  it('deletes the namespace’s pods, then the namespace', async () => {
    const name = uniqueName('smoke-gc');
    await core.createNamespace({ body: { metadata: { name } } });
    await eventually(() => core.readNamespacedServiceAccount({ name: 'default', namespace: name }), {
      what: 'default service account',
    });
    await core.createNamespacedPod({
      namespace: name,
      body: pausePod('doomed', { 'kubernetes.io/arch': 'amd64' }),
    });
    await eventually(
      async () => {
        const p = await core.readNamespacedPod({ name: 'doomed', namespace: name });
        if (p.status?.phase !== 'Running') throw new Error(`phase ${p.status?.phase}`);
      },
      { what: 'pod Running' },
    );
    await core.deleteNamespace({ name });
    await eventually(
      async () => {
        const namespaces = await core.listNamespace();
        if (namespaces.items.some((n) => n.metadata?.name === name))
          throw new Error('namespace still present');
      },
      { timeoutMs: 60_000, what: `namespace ${name} gone` },
    );
    const pods = await core.listPodForAllNamespaces({ fieldSelector: `metadata.namespace=${name}` });
    expect(pods.items).toHaveLength(0);
  });
});
