// Recognises the pods of OLM v0's bundle-unpack Jobs (operator-lifecycle-manager pkg/controller/bundle/
// bundle_unpacker.go), the only pods that run operator bundle images: their `pull` init container runs the bundle
// with a copy tool from the `util` init container, and the `extract` container reads what it copied. Multi-
// architecture pipelines publish bundles as indexes of several platforms, so the images of these pods (and only
// these) are probed for a bundle behind such an index (InspectOptions.probeOperatorBundle), as MTO does for every
// index. Pure.
import type { Pod } from './pod-types.js';

/** Label OLM puts on unpack Jobs and, since 2025, on their pods (the bundle's ConfigMap name). */
export const BUNDLE_UNPACK_REF_LABEL = 'operatorframework.io/bundle-unpack-ref';

/**
 * True for a pod of an OLM bundle-unpack Job: it carries BUNDLE_UNPACK_REF_LABEL, or (OLM before 2025, whose pods
 * lack it) a Job controls it and its containers are OLM's: init containers `util` then `pull`, container `extract`.
 * A tenant can shape a pod like this; what it buys is at most two more registry requests per index of its own
 * images, once per manifest digest (the inspector remembers the answer), and a wider placement of its own pod.
 */
export function isOlmBundleUnpackPod(pod: Pod): boolean {
  if (Object.hasOwn(pod.metadata?.labels ?? {}, BUNDLE_UNPACK_REF_LABEL)) return true;
  const ownedByJob = (pod.metadata?.ownerReferences ?? []).some(
    (o) => o.controller === true && o.kind === 'Job',
  );
  const named = (containers: readonly { name: string }[] | undefined, names: readonly string[]): boolean =>
    (containers ?? []).length === names.length && names.every((n, i) => containers?.[i]?.name === n);
  return (
    ownedByJob &&
    named(pod.spec?.initContainers, ['util', 'pull']) &&
    named(pod.spec?.containers, ['extract'])
  );
}
