// The `tessera podplacement explain` action. For a pod in the cluster: reads the pod, its events and its owner's pod
// template, and shows what the operator did to it (observePlacement); for that pod as a controller would create it
// now, or for a manifest (-f): reads the configs and pull secrets, inspects the images with the registry trust the
// operator has (the cluster's registry policy and additionalTrustedCA bundles, read by the same functions, plus
// --registry-ca files), then shows what the operator would do (assessExplanation). Read-only: it never writes.
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import {
  CoreEvents,
  KubeClient,
  Pods,
  ResourceClient,
  Secrets,
  InvalidArgumentError,
  ignoreNotFound,
  loadKubeConfig,
  type KubeObject,
  type Logger,
  errorMessage,
} from '../runtime/index.js';
import {
  PolicyRefusalError,
  RegistryInspector,
  admissionVerdict,
  describeShortNameChoice,
  describeSignatureRequirement,
  parseImageReference,
  type HostCaCertificates,
  type ImageInspector,
  type ProxyConfig,
  type PullSecretLike,
  type RegistryPolicy,
} from '../registry/index.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import { CLUSTER_CONFIG_NAME, DEFAULT_OPERATOR_NAMESPACE, GLOBAL_PULL_SECRET } from './constants.js';
import {
  assessExplanation,
  observePlacement,
  podAsNew,
  renderExplanation,
  renderObservation,
  type ObservedPod,
  type Observation,
  type PodEvent,
} from './explain.js';
import type { ImageArchitectures } from './placement-plan.js';
import { isOlmBundleUnpackPod } from './olm-bundle-unpack.js';
import { podImages } from './pod-model.js';
import type { OwnerReference, Pod } from './pod-types.js';
import { PullSecretResolver } from './pull-secrets.js';
import { readRegistryTrust } from './registry-policy-watch.js';
import { ClusterPodPlacementConfigs, PodPlacementConfigs } from './resources.js';

/** Most events of the pod read and shown (a pod can carry many; the newest matter less than a bounded answer). */
export const MAX_EXPLAIN_EVENTS = 200;
/** The whole command (API reads and image inspections) gives up after this long. */
const EXPLAIN_DEADLINE_MS = 60_000;

/** Where the pod template of each controller kind lives. */
const OWNER_PATHS: Readonly<Record<string, string>> = {
  ReplicaSet: '/apis/apps/v1',
  StatefulSet: '/apis/apps/v1',
  DaemonSet: '/apis/apps/v1',
  Job: '/apis/batch/v1',
  ReplicationController: '/api/v1',
};

async function podFromFile(file: string): Promise<Pod> {
  const docs = parseAllDocuments(await readFile(file, 'utf8'));
  for (const doc of docs) {
    const obj = doc.toJS() as { kind?: string } | null;
    if (obj && obj.kind === 'Pod') return obj as Pod;
  }
  throw new InvalidArgumentError('--file', `${file} holds no Pod manifest`);
}

/**
 * An API read the explanation can go without: undefined when the object (or its kind) is not there, and for any
 * other failure too, after a warning naming what could not be read and why (the explanation then lacks it).
 */
async function readOrWarn<T>(read: Promise<T>, what: string, logger: Logger): Promise<T | undefined> {
  try {
    return await ignoreNotFound(read);
  } catch (err) {
    logger.warn({ err }, `could not read ${what}; explaining without it`);
    return undefined;
  }
}

/** The pod template of the pod's controller, or a reason it could not be read. */
async function ownerTemplate(
  client: KubeClient,
  namespace: string,
  owner: OwnerReference | undefined,
  signal: AbortSignal,
): Promise<{ template?: { metadata?: Pod['metadata']; spec?: Pod['spec'] }; source: string }> {
  const base = owner ? OWNER_PATHS[owner.kind] : undefined;
  if (!owner || base === undefined)
    return {
      source: 'this pod minus what the scheduler and the operator added; it has no controller template',
    };
  const plural = `${owner.kind.toLowerCase()}s`;
  try {
    const obj = await client.request<{
      spec?: { template?: { metadata?: Pod['metadata']; spec?: Pod['spec'] } };
    }>({
      method: 'GET',
      path: `${base}/namespaces/${encodeURIComponent(namespace)}/${plural}/${encodeURIComponent(owner.name)}`,
      signal,
    });
    if (obj.spec?.template?.spec)
      return { template: obj.spec.template, source: `the pod template of ${owner.kind} ${owner.name}` };
  } catch (err) {
    const why = errorMessage(err);
    return {
      source: `this pod minus what the scheduler and the operator added; ${owner.kind} unreadable: ${why}`,
    };
  }
  return {
    source: `this pod minus what the scheduler and the operator added; ${owner.kind} has no template`,
  };
}

/** The flags of `tessera podplacement explain`, as commander gives them (src/podplacement/cli.ts). */
export interface ExplainFlags {
  file?: string;
  kubeconfig?: string;
  /** For a manifest without one. */
  namespace: string;
  registryCa?: string[];
  operatorNamespace: string;
  offline?: boolean;
  output: 'text' | 'json';
  /** The egress proxy, from the environment (read by cli.ts, as for the operator). */
  proxy?: ProxyConfig;
}

