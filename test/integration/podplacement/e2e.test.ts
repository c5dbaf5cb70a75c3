// End to end on the local cluster: the operator runs as a separate process, the real kube-apiserver calls its
// webhook, kube-controller-manager creates workload pods, kube-scheduler places them on kwok nodes of four
// architectures, and images come from local registries. One file owns the ClusterPodPlacementConfig singleton;
// its namespaceSelector only selects this file's namespaces, so other test files are never gated.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startLocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage } from '../../../src/devcluster/registry-images.js';
import { KubeClient, isNotFound } from '../../../src/runtime/index.js';
import {
  ANNOTATIONS,
  ARCH_LABEL,
  EVENT_REASONS,
  LABELS,
  MUTATING_WEBHOOK,
  SCHEDULING_GATE,
} from '../../../src/podplacement/constants.js';
import { RELEASED_UNINSPECTED_MESSAGE } from '../../../src/podplacement/inspection-breaker.js';
import { validatingWebhookConfiguration } from '../../../src/podplacement/webhook-configurations.js';
import { eventually, testKubeConfig, uniqueName, useTestNamespace } from '../../support/cluster.js';
import { fixturePath } from '../../support/fixtures.js';
import {
  IMAGE_ARCHS,
  REGISTRY_POLICY_DEV_CRDS,
  freePort,
  installDevCrds,
  listPods,
  pullSecret,
  startOperatorProcess,
  startTestRegistries,
  type OperatorProcess,
  type OperatorProcessOptions,
  type TestPod,
  type TestRegistries,
} from './support.js';

/** --webhook-max-request-bytes of the operator under test. */
const WEBHOOK_MAX_REQUEST_BYTES = 256 * 1024;

const TEST_LABEL = 'tessera.dev/test';
const SELECTED = 'pp-e2e';
const opNs = useTestNamespace(SELECTED);
const ns = useTestNamespace(SELECTED);
const ns2 = useTestNamespace(SELECTED);
const fixtures = fixturePath('multiarch/pods');

let client: KubeClient;
let registries: TestRegistries;
let operator: OperatorProcess | undefined;
let webhookPort = 0;
const nodeArch = new Map<string, string>();
const extraNamespaces: string[] = [];

/** The operator under test, the same at its first start and after the SIGKILL restart. */
function operatorOptions(): OperatorProcessOptions {
  return {
    webhookPort,
    namespace: opNs.name,
    globalPullSecretNamespace: opNs.name,
    registryCaFiles: [registries.pub.caFile, registries.priv.caFile, registries.mirror.caFile],
    // An admin's budget, far above any test pod's review: the webhook must refuse what exceeds it.
    extraArgs: ['--webhook-max-request-bytes', String(WEBHOOK_MAX_REQUEST_BYTES)],
  };
}

async function req<T>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  p: string,
  body?: unknown,
  contentType?: string,
): Promise<T> {
  return client.request<T>({ method, path: p, body, contentType });
}

async function createNamespace(name: string, labels: Record<string, string>): Promise<void> {
  await req('POST', '/api/v1/namespaces', { metadata: { name, labels } });
  extraNamespaces.push(name);
  await eventually(() => req('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`), {
    what: `default SA in ${name}`,
  });
}

async function createPod(
  namespace: string,
  name: string,
  images: string[],
  spec: Record<string, unknown> = {},
  labels: Record<string, string> = {},
): Promise<TestPod> {
  // The create's answer is the pod as admitted: what the webhook did, before the controller can ungate it.
  return req<TestPod>('POST', `/api/v1/namespaces/${namespace}/pods`, {
    metadata: { name, labels: { app: 'pp-e2e', ...labels } },
    spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })), ...spec },
  });
}

async function getPod(namespace: string, name: string): Promise<TestPod> {
  return req<TestPod>('GET', `/api/v1/namespaces/${namespace}/pods/${name}`);
}

/** Waits until the pod is ungated and scheduled; returns it. */
async function scheduled(namespace: string, name: string, timeoutMs = 60_000): Promise<TestPod> {
  return eventually(
    async () => {
      const pod = await getPod(namespace, name);
      if ((pod.spec.schedulingGates ?? []).length > 0) throw new Error(`${name} still gated`);
      if (!pod.spec.nodeName) throw new Error(`${name} not scheduled`);
      return pod;
    },
    { timeoutMs, what: `pod ${namespace}/${name} scheduled` },
  );
}

function archOf(pod: TestPod): string {
  return nodeArch.get(pod.spec.nodeName ?? '') ?? '(unscheduled)';
}

function requiredArchValues(pod: TestPod): string[][] {
  return (
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  ).map((t) => (t.matchExpressions ?? []).filter((e) => e.key === ARCH_LABEL).flatMap((e) => e.values ?? []));
}

async function podEvents(
  namespace: string,
  name: string,
): Promise<{ reason: string; type: string; message: string }[]> {
  const list = await req<{
    items: { reason: string; type: string; message: string; involvedObject: { name: string } }[];
  }>('GET', `/api/v1/namespaces/${namespace}/events?fieldSelector=involvedObject.name%3D${name}`);
  return list.items;
}

const cppcPath = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';

