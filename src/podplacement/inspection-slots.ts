// Who may wait on registries right now. A registry inspection holds a controller worker until its registry answers
// or the pod's deadline passes, so inspections are admitted under three caps: in total (below the worker count, so
// workers stay free for pods the cache answers), per namespace (a tenant) and per registry host. A pod over a cap
// joins a wait line and its worker moves on. When a slot frees, it is set aside for the next waiting pod and that
// pod is woken: the waiting namespace with the fewest inspections in flight, then the one served least recently
// (a namespace never served first), then its oldest pod that fits the host caps. A newcomer never takes a slot
// from a waiting pod, so a tenant that starts waiting is served at the first freed slot its namespace and hosts
// allow, within one inspection deadline while fewer namespaces wait than there are slots in total, however many
// pods, namespaces or registry names the others use. Not guaranteed: the order within a namespace beyond its
// oldest SCAN_LIMIT waiting pods (later ones are reached as those go, or when they come back on their own).
// The caps' defaults are shares of the pod controller's workers, so the worker default lives here with them: one
// source for the controller, the reconciler and the CLI's help (which imports this module: it loads only light.ts).
import type { Clock } from '../runtime/index.js';
import { InvalidArgumentError } from '../runtime/light.js';

/** Default of the pod controller's workers (--workers): concurrent pod reconciles. */
export const DEFAULT_WORKERS = 8;
/** When a held-back pod is looked at again, in ms, if nothing wakes it: a safety net when a wake is wired. */
export const HELD_BACK_RECHECK_MS = 2_000;
/** When a held-back pod is looked at again, in ms, when nothing can wake it (it polls). */
export const HELD_BACK_POLL_MS = 250;

export interface InspectionSlotCaps {
  /** Registry inspections in flight at once, all namespaces together. */
  maxInspections: number;
  /** Registry inspections in flight at once for pods of one namespace. */
  maxInspectionsPerNamespace: number;
  /** Registry inspections in flight at once naming one registry host, all namespaces together. */
  maxInspectionsPerRegistry: number;
}

/**
 * The caps' defaults for a controller with `workers` workers, so neither any number of tenants nor a registry holds
 * every worker: in total `workers` less a quarter (at least 1 left for pods the cache answers, from 2 workers on),
 * a quarter of them per namespace and half of them per registry host (each at least 1). With DEFAULT_WORKERS (8):
 * 6, 2 and 4.
 */
export function defaultInspectionSlotCaps(workers: number): InspectionSlotCaps {
  const quarter = Math.max(1, Math.floor(workers / 4));
  return {
    maxInspections: Math.max(1, workers - quarter),
    maxInspectionsPerNamespace: quarter,
    maxInspectionsPerRegistry: Math.max(1, Math.floor(workers / 2)),
  };
}

/**
 * `given` caps, the others defaulted for `workers` (defaultInspectionSlotCaps); throws InvalidArgumentError naming
 * a cap that is not an integer >= 1.
 */
export function inspectionSlotCaps(
  given: Partial<InspectionSlotCaps> = {},
  workers = DEFAULT_WORKERS,
): InspectionSlotCaps {
  const defaults = defaultInspectionSlotCaps(workers);
  const caps: InspectionSlotCaps = {
    maxInspections: given.maxInspections ?? defaults.maxInspections,
    maxInspectionsPerNamespace: given.maxInspectionsPerNamespace ?? defaults.maxInspectionsPerNamespace,
    maxInspectionsPerRegistry: given.maxInspectionsPerRegistry ?? defaults.maxInspectionsPerRegistry,
  };
  for (const [field, v] of Object.entries(caps))
    if (!Number.isInteger(v) || v < 1)
      throw new InvalidArgumentError(field, `must be an integer >= 1, got ${v}`);
  return caps;
}

export interface InspectionSlotsOptions extends InspectionSlotCaps {
  clock: Clock;
  /** Called with a waiting pod's key when a slot is set aside for it (puts it back on the work queue). */
  wake?: (podKey: string) => void;
  /** How long a slot set aside for a woken pod waits for it to come back, in ms; then it goes to the next pod. */
  reservationTtlMs: number;
}

