// Pod placement as an informer of the UpdateStatus API (README "Update status informers"). During an update,
// nodes drain and their pods are recreated, and pod placement gates every new pod: when placement cannot keep up
// (a registry failing, pods gated for minutes) the update looks stuck. This says why, as Health insights that
// `tessera upgrade status` prints under `= Update Health =`:
// - pods gated longer than GATED_SLOW_MS, with the namespaces most affected and the oldest pod;
// - registries whose inspections keep failing (a registry is forgotten FAILURE_WINDOW_MS after its last failure),
//   with the count since the first failure and the last error.
// A controller that is down writes nothing: its heartbeat stops and readers show its insights as stale (the
// contract), and the PodPlacementControllerDown alert fires. Budgets: at most MAX_TRACKED_REGISTRIES registries
// tracked, each with at most MAX_NAMESPACES_PER_INSIGHT namespaces and a truncated error, so the tracker holds
// tens of KiB whatever tenants' images name; keys are registry host strings in Maps, never object keys.
import type { Clock, Manager, SharedInformer, KubeObject } from '../runtime/index.js';
import { readmeSectionUrl, truncateText } from '../runtime/light.js';
import {
  type ControlPlaneInsight,
  type InformerContribution,
  type InsightEntry,
  InsightPublisher,
  hashedUid,
  heartbeatTimeOf,
} from '../updatestatus/informer.js';
import { registryHostsOf } from './pod-reconciler.js';
import type { Pod } from './pod-types.js';

/** The informer's name in the UpdateStatus. */
export const POD_PLACEMENT_INFORMER = 'podplacement';
/** A pod gated longer than this is reported (ms): inspection normally takes seconds. */
export const GATED_SLOW_MS = 2 * 60_000;
/** Gated longer than this, the insight is an Error: the update waits on it (ms). */
export const GATED_ERROR_MS = 10 * 60_000;
/** Inspection failures count for this long (ms). */
export const FAILURE_WINDOW_MS = 10 * 60_000;
export const MAX_TRACKED_REGISTRIES = 32;
export const MAX_NAMESPACES_PER_INSIGHT = 16;
const MAX_ERROR_CHARS = 512;
const MAX_HOST_CHARS = 253;
/** Where the remediation points (README section on pod placement's update insights). */
export const POD_PLACEMENT_INSIGHTS_REFERENCE = readmeSectionUrl('pod-placement-during-an-update');

interface RegistryFailures {
  count: number;
  firstAtMs: number;
  lastAtMs: number;
  lastError: string;
  /** Namespace -> failures, at most MAX_NAMESPACES_PER_INSIGHT; `otherNamespaces` counts the rest. */
  readonly namespaces: Map<string, number>;
  otherNamespaces: boolean;
}

