// The informer contract of the UpdateStatus API, as pure functions (README "Update status informers"). Any
// number of informers (Tessera's control-plane and node informers, pod placement, NodePool status, external
// components) contribute insights to the one UpdateStatus `cluster`:
// - An informer owns `status.informers[name=N]` (its heartbeat), `status.controlPlane.informers[name=N]` and
//   `status.workerPools[name=P].informers[name=N]` (with the pool's `name` and `resource`), nothing else, and writes
//   them by server-side apply of its whole contribution on the status subresource with field manager
//   `updatestatus-informer-N`: the lists are listMaps keyed by name, so the API server merges informers, and an
//   apply that leaves out an insight the informer wrote before removes it.
// - It renews its heartbeat at least every HEARTBEAT_INTERVAL_MS. An informer whose heartbeat is older than
//   STALE_AFTER_MS is stale: readers leave its insights out and say so. Older than EXPIRE_AFTER_MS, or over its
//   byte budget, the aggregator removes its entries.
// - The aggregator (Tessera's update status controller) owns the rest: `status.conditions`, the controlPlane and
//   worker pool `resource`s and `Updating` conditions, computed from every live informer's insights (aggregate.ts).
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type {
  ControlPlaneInsight,
  InformerRegistration,
  ResourceRef,
  UpdateStatus,
  UpdateStatusStatus,
  WorkerPoolInsight,
} from './schema.js';
import { CONTROL_PLANE_INFORMER, GROUP, KIND, NODE_INFORMER, SINGLETON_NAME, VERSION } from './names.js';

/** Budgets of the contract. The CRD enforces the counts; the aggregator enforces the bytes. */
export const INFORMER_BUDGETS = {
  /** Informers per scope (the control plane, each worker pool) and registrations: the CRD's maxItems. */
  maxInformers: 16,
  maxControlPlaneInsights: 128,
  maxWorkerPoolInsights: 1024,
  maxWorkerPools: 32,
  /**
   * JSON bytes of one informer's entries (all scopes). Tessera's node informer at 20 node insights per pool in 32
   * pools stays under it; more than this is a misbehaving informer.
   */
  maxInformerBytes: 512 * 1024,
  /** JSON bytes of the whole status: well under etcd's 1.5 MiB request limit, which also holds managedFields. */
  maxStatusBytes: 1024 * 1024,
} as const;

/** An informer renews its heartbeat at least this often while it runs (ms). */
export const HEARTBEAT_INTERVAL_MS = 60_000;
/** Without a heartbeat for this long, an informer's insights are stale: left out, and named as such (ms). */
export const STALE_AFTER_MS = 3 * HEARTBEAT_INTERVAL_MS;
/** Without a heartbeat for this long, the aggregator removes the informer's entries (ms). */
export const EXPIRE_AFTER_MS = 60 * 60_000;

/** Informer names: a DNS-1123 label, so the field manager name stays within its 128-character limit. */
const INFORMER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function isInformerName(name: string): boolean {
  return INFORMER_NAME.test(name);
}

/** The field manager an informer applies with. */
export function informerFieldManager(name: string): string {
  return `updatestatus-informer-${name}`;
}

/** One insight entry as the API holds it. */
export interface InsightEntry<T> {
  readonly uid: string;
  readonly acquiredAt: string;
  readonly insight: T;
}

/** Everything one informer reports: what it applies, without its heartbeat. */
export interface InformerContribution {
  readonly name: string;
  readonly description?: string;
  readonly controlPlane?: readonly InsightEntry<ControlPlaneInsight>[];
  readonly workerPools?: readonly {
    readonly name: string;
    readonly resource: ResourceRef;
    readonly insights: readonly InsightEntry<WorkerPoolInsight>[];
  }[];
}

