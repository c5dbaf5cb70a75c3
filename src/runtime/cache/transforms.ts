// Transforms applied to objects before an informer caches them. The default informer transform
// (`compactForCache`) drops metadata.managedFields, which is often a third of an object's size and is not needed by
// controllers (controller-runtime users enable the same thing with TransformStripManagedFields), and shares equal
// string values between cached objects.
import type { KubeObject } from '../object.js';

/** Returns `obj` with `metadata.managedFields` removed (a new metadata object; the rest is shared). */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata as (KubeObject['metadata'] & { managedFields?: unknown }) | undefined;
  if (!meta || meta.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...rest } = meta;
  obj.metadata = rest;
  return obj;
}

// V8 already shares parsed string values of up to 10 characters; longer ones are a fresh copy in every object
// ("IfNotPresent", "/var/run/secrets/kubernetes.io/serviceaccount", image names, namespace names), about a third
// of a cached pod. Strings longer than this are rarely repeated and are left as they are.
const MAX_SHARED_STRING_LENGTH = 256;
const MIN_SHARED_STRING_LENGTH = 11;

/**
 * Replaces every string value of `obj` (in place) by V8's internalized copy, so equal values held by many cached
 * objects are stored once. The internalized-string table is V8's own and weak: a value no cached object refers to
 * any more is collected, so this keeps no cache of its own that could grow. Iterative, so depth costs no stack.
 */
export function shareStrings<T>(obj: T): T {
  const pending: (Record<string, unknown> | unknown[])[] = [];
  if (obj !== null && typeof obj === 'object') pending.push(obj as Record<string, unknown>);
  for (let container = pending.pop(); container !== undefined; container = pending.pop()) {
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) container[i] = share(container[i], pending);
    } else {
      for (const key in container) container[key] = share(container[key], pending);
    }
  }
  return obj;
}

function share(value: unknown, pending: (Record<string, unknown> | unknown[])[]): unknown {
  if (typeof value === 'string') {
    return value.length >= MIN_SHARED_STRING_LENGTH && value.length <= MAX_SHARED_STRING_LENGTH
      ? internalized(value)
      : value;
  }
  if (value !== null && typeof value === 'object') pending.push(value as Record<string, unknown>);
  return value;
}

// V8 internalizes property names: a name read back from an object is the one shared copy of that string. The
// holder is a dictionary-mode object, so adding names creates no hidden classes (an object literal per value would
// leave one behind per distinct value until a few collections later).
const holder: Record<string, true> = Object.create(null) as Record<string, true>;
holder['\0'] = true;
delete holder['\0'];

function internalized(value: string): string {
  holder[value] = true;
  let shared = value;
  for (const name in holder) shared = name;
  delete holder[value];
  return shared;
}

/** The default informer transform: drop managedFields, share equal strings. */
export function compactForCache<T extends KubeObject>(obj: T): T {
  return shareStrings(stripManagedFields(obj));
}
