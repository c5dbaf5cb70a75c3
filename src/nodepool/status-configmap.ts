// The status ConfigMap the Node Tuning side writes into the HCP namespace, as pure functions of the mirrored
// PerformanceProfile ConfigMap: name, labels, annotation, controller owner reference and the YAML `status` key.
// Guarantees: the result follows the contract exactly; callers create it, or update only `data` and the contract's
// labels/annotation of an existing object (other fields on the server stay untouched).
import { stripManagedFields, errorMessage } from '../runtime/index.js';
import type { ConfigMap, PerformanceProfileStatus } from './api/types.js';
import { parseAllWithinBudget, STATUS_YAML_BUDGET, TUNING_YAML_BUDGET } from './bounded-yaml.js';
import { ANNOTATIONS, DATA_KEYS, LABELS, PERFORMANCE_PROFILE_KIND } from './constants.js';
import { ConfigMapIncompleteError, NodePoolError, ProfileUndecodableError } from './errors.js';
import { nameOfNamespacedName, statusConfigMapName } from './names.js';
import { encodeProfileStatusWithin } from './status-codec.js';

/**
 * Put by the NodePool controller's cache (never written to a server) on a status ConfigMap whose `status` key it did
 * not keep because it is longer than STATUS_YAML_BUDGET allows; the value is that key's length in characters.
 */
export const STATUS_NOT_CACHED_ANNOTATION = 'tessera.openshift.io/status-not-cached-length';

/**
 * Cached form of a status ConfigMap: metadata without managedFields and only the `status` key, or, when that key is
 * longer than STATUS_YAML_BUDGET allows, no data and STATUS_NOT_CACHED_ANNOTATION; so a hostile hosted cluster
 * cannot make the cache hold up to the API server's 1 MiB per object. O(1) apart from copying metadata.
 */
export function trimStatusConfigMap(cm: ConfigMap): ConfigMap {
  const stripped = stripManagedFields(cm);
  const status = stripped.data?.[DATA_KEYS.status];
  const { data: _data, binaryData: _binary, ...rest } = stripped as ConfigMap & { binaryData?: unknown };
  if (status === undefined) return rest;
  if (status.length <= STATUS_YAML_BUDGET.maxBytes) return { ...rest, data: { [DATA_KEYS.status]: status } };
  const annotations = { ...rest.metadata.annotations, [STATUS_NOT_CACHED_ANNOTATION]: String(status.length) };
  return { ...rest, metadata: { ...rest.metadata, annotations } };
}

/** "namespace/name" of an object, for messages. */
export function refOf(obj: { metadata: { namespace?: string; name?: string } }): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

/** A manifest found under a `tuning` key. */
export interface TuningManifest {
  readonly kind: string;
  readonly name: string;
}

/**
 * Kinds and names of the manifests under a `tuning` key (YAML or JSON, possibly several documents), parsed within
 * TUNING_YAML_BUDGET. Every error is a NodePoolError: BudgetExceededError before parsing, ProfileUndecodableError
 * (naming `configMap`) for anything the parser or the manifests get wrong.
 */
export function parseTuningManifests(text: string, configMap: string): TuningManifest[] {
  let values: unknown[];
  try {
    values = parseAllWithinBudget(text, TUNING_YAML_BUDGET, `key "tuning" of ConfigMap ${configMap}`);
  } catch (err) {
    if (err instanceof NodePoolError) throw err;
    const message = errorMessage(err);
    throw new ProfileUndecodableError(configMap, message.split('\n')[0] ?? message, { cause: err });
  }
  const manifests: TuningManifest[] = [];
  for (const value of values) {
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new ProfileUndecodableError(configMap, 'a manifest is not a mapping');
    }
    const { kind, metadata } = value as { kind?: unknown; metadata?: { name?: unknown } };
    const name = metadata?.name;
    if (typeof kind !== 'string' || typeof name !== 'string' || name === '') {
      throw new ProfileUndecodableError(configMap, 'a manifest has no kind or no metadata.name');
    }
    manifests.push({ kind, name });
  }
  return manifests;
}

/** The PerformanceProfile name in a ConfigMap's `tuning` key; undefined when it holds none (e.g. only Tuneds). */
export function performanceProfileNameIn(cm: ConfigMap): string | undefined {
  const text = cm.data?.[DATA_KEYS.tuning];
  if (text === undefined) throw new ConfigMapIncompleteError(refOf(cm), `"${DATA_KEYS.tuning}" key`);
  const profiles = parseTuningManifests(text, refOf(cm)).filter((m) => m.kind === PERFORMANCE_PROFILE_KIND);
  if (profiles.length > 1) {
    throw new ProfileUndecodableError(
      refOf(cm),
      `${profiles.length} PerformanceProfiles; a NodePool takes one`,
    );
  }
  return profiles[0]?.name;
}

/**
 * The status ConfigMap for a mirrored PerformanceProfile ConfigMap. Throws ConfigMapIncompleteError when the PP
 * ConfigMap lacks the nodePool annotation or a uid (the owner reference needs both).
 */
export function desiredStatusConfigMap(
  ppConfigMap: ConfigMap,
  profileName: string,
  status: PerformanceProfileStatus,
): ConfigMap {
  const nodePool = ppConfigMap.metadata.annotations?.[ANNOTATIONS.nodePool];
  if (!nodePool) throw new ConfigMapIncompleteError(refOf(ppConfigMap), `annotation ${ANNOTATIONS.nodePool}`);
  const uid = ppConfigMap.metadata.uid;
  if (!uid) throw new ConfigMapIncompleteError(refOf(ppConfigMap), 'metadata.uid');
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: statusConfigMapName(ppConfigMap.metadata.name ?? ''),
      namespace: ppConfigMap.metadata.namespace ?? '',
      labels: {
        [LABELS.performanceProfileName]: profileName,
        [LABELS.nodePool]: nameOfNamespacedName(nodePool),
        [LABELS.statusConfigMap]: 'true',
      },
      annotations: { [ANNOTATIONS.nodePool]: nodePool },
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: ppConfigMap.metadata.name ?? '',
          uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: { [DATA_KEYS.status]: encodeProfileStatusWithin(status) },
  };
}

/**
 * True when `existing` differs from `desired` in anything the contract governs other than the status text
 * (labels, annotation, owner): such drift is repaired even when the status itself is unchanged.
 */
export function statusConfigMapMetadataDrifted(existing: ConfigMap, desired: ConfigMap): boolean {
  const labels = desired.metadata.labels ?? {};
  const annotations = desired.metadata.annotations ?? {};
  const owner = desired.metadata.ownerReferences?.[0];
  return (
    Object.entries(labels).some(([k, v]) => existing.metadata.labels?.[k] !== v) ||
    Object.entries(annotations).some(([k, v]) => existing.metadata.annotations?.[k] !== v) ||
    !existing.metadata.ownerReferences?.some((o) => o.uid === owner?.uid && o.controller === true)
  );
}