/** Why a contribution breaks the contract, or undefined when it keeps it (the writer checks before it writes). */
export function contributionViolation(c: InformerContribution): string | undefined {
  if (!isInformerName(c.name)) return `informer name ${JSON.stringify(c.name)} is not a DNS-1123 label`;
  const b = INFORMER_BUDGETS;
  if ((c.controlPlane?.length ?? 0) > b.maxControlPlaneInsights)
    return `${c.controlPlane?.length} control-plane insights (at most ${b.maxControlPlaneInsights})`;
  if ((c.workerPools?.length ?? 0) > b.maxWorkerPools)
    return `${c.workerPools?.length} worker pools (at most ${b.maxWorkerPools})`;
  for (const pool of c.workerPools ?? []) {
    if (pool.insights.length > b.maxWorkerPoolInsights)
      return `${pool.insights.length} insights in worker pool ${pool.name} (at most ${b.maxWorkerPoolInsights})`;
  }
  // The insight lists are atomic in the CRD (one writer each), so the API server no longer refuses a repeated uid.
  const repeated = repeatedUid(c.controlPlane ?? []);
  if (repeated !== undefined) return `control-plane insight uid ${repeated} appears more than once`;
  for (const pool of c.workerPools ?? []) {
    const inPool = repeatedUid(pool.insights);
    if (inPool !== undefined)
      return `insight uid ${inPool} appears more than once in worker pool ${pool.name}`;
  }
  const bytes = contributionBytes(c);
  if (bytes > b.maxInformerBytes) return `${bytes} bytes of insights (at most ${b.maxInformerBytes})`;
  return undefined;
}

/** The first uid that `entries` holds twice, if any. */
function repeatedUid(entries: readonly { readonly uid: string }[]): string | undefined {
  const seen = new Set<string>();
  for (const e of entries) {
    if (seen.has(e.uid)) return e.uid;
    seen.add(e.uid);
  }
  return undefined;
}

/** JSON bytes of a contribution's insight entries. */
export function contributionBytes(c: InformerContribution): number {
  const insights = [c.controlPlane ?? [], ...(c.workerPools ?? []).map((p) => p.insights)];
  return Buffer.byteLength(JSON.stringify(insights));
}

/** The server-side apply body of a contribution with its heartbeat. */
export function applyConfiguration(c: InformerContribution, heartbeatTime: string): UpdateStatus {
  const registration: InformerRegistration = {
    name: c.name,
    heartbeatTime,
    ...(c.description !== undefined ? { description: c.description } : {}),
  };
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: KIND,
    metadata: { name: SINGLETON_NAME },
    spec: {},
    status: {
      informers: [registration],
      ...(c.controlPlane !== undefined && c.controlPlane.length > 0
        ? { controlPlane: { informers: [{ name: c.name, insights: [...c.controlPlane] }] } }
        : {}),
      ...((c.workerPools?.length ?? 0) > 0
        ? {
            workerPools: (c.workerPools ?? []).map((p) => ({
              name: p.name,
              resource: p.resource,
              informers: [{ name: c.name, insights: [...p.insights] }],
            })),
          }
        : {}),
    },
  };
}

/** What `status` holds of informer `name` (its entries in every scope; undefined members when it has none). */
export function storedContribution(
  status: UpdateStatusStatus | undefined,
  name: string,
): InformerContribution {
  const cp = status?.controlPlane?.informers?.find((i) => i.name === name);
  const pools = (status?.workerPools ?? []).flatMap((p) => {
    const own = p.informers?.find((i) => i.name === name);
    return own ? [{ name: p.name, resource: p.resource, insights: own.insights ?? [] }] : [];
  });
  const registration = status?.informers?.find((r) => r.name === name);
  return {
    name,
    ...(registration?.description !== undefined ? { description: registration.description } : {}),
    ...(cp ? { controlPlane: cp.insights ?? [] } : {}),
    ...(pools.length > 0 ? { workerPools: pools } : {}),
  };
}

/**
 * `next` with each insight's acquiredAt taken from `stored` where the same uid is there (in the same scope): an
 * insight keeps the time it was first observed however often it is recomputed.
 */
