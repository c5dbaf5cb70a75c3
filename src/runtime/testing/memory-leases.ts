// One Lease in memory with the API server's optimistic concurrency, for tests of what takes turns through a Lease
// (leader election, the UpdateStatus write turn) on a FakeClock.
import { ApiStatusError, ApiTransportError } from '../errors.js';
import type { Lease, LeaseClient } from '../leader-election.js';
import type { ObjectRef, WriteOptions } from '../resource-client.js';
import type { FakeClock } from './fake-clock.js';

export type MemoryLeaseMode = 'ok' | 'refuse' | 'hang';

/** One Lease in memory with optimistic concurrency; `mode` makes every call succeed, fail at once, or hang. */
export class MemoryLeases implements LeaseClient {
  lease: Lease | undefined;
  mode: MemoryLeaseMode = 'ok';
  /** Every call: operation, clock time, and the signal it was given. */
  readonly calls: Array<{ op: string; at: number; signal: AbortSignal | undefined }> = [];
  private rv = 0;

  constructor(private readonly clock: FakeClock) {}

  get(_ref: ObjectRef, signal?: AbortSignal): Promise<Lease> {
    return this.answer('get', signal, () => {
      if (!this.lease) throw new ApiStatusError('GET', '/lease', 404, 'NotFound', 'not found', {});
      return structuredClone(this.lease);
    });
  }

  create(obj: Lease, opts: WriteOptions = {}): Promise<Lease> {
    return this.answer('create', opts.signal, () => {
      if (this.lease) throw new ApiStatusError('POST', '/lease', 409, 'AlreadyExists', 'exists', {});
      return this.store(obj);
    });
  }

  update(obj: Lease, opts: WriteOptions = {}): Promise<Lease> {
    return this.answer('update', opts.signal, () => {
      if (obj.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion)
        throw new ApiStatusError('PUT', '/lease', 409, 'Conflict', 'stale', {});
      return this.store(obj);
    });
  }

  /** Another candidate writes the lease (as if it had taken over). */
  takenBy(holder: string): void {
    this.store({ ...this.lease, spec: { ...this.lease?.spec, holderIdentity: holder } });
  }

  private store(obj: Lease): Lease {
    this.lease = {
      ...structuredClone(obj),
      metadata: { ...obj.metadata, resourceVersion: String(++this.rv) },
    };
    return structuredClone(this.lease);
  }

  private answer<T>(op: string, signal: AbortSignal | undefined, fn: () => T): Promise<T> {
    this.calls.push({ op, at: this.clock.now(), signal });
    if (this.mode === 'refuse')
      return Promise.reject(new ApiTransportError('GET', '/lease', 'connect ECONNREFUSED'));
    if (this.mode === 'hang')
      return new Promise<T>((_resolve, reject) => {
        const fail = (): void => reject(new ApiTransportError('GET', '/lease', 'request aborted'));
        if (signal?.aborted) fail();
        else signal?.addEventListener('abort', fail, { once: true });
      });
    return Promise.resolve().then(fn);
  }
}
