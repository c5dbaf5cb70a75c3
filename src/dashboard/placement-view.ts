// The Pod placement view: pods gated now (count, the oldest and how long), where pods run by architecture (which
// images went where), pods whose image inspection failed grouped by registry and by namespace, and one pod's
// explanation on request (the `tessera podplacement explain` observation). Pure: the caller passes what the
// informers hold and "now". Image references and error messages are tenant-written: they are cut to a budget
// before they are parsed or sent, and counted in Maps (never as object keys).
import { parseImageReference } from '../registry/light.js';
import { ANNOTATIONS, ARCH_LABEL, LABELS, SCHEDULING_GATE } from '../podplacement/constants.js';
import {
  type ObservedPod,
  type PodEvent,
  observePlacement,
  renderObservation,
} from '../podplacement/explain.js';
import { projectGatedPod } from '../podplacement/pod-projection.js';
import { type PageRequest, FIRST_PAGE, pageOf } from './paging.js';
import type {
  ArchitectureRow,
  FailureGroupRow,
  GatedPodRow,
  PlacementView,
  PodExplanation,
} from './view-types.js';

type PodStatus = NonNullable<ObservedPod['status']>;

/**
 * What the dashboard's pod cache keeps of each pod: what pod placement's own cache keeps (projectGatedPod: names,
 * labels, the operator's annotations, nodeName, gates, node affinity, images, pull-secret names), plus what this
 * view and `explain` read besides (deletionTimestamp, phase, the PodScheduled condition). Applied as each pod is
 * decoded, so a tenant's 1.5 MB pod (env, command, annotations) costs the cache a few hundred bytes, as it costs
 * the operator's.
 */
export function projectPodForDashboard<P extends ObservedPod>(pod: P): P {
  const projected: ObservedPod & { metadata?: { deletionTimestamp?: string } } = projectGatedPod(pod);
  const deletionTimestamp = (pod.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp;
  if (deletionTimestamp !== undefined) projected.metadata = { ...projected.metadata, deletionTimestamp };
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  const status: { -readonly [K in keyof PodStatus]: PodStatus[K] } = {};
  if (pod.status?.phase !== undefined) status.phase = pod.status.phase;
  if (scheduled !== undefined)
    status.conditions = [
      { type: scheduled.type, status: scheduled.status, lastTransitionTime: scheduled.lastTransitionTime },
    ];
  return (pod.status === undefined ? projected : { ...projected, status }) as P;
}

/** The parts of a pod the view reads. */
export interface PlacementPod {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly creationTimestamp?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly deletionTimestamp?: string;
  };
  readonly spec?: {
    readonly nodeName?: string;
    readonly schedulingGates?: readonly { readonly name?: string }[];
    readonly containers?: readonly { readonly image?: string }[];
    readonly initContainers?: readonly { readonly image?: string }[];
  };
}

export interface PlacementNode {
  readonly metadata?: { readonly name?: string; readonly labels?: Readonly<Record<string, string>> };
}

export interface PlacementInputs {
  readonly pods: readonly PlacementPod[];
  readonly nodes: readonly PlacementNode[];
  /** The ClusterPodPlacementConfig `cluster` exists (the operator gates pods). */
  readonly operatorConfigured: boolean;
}

export interface PlacementPaging {
  readonly gated?: PageRequest;
  readonly byRegistry?: PageRequest;
  readonly byNamespace?: PageRequest;
}

/** Longest image reference read (the API server allows far longer; no real reference comes close). */
export const MAX_IMAGE_CHARS = 512;
/** Longest error example sent per failure group. */
export const MAX_EXAMPLE_CHARS = 300;
/** Images listed per architecture. */
export const MAX_IMAGES_PER_ARCHITECTURE = 20;

