// The move from the Multiarch Tuning Operator (MTO) to Tessera, as an admin makes it, on a private cluster (the
// CRDs and the ClusterPodPlacementConfig are cluster singletons) with a scheduler, a controller manager and a kwok
// node per architecture, a local registry, and Tessera's operator in this process:
//  1. The cluster as MTO v1.3.3 leaves it once its CSV is removed: MTO's own CRDs (test/fixtures/multiarch/
//     mto-v1.3.3, applied as OLM v0 creates them), its sample ClusterPodPlacementConfig with the finalizers and
//     conditions MTO's operator wrote, PodPlacementConfigs, and MTO's gating webhook configuration, still
//     registered (it belongs to the ClusterPodPlacementConfig, not to the CSV). A stand-in answers for MTO's
//     webhook Deployment and mutates pods as MTO's does (gate plus labels); MTO's controller is gone, so the pods
//     it gates stay gated: the worst case of the window between the two operators.
//  2. Tessera's CRDs installed over MTO's by the podplacement CRD installer (server-side apply, as the operator and
//     `kubectl apply --server-side -f deploy/crds/` do): every object kept, spec intact, in both versions.
//  3. Tessera's operator started: it takes the gating webhook configuration over (same name), releases the pods
//     MTO's webhook gated with the right affinity (same gate, same labels), writes the conditions, converts
//     v1alpha1, and gates and places new pods itself.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { ARCHITECTURES } from '../../../src/devcluster/nodes.js';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage, singleImage } from '../../../src/devcluster/registry-images.js';
import { installPodPlacementCrds } from '../../../src/podplacement/api/install.js';
import type { Condition } from '../../../src/podplacement/api/schema.js';
import {
  ARCH_LABEL,
  EXCLUDE_NAMESPACE_LABEL,
  FINALIZERS,
  LABELS,
  MUTATING_WEBHOOK,
  SCHEDULING_GATE,
} from '../../../src/podplacement/constants.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
} from '../../../src/podplacement/operator/start.js';
import {
  KubeClient,
  WebhookServer,
  patched,
  silentLogger,
  waitForCrdsEstablished,
  type AdmissionRequest,
} from '../../../src/runtime/index.js';
import { eventually, startTestCluster, uniqueName } from '../../support/cluster.js';
import { fixturePath } from '../../support/fixtures.js';
import { inProcessOperatorOptions, podsIn, requiredArchs } from './in-process-operator.js';
import type { TestPod } from './support.js';

const opNs = 'tessera-mto-move';
const appNs = 'mto-move-apps';
const excludedNs = 'mto-move-excluded';
const group = '/apis/multiarch.openshift.io';
const cppcPath = `${group}/v1beta1/clusterpodplacementconfigs/cluster`;
const ppcPath = (version: string, name?: string) =>
  `${group}/${version}/namespaces/${appNs}/podplacementconfigs${name ? `/${name}` : ''}`;
