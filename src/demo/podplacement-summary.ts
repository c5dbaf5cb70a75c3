// The table `npm start` prints after the pod placement demo: where each demo pod landed and why. Pure.
import { ARCH_LABEL, LABELS } from '../podplacement/constants.js';

export interface PlacementRow {
  pod: string;
  images: string;
  supported: string;
  node: string;
  nodeArch: string;
  why: string;
}

/** The parts of a demo pod the summary reads. */
export interface DemoPod {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: {
    nodeName?: string;
    schedulingGates?: unknown[];
    containers: { image: string }[];
    initContainers?: { image: string }[];
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms: { matchExpressions?: { key: string; values?: string[] }[] }[];
        };
      };
    };
  };
}

export interface PlacementFacts {
  /** Node name -> its architecture label. */
  readonly nodeArch: ReadonlyMap<string, string>;
  /** Image reference -> the architectures the demo pushed for it. */
  readonly archsByRef: ReadonlyMap<string, readonly string[]>;
  /** Registry host, left out of the printed image references. */
  readonly registryHost: string;
}

/** Image references of a pod, init containers first. */
export function imagesOf(pod: DemoPod): string[] {
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((c) => c.image);
}

/** Why the pod is where it is: the operator's required architectures, still gated, or not placed. */
function placementReason(pod: DemoPod): string {
  const required = (
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  )
    .flatMap((t) => t.matchExpressions ?? [])
    .filter((e) => e.key === ARCH_LABEL)
    .flatMap((e) => e.values ?? []);
  if (pod.metadata.labels?.[LABELS.nodeAffinity] === 'set')
    return `operator required ${ARCH_LABEL} in [${required.join(', ')}]`;
  if ((pod.spec.schedulingGates ?? []).length > 0) return 'still gated (being inspected)';
  return 'not placed by the operator';
}

export function placementRow(pod: DemoPod, facts: PlacementFacts): PlacementRow {
  const refs = imagesOf(pod);
  const supported = refs
    .map((r) => facts.archsByRef.get(r) ?? [])
    .reduce((a, b) => a.filter((x) => b.includes(x)));
  return {
    pod: pod.metadata.name,
    images: refs.map((r) => r.replace(`${facts.registryHost}/`, '')).join(','),
    supported: supported.join(','),
    node: pod.spec.nodeName ?? '(pending)',
    nodeArch: facts.nodeArch.get(pod.spec.nodeName ?? '') ?? '-',
    why: placementReason(pod),
  };
}

/** A fixed-width table of where pods landed. */
export function renderPlacementSummary(rows: readonly PlacementRow[]): string {
  const head: PlacementRow = {
    pod: 'POD',
    images: 'IMAGES',
    supported: 'IMAGE ARCHS',
    node: 'NODE',
    nodeArch: 'NODE ARCH',
    why: 'WHY',
  };
  const all = [head, ...rows];
  const keys: (keyof PlacementRow)[] = ['pod', 'images', 'supported', 'node', 'nodeArch', 'why'];
  const widths = keys.map((k) => Math.max(...all.map((r) => r[k].length)));
  return (
    all
      .map((r) =>
        keys
          .map((k, i) => r[k].padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}