export function buildPlacementView(
  inputs: PlacementInputs,
  nowMs: number,
  paging: PlacementPaging = {},
): PlacementView {
  const archOfNode = new Map<string, string>();
  for (const n of inputs.nodes)
    archOfNode.set(n.metadata?.name ?? '', n.metadata?.labels?.[ARCH_LABEL] ?? 'unknown');

  const gated: GatedPodRow[] = [];
  const byArch = new Map<string, { pods: number; images: Map<string, number> }>();
  const byRegistry = new Map<string, FailureGroupRow>();
  const byNamespace = new Map<string, FailureGroupRow>();
  for (const pod of inputs.pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    const images = imagesOf(pod);
    if ((pod.spec?.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE)) {
      const created = Date.parse(pod.metadata?.creationTimestamp ?? '');
      gated.push({
        namespace: pod.metadata?.namespace ?? '',
        name: pod.metadata?.name ?? '',
        ageSeconds: Number.isFinite(created) ? Math.max(0, Math.floor((nowMs - created) / 1000)) : 0,
        images,
      });
    }
    const node = pod.spec?.nodeName;
    if (node) {
      const arch = archOfNode.get(node) ?? 'unknown';
      const row = byArch.get(arch) ?? { pods: 0, images: new Map<string, number>() };
      row.pods++;
      for (const image of new Set(images)) row.images.set(image, (row.images.get(image) ?? 0) + 1);
      byArch.set(arch, row);
    }
    if (pod.metadata?.labels?.[LABELS.imageInspectError] !== undefined) {
      const example = truncate(
        pod.metadata.annotations?.[ANNOTATIONS.imageInspectError] ?? '',
        MAX_EXAMPLE_CHARS,
      );
      for (const registry of new Set(images.map(registryOf))) count(byRegistry, registry, example);
      count(byNamespace, pod.metadata.namespace ?? '', example);
    }
  }
  // Oldest first; ties by namespace/name so the order is stable between updates.
  gated.sort(
    (a, b) =>
      b.ageSeconds - a.ageSeconds || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name),
  );
  const architectures: ArchitectureRow[] = [...byArch]
    .map(([architecture, row]) => ({
      architecture,
      pods: row.pods,
      images: [...row.images]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, MAX_IMAGES_PER_ARCHITECTURE)
        .map(([image, pods]) => ({ image, pods })),
    }))
    .sort((a, b) => a.architecture.localeCompare(b.architecture));
  return {
    available: true,
    note: inputs.operatorConfigured
      ? ''
      : 'No ClusterPodPlacementConfig "cluster": the pod placement operator is not enabled on this cluster, so no pod is gated. Create one (see README, Pod placement) to enable it.',
    gated: { count: gated.length, oldest: gated[0], pods: pageOf(gated, paging.gated ?? FIRST_PAGE) },
    architectures,
    failuresByRegistry: pageOf(mostFirst(byRegistry), paging.byRegistry ?? FIRST_PAGE),
    failuresByNamespace: pageOf(mostFirst(byNamespace), paging.byNamespace ?? FIRST_PAGE),
  };
}

/** What the operator did to one pod, as `tessera podplacement explain` prints it (its first part). */
export function explainPod(pod: ObservedPod, events: readonly PodEvent[]): PodExplanation {
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    text: renderObservation(observePlacement(pod, events)),
  };
}

/** The pod's image references, init containers first, each cut to MAX_IMAGE_CHARS. */
function imagesOf(pod: PlacementPod): string[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]
    .map((c) => truncate(c.image ?? '', MAX_IMAGE_CHARS))
    .filter((image) => image !== '');
}

/** The registry host of an image reference; the reference itself when it cannot be parsed. */
export function registryOf(image: string): string {
  try {
    return parseImageReference(image).registry;
  } catch {
    return `(unparsable) ${image}`;
  }
}

function count(groups: Map<string, FailureGroupRow>, key: string, example: string): void {
  const row = groups.get(key);
  groups.set(key, { key, pods: (row?.pods ?? 0) + 1, example: row?.example || example });
}

function mostFirst(groups: ReadonlyMap<string, FailureGroupRow>): FailureGroupRow[] {
  return [...groups.values()].sort((a, b) => b.pods - a.pods || a.key.localeCompare(b.key));
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