/** The cap a pod waits for: `namespace`, `registry HOST`, or `total`. */
export type SaturatedSlot = 'namespace' | 'total' | `registry ${string}`;

/** Waiting pods looked at per namespace when a slot frees (bounds the work of one release). */
export const SCAN_LIMIT = 16;

interface Holder {
  readonly namespace: string;
  readonly hosts: readonly string[];
}

interface NamespaceState {
  /** Slots held by this namespace's pods (in flight or set aside). */
  inFlight: number;
  /** `served` sequence number when a pod of this namespace last got a slot; 0: never (kept while not idle). */
  lastServed: number;
  /** Pods waiting for a slot, oldest first, with the registry hosts their images name. */
  readonly waiting: Map<string, readonly string[]>;
}

export class InspectionSlots {
  private total = 0;
  /** Namespaces with a slot or a waiting pod; dropped when idle. Insertion order: first seen first. */
  private readonly namespaces = new Map<string, NamespaceState>();
  /** Slots held per registry host; a host at 0 is dropped. */
  private readonly byHost = new Map<string, number>();
  /** Slots set aside for woken pods, by pod key; counted in `total`, `inFlight` and `byHost` already. */
  private readonly reserved = new Map<string, Holder & { expiresAt: number }>();
  private served = 0;

  constructor(private readonly o: InspectionSlotsOptions) {}

  /**
   * Takes a slot for `podKey` (its namespace's and one per host), all or none, or the slot set aside for it.
   * Returns the function that gives it back (idempotent), or the cap it waits for; a waiting pod is woken (see
   * `wake`) when its turn comes, and may also just call again.
   */
  tryAcquire(
    podKey: string,
    namespace: string,
    hosts: readonly string[],
  ): { release: () => void } | { saturated: SaturatedSlot } {
    this.expireReservations();
    const held = this.reserved.get(podKey);
    if (held !== undefined) {
      this.reserved.delete(podKey);
      if (held.namespace === namespace && sameHosts(held.hosts, hosts))
        return { release: this.releaser(held) };
      this.giveBack(held); // the pod changed meanwhile: its turn is spent
    }
    const ns = this.namespaces.get(namespace);
    const saturated = this.saturatedFor(ns, hosts);
    if (saturated !== undefined) {
      this.join(podKey, namespace, hosts);
      return { saturated };
    }
    // Room: no waiting pod fits it (a freed slot goes to the waiting pods first), so this pod may take it.
    ns?.waiting.delete(podKey);
    const holder = { namespace, hosts: [...hosts] };
    this.take(holder);
    return { release: this.releaser(holder) };
  }

  /** The pod is gone or needs no registry any more: it leaves the line and gives back a slot set aside for it. */
  forget(podKey: string, namespace: string): void {
    const ns = this.namespaces.get(namespace);
    ns?.waiting.delete(podKey);
    const held = this.reserved.get(podKey);
    if (held !== undefined) {
      this.reserved.delete(podKey);
      this.giveBack(held);
    } else if (ns !== undefined) {
      this.dropIfIdle(namespace, ns);
    }
  }

  /** Slots held by `namespace` (in flight or set aside). For tests and metrics. */
  inFlight(namespace: string): number {
    return this.namespaces.get(namespace)?.inFlight ?? 0;
  }

  /** Slots held in total. For tests and metrics. */
  inFlightTotal(): number {
    return this.total;
  }

  /** Pods waiting for a slot. For tests and metrics. */
  waiting(): number {
    let n = 0;
    for (const ns of this.namespaces.values()) n += ns.waiting.size;
    return n;
  }

