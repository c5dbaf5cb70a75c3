// Typed reads and writes of one resource: get/list/create/update/delete, the status subresource, JSON merge patch,
// JSON patch (RFC 6902) and server-side apply with a field manager. Every call is one HTTP request; combine with
// retryOnConflict() for read-modify-write loops. Objects returned are fresh (the caller may modify them).
import type { Operation } from 'fast-json-patch';
import type { KubeClient, QueryValue } from './client.js';
import type { KubeList, KubeObject } from './object.js';
import { apiVersionOf, resourcePath, type ResourceType } from './resources.js';

/** Names one object: namespace ('' or absent for cluster-scoped) and name. */
export interface ObjectRef {
  namespace?: string;
  name: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; 0/absent: no paging. */
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  signal?: AbortSignal;
}

/** List options plus what the page keeps of each item (see KubeClient.list: items are decoded one at a time). */
export interface ListPageOptions<T> extends ListOptions {
  /** What the page keeps of each parsed item, e.g. a projection. Default: the item as parsed. */
  item?: (raw: unknown, index: number) => T;
  /** Largest item accepted, in bytes of JSON. Default: DEFAULT_MAX_OBJECT_BYTES (10 MiB). */
  maxItemBytes?: number;
}

export interface WriteOptions {
  /** Field manager recorded in managedFields. Default: none (the server derives one from the user agent). */
  fieldManager?: string;
  /** 'status' to write the status subresource. */
  subresource?: 'status' | 'scale';
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Do not read the server's answer (see RequestOptions.discardAnswer): the call then resolves with undefined. */
  discardAnswer?: boolean;
}

export interface ApplyOptions extends WriteOptions {
  /** Required by server-side apply. */
  fieldManager: string;
  /** Take ownership of fields managed by others instead of failing with a conflict. Default: false. */
  force?: boolean;
}

export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

export class ResourceClient<T extends KubeObject> {
  constructor(
    readonly client: KubeClient,
    readonly type: ResourceType,
  ) {}

  get(ref: ObjectRef, signal?: AbortSignal): Promise<T> {
    return this.client.request<T>({ method: 'GET', path: this.path(ref.namespace, ref.name), signal });
  }

  /** One page, decoded item by item (a page of large objects is never one string in memory). */
  list(opts?: ListPageOptions<T>): Promise<KubeList<T>>;
  /** One page, keeping of each item what `opts.item` returns. */
  list<R>(opts: ListPageOptions<R> & { item: (raw: unknown, index: number) => R }): Promise<KubeList<R>>;
  list<R>(opts: ListPageOptions<R> = {}): Promise<KubeList<R>> {
    const query: Record<string, QueryValue> = {
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      limit: opts.limit,
      continue: opts.continue,
      resourceVersion: opts.resourceVersion,
      resourceVersionMatch: opts.resourceVersionMatch,
    };
    return this.client.list<R>({
      path: this.path(opts.namespace),
      query,
      signal: opts.signal,
      item: opts.item,
      maxItemBytes: opts.maxItemBytes,
    });
  }

  create(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.client.request<T>({
      method: 'POST',
      path: this.path(obj.metadata?.namespace),
      query: this.writeQuery(opts),
      body: this.withTypeMeta(obj),
      signal: opts.signal,
      discardAnswer: opts.discardAnswer,
    });
  }

  /** PUT; fails with 409 Conflict when metadata.resourceVersion is stale. Use opts.subresource='status' for status. */
  update(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.client.request<T>({
      method: 'PUT',
      path: this.path(obj.metadata?.namespace, obj.metadata?.name ?? '', opts.subresource),
      query: this.writeQuery(opts),
      body: this.withTypeMeta(obj),
      signal: opts.signal,
    });
  }

  /** Replaces the status subresource (metadata.resourceVersion guards against lost updates). */
  updateStatus(obj: T, opts: Omit<WriteOptions, 'subresource'> = {}): Promise<T> {
    return this.update(obj, { ...opts, subresource: 'status' });
  }

  delete(ref: ObjectRef, opts: { preconditionUid?: string; signal?: AbortSignal } = {}): Promise<unknown> {
    const body = opts.preconditionUid
      ? { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: opts.preconditionUid } }
      : undefined;
    return this.client.request<unknown>({
      method: 'DELETE',
      path: this.path(ref.namespace, ref.name),
      body,
      signal: opts.signal,
    });
  }

  /** RFC 7386 JSON merge patch (null deletes a field; lists are replaced whole). */
  mergePatch(ref: ObjectRef, patch: unknown, opts: WriteOptions = {}): Promise<T> {
    return this.patch(ref, patch, MERGE_PATCH, opts);
  }

  /** RFC 6902 JSON patch; add a `test` op on /metadata/resourceVersion for optimistic concurrency. */
  jsonPatch(ref: ObjectRef, ops: readonly Operation[], opts: WriteOptions = {}): Promise<T> {
    return this.patch(ref, ops, JSON_PATCH, opts);
  }

  /** Server-side apply of the fields in `obj` (which must carry name, and namespace when namespaced). */
  apply(obj: T, opts: ApplyOptions): Promise<T> {
    const ref = { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' };
    return this.patch(ref, this.withTypeMeta(obj), APPLY_PATCH, opts, {
      force: opts.force ? true : undefined,
    });
  }

  private patch(
    ref: ObjectRef,
    body: unknown,
    contentType: string,
    opts: WriteOptions,
    extra: Record<string, QueryValue> = {},
  ): Promise<T> {
    return this.client.request<T>({
      method: 'PATCH',
      path: this.path(ref.namespace, ref.name, opts.subresource),
      query: { ...this.writeQuery(opts), ...extra },
      body,
      contentType,
      signal: opts.signal,
      discardAnswer: opts.discardAnswer,
    });
  }

  private path(namespace?: string, name?: string, subresource?: string): string {
    return resourcePath(this.type, namespace, name, subresource);
  }

  private writeQuery(opts: WriteOptions): Record<string, QueryValue> {
    return { fieldManager: opts.fieldManager, dryRun: opts.dryRun ? 'All' : undefined };
  }

  private withTypeMeta(obj: T): T {
    return {
      ...obj,
      apiVersion: obj.apiVersion ?? apiVersionOf(this.type),
      kind: obj.kind ?? this.type.kind,
    };
  }
}
