// Transforms applied to objects before an informer caches them. The default informer transform drops
// metadata.managedFields, which is often a third of an object's size and is not needed by controllers
// (controller-runtime users enable the same thing with TransformStripManagedFields).
import type { KubeObject } from '../object.js';

/** Returns `obj` with `metadata.managedFields` removed (a new metadata object; the rest is shared). */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata as (KubeObject['metadata'] & { managedFields?: unknown }) | undefined;
  if (!meta || meta.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...rest } = meta;
  obj.metadata = rest;
  return obj;
}
