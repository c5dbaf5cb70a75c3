// The `tessera podplacement explain` action: fetches the pod (file or cluster), the configs and pull secrets,
// inspects the images, then prints assessExplanation(). Read-only: it never writes to the cluster.
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { KubeClient, Pods, ResourceClient, Secrets, isNotFound, type KubeObject } from '../runtime/index.js';
import { RegistryInspector, type ImageInspector, type PullSecretLike } from '../registry/index.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import { CLUSTER_CONFIG_NAME, DEFAULT_OPERATOR_NAMESPACE, GLOBAL_PULL_SECRET } from './constants.js';
import { assessExplanation, renderExplanation } from './explain.js';
import { loadKubeConfig } from './operator-command.js';
import type { ImageArchitectures } from './placement-plan.js';
import { podImages } from './pod-model.js';
import type { Pod } from './pod-types.js';
import { PullSecretResolver } from './pull-secrets.js';
import { ClusterPodPlacementConfigs, PodPlacementConfigs } from './resources.js';

async function podFromFile(file: string): Promise<Pod> {
  const docs = parseAllDocuments(await readFile(file, 'utf8'));
  for (const doc of docs) {
    const obj = doc.toJS() as { kind?: string } | null;
    if (obj && obj.kind === 'Pod') return obj as Pod;
  }
  throw new Error(`${file} holds no Pod manifest`);
}

export async function runExplainCommand(
  target: string | undefined,
  opts: Record<string, unknown>,
): Promise<number> {
  const file = typeof opts['file'] === 'string' ? opts['file'] : undefined;
  if (!file && !target) throw new Error('give a pod as NAMESPACE/NAME, or a manifest with -f POD.yaml');
  const offline = opts['offline'] === true;
  const client = offline ? undefined : new KubeClient(loadKubeConfig(opts['kubeconfig']));
  try {
    let pod: Pod;
    let namespace: string;
    if (file) {
      pod = await podFromFile(file);
      namespace = pod.metadata?.namespace ?? String(opts['namespace']);
    } else {
      const [ns, name] = (target ?? '').split('/');
      if (!ns || !name) throw new Error(`expected NAMESPACE/NAME, got ${JSON.stringify(target)}`);
      if (!client) throw new Error('--offline needs -f POD.yaml');
      pod = await new ResourceClient<Pod & KubeObject>(client, Pods).get({ namespace: ns, name });
      namespace = ns;
    }
    let clusterConfig: ClusterPodPlacementConfig | undefined;
    let configs: PodPlacementConfig[] = [];
    let globalSecret: PullSecretLike | undefined;
    if (client) {
      clusterConfig = await new ResourceClient<ClusterPodPlacementConfig & KubeObject>(
        client,
        ClusterPodPlacementConfigs,
      )
        .get({ name: CLUSTER_CONFIG_NAME })
        .catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
      configs = (
        await new ResourceClient<PodPlacementConfig & KubeObject>(client, PodPlacementConfigs)
          .list({ namespace })
          .catch(() => ({ items: [] }))
      ).items;
      globalSecret = await new ResourceClient<PullSecretLike & KubeObject>(client, Secrets)
        .get({ namespace: GLOBAL_PULL_SECRET.namespace, name: GLOBAL_PULL_SECRET.name })
        .catch(() => undefined);
    }
    const secrets = client ? new ResourceClient<PullSecretLike & KubeObject>(client, Secrets) : undefined;
    const resolver = new PullSecretResolver({
      getSecret: async (ns, name, signal) =>
        secrets ? secrets.get({ namespace: ns, name }, signal).catch(() => undefined) : undefined,
      globalSecret: () => globalSecret,
    });
    const cas = Array.isArray(opts['registryCa'])
      ? await Promise.all(opts['registryCa'].map((f) => readFile(String(f), 'utf8')))
      : [];
    const registry = new RegistryInspector({ caCertificates: cas });
    const inspector: ImageInspector = registry;
    const signal = AbortSignal.timeout(60_000);
    const keyring = await resolver.keyringFor({ ...pod, metadata: { ...pod.metadata, namespace } }, signal);
    const inspection = new Map<string, ImageArchitectures>();
    await Promise.all(
      podImages(pod).map(async ({ image }) => {
        try {
          inspection.set(image, {
            archs: (await inspector.inspect(image, { keyring, signal })).architectures,
          });
        } catch (err) {
          inspection.set(image, { error: err instanceof Error ? err.message : String(err) });
        }
      }),
    );
    const explanation = assessExplanation({
      pod,
      namespace,
      operatorNamespace: process.env.POD_NAMESPACE ?? DEFAULT_OPERATOR_NAMESPACE,
      clusterConfig,
      podPlacementConfigs: configs,
      inspection,
    });
    process.stdout.write(
      opts['output'] === 'json'
        ? `${JSON.stringify(explanation, null, 2)}\n`
        : renderExplanation(explanation),
    );
    return 0;
  } finally {
    await client?.close();
  }
}
