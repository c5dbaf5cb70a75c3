// Which mirrored PerformanceProfile ConfigMaps of one NodePool to create, update or delete in its HCP namespace:
// a pure function of the mirrors the cache holds for the NodePool and the one it should have.
// Guarantees: every mirror other than the wanted one is deleted; the wanted one is created when missing, updated
// only when its `tuning` text or the contract's labels/annotation differ (other labels, annotations and data keys
// are kept), and left alone otherwise, so a steady state plans no write.
import type { ConfigMap } from '../api/types.js';
import { ANNOTATIONS, DATA_KEYS, LABELS } from '../constants.js';

/** The mirror a NodePool should have. */
export interface WantedMirror {
  /** HCP namespace. */
  readonly namespace: string;
  readonly name: string;
  /** The NodePool's name (label) and `namespace/name` (annotation). */
  readonly nodePoolName: string;
  readonly nodePoolKey: string;
  /** The tuning ConfigMap's `tuning` text, copied verbatim. */
  readonly tuning: string;
}

export interface MirrorPlan {
  readonly create?: ConfigMap;
  /** The existing mirror with the wanted content (a modified copy; send it as an update). */
  readonly update?: ConfigMap;
  readonly delete: readonly ConfigMap[];
}

/** `existing`: the NodePool's mirrors in the HCP namespace; `wanted`: none when it should have no mirror. */
export function planMirrors(existing: readonly ConfigMap[], wanted: WantedMirror | undefined): MirrorPlan {
  const toDelete = existing.filter((cm) => cm.metadata.name !== wanted?.name);
  if (!wanted) return { delete: toDelete };
  const labels = { [LABELS.ppConfigMap]: 'true', [LABELS.nodePool]: wanted.nodePoolName };
  const annotations = { [ANNOTATIONS.nodePool]: wanted.nodePoolKey };
  const current = existing.find((cm) => cm.metadata.name === wanted.name);
  if (!current) {
    const create: ConfigMap = {
      metadata: { name: wanted.name, namespace: wanted.namespace, labels, annotations },
      data: { [DATA_KEYS.tuning]: wanted.tuning },
    };
    return { create, delete: toDelete };
  }
  const upToDate =
    current.data?.[DATA_KEYS.tuning] === wanted.tuning &&
    Object.entries(labels).every(([k, v]) => current.metadata.labels?.[k] === v) &&
    current.metadata.annotations?.[ANNOTATIONS.nodePool] === wanted.nodePoolKey;
  if (upToDate) return { delete: toDelete };
  const update = structuredClone(current);
  update.metadata.labels = { ...update.metadata.labels, ...labels };
  update.metadata.annotations = { ...update.metadata.annotations, ...annotations };
  update.data = { ...update.data, [DATA_KEYS.tuning]: wanted.tuning };
  return { update, delete: toDelete };
}
