// The subset of the core/v1 Pod and Namespace wire format the pod placement logic reads and writes. Plain JSON
// shapes (as received from the API server or an admission review), readonly so that pure functions cannot
// mutate what they observe. Structurally compatible with @kubernetes/client-node's V1Pod for these fields.

export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

export interface NodeSelectorTerm {
  readonly matchExpressions?: readonly NodeSelectorRequirement[];
  readonly matchFields?: readonly NodeSelectorRequirement[];
}

export interface PreferredSchedulingTerm {
  readonly weight: number;
  readonly preference: NodeSelectorTerm;
}

export interface NodeAffinity {
  readonly requiredDuringSchedulingIgnoredDuringExecution?: {
    readonly nodeSelectorTerms?: readonly NodeSelectorTerm[];
  };
  readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly PreferredSchedulingTerm[];
}

export interface Affinity {
  readonly nodeAffinity?: NodeAffinity;
  readonly podAffinity?: unknown;
  readonly podAntiAffinity?: unknown;
}

export interface Container {
  readonly name: string;
  readonly image?: string;
  readonly imagePullPolicy?: string;
}

export interface OwnerReference {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly name: string;
  readonly uid?: string;
  readonly controller?: boolean;
}

export interface PodMeta {
  readonly name?: string;
  readonly generateName?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly creationTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
}

export interface PodSpec {
  readonly nodeName?: string;
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly affinity?: Affinity;
  readonly schedulingGates?: readonly { readonly name: string }[];
  readonly containers?: readonly Container[];
  readonly initContainers?: readonly Container[];
  readonly imagePullSecrets?: readonly { readonly name?: string }[];
}

export interface Pod {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: PodMeta;
  readonly spec?: PodSpec;
  readonly status?: { readonly phase?: string };
}
