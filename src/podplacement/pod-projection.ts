// What the operator keeps of a gated pod: the fields the pod reconciler, planPlacement (with pod-model) and the
// manual release read, and nothing else, so a pod's size is mostly not the cache's (env, command, args, volumes,
// probes, resources, tenant annotations, managedFields and status make up nearly all of a large pod). Applied to
// each pod as it is decoded from a list page or a watch event (client-go's informer transform), before the next is
// read. Pure; the result shares the kept values with its input.
//
// Kept, and who reads it:
//   apiVersion, kind                     events (the involved object)
//   metadata.name, namespace             cache key, patch target, events
//   metadata.uid, resourceVersion        events; resourceVersion is the patch's precondition (a changed pod is 409)
//   metadata.creationTimestamp           how long the pod has been gated (update insights: update-insights.ts)
//   metadata.labels (all)                PodPlacementConfig label selectors, the inspection-error count, the diff
//                                        the patch is computed from
//   metadata.annotations (the operator's three only)
//                                        preferred-affinity-sources is read and extended; the plan only ever sets
//                                        the operator's annotations and never removes one, so the patch, a diff of
//                                        these, is what it would be from the whole pod
//   metadata.ownerReferences (the controller reference only)
//                                        isFromDaemonSet (only a controlling DaemonSet counts)
//   spec.nodeName, spec.nodeSelector     ignoreReason, isArchitecturePinned
//   spec.affinity.nodeAffinity (whole)   the plan reads it and writes required/preferred terms back whole (a merge
//                                        patch replaces lists), so it must be exactly the pod's
//   spec.schedulingGates (names)         the gate; the patch writes back the other gates
//   spec.containers, spec.initContainers (name, image, imagePullPolicy)
//                                        the images to inspect and whether to bypass the cache
//   spec.imagePullSecrets (names)        the pod's credentials
// The patch never writes a dropped field (the merge patch carries the resourceVersion, labels and annotations it
// changes, the gates and nodeAffinity), and `spec.affinity.nodeAffinity` is merged into the pod's affinity, leaving
// podAffinity/podAntiAffinity (dropped here) as they are. `explain` reads pods from the API server, not this cache.
import { ANNOTATIONS } from './constants.js';
import type { Container, OwnerReference, Pod, PodMeta, PodSpec } from './pod-types.js';

const OPERATOR_ANNOTATIONS: readonly string[] = Object.values(ANNOTATIONS);

/** The fields of `pod` the operator reads (see the module comment); the values are shared, not copied. */
export function projectGatedPod<P extends Pod>(pod: P): P {
  const meta = pod.metadata;
  const spec = pod.spec;
  const metadata: { -readonly [K in keyof PodMeta]: PodMeta[K] } = {};
  if (meta !== undefined) {
    if (meta.name !== undefined) metadata.name = meta.name;
    if (meta.namespace !== undefined) metadata.namespace = meta.namespace;
    if (meta.uid !== undefined) metadata.uid = meta.uid;
    if (meta.resourceVersion !== undefined) metadata.resourceVersion = meta.resourceVersion;
    if (meta.creationTimestamp !== undefined) metadata.creationTimestamp = meta.creationTimestamp;
    if (meta.labels !== undefined) metadata.labels = meta.labels;
    const annotations = operatorAnnotations(meta.annotations);
    if (annotations !== undefined) metadata.annotations = annotations;
    const controller = meta.ownerReferences?.find((o) => o.controller === true);
    if (controller !== undefined) metadata.ownerReferences = [ownerReference(controller)];
  }
  const projected: { -readonly [K in keyof Pod]: Pod[K] } = { metadata };
  if (pod.apiVersion !== undefined) projected.apiVersion = pod.apiVersion;
  if (pod.kind !== undefined) projected.kind = pod.kind;
  if (spec !== undefined) projected.spec = projectSpec(spec);
  // Only Pod's fields are kept; the type parameter lets a cache of `Pod & KubeObject` keep its type.
  return projected as P;
}

function projectSpec(spec: PodSpec): PodSpec {
  const out: { -readonly [K in keyof PodSpec]: PodSpec[K] } = {};
  if (spec.nodeName !== undefined) out.nodeName = spec.nodeName;
  if (spec.nodeSelector !== undefined) out.nodeSelector = spec.nodeSelector;
  if (spec.affinity?.nodeAffinity !== undefined) out.affinity = { nodeAffinity: spec.affinity.nodeAffinity };
  if (spec.schedulingGates !== undefined)
    out.schedulingGates = spec.schedulingGates.map((g) => ({ name: g.name }));
  if (spec.containers !== undefined) out.containers = spec.containers.map(container);
  if (spec.initContainers !== undefined) out.initContainers = spec.initContainers.map(container);
  if (spec.imagePullSecrets !== undefined)
    out.imagePullSecrets = spec.imagePullSecrets.map((s) => (s.name === undefined ? {} : { name: s.name }));
  return out;
}

function container(c: Container): Container {
  const out: { -readonly [K in keyof Container]: Container[K] } = { name: c.name };
  if (c.image !== undefined) out.image = c.image;
  if (c.imagePullPolicy !== undefined) out.imagePullPolicy = c.imagePullPolicy;
  return out;
}

function ownerReference(o: OwnerReference): OwnerReference {
  const out: { -readonly [K in keyof OwnerReference]: OwnerReference[K] } = { kind: o.kind, name: o.name };
  if (o.apiVersion !== undefined) out.apiVersion = o.apiVersion;
  if (o.uid !== undefined) out.uid = o.uid;
  if (o.controller !== undefined) out.controller = o.controller;
  return out;
}

function operatorAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
): Record<string, string> | undefined {
  if (annotations === undefined) return undefined;
  let kept: Record<string, string> | undefined;
  for (const key of OPERATOR_ANNOTATIONS) {
    const value = annotations[key];
    if (typeof value !== 'string' || !Object.prototype.hasOwnProperty.call(annotations, key)) continue;
    (kept ??= {})[key] = value;
  }
  return kept;
}
