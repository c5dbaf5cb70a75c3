// The object shape the runtime relies on, and cache keys. Objects are the API server's JSON as parsed (timestamps
// are RFC 3339 strings, not Date), and @kubernetes/client-node model types such as V1Pod are assignable to
// KubeObject. Objects handed out by caches are shared: callers must not modify them (copy with structuredClone).

/** The metadata fields the runtime reads. */
export interface KubeObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: KubeObjectMeta;
}

/** A list response (one page). */
export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** `namespace/name`, or `name` for cluster-scoped objects (client-go MetaNamespaceKeyFunc). */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name ?? '';
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** Inverse of objectKey(): `{ namespace: '' }` for cluster-scoped keys. */
export function splitObjectKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: '', name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** resourceVersion of `obj`, '' when missing. */
export function resourceVersionOf(obj: KubeObject): string {
  return obj.metadata?.resourceVersion ?? '';
}