beforeAll(async () => {
  client = new KubeClient(testKubeConfig());
  registries = await startTestRegistries();
  const nodes = await req<{ items: { metadata: { name: string; labels?: Record<string, string> } }[] }>(
    'GET',
    '/api/v1/nodes',
  );
  for (const n of nodes.items) nodeArch.set(n.metadata.name, n.metadata.labels?.[ARCH_LABEL] ?? '');
  // The global pull secret (in the operator's namespace for isolation) can read the private registry.
  await req(
    'POST',
    `/api/v1/namespaces/${opNs.name}/secrets`,
    pullSecret('pull-secret', opNs.name, registries.priv.dockerConfigJson()),
  );
  // The registry policy kinds must be served before the operator starts: it checks discovery once.
  await installDevCrds(client, REGISTRY_POLICY_DEV_CRDS);
  webhookPort = await freePort();
  operator = startOperatorProcess(operatorOptions());
  await eventually(() => req('GET', cppcPath), { timeoutMs: 60_000, what: 'operator installed the CRDs' });
  // The operator points the CRD's conversion webhook at itself; the API server swaps the resource's storage after
  // such a change (requests in that moment get 503), so wait for it before the first write.
  await eventually(
    async () => {
      const crd = await req<{ spec: { conversion?: { webhook?: { clientConfig?: { url?: string } } } } }>(
        'GET',
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusterpodplacementconfigs.multiarch.openshift.io',
      );
      if (!crd.spec.conversion?.webhook?.clientConfig?.url?.startsWith(`https://127.0.0.1:${webhookPort}/`))
        throw new Error('conversion webhook not pointing at the operator yet');
      await req('GET', cppcPath);
    },
    { timeoutMs: 60_000, what: `the CRD conversion webhook configured (operator log: ${operator.logFile})` },
  );
  await req('POST', cppcPath, {
    apiVersion: 'multiarch.openshift.io/v1beta1',
    kind: 'ClusterPodPlacementConfig',
    metadata: { name: 'cluster' },
    spec: {
      namespaceSelector: {
        matchLabels: { [TEST_LABEL]: SELECTED },
        matchExpressions: [{ key: 'multiarch.openshift.io/exclude-pod-placement', operator: 'DoesNotExist' }],
      },
      plugins: { nodeAffinityScoring: { enabled: true, platforms: [{ architecture: 'arm64', weight: 50 }] } },
    },
  });
  await eventually(
    async () => {
      const c = await req<{ status?: { conditions?: { type: string; status: string }[] } }>(
        'GET',
        `${cppcPath}/cluster`,
      );
      if (!c.status?.conditions?.some((x) => x.type === 'Available' && x.status === 'True'))
        throw new Error('not Available');
      await req(
        'GET',
        '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
      );
    },
    { timeoutMs: 60_000, what: `ClusterPodPlacementConfig Available (operator log: ${operator.logFile})` },
  );
}, 180_000);

afterAll(async () => {
  await req('DELETE', `${cppcPath}/cluster`).catch(() => undefined);
  await operator?.stop();
  // If the operator was not there to release it, drop the finalizers so the cluster is left clean.
  await req(
    'PATCH',
    `${cppcPath}/cluster`,
    { metadata: { finalizers: null } },
    'application/merge-patch+json',
  ).catch(() => undefined);
  await req(
    'DELETE',
    '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
  ).catch(() => undefined);
  for (const n of extraNamespaces) await req('DELETE', `/api/v1/namespaces/${n}`).catch(() => undefined);
  await registries?.stop();
  await client?.close();
}, 120_000);

describe('the multiarch-tuning-operator test pods (test/fixtures/multiarch/pods)', () => {
  it('end up on nodes whose architecture their images support, with the labels and events', async () => {
    const dir = fixtures;
    const rewrite = (image: string): string =>
      image
        .replace('quay.io/openshifttest/hello-openshift:1.2.0', registries.images.M4)
        .replace('quay.io/openshifttest/hello-openshift:multiarch', registries.images.M)
        .replace('registry.redhat.io/rhel8/httpd-24:latest', registries.images.PRIV);
    const excluded = uniqueName('pp-e2e-excluded');
    await createNamespace(excluded, {
      [TEST_LABEL]: SELECTED,
      'multiarch.openshift.io/exclude-pod-placement': '',
    });
    const created: { file: string; namespace: string; name: string; images: string[]; pod: TestPod }[] = [];
    for (const file of readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .sort()) {
      for (const doc of parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'))) {
        const obj = doc.toJS() as TestPod & {
          kind: string;
          metadata: { generateName?: string; namespace?: string };
        };
        if (obj.kind !== 'Pod') continue;
        const namespace = obj.metadata.namespace ? excluded : ns.name;
        const name = uniqueName((obj.metadata.generateName ?? 'pod').replace(/-$/, '')).slice(0, 60);
        obj.metadata = { ...obj.metadata, name, namespace };
        delete obj.metadata.generateName;
        obj.spec.containers = obj.spec.containers.map((c) => ({ ...c, image: rewrite(c.image) }));
        const pod = await req<TestPod>('POST', `/api/v1/namespaces/${namespace}/pods`, obj);
        created.push({ file, namespace, name, images: obj.spec.containers.map((c) => c.image), pod });
      }
    }
    expect(created.length).toBe(9);
    const archsOf = (image: string): readonly string[] =>
      image === registries.images.M4
        ? IMAGE_ARCHS.M4
        : image === registries.images.M
          ? IMAGE_ARCHS.M
          : IMAGE_ARCHS.PRIV;
    for (const c of created) {
      const pod = await scheduled(c.namespace, c.name);
      if (c.namespace === excluded) {
        // Opted out: never reached the webhook, so no tracking labels and no affinity (it may land anywhere).
        expect(pod.metadata.labels?.[LABELS.schedulingGate], c.file).toBeUndefined();
        expect(pod.spec.affinity?.nodeAffinity, c.file).toBeUndefined();
        continue;
      }
      const supported = c.images.map(archsOf).reduce((acc, a) => acc.filter((x) => a.includes(x)));
      expect(supported, c.file).toContain(archOf(pod));
      expect(pod.metadata.labels?.[LABELS.schedulingGate], c.file).toBe('removed');
      expect(pod.metadata.labels?.[LABELS.preferredNodeAffinity], c.file).toBe('set');
    }
    const byFile = (prefix: string) => {
      const c = created.find((x) => x.file.startsWith(prefix));
      if (!c) throw new Error(`fixture ${prefix} missing`);
      return c;
    };
    // 04/05: the user pinned arm64; the operator left the required terms alone.
    for (const f of ['04', '05']) {
      const pod = await getPod(byFile(f).namespace, byFile(f).name);
      expect(archOf(pod), f).toBe('arm64');
      expect(pod.metadata.labels?.[LABELS.nodeAffinity], f).toBe('not-set');
      expect(requiredArchValues(pod), f).toEqual([['arm64']]);
    }
    // 09: the free term got the images' architectures, the pinned one was kept.
    const p09 = await getPod(byFile('09').namespace, byFile('09').name);
    expect(requiredArchValues(p09)).toEqual([['arm64'], [...IMAGE_ARCHS.M4]]);
    // 06: private image, readable only with the global pull secret.
    const p06 = await getPod(byFile('06').namespace, byFile('06').name);
    expect(requiredArchValues(p06)).toEqual([[...IMAGE_ARCHS.PRIV]]);
    expect(p06.metadata.labels?.[LABELS.multiArch]).toBe('');
    // 08: nodeSelector amd64 is respected.
    expect(archOf(await getPod(byFile('08').namespace, byFile('08').name))).toBe('amd64');
    const events = await eventually(async () => {
      const e = await podEvents(byFile('01').namespace, byFile('01').name);
      if (!e.some((x) => x.reason === EVENT_REASONS.schedGateRemovalSuccess))
        throw new Error('no removal event yet');
      return e;
    });
    expect(events.map((e) => e.reason)).toEqual(
      expect.arrayContaining([EVENT_REASONS.schedGateAdded, EVENT_REASONS.predicateSet]),
    );
  });
});

