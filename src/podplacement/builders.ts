// Builders for pods and placement configs, for tests, the demo seeder and examples. Each call returns a fresh
// plain object; builders never share state between the objects they build.
import type {
  ClusterPodPlacementConfig,
  LabelSelector,
  PlatformTerm,
  PodPlacementConfig,
} from './api/schema.js';
import { API_GROUP, CLUSTER_CONFIG_NAME, SCHEDULING_GATE } from './constants.js';
import type { NodeSelectorTerm, Pod, PreferredSchedulingTerm } from './pod-types.js';

interface MutablePod {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  };
  spec: {
    containers: { name: string; image: string; imagePullPolicy?: string }[];
    initContainers?: { name: string; image: string; imagePullPolicy?: string }[];
    nodeName?: string;
    nodeSelector?: Record<string, string>;
    schedulingGates?: { name: string }[];
    imagePullSecrets?: { name: string }[];
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
        preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
      };
      podAffinity?: unknown;
    };
  };
}

export class PodBuilder {
  private readonly pod: MutablePod;

  constructor(name = 'test-pod', namespace = 'test-ns') {
    this.pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [] } };
  }

  withImages(...images: string[]): this {
    for (const image of images)
      this.pod.spec.containers.push({ name: `c${this.pod.spec.containers.length}`, image });
    return this;
  }
  withImagePullAlways(image: string): this {
    this.pod.spec.containers.push({
      name: `c${this.pod.spec.containers.length}`,
      image,
      imagePullPolicy: 'Always',
    });
    return this;
  }
  withInitImages(...images: string[]): this {
    const init = (this.pod.spec.initContainers ??= []);
    for (const image of images) init.push({ name: `init${init.length}`, image });
    return this;
  }
  withLabels(labels: Record<string, string>): this {
    this.pod.metadata.labels = { ...(this.pod.metadata.labels ?? {}), ...labels };
    return this;
  }
  withAnnotations(annotations: Record<string, string>): this {
    this.pod.metadata.annotations = { ...(this.pod.metadata.annotations ?? {}), ...annotations };
    return this;
  }
  withResourceVersion(rv: string): this {
    this.pod.metadata.resourceVersion = rv;
    return this;
  }
  withNodeName(node: string): this {
    this.pod.spec.nodeName = node;
    return this;
  }
  withNodeSelector(selector: Record<string, string>): this {
    this.pod.spec.nodeSelector = { ...(this.pod.spec.nodeSelector ?? {}), ...selector };
    return this;
  }
  withGate(name = SCHEDULING_GATE): this {
    (this.pod.spec.schedulingGates ??= []).push({ name });
    return this;
  }
  withPullSecrets(...names: string[]): this {
    this.pod.spec.imagePullSecrets = names.map((name) => ({ name }));
    return this;
  }
  withOwner(kind: string, name: string, controller: boolean | undefined): this {
    const ref: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean } = {
      apiVersion: 'apps/v1',
      kind,
      name,
      uid: `${name}-uid`,
    };
    if (controller !== undefined) ref.controller = controller;
    (this.pod.metadata.ownerReferences ??= []).push(ref);
    return this;
  }
  /** Each argument is one required nodeSelectorTerm: a list of [key, operator, values]. */
  withRequiredTerms(...terms: [string, string, string[]?][][]): this {
    const na = ((this.pod.spec.affinity ??= {}).nodeAffinity ??= {});
    na.requiredDuringSchedulingIgnoredDuringExecution = {
      nodeSelectorTerms: terms.map((exprs) => ({
        matchExpressions: exprs.map(([key, operator, values]) =>
          values ? { key, operator, values } : { key, operator },
        ),
      })),
    };
    return this;
  }
  withPreferred(weight: number, key: string, values: string[]): this {
    const na = ((this.pod.spec.affinity ??= {}).nodeAffinity ??= {});
    (na.preferredDuringSchedulingIgnoredDuringExecution ??= []).push({
      weight,
      preference: { matchExpressions: [{ key, operator: 'In', values }] },
    });
    return this;
  }
  withPodAffinity(value: unknown): this {
    (this.pod.spec.affinity ??= {}).podAffinity = value;
    return this;
  }
  build(): Pod {
    return structuredClone(this.pod);
  }
}

export function pod(name?: string, namespace?: string): PodBuilder {
  return new PodBuilder(name, namespace);
}

export interface ClusterConfigOptions {
  /** Scoring platforms; scoring is enabled when given. */
  platforms?: PlatformTerm[];
  scoringEnabled?: boolean;
  fallbackArchitecture?: '' | PlatformTerm['architecture'];
  namespaceSelector?: LabelSelector;
}

export function clusterConfig(opts: ClusterConfigOptions = {}): ClusterPodPlacementConfig {
  const spec: NonNullable<ClusterPodPlacementConfig['spec']> = {};
  if (opts.platforms) {
    spec.plugins = {
      nodeAffinityScoring: { enabled: opts.scoringEnabled ?? true, platforms: opts.platforms },
    };
  }
  if (opts.fallbackArchitecture !== undefined) spec.fallbackArchitecture = opts.fallbackArchitecture;
  if (opts.namespaceSelector) spec.namespaceSelector = opts.namespaceSelector;
  return {
    apiVersion: `${API_GROUP}/v1beta1`,
    kind: 'ClusterPodPlacementConfig',
    metadata: { name: CLUSTER_CONFIG_NAME },
    spec,
  };
}

export function podPlacementConfig(
  name: string,
  namespace: string,
  opts: {
    priority?: number;
    platforms?: PlatformTerm[];
    enabled?: boolean;
    matchLabels?: Record<string, string>;
  },
): PodPlacementConfig {
  const spec: PodPlacementConfig['spec'] = { plugins: {} };
  if (opts.platforms)
    spec.plugins.nodeAffinityScoring = { enabled: opts.enabled ?? true, platforms: opts.platforms };
  if (opts.priority !== undefined) spec.priority = opts.priority;
  if (opts.matchLabels) spec.labelSelector = { matchLabels: opts.matchLabels };
  return {
    apiVersion: `${API_GROUP}/v1beta1`,
    kind: 'PodPlacementConfig',
    metadata: { name, namespace },
    spec,
  };
}