  private saturatedFor(ns: NamespaceState | undefined, hosts: readonly string[]): SaturatedSlot | undefined {
    if ((ns?.inFlight ?? 0) >= this.o.maxInspectionsPerNamespace) return 'namespace';
    for (const host of hosts)
      if ((this.byHost.get(host) ?? 0) >= this.o.maxInspectionsPerRegistry) return `registry ${host}`;
    if (this.total >= this.o.maxInspections) return 'total';
    return undefined;
  }

  private join(podKey: string, namespace: string, hosts: readonly string[]): void {
    const ns = this.stateOf(namespace);
    // A pod already waiting keeps its place.
    if (!ns.waiting.has(podKey)) ns.waiting.set(podKey, [...hosts]);
  }

  private stateOf(namespace: string): NamespaceState {
    let ns = this.namespaces.get(namespace);
    if (ns === undefined) {
      ns = { inFlight: 0, lastServed: 0, waiting: new Map() };
      this.namespaces.set(namespace, ns);
    }
    return ns;
  }

  private take(holder: Holder): void {
    const ns = this.stateOf(holder.namespace);
    ns.inFlight++;
    ns.lastServed = ++this.served;
    this.total++;
    for (const host of holder.hosts) this.byHost.set(host, (this.byHost.get(host) ?? 0) + 1);
  }

  private releaser(holder: Holder): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.giveBack(holder);
    };
  }

  /** Gives back `holder`'s slots and hands what freed to the waiting pods. */
  private giveBack(holder: Holder): void {
    this.untake(holder);
    this.serveWaiting();
  }

  private untake(holder: Holder): void {
    this.total--;
    for (const host of holder.hosts) {
      const n = (this.byHost.get(host) ?? 1) - 1;
      if (n === 0) this.byHost.delete(host);
      else this.byHost.set(host, n);
    }
    const ns = this.namespaces.get(holder.namespace);
    if (ns === undefined) return;
    ns.inFlight--;
    this.dropIfIdle(holder.namespace, ns);
  }

  private dropIfIdle(namespace: string, ns: NamespaceState): void {
    if (ns.inFlight === 0 && ns.waiting.size === 0) this.namespaces.delete(namespace);
  }

  private expireReservations(): void {
    if (this.reserved.size === 0) return;
    const now = this.o.clock.now();
    let expired = false;
    for (const [podKey, held] of this.reserved) {
      if (held.expiresAt > now) continue;
      this.reserved.delete(podKey);
      this.untake(held);
      expired = true;
    }
    if (expired) this.serveWaiting();
  }

  /** Sets free slots aside for waiting pods, fairest first (see the file comment), and wakes them. */
  private serveWaiting(): void {
    while (this.total < this.o.maxInspections) {
      const next = this.nextWaiting();
      if (next === undefined) return;
      const { podKey, namespace, hosts } = next;
      this.namespaces.get(namespace)?.waiting.delete(podKey);
      const holder = { namespace, hosts, expiresAt: this.o.clock.now() + this.o.reservationTtlMs };
      this.take(holder);
      this.reserved.set(podKey, holder);
      this.o.wake?.(podKey);
    }
  }

  private nextWaiting(): { podKey: string; namespace: string; hosts: readonly string[] } | undefined {
    const candidates: [string, NamespaceState][] = [];
    for (const entry of this.namespaces) {
      const ns = entry[1];
      if (ns.waiting.size > 0 && ns.inFlight < this.o.maxInspectionsPerNamespace) candidates.push(entry);
    }
    // Fewest in flight, then served least recently; stable, so first seen breaks the remaining ties.
    candidates.sort(([, a], [, b]) => a.inFlight - b.inFlight || a.lastServed - b.lastServed);
    for (const [namespace, ns] of candidates) {
      let scanned = 0;
      for (const [podKey, hosts] of ns.waiting) {
        if (scanned++ >= SCAN_LIMIT) break;
        if (hosts.every((h) => (this.byHost.get(h) ?? 0) < this.o.maxInspectionsPerRegistry))
          return { podKey, namespace, hosts };
      }
    }
    return undefined;
  }
}

function sameHosts(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((h) => b.includes(h));
}