describe('workloads', () => {
  it('Deployment, Job and StatefulSet pods are placed; DaemonSet pods are not gated', async () => {
    const labels = (app: string) => ({ matchLabels: { app } });
    const template = (app: string, image: string) => ({
      metadata: { labels: { app } },
      spec: { containers: [{ name: 'c', image }] },
    });
    await req('POST', `/apis/apps/v1/namespaces/${ns.name}/deployments`, {
      metadata: { name: 'amd' },
      spec: { replicas: 3, selector: labels('amd'), template: template('amd', registries.images.A) },
    });
    await req('POST', `/apis/batch/v1/namespaces/${ns.name}/jobs`, {
      metadata: { name: 'arm' },
      spec: {
        completions: 2,
        parallelism: 2,
        template: {
          ...template('arm', registries.images.R),
          spec: { ...template('arm', registries.images.R).spec, restartPolicy: 'Never' },
        },
      },
    });
    await req('POST', `/apis/apps/v1/namespaces/${ns.name}/statefulsets`, {
      metadata: { name: 'ppc' },
      spec: {
        replicas: 2,
        serviceName: 'ppc',
        selector: labels('ppc'),
        template: template('ppc', registries.images.P),
      },
    });
    await req('POST', `/apis/apps/v1/namespaces/${ns.name}/daemonsets`, {
      metadata: { name: 'ds' },
      spec: { selector: labels('ds'), template: template('ds', registries.images.A) },
    });
    const expectations: [string, number, string][] = [
      ['amd', 3, 'amd64'],
      ['arm', 2, 'arm64'],
      ['ppc', 2, 'ppc64le'],
    ];
    for (const [app, count, arch] of expectations) {
      const pods = await eventually(
        async () => {
          const list = (await listPods(client, ns.name, `app=${app}`)).filter((p) => p.spec.nodeName);
          if (list.length < count) throw new Error(`${list.length}/${count} ${app} pods scheduled`);
          return list;
        },
        { timeoutMs: 90_000, what: `${app} pods scheduled` },
      );
      for (const p of pods) {
        expect(archOf(p), `${app} ${p.metadata.name}`).toBe(arch);
        expect(p.metadata.labels?.[LABELS.schedulingGate]).toBe('removed');
      }
    }
    const dsPods = await eventually(async () => {
      const list = await listPods(client, ns.name, 'app=ds');
      if (list.length === 0) throw new Error('no DaemonSet pods yet');
      return list;
    });
    for (const p of dsPods) {
      expect(p.metadata.labels?.[LABELS.schedulingGate]).toBe('not-set');
      expect(p.spec.schedulingGates ?? []).toEqual([]);
    }
  });
});