/** Inspection failures by registry over the last FAILURE_WINDOW_MS, bounded (see the module comment). */
export class RegistryFailureWindow {
  private readonly byRegistry = new Map<string, RegistryFailures>();
  /** Failures of registries beyond MAX_TRACKED_REGISTRIES, counted only. */
  untrackedFailures = 0;

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    private readonly searchRegistries: () => readonly string[] = () => [],
    /** Told when a registry starts failing (counts of known ones are picked up on the publisher's resync). */
    private readonly onNewRegistry: () => void = () => {},
  ) {}

  record(failure: { image: string; namespace: string; error: string }): void {
    const now = this.clock.now();
    this.expire(now);
    const host = truncateText(
      registryHostsOf([{ image: failure.image }], this.searchRegistries())[0] ?? 'unparsable image reference',
      MAX_HOST_CHARS,
    );
    let entry = this.byRegistry.get(host);
    if (!entry) {
      if (this.byRegistry.size >= MAX_TRACKED_REGISTRIES) {
        // Full: the least-failing, longest-quiet registry makes room, so a tenant's many bogus registries cannot
        // keep a real outage (many failures) out; what is evicted is still counted.
        let victim: [string, RegistryFailures] | undefined;
        for (const e of this.byRegistry)
          if (
            !victim ||
            e[1].count < victim[1].count ||
            (e[1].count === victim[1].count && e[1].lastAtMs < victim[1].lastAtMs)
          )
            victim = e;
        if (victim) {
          this.byRegistry.delete(victim[0]);
          this.untrackedFailures += victim[1].count;
        }
      }
      entry = {
        count: 0,
        firstAtMs: now,
        lastAtMs: now,
        lastError: '',
        namespaces: new Map(),
        otherNamespaces: false,
      };
      this.byRegistry.set(host, entry);
    }
    entry.count++;
    entry.lastAtMs = now;
    entry.lastError = truncateText(failure.error, MAX_ERROR_CHARS);
    const seen = entry.namespaces.get(failure.namespace);
    if (seen !== undefined) entry.namespaces.set(failure.namespace, seen + 1);
    else if (entry.namespaces.size < MAX_NAMESPACES_PER_INSIGHT) entry.namespaces.set(failure.namespace, 1);
    else entry.otherNamespaces = true;
    // A registry that starts failing is news worth a write now; more failures of a known one wait for the resync.
    if (entry.count === 1) this.onNewRegistry();
  }

  /** The registries with failures in the window, most failures first. */
  current(): RegistryFailureSummary[] {
    this.expire(this.clock.now());
    return [...this.byRegistry]
      .map(([registry, e]) => ({
        registry,
        count: e.count,
        firstAtMs: e.firstAtMs,
        lastError: e.lastError,
        namespaces: [...e.namespaces.keys()].sort(),
        moreNamespaces: e.otherNamespaces,
      }))
      .sort((a, b) => b.count - a.count || (a.registry < b.registry ? -1 : 1));
  }

  private expire(now: number): void {
    for (const [host, e] of this.byRegistry)
      if (now - e.lastAtMs > FAILURE_WINDOW_MS) this.byRegistry.delete(host);
    if (this.byRegistry.size === 0) this.untrackedFailures = 0;
  }
}

export interface RegistryFailureSummary {
  readonly registry: string;
  readonly count: number;
  readonly firstAtMs: number;
  readonly lastError: string;
  readonly namespaces: readonly string[];
  readonly moreNamespaces: boolean;
}

/** A gated pod as the insight needs it. */
export interface GatedPodAge {
  readonly namespace: string;
  readonly name: string;
  readonly createdAtMs: number;
}

/**
 * A start time to the millisecond: readers take a start equal to the insight's acquiredAt (whole seconds) as
 * unknown, and these starts are known.
 */
const startTime = (ms: number) => new Date(ms).toISOString();
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const minutes = (ms: number) => `${Math.max(1, Math.floor(ms / 60_000))}m`;
const namespaceRefs = (names: readonly string[]) =>
  names.slice(0, MAX_NAMESPACES_PER_INSIGHT).map((name) => ({ resource: 'namespaces', name }));