const crdPath = (name: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
const mwcPath = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING_WEBHOOK.configurationName}`;
const MTO_FIXTURES = 'multiarch/mto-v1.3.3';
const MTO_CRDS = [
  'clusterpodplacementconfigs.multiarch.openshift.io',
  'podplacementconfigs.multiarch.openshift.io',
  'enoexecevents.multiarch.openshift.io',
];

interface Meta {
  name: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  finalizers?: string[];
}
interface ConfigObject {
  apiVersion: string;
  metadata: Meta;
  spec: Record<string, unknown>;
  status?: { conditions?: Condition[] };
}
interface CrdObject {
  spec: {
    conversion?: { strategy: string; webhook?: { clientConfig?: { url?: string; service?: unknown } } };
    versions: {
      name: string;
      storage: boolean;
      schema: {
        openAPIV3Schema: { properties: { metadata: Record<string, unknown> } } & Record<string, unknown>;
      };
    }[];
  };
  status: { storedVersions: string[] };
}
interface WebhookConfig {
  metadata: { labels?: Record<string, string> };
  webhooks: { name: string; failurePolicy: string; clientConfig: { url?: string; service?: unknown } }[];
}

const root = mkdtempSync(path.join(os.tmpdir(), 'pp-mto-move-'));
let cluster: DevCluster | undefined;
let client: KubeClient;
let registry: LocalRegistry | undefined;
const stop = new AbortController();
let operator: PodPlacementOperatorHandle | undefined;
let mtoWebhook: WebhookServer;
let mtoWebhookServing: Promise<void> | undefined;
/** Pod reviews MTO's webhook (the stand-in) answered. */
let mtoReviews = 0;
const nodeArch = new Map<string, string>();
const images = { amd64: '', arm64: '', multi: '' };
/** Pods MTO's webhook gated before Tessera ran, by role. */
const gatedUnderMto = { web: '', multi: '' };

const req = <T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', p: string, body?: unknown) =>
  client.request<T>({
    method,
    path: p,
    body,
    ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}),
  });

const fixture = <T>(name: string): T =>
  parse(readFileSync(fixturePath(`${MTO_FIXTURES}/${name}`), 'utf8')) as T;
const SAMPLE = 'multiarch_v1beta1_clusterpodplacementconfig.yaml';
/** The namespaceSelector of MTO's sample ClusterPodPlacementConfig. */
const sampleNamespaceSelector = () =>
  fixture<{ spec: { namespaceSelector: unknown } }>(SAMPLE).spec.namespaceSelector;

/** The PodPlacementConfigs an MTO user has (MTO ships no sample of this kind; written to MTO's CRD). */
const podPlacementConfigs = [
  {
    apiVersion: 'multiarch.openshift.io/v1beta1',
    kind: 'PodPlacementConfig',
    metadata: { name: 'web-prefers-amd64', namespace: appNs },
    spec: {
      labelSelector: { matchLabels: { tier: 'web' } },
      plugins: { nodeAffinityScoring: { enabled: true, platforms: [{ architecture: 'amd64', weight: 80 }] } },
      priority: 10,
    },
  },
  {
    apiVersion: 'multiarch.openshift.io/v1beta1',
    kind: 'PodPlacementConfig',
    metadata: { name: 'batch-prefers-s390x', namespace: appNs },
    spec: {
      labelSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['batch'] }] },
      plugins: { nodeAffinityScoring: { enabled: true, platforms: [{ architecture: 's390x', weight: 20 }] } },
    },
  },
];
/** The conditions MTO v1.3.3's operator writes with its operand up (api/v1beta1 buildConditions), verbatim. */
const MTO_CONDITIONS_ALL_READY = [
  [
    'Available',
    'True',
    'AllComponentsReady',
    'The cluster pod placement config operand is ready. We can gate and reconcile pods.',
  ],
  [
    'Progressing',
    'False',
    'AllComponentsReady',
    'The cluster pod placement config operand is not progressing.',
  ],
  ['Degraded', 'False', 'NotDegraded', 'The cluster pod placement config operand is not degraded.'],
  [
    'Deprovisioning',
    'False',
    'NotDeprovisioning',
    'The cluster pod placement config operand is not being deprovisioned. ',
  ],
  [
    'PodPlacementControllerNotRolledOut',
    'False',
    'PodPlacementControllerReady',
    'The pod placement controller is fully rolled out.',
  ],
  [
    'PodPlacementWebhookNotRolledOut',
    'False',
    'PodPlacementWebhookReady',
    'The pod placement webhook is fully rolled out.',
  ],
  [
    'MutatingWebhookConfigurationNotAvailable',
    'False',
    'AllComponentsReady',
    'The mutating webhook configuration is ready.',
  ],
] as const;
/** What the admin added to MTO's sample with `oc edit`: MTO's scoring plugin, cluster-wide. */
const clusterScoring = {
  nodeAffinityScoring: { enabled: true, platforms: [{ architecture: 'arm64', weight: 50 }] },
};

/** Preferred terms of a pod as [architecture, weight], in order. */
const preferred = (pod: TestPod) =>
  (pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => [
    t.preference.matchExpressions?.find((e) => e.key === ARCH_LABEL)?.values?.[0],
    t.weight,
  ]);
const gated = (pod: TestPod) => (pod.spec.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE);

async function createNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
  await req('POST', '/api/v1/namespaces', { metadata: { name, labels } });
  await eventually(() => req('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`), {
    what: `the default service account of ${name}`,
  });
}