describe('pull secrets', () => {
  it('pod secret, glob key, credentials kept per namespace, missing credentials', async () => {
    // Another private repository the global secret cannot read: a second user on the same registry? The
    // registry has one htpasswd user, so isolate by removing the global secret's effect with a pod in ns2
    // after deleting the global secret is covered below; here the pod secret alone opens the image.
    const host = registries.priv.host;
    const [ip, port] = host.split(':');
    const glob = `${(ip ?? '').split('.').slice(0, 3).join('.')}.*:${port ?? ''}`;
    const auth = Buffer.from(`${registries.priv.username}:${registries.priv.password}`).toString('base64');
    await req(
      'POST',
      `/api/v1/namespaces/${ns.name}/secrets`,
      pullSecret('exact', ns.name, registries.priv.dockerConfigJson()),
    );
    await req(
      'POST',
      `/api/v1/namespaces/${ns.name}/secrets`,
      pullSecret('glob', ns.name, JSON.stringify({ auths: { [glob]: { auth } } })),
    );
    // Make the global secret useless for this test: point it at nothing.
    await req(
      'PUT',
      `/api/v1/namespaces/${opNs.name}/secrets/pull-secret`,
      pullSecret('pull-secret', opNs.name, JSON.stringify({ auths: {} })),
    );
    // The operator sees the change through its watch, which also purges its cache: wait until a pod without a
    // secret of its own is no longer placed with the global credentials.
    await eventually(
      async () => {
        const name = uniqueName('global-emptied');
        await createPod(ns2.name, name, [registries.images.PRIV]);
        const pod = await scheduled(ns2.name, name);
        if (pod.metadata.labels?.[LABELS.nodeAffinity] !== 'not-set')
          throw new Error('the global pull secret still grants access');
      },
      { timeoutMs: 60_000, what: 'the emptied global pull secret seen by the operator' },
    );
    await createPod(ns.name, 'with-exact', [registries.images.PRIV], {
      imagePullSecrets: [{ name: 'exact' }],
    });
    await createPod(ns.name, 'with-glob', [registries.images.PRIV], { imagePullSecrets: [{ name: 'glob' }] });
    await createPod(ns2.name, 'other-ns', [registries.images.PRIV], {
      imagePullSecrets: [{ name: 'exact' }],
    });
    await createPod(ns2.name, 'no-secret', [registries.images.PRIV]);
    for (const name of ['with-exact', 'with-glob']) {
      const pod = await scheduled(ns.name, name);
      expect(requiredArchValues(pod), name).toEqual([[...IMAGE_ARCHS.PRIV]]);
      expect(IMAGE_ARCHS.PRIV).toContain(archOf(pod));
    }
    // ns2 has no secret named "exact": the credentials of ns never help it.
    for (const name of ['other-ns', 'no-secret']) {
      const pod = await scheduled(ns2.name, name);
      expect(requiredArchValues(pod), name).toEqual([]);
      expect(pod.metadata.labels?.[LABELS.nodeAffinity], name).toBe('not-set');
      // Refused credentials are a permanent failure: released after the first attempt, not after 5.
      expect(pod.metadata.labels?.[LABELS.imageInspectErrorCount], name).toBe('1');
      expect(pod.metadata.annotations?.[LABELS.imageInspectError], name).toMatch(
        /^permanent error, not retried/,
      );
      expect(pod.metadata.labels?.[LABELS.preferredNodeAffinity], name).toBe('set');
      // Events are written asynchronously (the recorder batches them): wait for it rather than race the pod.
      await eventually(
        async () => {
          const events = await podEvents(ns2.name, name);
          expect(
            events.filter((e) => e.type === 'Warning').map((e) => e.reason),
            name,
          ).toContain(EVENT_REASONS.inspectionError);
        },
        { timeoutMs: 15_000, what: `the ${EVENT_REASONS.inspectionError} event of ${name}` },
      );
    }
  });

  it('global pull secret: grants access, and its removal purges the cache (case 24)', async () => {
    await req(
      'PUT',
      `/api/v1/namespaces/${opNs.name}/secrets/pull-secret`,
      pullSecret('pull-secret', opNs.name, registries.priv.dockerConfigJson()),
    );
    await eventually(
      async () => {
        const name = uniqueName('global');
        await createPod(ns2.name, name, [registries.images.PRIV]);
        const pod = await scheduled(ns2.name, name);
        if (requiredArchValues(pod).length === 0) throw new Error('global secret not used yet');
        expect(requiredArchValues(pod)).toEqual([[...IMAGE_ARCHS.PRIV]]);
      },
      { timeoutMs: 60_000, what: 'a pod placed with the global pull secret' },
    );
    // Both: the pod's own secret (for another registry) and the global one are merged, as the kubelet does.
    await req(
      'POST',
      `/api/v1/namespaces/${ns2.name}/secrets`,
      pullSecret(
        'pub-only',
        ns2.name,
        JSON.stringify({ auths: { [registries.pub.host]: { auth: Buffer.from('x:y').toString('base64') } } }),
      ),
    );
    await createPod(ns2.name, 'both-secrets', [registries.images.PRIV], {
      imagePullSecrets: [{ name: 'pub-only' }],
    });
    expect(requiredArchValues(await scheduled(ns2.name, 'both-secrets'))).toEqual([[...IMAGE_ARCHS.PRIV]]);
    await req(
      'PUT',
      `/api/v1/namespaces/${opNs.name}/secrets/pull-secret`,
      pullSecret('pull-secret', opNs.name, JSON.stringify({ auths: {} })),
    );
    await eventually(
      async () => {
        const name = uniqueName('after-removal');
        await createPod(ns2.name, name, [registries.images.PRIV]);
        const pod = await scheduled(ns2.name, name);
        expect(pod.metadata.labels?.[LABELS.nodeAffinity]).toBe('not-set');
      },
      { timeoutMs: 60_000, what: 'a pod no longer placed once the global secret lost its credentials' },
    );
  });
});