export function keepAcquiredAt(
  stored: InformerContribution,
  next: InformerContribution,
): InformerContribution {
  const cp = new Map((stored.controlPlane ?? []).map((e) => [e.uid, e.acquiredAt]));
  const pools = new Map(
    (stored.workerPools ?? []).map((p) => [p.name, new Map(p.insights.map((e) => [e.uid, e.acquiredAt]))]),
  );
  const keep = <T>(e: InsightEntry<T>, from: Map<string, string> | undefined): InsightEntry<T> => {
    const acquiredAt = from?.get(e.uid);
    return acquiredAt === undefined || acquiredAt === e.acquiredAt ? e : { ...e, acquiredAt };
  };
  return {
    ...next,
    ...(next.controlPlane ? { controlPlane: next.controlPlane.map((e) => keep(e, cp)) } : {}),
    ...(next.workerPools
      ? {
          workerPools: next.workerPools.map((p) => ({
            ...p,
            insights: p.insights.map((e) => keep(e, pools.get(p.name))),
          })),
        }
      : {}),
  };
}

/** True when `stored` already holds exactly `next` (so only a due heartbeat makes a write necessary). */
export function contributionUnchanged(stored: InformerContribution, next: InformerContribution): boolean {
  const norm = (c: InformerContribution) =>
    JSON.parse(
      JSON.stringify({
        description: c.description,
        controlPlane: c.controlPlane?.length ? c.controlPlane : undefined,
        workerPools: (c.workerPools ?? [])
          .filter((p) => p.insights.length > 0)
          .map((p) => ({ name: p.name, resource: p.resource, insights: p.insights })),
      }),
    ) as unknown;
  return isDeepStrictEqual(norm(stored), norm(next));
}

/**
 * What the API server holds after every contribution was applied once (pools by name): the model of the
 * server-side merge, for `-o json` of a client-side assessment and for tests. The aggregator's fields are not set.
 */