/** The pod placement informer's contribution: pure, from the gated pods and the failure window, at `nowMs`. */
export function podPlacementContribution(
  gated: readonly GatedPodAge[],
  failures: readonly RegistryFailureSummary[],
  nowMs: number,
): InformerContribution {
  const insights: InsightEntry<ControlPlaneInsight>[] = [];
  const acquiredAt = heartbeatTimeOf(nowMs);
  const slow = gated.filter((p) => nowMs - p.createdAtMs > GATED_SLOW_MS);
  if (slow.length > 0) {
    const byNamespace = new Map<string, number>();
    for (const p of slow) byNamespace.set(p.namespace, (byNamespace.get(p.namespace) ?? 0) + 1);
    const namespaces = [...byNamespace]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([ns]) => ns);
    const oldest = slow.reduce((a, b) => (b.createdAtMs < a.createdAtMs ? b : a));
    const oldestMs = nowMs - oldest.createdAtMs;
    insights.push({
      uid: 'podplacement-gated-pods',
      acquiredAt,
      insight: {
        type: 'Health',
        health: {
          startedAt: startTime(oldest.createdAtMs),
          scope: { type: 'WorkerPool', resources: namespaceRefs(namespaces) },
          impact: {
            level: oldestMs > GATED_ERROR_MS ? 'Error' : 'Warning',
            type: 'Update Speed',
            summary: truncateText(
              `${slow.length} ${slow.length === 1 ? 'pod waits' : 'pods wait'} for pod placement for more than ${minutes(GATED_SLOW_MS)} (oldest ${minutes(oldestMs)}, in ${byNamespace.size} ${byNamespace.size === 1 ? 'namespace' : 'namespaces'})`,
              256,
            ),
            description: truncateText(
              `Pod placement (multiarch.openshift.io) holds new pods with a scheduling gate until it has inspected their images. ` +
                `While they wait they are not scheduled: workloads moved off draining nodes do not come back, and drains that ` +
                `a PodDisruptionBudget holds wait with them. Oldest: ${oldest.namespace}/${oldest.name}. ` +
                `Run \`tessera podplacement explain ${oldest.namespace}/${oldest.name}\` to see why; if the controller cannot run, ` +
                '`tessera podplacement release -n NAMESPACE` releases gated pods unplaced.',
              4096,
            ),
          },
          remediation: { reference: POD_PLACEMENT_INSIGHTS_REFERENCE },
        },
      },
    });
  }
  for (const f of failures.slice(0, 16)) {
    insights.push({
      uid: hashedUid('podplacement-registry', f.registry),
      acquiredAt,
      insight: {
        type: 'Health',
        health: {
          startedAt: startTime(f.firstAtMs),
          scope: { type: 'WorkerPool', resources: namespaceRefs(f.namespaces) },
          impact: {
            level: 'Warning',
            type: 'Update Speed',
            summary: truncateText(
              `Pod placement cannot inspect images from ${f.registry} (${f.count} ${f.count === 1 ? 'failure' : 'failures'} since ${hhmm(f.firstAtMs)} UTC)`,
              256,
            ),
            description: truncateText(
              `Pods of ${f.namespaces.join(', ')}${f.moreNamespaces ? ' and other namespaces' : ''} stay gated while pod placement retries, ` +
                'then start without an architecture affinity and may land on nodes that cannot run them. ' +
                `Last error: ${f.lastError}`,
              4096,
            ),
          },
          remediation: { reference: POD_PLACEMENT_INSIGHTS_REFERENCE },
        },
      },
    });
  }
  return {
    name: POD_PLACEMENT_INFORMER,
    description: 'Tessera pod placement: pods gated for long, registries failing',
    controlPlane: insights,
  };
}

/** The gated pods of `cache` with their ages (pods without a parsable creation time are left out). */
export function gatedPodAges(pods: readonly (Pod & KubeObject)[]): GatedPodAge[] {
  return pods.flatMap((p) => {
    const createdAtMs = Date.parse(p.metadata?.creationTimestamp ?? '');
    return Number.isNaN(createdAtMs)
      ? []
      : [{ namespace: p.metadata?.namespace ?? '', name: p.metadata?.name ?? '', createdAtMs }];
  });
}

/**
 * Registers the pod placement informer with `manager` (it runs on the leader): returns the failure window the pod
 * reconciler reports to.
 */
export function addPodPlacementUpdateInsights(
  manager: Manager,
  gatedPods: SharedInformer<Pod & KubeObject>,
  searchRegistries: () => readonly string[],
): RegistryFailureWindow {
  const failures: RegistryFailureWindow = new RegistryFailureWindow(manager.clock, searchRegistries, () =>
    publisher.trigger(),
  );
  const publisher: InsightPublisher = new InsightPublisher({
    client: manager.client,
    informer: POD_PLACEMENT_INFORMER,
    reservedName: true,
    clock: manager.clock,
    logger: manager.logger.child({ component: 'update-insights' }),
    contribution: () =>
      gatedPods.hasSynced()
        ? podPlacementContribution(
            gatedPodAges(gatedPods.getIndexer().list()),
            failures.current(),
            manager.clock.now(),
          )
        : undefined,
  });
  manager.add(publisher);
  return failures;
}