describe('image cache', () => {
  it('serves a cached answer until imagePullPolicy Always asks again (case 20)', async () => {
    await createPod(ns.name, 'cache-1', [registries.images.CACHE]);
    expect(requiredArchValues(await scheduled(ns.name, 'cache-1'))).toEqual([['amd64', 'arm64']]);
    await registries.pub.pushImage(
      'cache-test',
      '1',
      multiPlatformImage({
        platforms: [{ architecture: 'arm64' }, { architecture: 'amd64' }, { architecture: 'ppc64le' }],
      }),
    );
    await createPod(ns.name, 'cache-2', [registries.images.CACHE]);
    expect(requiredArchValues(await scheduled(ns.name, 'cache-2'))).toEqual([['amd64', 'arm64']]);
    await req('POST', `/api/v1/namespaces/${ns.name}/pods`, {
      metadata: { name: 'cache-always' },
      spec: { containers: [{ name: 'c', image: registries.images.CACHE, imagePullPolicy: 'Always' }] },
    });
    expect(requiredArchValues(await scheduled(ns.name, 'cache-always'))).toEqual([
      ['amd64', 'arm64', 'ppc64le'],
    ]);
  });
});

describe('namespaces', () => {
  it('leaves the operator namespace and kube-* alone (the API server never asks), and gates an openshift-* namespace the selector opts in', async () => {
    const kube = uniqueName('kube-pp');
    // This file's cluster config selects by a label it requires (matchLabels), so an openshift-* namespace that
    // carries it is opted in. Under a selector that requires no label they are never asked about (off-switch.test.ts).
    const openshift = uniqueName('openshift-pp');
    await createNamespace(kube, { [TEST_LABEL]: SELECTED });
    await createNamespace(openshift, { [TEST_LABEL]: SELECTED });
    await createPod(opNs.name, 'own', [registries.images.M]);
    await createPod(kube, 'kube', [registries.images.M]);
    const openshiftPod = await createPod(openshift, 'openshift', [registries.images.M]);
    expect(openshiftPod.spec.schedulingGates?.map((g) => g.name)).toEqual([SCHEDULING_GATE]);
    // A selected tenant namespace in the same moment: labelled by the webhook, so it is live.
    const tenant = await createPod(ns.name, 'tenant-next-to-system', [registries.images.M]);
    expect(tenant.metadata.labels?.[LABELS.schedulingGate]).toBe('gated');
    expect(tenant.spec.schedulingGates?.map((g) => g.name)).toEqual([SCHEDULING_GATE]);
    for (const [n, name] of [
      [opNs.name, 'own'],
      [kube, 'kube'],
    ] as const) {
      const pod = await getPod(n, name);
      expect(pod.spec.schedulingGates ?? [], name).toEqual([]);
      // Not even the tracking labels: the webhook configuration's matchConditions keep these requests away.
      expect(pod.metadata.labels?.[LABELS.schedulingGate], name).toBeUndefined();
      expect(pod.spec.affinity?.nodeAffinity, name).toBeUndefined();
    }
    // The opted-in one is placed like a tenant's.
    const placed = await scheduled(openshift, 'openshift');
    expect(requiredArchValues(placed)).toEqual([[...IMAGE_ARCHS.M]]);
  });
});

describe('PodPlacementConfig', () => {
  it('priority is unique per namespace, preferences follow priority, and the cluster config cannot go first', async () => {
    const vwcPath = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
    const tls = await req<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${opNs.name}/secrets/pod-placement-webhook-tls`,
    );
    const caBundlePem = Buffer.from(tls.data['ca.crt'] ?? '', 'base64').toString('utf8');
    // The test registers the validating webhook itself, scoped to this file's namespaces for PodPlacementConfigs.
    await req(
      'POST',
      vwcPath,
      validatingWebhookConfiguration(
        { kind: 'url', baseUrl: `https://127.0.0.1:${webhookPort}` },
        { caBundlePem },
        {
          podConfigNamespaceSelector: { matchLabels: { [TEST_LABEL]: SELECTED } },
          operatorNamespace: opNs.name,
        },
      ),
    );
    const ppcPath = `/apis/multiarch.openshift.io/v1beta1/namespaces/${ns.name}/podplacementconfigs`;
    const ppc = (name: string, priority: number, weight: number) => ({
      apiVersion: 'multiarch.openshift.io/v1beta1',
      kind: 'PodPlacementConfig',
      metadata: { name },
      spec: {
        priority,
        plugins: { nodeAffinityScoring: { enabled: true, platforms: [{ architecture: 'amd64', weight }] } },
      },
    });
    try {
      await req('POST', ppcPath, ppc('test-ppc2', 60, 60));
      await req('POST', ppcPath, ppc('test-ppc1', 30, 30));
      await eventually(
        async () => {
          try {
            await req('POST', ppcPath, ppc('clash', 60, 10));
          } catch (err) {
            if (
              err instanceof Error &&
              err.message.includes('priority 60 is already used by PodPlacementConfig test-ppc2')
            )
              return;
            throw err;
          }
          await req('DELETE', `${ppcPath}/clash`);
          throw new Error('a duplicate priority was accepted');
        },
        { what: 'duplicate priority refused by the validating webhook' },
      );
      // The deletion check counts from the operator's watch of PodPlacementConfigs, which may lag the writes.
      await eventually(
        async () => {
          const deletion = await client
            .request({ method: 'DELETE', path: `${cppcPath}/cluster`, query: { dryRun: 'All' } })
            .then(
              () => 'accepted',
              (err: unknown) => (err instanceof Error ? err.message : String(err)),
            );
          expect(deletion).toContain(
            'cannot delete ClusterPodPlacementConfig while 2 PodPlacementConfig(s) still exist',
          );
        },
        { what: 'the deletion of the cluster config refused while two PodPlacementConfigs exist' },
      );

      // Case 15 end to end: the higher priority wins amd64, the cluster config adds arm64.
      await createPod(ns.name, 'prio', [registries.images.M]);
      const pod = await scheduled(ns.name, 'prio');
      const preferred = (
        pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []
      ).map((t) => [t.preference.matchExpressions?.[0]?.values?.[0], t.weight]);
      expect(preferred).toEqual([
        ['amd64', 60],
        ['arm64', 50],
      ]);
      const sources = (
        pod.metadata.annotations?.['multiarch.openshift.io/preferred-affinity-sources'] ?? ''
      ).split(',');
      expect(sources).toEqual(
        expect.arrayContaining([
          'amd64:60:PodPlacementConfig-test-ppc2',
          'amd64:30:PodPlacementConfig-test-ppc1:skipped',
          'arm64:50:ClusterPodPlacementConfig',
        ]),
      );
    } finally {
      await req('DELETE', `${vwcPath}/pod-placement-validating-webhook-configuration`).catch(() => undefined);
      await req('DELETE', `${ppcPath}/test-ppc1`).catch(() => undefined);
      await req('DELETE', `${ppcPath}/test-ppc2`).catch(() => undefined);
    }
  });
});