export async function runExplainCommand(
  target: string | undefined,
  opts: ExplainFlags,
  logger: Logger,
): Promise<number> {
  const file = opts.file;
  if (!file && !target)
    throw new InvalidArgumentError(
      'the pod',
      'give a pod as NAMESPACE/NAME, or a manifest with -f POD.yaml',
      'argument',
    );
  const offline = opts.offline === true;
  const client = offline ? undefined : new KubeClient(await loadKubeConfig(opts.kubeconfig));
  const signal = AbortSignal.timeout(EXPLAIN_DEADLINE_MS);
  try {
    let pod: Pod;
    let namespace: string;
    let observation: Observation | undefined;
    let newPodSource = 'the manifest';
    if (file) {
      pod = await podFromFile(file);
      namespace = pod.metadata?.namespace ?? opts.namespace;
    } else {
      const [ns, name] = (target ?? '').split('/');
      if (!ns || !name)
        throw new InvalidArgumentError(
          'the pod',
          `expected NAMESPACE/NAME, got ${JSON.stringify(target)}`,
          'argument',
        );
      if (!client) throw new InvalidArgumentError('--offline', 'needs -f POD.yaml');
      const live = (await new ResourceClient<ObservedPod & KubeObject>(client, Pods).get(
        { namespace: ns, name },
        signal,
      )) as ObservedPod;
      namespace = ns;
      const uid = live.metadata?.uid;
      const events = uid
        ? (
            await new ResourceClient<PodEvent & KubeObject>(client, CoreEvents).list({
              namespace: ns,
              fieldSelector: `involvedObject.uid=${uid}`,
              limit: MAX_EXPLAIN_EVENTS,
              signal,
            })
          ).items
        : [];
      observation = observePlacement(live, events);
      const owner = live.metadata?.ownerReferences?.find((o) => o.controller === true);
      const { template, source } = await ownerTemplate(client, ns, owner, signal);
      newPodSource = source;
      pod = podAsNew(live, template);
    }
    let clusterConfig: ClusterPodPlacementConfig | undefined;
    let configs: PodPlacementConfig[] = [];
    let globalSecret: PullSecretLike | undefined;
    let policy: RegistryPolicy | undefined;
    let clusterCas: HostCaCertificates = new Map();
    if (client) {
      clusterConfig = await ignoreNotFound(
        new ResourceClient<ClusterPodPlacementConfig & KubeObject>(client, ClusterPodPlacementConfigs).get(
          { name: CLUSTER_CONFIG_NAME },
          signal,
        ),
      );
      configs =
        (
          await readOrWarn(
            new ResourceClient<PodPlacementConfig & KubeObject>(client, PodPlacementConfigs).list({
              namespace,
              signal,
            }),
            `the PodPlacementConfigs of namespace ${namespace}`,
            logger,
          )
        )?.items ?? [];
      globalSecret = await readOrWarn(
        new ResourceClient<PullSecretLike & KubeObject>(client, Secrets).get(
          { namespace: GLOBAL_PULL_SECRET.namespace, name: GLOBAL_PULL_SECRET.name },
          signal,
        ),
        `the global pull secret ${GLOBAL_PULL_SECRET.namespace}/${GLOBAL_PULL_SECRET.name}`,
        logger,
      );
      // The trust the operator has: the same registry policy and additionalTrustedCA bundles.
      const trust = await readRegistryTrust(client, logger, signal);
      policy = trust.policy;
      clusterCas = trust.hostCaCertificates;
    }
    const secrets = client ? new ResourceClient<PullSecretLike & KubeObject>(client, Secrets) : undefined;
    const resolver = new PullSecretResolver({
      getSecret: async (ns, name, sig) =>
        secrets
          ? readOrWarn(secrets.get({ namespace: ns, name }, sig), `pull secret ${ns}/${name}`, logger)
          : undefined,
      globalSecret: () => globalSecret,
    });
    const flagCas = await Promise.all((opts.registryCa ?? []).map((f) => readFile(f, 'utf8')));
    const registry = new RegistryInspector({
      caCertificates: flagCas,
      hostCaCertificates: clusterCas,
      ...(policy ? { policy: () => policy } : {}),
      ...(opts.proxy ? { proxy: opts.proxy } : {}),
    });
    const inspector: ImageInspector = registry;
    const keyring = await resolver.keyringFor({ ...pod, metadata: { ...pod.metadata, namespace } }, signal);
    const inspection = new Map<string, ImageArchitectures>();
    const shortNames = new Map<string, string>();
    const signatures = new Map<string, string>();
    try {
      await Promise.all(
        podImages(pod).map(async ({ image }) => {
          try {
            const found = await inspector.inspect(image, {
              keyring,
              signal,
              probeOperatorBundle: isOlmBundleUnpackPod(pod),
            });
            inspection.set(image, { archs: found.architectures });
            if (found.shortName) shortNames.set(image, describeShortNameChoice(found.shortName));
            const verdict = policy?.imageAdmission
              ? admissionVerdict(parseImageReference(found.reference), policy.imageAdmission, namespace)
              : undefined;
            if (verdict?.admitted && verdict.signatureRequiredBy)
              signatures.set(image, describeSignatureRequirement(verdict.signatureRequiredBy));
          } catch (err) {
            inspection.set(image, {
              error: errorMessage(err),
              ...(err instanceof PolicyRefusalError ? { failure: 'refused' as const } : {}),
            });
          }
        }),
      );
    } finally {
      await registry.close();
    }
    const explanation = assessExplanation({
      pod,
      namespace,
      operatorNamespace: opts.operatorNamespace || DEFAULT_OPERATOR_NAMESPACE,
      clusterConfig,
      podPlacementConfigs: configs,
      inspection,
      shortNames,
      signatures,
    });
    if (opts.output === 'json') {
      const doc = observation
        ? { observed: observation, newPod: { from: newPodSource, ...explanation } }
        : explanation;
      process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    } else {
      const parts: string[] = [];
      if (observation) {
        parts.push(renderObservation(observation));
        parts.push(`What the operator would do now to a new pod like it\n  (judged on ${newPodSource}):\n`);
      }
      parts.push(renderExplanation(explanation));
      process.stdout.write(parts.join('\n'));
    }
    return 0;
  } finally {
    await client?.close();
  }
}