function createPod(namespace: string, prefix: string, image: string, labels: Record<string, string> = {}) {
  return req<TestPod>('POST', `/api/v1/namespaces/${namespace}/pods`, {
    metadata: { name: uniqueName(prefix), labels },
    spec: { containers: [{ name: 'c', image }] },
  });
}

/** The gating webhook configuration as MTO's operator builds it (buildMutatingWebhookConfiguration). */
function mtoMutatingWebhookConfiguration(cppc: ConfigObject): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: {
      name: MUTATING_WEBHOOK.configurationName,
      labels: {
        'multiarch.openshift.io/operand': 'pod-placement-controller',
        controller: 'pod-placement-web-hook',
      },
      annotations: { 'service.beta.openshift.io/inject-cabundle': 'true' },
      ownerReferences: [
        {
          apiVersion: 'multiarch.openshift.io/v1beta1',
          kind: 'ClusterPodPlacementConfig',
          name: 'cluster',
          uid: cppc.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    webhooks: [
      {
        name: MUTATING_WEBHOOK.webhookName,
        admissionReviewVersions: ['v1'],
        // MTO names its Service (pod-placement-web-hook); no pod network here, so the stand-in's URL.
        clientConfig: {
          url: `https://127.0.0.1:${mtoWebhook.port()}${MUTATING_WEBHOOK.path}`,
          caBundle: Buffer.from(mtoWebhook.caBundle() ?? '').toString('base64'),
        },
        namespaceSelector: cppc.spec['namespaceSelector'],
        failurePolicy: 'Ignore',
        sideEffects: 'None',
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      },
    ],
  };
}

beforeAll(async () => {
  registry = await startLocalRegistry({ stateDir: path.join(root, 'registry'), auth: 'none' });
  await registry.pushImage('amd64-only', '1', singleImage({ platform: { architecture: 'amd64' } }));
  await registry.pushImage('arm64-only', '1', singleImage({ platform: { architecture: 'arm64' } }));
  await registry.pushImage(
    'multi',
    '1',
    multiPlatformImage({ platforms: [{ architecture: 'amd64' }, { architecture: 'arm64' }] }),
  );
  images.amd64 = `${registry.host}/amd64-only:1`;
  images.arm64 = `${registry.host}/arm64-only:1`;
  images.multi = `${registry.host}/multi:1`;

  cluster = await startTestCluster({
    name: uniqueName('pp-mto'),
    nodes: ARCHITECTURES.map((architecture) => ({
      name: `worker-${architecture}`,
      architecture,
      role: 'worker' as const,
    })),
  });
  client = new KubeClient(await cluster.kubeConfig());
  await req('POST', '/api/v1/namespaces', { metadata: { name: opNs } });
  await createNamespace(appNs);
  await createNamespace(excludedNs, { [EXCLUDE_NAMESPACE_LABEL]: 'true' });
  const nodes = await req<{ items: { metadata: { name: string; labels?: Record<string, string> } }[] }>(
    'GET',
    '/api/v1/nodes',
  );
  for (const n of nodes.items) nodeArch.set(n.metadata.name, n.metadata.labels?.[ARCH_LABEL] ?? '');

  // MTO's webhook Deployment, which outlives MTO's CSV: gates the pod and labels it as MTO's webhook does.
  mtoWebhook = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    devCertificate: { ipAddresses: ['127.0.0.1'] },
    logger: silentLogger,
  });
  mtoWebhook.register(MUTATING_WEBHOOK.path, {
    handle(request: AdmissionRequest) {
      mtoReviews++;
      const pod = request.object as TestPod;
      return patched(pod, {
        ...pod,
        metadata: {
          ...pod.metadata,
          labels: {
            ...pod.metadata.labels,
            [LABELS.nodeAffinity]: 'not-set',
            [LABELS.preferredNodeAffinity]: 'not-set',
            [LABELS.schedulingGate]: 'gated',
          },
        },
        spec: {
          ...pod.spec,
          schedulingGates: [...(pod.spec.schedulingGates ?? []), { name: SCHEDULING_GATE }],
        },
      });
    },
  });
  mtoWebhookServing = mtoWebhook.start(stop.signal);
  await mtoWebhook.ready();
}, 240_000);