describe('registry policy', () => {
  const idmsPath = '/apis/config.openshift.io/v1/imagedigestmirrorsets';
  const imageConfigPath = '/apis/config.openshift.io/v1/images';

  it('an image only in a mirror registry is placed by its architectures once an ImageDigestMirrorSet maps it', async () => {
    const source = `${registries.pub.host}/mirrored`;
    // Without the mirror set the source has no such manifest: released without an architecture requirement.
    await createPod(ns.name, 'mirror-before', [registries.images.MIRRORED]);
    const before = await scheduled(ns.name, 'mirror-before');
    expect(before.metadata.labels?.[LABELS.nodeAffinity]).toBe('not-set');
    await req('POST', idmsPath, {
      apiVersion: 'config.openshift.io/v1',
      kind: 'ImageDigestMirrorSet',
      metadata: { name: 'pp-e2e-mirror' },
      spec: { imageDigestMirrors: [{ source, mirrors: [`${registries.mirror.host}/mirrored`] }] },
    });
    try {
      // The operator learns of the mirror set through its watch: until then a pod is still inspected without it.
      const pod = await eventually(
        async () => {
          const name = uniqueName('mirror-after');
          await createPod(ns.name, name, [registries.images.MIRRORED]);
          const placed = await scheduled(ns.name, name);
          if (placed.metadata.labels?.[LABELS.nodeAffinity] !== 'set')
            throw new Error('mirror set not applied yet');
          return placed;
        },
        { timeoutMs: 60_000, what: 'a pod placed through the mirror' },
      );
      expect(requiredArchValues(pod)).toEqual([[...IMAGE_ARCHS.MIRRORED]]);
      expect(IMAGE_ARCHS.MIRRORED).toContain(archOf(pod));
      expect(
        registries.mirror.accessLog().some((e) => e.path.startsWith('/v2/mirrored/app/manifests/')),
      ).toBe(true);
    } finally {
      await req('DELETE', `${idmsPath}/pp-e2e-mirror`).catch(() => undefined);
    }
  });

  it('a blocked registry is not contacted: the pod is released without an architecture requirement, with a Warning', async () => {
    await req('POST', imageConfigPath, {
      apiVersion: 'config.openshift.io/v1',
      kind: 'Image',
      metadata: { name: 'cluster' },
      spec: { registrySources: { blockedRegistries: [`${registries.pub.host}/blocked`] } },
    });
    try {
      const blockedRequests = (): number =>
        registries.pub.accessLog().filter((e) => e.path.startsWith('/v2/blocked/')).length;
      // The operator sees the policy shortly after it is written; a pod inspected before that is placed normally.
      const { pod, requestsBefore } = await eventually(
        async () => {
          const requestsBefore = blockedRequests();
          const name = uniqueName('blocked');
          await createPod(ns.name, name, [registries.images.BLOCKED]);
          const p = await scheduled(ns.name, name);
          if (!/blocked/.test(p.metadata.annotations?.[LABELS.imageInspectError] ?? ''))
            throw new Error(`${name} was inspected before the policy applied`);
          return { pod: p, requestsBefore };
        },
        { timeoutMs: 90_000, intervalMs: 0, what: 'a pod whose image is in a blocked registry' },
      );
      expect(blockedRequests()).toBe(requestsBefore);
      expect(pod.metadata.labels?.[LABELS.nodeAffinity]).toBe('not-set');
      expect(requiredArchValues(pod)).toEqual([]);
      const warnings = await eventually(async () => {
        const w = (await podEvents(ns.name, pod.metadata.name)).filter((e) => e.type === 'Warning');
        if (!w.some((e) => e.reason === EVENT_REASONS.inspectionError)) throw new Error('no Warning yet');
        return w;
      });
      expect(warnings.map((e) => e.message).join('\n')).toMatch(/blocked/);
    } finally {
      await req('DELETE', `${imageConfigPath}/cluster`).catch(() => undefined);
    }
  });
});

