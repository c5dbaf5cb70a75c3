// The status ConfigMap the Node Tuning side writes into the HCP namespace, as pure functions of the mirrored
// PerformanceProfile ConfigMap: name, labels, annotation, controller owner reference and the YAML `status` key.
// Guarantees: the result follows the contract exactly; callers create it, or update only `data` and the contract's
// labels/annotation of an existing object (other fields on the server stay untouched).
import { parseAllDocuments } from 'yaml';
import type { ConfigMap, PerformanceProfileStatus } from './api-types.js';
import { ANNOTATIONS, DATA_KEYS, LABELS, PERFORMANCE_PROFILE_KIND } from './constants.js';
import { ConfigMapIncompleteError, ProfileUndecodableError } from './errors.js';
import { nameOfNamespacedName, statusConfigMapName } from './names.js';
import { encodeProfileStatus } from './status-codec.js';

/** "namespace/name" of an object, for messages. */
export function refOf(obj: { metadata: { namespace?: string; name?: string } }): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

/** A manifest found under a `tuning` key. */
export interface TuningManifest {
  readonly kind: string;
  readonly name: string;
}

/** Kinds and names of the manifests under a `tuning` key (YAML or JSON, possibly several documents). */
export function parseTuningManifests(text: string, configMap: string): TuningManifest[] {
  const manifests: TuningManifest[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0)
      throw new ProfileUndecodableError(configMap, doc.errors[0]?.message ?? 'invalid YAML');
    const value: unknown = doc.toJS();
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
    data: { [DATA_KEYS.status]: encodeProfileStatus(status) },
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