afterAll(async () => {
  stop.abort();
  await operator?.stopped.catch(() => undefined);
  await mtoWebhookServing;
  await client?.close();
  await cluster?.stop({ wipe: true });
  await registry?.stop();
  rmSync(root, { recursive: true, force: true });
}, 120_000);

describe('moving from the Multiarch Tuning Operator', () => {
  it("starts from MTO's own CRDs and objects, with pods MTO's webhook gated and nobody to release them", async () => {
    for (const file of [
      'multiarch.openshift.io_clusterpodplacementconfigs.yaml',
      'multiarch.openshift.io_podplacementconfigs.yaml',
      'multiarch.openshift.io_enoexecevents.yaml',
    ])
      await req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', fixture(file));
    await waitForCrdsEstablished(client, MTO_CRDS);

    // MTO's sample, as the admin created it, then the scoring plugin added.
    const cppc = await eventually(
      () => req<ConfigObject>('POST', `${group}/v1beta1/clusterpodplacementconfigs`, fixture(SAMPLE)),
      { what: "MTO's sample ClusterPodPlacementConfig created" },
    );
    expect(cppc.spec).toEqual({
      logVerbosity: 'Normal',
      namespaceSelector: { matchExpressions: [{ key: EXCLUDE_NAMESPACE_LABEL, operator: 'DoesNotExist' }] },
      fallbackArchitecture: '', // MTO's CRD default
    });
    await req('PATCH', cppcPath, { spec: { plugins: clusterScoring } });
    for (const ppc of podPlacementConfigs) await req('POST', ppcPath('v1beta1'), ppc);

    // What MTO's operator wrote before its CSV went: its finalizers (the exec format error monitor's too, as MTO
    // adds it when that plugin is enabled) and its conditions (it sets no observedGeneration).
    await req('PATCH', cppcPath, {
      metadata: {
        finalizers: [
          FINALIZERS.podPlacement,
          FINALIZERS.noPodPlacementConfig,
          FINALIZERS.execFormatErrorEvents,
        ],
      },
    });
    const mtoConditions = MTO_CONDITIONS_ALL_READY.map(([type, status, reason, message]) => ({
      type,
      status,
      reason,
      message,
      lastTransitionTime: '2026-06-01T00:00:00Z',
    }));
    await req('PATCH', `${cppcPath}/status`, { status: { conditions: mtoConditions } });

    await req('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      ...mtoMutatingWebhookConfiguration(await req<ConfigObject>('GET', cppcPath)),
    });
    // The API server picks a new webhook configuration up asynchronously.
    gatedUnderMto.web = await eventually(
      async () => {
        const pod = await createPod(appNs, 'web', images.amd64, { tier: 'web' });
        if (!gated(pod)) {
          await req('DELETE', `/api/v1/namespaces/${appNs}/pods/${pod.metadata.name}`);
          throw new Error("not gated by MTO's webhook yet");
        }
        return pod.metadata.name;
      },
      { what: "a pod gated by MTO's webhook" },
    );
    const multi = await createPod(appNs, 'multi', images.multi);
    expect(gated(multi)).toBe(true);
    expect(multi.metadata.labels?.[LABELS.schedulingGate]).toBe('gated');
    gatedUnderMto.multi = multi.metadata.name;
    // MTO's namespaceSelector leaves the excluded namespace out.
    expect(gated(await createPod(excludedNs, 'excluded', images.amd64))).toBe(false);
  });

  it("installs Tessera's CRDs over MTO's: every object kept with its spec, finalizers and status", async () => {
    const before = {
      cppc: await req<ConfigObject>('GET', cppcPath),
      ppcs: await req<{ items: ConfigObject[] }>('GET', ppcPath('v1beta1')),
    };
    expect(before.ppcs.items.map((p) => p.spec['priority'])).toEqual([0, 10]); // MTO's default filled in

    await installPodPlacementCrds(client);

    const crd = await req<CrdObject>('GET', crdPath(MTO_CRDS[0] ?? ''));
    // Tessera's schema replaced MTO's (versions is an atomic list): the singleton is now a CEL rule, not an enum.
    expect(crd.spec.versions.map((v) => [v.name, v.storage])).toEqual([
      ['v1alpha1', false],
      ['v1beta1', true],
    ]);
    for (const v of crd.spec.versions) {
      expect(v.schema.openAPIV3Schema.properties.metadata).toEqual({ type: 'object' });
      expect(v.schema.openAPIV3Schema['x-kubernetes-validations']).toEqual([
        expect.objectContaining({ rule: "self.metadata.name == 'cluster'" }),
      ]);
    }
    expect(crd.status.storedVersions).toEqual(['v1beta1']);

    const after = {
      cppc: await req<ConfigObject>('GET', cppcPath),
      ppcs: await req<{ items: ConfigObject[] }>('GET', ppcPath('v1beta1')),
    };
    expect(after.cppc.metadata.uid).toBe(before.cppc.metadata.uid);
    expect(after.cppc.spec).toEqual({ ...before.cppc.spec, plugins: clusterScoring });
    expect(after.cppc.metadata.finalizers).toEqual(before.cppc.metadata.finalizers);
    expect(after.cppc.status).toEqual(before.cppc.status);
    expect(after.ppcs.items.map((p) => [p.metadata.uid, p.spec])).toEqual(
      before.ppcs.items.map((p) => [p.metadata.uid, p.spec]),
    );
    // MTO's exec-format-error CRD is not Tessera's: left as it was.
    await req('GET', crdPath(MTO_CRDS[2] ?? ''));
  });

  it("Tessera's operator takes over: MTO's gated pods placed, webhook and conversion its own, conditions written", async () => {
    const reviewsBefore = mtoReviews;
    operator = await startPodPlacementOperator({
      ...inProcessOperatorOptions({
        kubeConfig: await (cluster as DevCluster).kubeConfig(),
        namespace: opNs,
        signal: stop.signal,
        certDir: path.join(root, 'certs'),
      }),
      registry: { caCertificates: [registry?.caCertPem ?? ''] },
    });
    const pods = podsIn(client, appNs);

    // Same gate, same label: the pods MTO's webhook gated are Tessera's to place.
    const web = await pods.scheduled(gatedUnderMto.web);
    expect(requiredArchs(web)).toEqual(['amd64']);
    expect(nodeArch.get(web.spec.nodeName ?? '')).toBe('amd64');
    expect(preferred(web)).toEqual([
      ['amd64', 80], // PodPlacementConfig web-prefers-amd64 (priority 10) first
      ['arm64', 50], // then the cluster config
    ]);
    expect(web.metadata.labels?.[LABELS.schedulingGate]).toBe('removed');
    const multi = await pods.scheduled(gatedUnderMto.multi);
    expect(requiredArchs(multi)).toEqual(['amd64', 'arm64']);
    expect(preferred(multi)).toEqual([['arm64', 50]]);

    // The gating webhook configuration (same name) now calls Tessera, with Tessera's labels.
    const mwc = await eventually(
      async () => {
        const current = await req<WebhookConfig>('GET', mwcPath);
        const url = current.webhooks[0]?.clientConfig.url ?? '';
        if (url.includes(`:${mtoWebhook.port()}/`)) throw new Error("still MTO's webhook");
        return current;
      },
      { what: 'the gating webhook configuration taken over by Tessera' },
    );
    expect(mwc.webhooks.map((w) => w.name)).toEqual([MUTATING_WEBHOOK.webhookName]);
    expect(mwc.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('tessera-podplacement');

    // Conditions rewritten by Tessera for the current generation (MTO's carried none), spec untouched.
    const cppc = await eventually(
      async () => {
        const current = await req<ConfigObject>('GET', cppcPath);
        const conditions = current.status?.conditions ?? [];
        if (!conditions.every((c) => c.observedGeneration === current.metadata.generation))
          throw new Error(`conditions not rewritten yet: ${JSON.stringify(conditions)}`);
        return current;
      },
      { what: "the ClusterPodPlacementConfig's conditions written by Tessera" },
    );
    expect(cppc.status?.conditions?.find((c) => c.type === 'Available')?.status).toBe('True');
    expect(cppc.spec['plugins']).toEqual(clusterScoring);
    // MTO's exec format error finalizer guards ENoExecEvent objects Tessera never creates: released, so a later
    // delete of the config can finish.
    expect(cppc.metadata.finalizers).toEqual([FINALIZERS.podPlacement, FINALIZERS.noPodPlacementConfig]);

    // v1alpha1, which MTO's conversion webhook served, is converted by Tessera's.
    const crd = await req<CrdObject>('GET', crdPath(MTO_CRDS[0] ?? ''));
    expect(crd.spec.conversion?.webhook?.clientConfig?.service).toBeUndefined();
    const alpha = await eventually(
      () => req<ConfigObject>('GET', `${group}/v1alpha1/clusterpodplacementconfigs/cluster`),
      { what: 'the ClusterPodPlacementConfig read as v1alpha1' },
    );
    expect(alpha.apiVersion).toBe('multiarch.openshift.io/v1alpha1');
    expect(alpha.spec).toEqual({
      logVerbosity: 'Normal',
      namespaceSelector: sampleNamespaceSelector(),
    });
    expect(mtoReviews).toBe(reviewsBefore);
  }, 180_000);

  it('gates and places new pods itself, with the carried-over PodPlacementConfigs; excluded namespaces stay out', async () => {
    const reviewsBefore = mtoReviews;
    const pods = podsIn(client, appNs);
    const batch = await pods.scheduled(
      await pods.createGated(
        'batch',
        { containers: [{ name: 'c', image: images.arm64 }] },
        { tier: 'batch' },
      ),
    );
    expect(requiredArchs(batch)).toEqual(['arm64']);
    expect(nodeArch.get(batch.spec.nodeName ?? '')).toBe('arm64');
    expect(preferred(batch)).toEqual([
      ['s390x', 20],
      ['arm64', 50],
    ]);
    const web = await pods.scheduled(
      await pods.createGated(
        'web-after',
        { containers: [{ name: 'c', image: images.multi }] },
        { tier: 'web' },
      ),
    );
    expect(requiredArchs(web)).toEqual(['amd64', 'arm64']);
    expect(preferred(web)).toEqual([
      ['amd64', 80],
      ['arm64', 50],
    ]);
    expect(gated(await createPod(excludedNs, 'excluded-after', images.amd64))).toBe(false);
    // MTO's webhook is no longer asked.
    expect(mtoReviews).toBe(reviewsBefore);
  }, 180_000);
});