describe('registry CAs of the cluster (image.config additionalTrustedCA)', () => {
  const imageConfigPath = '/apis/config.openshift.io/v1/images';
  const caConfigMaps = '/api/v1/namespaces/openshift-config/configmaps';

  it('trusts a CA the admin adds while the operator runs, and stops when it is no longer named: no restart', async () => {
    // A registry whose CA the operator was not started with.
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'pp-e2e-ca-'));
    const own = await startLocalRegistry({ stateDir, auth: 'none' });
    const configMap = uniqueName('registry-cas');
    try {
      await own.pushImage(
        'ca/app',
        '1',
        multiPlatformImage({ platforms: IMAGE_ARCHS.M.map((a) => ({ architecture: a })) }),
      );
      const image = `${own.host}/ca/app:1`;
      const placedWith = async (prefix: string): Promise<TestPod> => {
        const name = uniqueName(prefix);
        await createPod(ns.name, name, [image]);
        return scheduled(ns.name, name);
      };
      const untrusted = await placedWith('ca-before');
      expect(untrusted.metadata.labels?.[LABELS.nodeAffinity]).toBe('not-set');

      await req('POST', '/api/v1/namespaces', { metadata: { name: 'openshift-config' } }).catch(
        (err: unknown) => {
          if (!(err instanceof Error && /AlreadyExists|already exists/.test(err.message))) throw err;
        },
      );
      await req('POST', caConfigMaps, {
        metadata: { name: configMap },
        data: { [own.host.replace(':', '..')]: own.caCertPem },
      });
      await req('POST', imageConfigPath, {
        apiVersion: 'config.openshift.io/v1',
        kind: 'Image',
        metadata: { name: 'cluster' },
        spec: { additionalTrustedCA: { name: configMap } },
      });
      // The image config's change makes the operator re-read the ConfigMap at once, not at its next interval.
      const trusted = await eventually(
        async () => {
          const pod = await placedWith('ca-added');
          if (pod.metadata.labels?.[LABELS.nodeAffinity] !== 'set') throw new Error('CA not trusted yet');
          return pod;
        },
        { timeoutMs: 45_000, what: 'a pod placed once the registry CA is trusted' },
      );
      expect(requiredArchValues(trusted)).toEqual([[...IMAGE_ARCHS.M]]);

      await req('PUT', `${imageConfigPath}/cluster`, {
        ...(await req<Record<string, unknown>>('GET', `${imageConfigPath}/cluster`)),
        spec: {},
      });
      await eventually(
        async () => {
          const pod = await placedWith('ca-removed');
          if (pod.metadata.labels?.[LABELS.nodeAffinity] !== 'not-set') throw new Error('CA still trusted');
        },
        { timeoutMs: 45_000, what: 'a pod no longer placed once the CA is not named' },
      );
    } finally {
      await req('DELETE', `${imageConfigPath}/cluster`).catch(() => undefined);
      await req('DELETE', `${caConfigMaps}/${configMap}`).catch(() => undefined);
      await own.stop();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

describe('faults', () => {
  it('registry down: pods are ungated within the retry budget, with Warning events', async () => {
    await createPod(ns.name, 'unreachable', ['127.0.0.1:1/nothing:1']);
    const pod = await scheduled(ns.name, 'unreachable', 60_000);
    expect(pod.metadata.labels?.[LABELS.nodeAffinity]).toBe('not-set');
    expect(pod.metadata.annotations?.[LABELS.imageInspectError]).toMatch(/127\.0\.0\.1:1/);
    // Events are written asynchronously: wait for the Warning rather than race the pod.
    await eventually(
      async () => {
        const warnings = (await podEvents(ns.name, 'unreachable'))
          .filter((e) => e.type === 'Warning')
          .map((e) => e.reason);
        expect(warnings).toContain(EVENT_REASONS.inspectionError);
      },
      { timeoutMs: 15_000, what: 'the Warning event of the unreachable pod' },
    );
  });

  it('SIGKILL in the middle of a burst, webhook down meanwhile, restart: every pod ends ungated and placed', async () => {
    const BURST = Number(process.env.PP_E2E_BURST ?? 500);
    const images = [registries.images.A, registries.images.R, registries.images.M, registries.images.P];
    const archs: Record<string, readonly string[]> = {
      [registries.images.A]: IMAGE_ARCHS.A,
      [registries.images.R]: IMAGE_ARCHS.R,
      [registries.images.M]: IMAGE_ARCHS.M,
      [registries.images.P]: IMAGE_ARCHS.P,
    };
    const burstNs = uniqueName('pp-e2e-burst');
    await createNamespace(burstNs, { [TEST_LABEL]: SELECTED });
    // Whether the webhook gated each pod, read off the create's answer. failurePolicy Ignore admits a pod ungated
    // whenever the webhook does not answer in time (a loaded machine, the restart): such a pod is the API server's
    // fail-open choice, not a pod the operator lost, so only the pods the webhook gated are owed a placement.
    const gatedAtCreation = new Set<string>();
    const create = async (i: number): Promise<void> => {
      const image = images[i % images.length] ?? registries.images.M;
      const pod = await createPod(burstNs, `b-${i}`, [image], {}, { burst: 'yes' });
      if ((pod.spec.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE))
        gatedAtCreation.add(pod.metadata.name);
    };
    const batch = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i += 25)
        await Promise.all(Array.from({ length: Math.min(25, to - i) }, (_, j) => create(i + j)));
    };
    const half = Math.floor(BURST / 2);
    await batch(0, half);
    await operator?.stop('SIGKILL');
    const gatedAtKill = new Set(
      (await listPods(client, burstNs, 'burst=yes'))
        .filter((p) => (p.spec.schedulingGates ?? []).length > 0)
        .map((p) => p.metadata.name),
    );
    // Webhook down (configuration still registered): failurePolicy Ignore admits pods ungated.
    await batch(half, half + 25);
    for (const p of await listPods(client, burstNs, 'burst=yes')) {
      if (Number(p.metadata.name.slice(2)) >= half) expect(p.spec.schedulingGates ?? []).toEqual([]);
    }
    operator = startOperatorProcess(operatorOptions());
    await eventually(
      async () => {
        const name = uniqueName('canary');
        await createPod(burstNs, name, [registries.images.M]);
        const p = await getPod(burstNs, name);
        if (p.metadata.labels?.[LABELS.schedulingGate] === undefined) throw new Error('not served yet');
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'the restarted operator serving the webhook' },
    );
    await batch(half + 25, BURST);
    const pods = await eventually(
      async () => {
        const list = await listPods(client, burstNs, 'burst=yes');
        const gated = list.filter((p) =>
          (p.spec.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE),
        );
        if (list.length < BURST || gated.length > 0)
          throw new Error(`${gated.length} of ${list.length} pods still gated`);
        return list;
      },
      { timeoutMs: 240_000, intervalMs: 1_000, what: 'every burst pod ungated after the restart' },
    );
    const processed = pods.filter((p) => p.metadata.labels?.[LABELS.schedulingGate] === 'removed');
    const releasedUninspected = processed.filter((p) =>
      (p.metadata.annotations?.[ANNOTATIONS.imageInspectError] ?? '').includes(RELEASED_UNINSPECTED_MESSAGE),
    );
    process.stderr.write(
      `[pp-e2e] burst ${BURST}: ${gatedAtCreation.size} gated by the webhook, ${gatedAtKill.size} gated at SIGKILL, ` +
        `${processed.length} placed by the operator, ${releasedUninspected.length} released uninspected\n`,
    );
    // The restarted webhook gated pods of the last batch, so the restart is exercised, not bypassed.
    expect([...gatedAtCreation].some((name) => Number(name.slice(2)) >= half + 25)).toBe(true);
    // Exactly the pods the webhook gated were released by the operator: none lost across the SIGKILL.
    expect(processed.map((p) => p.metadata.name).sort()).toEqual([...gatedAtCreation].sort());
    for (const p of processed) {
      if (releasedUninspected.includes(p)) {
        // The breaker's answer to a pod the killed process was inspecting: released, nothing placed.
        expect(gatedAtKill.has(p.metadata.name), p.metadata.name).toBe(true);
        expect(requiredArchValues(p), p.metadata.name).toEqual([]);
        continue;
      }
      const image = p.spec.containers[0]?.image ?? '';
      expect(requiredArchValues(p), p.metadata.name).toEqual([[...(archs[image] ?? [])]]);
    }
  }, 400_000);
});

describe('teardown', () => {
  it('deleting the ClusterPodPlacementConfig removes the webhook first and leaves no gated pod', async () => {
    const slow = await createPod(ns.name, 'slow-1', ['127.0.0.1:1/slow:1']);
    await createPod(ns.name, 'slow-2', ['127.0.0.1:1/slow:2']);
    expect(slow.spec.schedulingGates?.[0]?.name).toBe(SCHEDULING_GATE);
    await req('DELETE', `${cppcPath}/cluster`);
    await eventually(
      async () => {
        try {
          await req(
            'GET',
            '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
          );
        } catch (err) {
          if (isNotFound(err)) return;
          throw err;
        }
        throw new Error('webhook configuration still present');
      },
      { what: 'webhook configuration deleted' },
    );
    await eventually(
      async () => {
        try {
          await req('GET', `${cppcPath}/cluster`);
        } catch (err) {
          if (isNotFound(err)) return;
          throw err;
        }
        throw new Error('ClusterPodPlacementConfig still present');
      },
      { timeoutMs: 90_000, what: 'ClusterPodPlacementConfig released' },
    );
    for (const n of [ns.name, ns2.name, ...extraNamespaces]) {
      const gated = (await listPods(client, n)).filter((p) =>
        (p.spec.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE),
      );
      expect(
        gated.map((p) => p.metadata.name),
        n,
      ).toEqual([]);
    }
    // The API server drops a deleted webhook configuration from its own cache shortly after the delete.
    await eventually(
      async () => {
        const pod = await createPod(ns.name, uniqueName('after-teardown'), [registries.images.M]);
        expect(pod.spec.schedulingGates ?? []).toEqual([]);
      },
      { what: 'a pod admitted without the gate after the teardown' },
    );
  });
});

describe('webhook budgets an admin sets', () => {
  it('refuses an AdmissionReview over --webhook-max-request-bytes with 413 and still admits a normal one', async () => {
    const post = (body: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const request = https.request(
          {
            host: '127.0.0.1',
            port: webhookPort,
            path: MUTATING_WEBHOOK.path,
            method: 'POST',
            // The operator's self-managed certificate; what is under test is the body budget, not trust.
            rejectUnauthorized: false,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    const review = (padding: number): string =>
      JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: `budget-${padding}`,
          kind: { group: '', version: 'v1', kind: 'Pod' },
          resource: { group: '', version: 'v1', resource: 'pods' },
          operation: 'CREATE',
          namespace: 'budget-test',
          object: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'p', namespace: 'budget-test', annotations: { pad: 'x'.repeat(padding) } },
            spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }] },
          },
        },
      });
    expect(await post(review(WEBHOOK_MAX_REQUEST_BYTES))).toBe(413);
    expect(await post(review(1_000))).toBe(200);
  });
});