export function mergeContributions(
  contributions: readonly InformerContribution[],
  heartbeatTime: string,
): UpdateStatusStatus {
  const status: UpdateStatusStatus = { informers: [] };
  const pools = new Map<string, NonNullable<UpdateStatusStatus['workerPools']>[number]>();
  for (const c of contributions) {
    const applied = applyConfiguration(c, heartbeatTime).status ?? {};
    status.informers?.push(...(applied.informers ?? []));
    for (const informer of applied.controlPlane?.informers ?? []) {
      status.controlPlane ??= {};
      (status.controlPlane.informers ??= []).push(informer);
    }
    for (const pool of applied.workerPools ?? []) {
      const existing = pools.get(pool.name);
      if (existing) existing.informers?.push(...(pool.informers ?? []));
      else pools.set(pool.name, { ...pool, informers: [...(pool.informers ?? [])] });
    }
  }
  if (pools.size > 0)
    status.workerPools = [...pools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return status;
}

/** How a reader treats an informer's insights. */
export type InformerStateKind =
  /** Heartbeat within STALE_AFTER_MS (or a status written before the contract): its insights count. */
  | 'live'
  /** No heartbeat for STALE_AFTER_MS: its insights are left out, and readers say so. */
  | 'stale'
  /** No heartbeat for EXPIRE_AFTER_MS, or never registered for that long: the aggregator removes it. */
  | 'expired'
  /** Its entries exceed INFORMER_BUDGETS.maxInformerBytes (or crowd the status past maxStatusBytes). */
  | 'over-budget';

export interface InformerState {
  readonly name: string;
  readonly state: InformerStateKind;
  /** Its heartbeat (ms since the epoch), when it registered one that parses. */
  readonly heartbeatAtMs?: number;
  readonly insights: number;
  readonly bytes: number;
}

/** Every informer that `status` names (registered or holding entries), with how readers treat it at `nowMs`. */
export function informerStates(status: UpdateStatusStatus | undefined, nowMs: number): InformerState[] {
  const registrations = status?.informers ?? [];
  // A status without registrations was written before the contract (by an earlier Tessera, or a writer that
  // follows only the upstream API): there is no liveness to judge, so it is read as it is.
  const legacy = registrations.length === 0;
  const seen = new Map<string, { insights: number; entries: unknown[]; newestAcquiredMs: number }>();
  const visit = (
    informers: readonly { name: string; insights?: readonly { acquiredAt: string }[] }[] | undefined,
  ) => {
    for (const informer of informers ?? []) {
      const s = seen.get(informer.name) ?? { insights: 0, entries: [], newestAcquiredMs: -Infinity };
      s.insights += informer.insights?.length ?? 0;
      s.entries.push(informer.insights ?? []);
      for (const i of informer.insights ?? []) {
        const t = Date.parse(i.acquiredAt);
        // A time in the future is no sign of life (it would keep unregistered entries from ever expiring).
        if (t > s.newestAcquiredMs && t <= nowMs + STALE_AFTER_MS) s.newestAcquiredMs = t;
      }
      seen.set(informer.name, s);
    }
  };
  visit(status?.controlPlane?.informers);
  for (const pool of status?.workerPools ?? []) visit(pool.informers);
  for (const r of registrations)
    if (!seen.has(r.name)) seen.set(r.name, { insights: 0, entries: [], newestAcquiredMs: -Infinity });

  const states: InformerState[] = [];
  for (const [name, s] of seen) {
    const registration = registrations.find((r) => r.name === name);
    const heartbeatAtMs = registration ? Date.parse(registration.heartbeatTime) : undefined;
    const bytes = Buffer.byteLength(JSON.stringify(s.entries));
    // Unregistered entries have no heartbeat: their newest insight is the last sign of life there is.
    const lastSignMs =
      heartbeatAtMs !== undefined && !Number.isNaN(heartbeatAtMs) ? heartbeatAtMs : undefined;
    const silentMs = nowMs - (lastSignMs ?? (registration ? -Infinity : s.newestAcquiredMs));
    let state: InformerStateKind;
    if (bytes > INFORMER_BUDGETS.maxInformerBytes) state = 'over-budget';
    else if (legacy) state = 'live';
    else if (!registration) state = silentMs > EXPIRE_AFTER_MS ? 'expired' : 'stale';
    else if (silentMs > EXPIRE_AFTER_MS) state = 'expired';
    // A heartbeat further ahead than the staleness allowance says nothing about now (a bad clock, or a writer
    // that would stay live forever): left out, not removed, so a skewed informer is not removed on every write.
    else if (silentMs > STALE_AFTER_MS || -silentMs > STALE_AFTER_MS) state = 'stale';
    else state = 'live';
    states.push({
      name,
      state,
      ...(lastSignMs !== undefined ? { heartbeatAtMs: lastSignMs } : {}),
      insights: s.insights,
      bytes,
    });
  }
  // The whole status over its budget: the largest informers are dropped first until the rest fits, Tessera's own
  // (reserved names) last, so others crowding the object cannot make Tessera drop its node insights.
  let total = states.reduce((sum, s) => sum + s.bytes, 0);
  const reserved = (name: string) => RESERVED_INFORMER_NAMES.includes(name);
  for (const s of [...states].sort(
    (a, b) => Number(reserved(a.name)) - Number(reserved(b.name)) || b.bytes - a.bytes,
  )) {
    if (total <= INFORMER_BUDGETS.maxStatusBytes) break;
    if (s.state === 'over-budget') continue;
    states[states.indexOf(s)] = { ...s, state: 'over-budget' };
    total -= s.bytes;
  }
  return states.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const FIRST_INFORMERS: readonly string[] = [CONTROL_PLANE_INFORMER, NODE_INFORMER];
/**
 * Names of Tessera's own informers: another component writing under one of them would share its field manager
 * and delete its insights on every apply, so the contract's client refuses them unless told it is Tessera's.
 */
export const RESERVED_INFORMER_NAMES: readonly string[] = [
  CONTROL_PLANE_INFORMER,
  NODE_INFORMER,
  'podplacement',
  'nodepools',
];

/**
 * The order informers' insights are read in where two could say the same thing (a ClusterVersion or pool insight):
 * Tessera's control-plane and node informers first, then the others by name, whatever order the API server merged
 * them in, so another informer can neither override Tessera's nor make the result flip between merges.
 */
export function byInformerPrecedence(a: { name: string }, b: { name: string }): number {
  const rank = (n: string) =>
    FIRST_INFORMERS.includes(n) ? FIRST_INFORMERS.indexOf(n) : FIRST_INFORMERS.length;
  return rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** `status` with only the entries of live informers: what readers and the aggregator build on. */
export function liveInsights(
  status: UpdateStatusStatus,
  states: readonly InformerState[],
): UpdateStatusStatus {
  const live = new Set(states.filter((s) => s.state === 'live').map((s) => s.name));
  const keep = <T extends { name: string }>(informers: readonly T[] | undefined) =>
    informers?.filter((i) => live.has(i.name));
  return {
    ...status,
    ...(status.controlPlane
      ? { controlPlane: { ...status.controlPlane, informers: keep(status.controlPlane.informers) } }
      : {}),
    ...(status.workerPools
      ? { workerPools: status.workerPools.map((p) => ({ ...p, informers: keep(p.informers) })) }
      : {}),
  };
}

/** A JSON patch operation (RFC 6902) of the removals. */
export type RemovalOperation = { op: 'test'; path: string; value: string } | { op: 'remove'; path: string };

/**
 * The JSON patch that removes every entry of the `names` informers from `status` (registrations too, and the
 * worker pools that held nothing else): each
 * removal is guarded by a `test` of the name at that index, so a concurrent change makes the patch fail (and the
 * aggregator retry on fresh data) instead of removing someone else's entry. Indexes are removed from the last
 * down so earlier ones stay valid. Empty when there is nothing to remove.
 */
export function removalPatch(
  status: UpdateStatusStatus | undefined,
  names: ReadonlySet<string>,
): RemovalOperation[] {
  const ops: RemovalOperation[] = [];
  const removeFrom = (base: string, list: readonly { name: string }[] | undefined) => {
    const indexes = (list ?? []).flatMap((item, i) => (names.has(item.name) ? [i] : []));
    for (const i of indexes.reverse()) {
      ops.push({ op: 'test', path: `${base}/${i}/name`, value: (list ?? [])[i]?.name ?? '' });
      ops.push({ op: 'remove', path: `${base}/${i}` });
    }
  };
  removeFrom('/status/informers', status?.informers);
  removeFrom('/status/controlPlane/informers', status?.controlPlane?.informers);
  // Last pool first, so removing a whole pool leaves the indexes of the ones still to patch valid.
  const pools = status?.workerPools ?? [];
  for (let p = pools.length - 1; p >= 0; p--) {
    const pool = pools[p];
    if (!pool) continue;
    const informers = pool.informers ?? [];
    // A pool only removed informers were in goes whole: their field managers still own its `name` and
    // `resource`, so removing just their entries would leave an empty pool that counts against maxItems forever.
    if (informers.length > 0 && informers.every((i) => names.has(i.name))) {
      ops.push({ op: 'test', path: `/status/workerPools/${p}/name`, value: pool.name });
      ops.push({ op: 'remove', path: `/status/workerPools/${p}` });
    } else removeFrom(`/status/workerPools/${p}/informers`, pool.informers);
  }
  return ops;
}

/** A stable insight uid for any key: `<prefix>-<hash>`, a DNS label. */
export function hashedUid(prefix: string, key: string): string {
  return `${prefix}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}
