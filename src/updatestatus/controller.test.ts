// The controller's write discipline, on a fake clock with its informers fed directly and an in-memory UpdateStatus
// store that echoes writes back like a watch: one write per batch of changes, none sooner than minWriteIntervalMs
// after the previous one, and none at all (resyncs included) while nothing the status shows has changed.
import { describe, expect, it } from 'vitest';
import { DefaultSharedInformer } from '../runtime/cache/shared-informer.js';
import { ApiStatusError } from '../runtime/errors.js';
import type { KubeObject } from '../runtime/object.js';
import { Nodes, type ResourceType } from '../runtime/resources.js';
import { Deployments } from './cluster-informers.js';
import { UpdateStatuses } from './api/install.js';
import type { UpdateStatus } from './api/schema.js';
import { EXPIRE_AFTER_MS, STALE_AFTER_MS, mergeContributions, storedContribution } from './api/informers.js';
import { INFORMERS_REPORTING } from './api/aggregate.js';
import {
  type UpdateStatusSources,
  type UpdateStatusWriter,
  createUpdateStatusControllerFromSources,
} from './controller.js';
import { ClusterOperators, ClusterVersions, MachineConfigPools, MachineConfigs } from './api/dev-crds.js';
import type {
  ClusterOperator,
  ClusterVersion,
  Deployment,
  MachineConfig,
  MachineConfigPool,
  Node,
} from './inputs.js';
import { Annotations } from './nodestate.js';
import { type SimulationPlan, renderedConfig, simulatedState } from '../demo/update-simulation/timeline.js';
import { FakeListWatch, FakeClock, flushAsync } from '../runtime/testing/index.js';

const MIN_WRITE_MS = 1_000;
const RESYNC_MS = 30_000;
const START = Date.UTC(2026, 0, 1);

const plan: SimulationPlan = {
  from: '4.16.0',
  to: '4.16.1',
  operators: ['etcd', 'kube-apiserver', 'network', 'dns', 'console', 'machine-config'],
  degradedOperator: '',
  masterNodes: ['master-0'],
  workerNodes: ['worker-0', 'worker-1', 'worker-2', 'worker-3'],
  startedAtSeconds: START / 1000 - 3600,
  stepSeconds: 60,
};
/** First step of the worker rollout: worker-0 and worker-1 drain, the others wait. */
const WORKERS_START = (() => {
  for (let step = 0; ; step++)
    if (simulatedState(plan, step).nodePhases.get('worker-0') === 'Draining') return step;
})();

type Status = UpdateStatus & KubeObject;
const INFORMER_MANAGER = 'updatestatus-informer-';

/**
 * One UpdateStatus kept in memory like the API server would, with server-side apply modelled for its shapes:
 * each field manager's last apply is kept, and the object is their merge (an informer's entries and registration
 * from its manager, the aggregation fields from the aggregator's); a JSON patch removal drops an informer's
 * entries, as the server would. Writes echo back like watch events.
 */
class MemoryStatuses implements UpdateStatusWriter {
  private stored: Status | undefined;
  private revision = 100;
  private readonly applied = new Map<string, UpdateStatus>();
  /** Every successful status write, in order, with who made it. */
  readonly written: { manager: string; status: Status }[] = [];

  constructor(private readonly echo: (type: 'ADDED' | 'MODIFIED', obj: Status) => void) {}

  writesBy(manager: string): Status[] {
    return this.written.filter((w) => w.manager === manager).map((w) => w.status);
  }

  /** What a foreign informer (another component) applies, written directly. */
  applyAs(manager: string, body: UpdateStatus): void {
    this.applied.set(manager, structuredClone(body));
    this.store('MODIFIED', this.compose());
  }

  async get(): Promise<Status> {
    if (!this.stored) throw new ApiStatusError('GET', 'updatestatuses/cluster', 404, 'NotFound', '', {});
    return structuredClone(this.stored);
  }

  async create(obj: Status): Promise<Status> {
    if (this.stored) throw new ApiStatusError('POST', 'updatestatuses', 409, 'AlreadyExists', '', {});
    return this.store('ADDED', { ...obj, status: {} });
  }

  async apply(obj: Status, opts: { fieldManager: string; subresource?: string }): Promise<Status> {
    if (!this.stored)
      throw new ApiStatusError('PATCH', 'updatestatuses/cluster/status', 404, 'NotFound', '', {});
    expect(opts.subresource).toBe('status');
    this.applied.set(opts.fieldManager, structuredClone(obj));
    const saved = this.store('MODIFIED', this.compose());
    this.written.push({ manager: opts.fieldManager, status: saved });
    return saved;
  }

  async jsonPatch(
    _ref: unknown,
    ops: readonly { op: string; path: string; value?: unknown }[],
  ): Promise<Status> {
    // The removals' `test` ops name the informer removed at each index; the model drops that informer's apply.
    for (const op of ops) {
      if (op.op === 'test') this.applied.delete(`${INFORMER_MANAGER}${String(op.value)}`);
    }
    const saved = this.store('MODIFIED', this.compose());
    this.written.push({ manager: 'json-patch', status: saved });
    return saved;
  }

  private compose(): Status {
    const informers = [...this.applied].filter(([m]) => m.startsWith(INFORMER_MANAGER));
    const merged = mergeContributions(
      informers.map(([m, body]) => storedContribution(body.status, m.slice(INFORMER_MANAGER.length))),
      '',
    );
    merged.informers = informers.flatMap(([, body]) => body.status?.informers ?? []);
    const aggregate = [...this.applied].find(([m]) => !m.startsWith(INFORMER_MANAGER))?.[1]?.status;
    const status: UpdateStatus['status'] = {
      ...merged,
      ...(aggregate?.conditions ? { conditions: aggregate.conditions } : {}),
    };
    if (aggregate?.controlPlane || merged.controlPlane)
      status.controlPlane = { ...aggregate?.controlPlane, informers: merged.controlPlane?.informers };
    const pools = new Map((merged.workerPools ?? []).map((p) => [p.name, { ...p }]));
    for (const p of aggregate?.workerPools ?? [])
      pools.set(p.name, { ...p, ...pools.get(p.name), conditions: p.conditions });
    if (pools.size > 0) status.workerPools = [...pools.values()];
    return { metadata: { name: 'cluster' }, spec: {}, status };
  }

  private store(type: 'ADDED' | 'MODIFIED', obj: Status): Status {
    const saved = structuredClone({
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: String(++this.revision) },
    });
    this.stored = saved;
    // The watch event arrives after the response, as from a server.
    setImmediate(() => this.echo(type, structuredClone(saved)));
    return structuredClone(saved);
  }
}

function informer<T extends KubeObject>(type: ResourceType): DefaultSharedInformer<T> {
  // Never started: the test feeds the cache through replace()/apply(), as a reflector would.
  const unused = new FakeListWatch<T>({
    list: () => {
      throw new Error('not listed in this test');
    },
    watch: () => {
      throw new Error('not watched in this test');
    },
  });
  return new DefaultSharedInformer<T>({ client: unused, type });
}

let resourceVersion = 1;
/** `obj` as a server would return it: with a fresh resourceVersion. */
function rv<T extends object>(obj: T): T & KubeObject {
  const meta = (obj as KubeObject).metadata;
  return { ...obj, metadata: { ...meta, resourceVersion: String(++resourceVersion) } };
}

function node(name: string, step: number, heartbeat = START): Node & KubeObject {
  const pool = plan.masterNodes.includes(name) ? 'master' : 'worker';
  const ready = {
    type: 'Ready',
    status: 'True',
    reason: 'KubeletReady',
    lastTransitionTime: new Date(START - 86_400_000).toISOString(),
    // Not part of what the status shows: changes with every kubelet heartbeat.
    lastHeartbeatTime: new Date(heartbeat).toISOString(),
  };
  return rv<Node>({
    metadata: {
      name,
      labels: { [`node-role.kubernetes.io/${pool}`]: '' },
      annotations: { ...simulatedState(plan, step).nodeAnnotations.get(name) },
    },
    status: { conditions: [ready] },
  });
}

/** Node phase per node name, as the written UpdateStatus shows it. */
function shownPhases(status: Status | undefined): Record<string, string> {
  const phases: Record<string, string> = {};
  const informers = [
    ...(status?.status?.controlPlane?.informers ?? []),
    ...(status?.status?.workerPools ?? []).flatMap((p) => p.informers ?? []),
  ];
  for (const { insight } of informers.flatMap((i) => i.insights ?? [])) {
    const updating = insight.node?.conditions?.find((c) => c.type === 'Updating');
    if (insight.node && updating) phases[insight.node.name] = updating.reason;
  }
  return phases;
}

async function setup(step = WORKERS_START) {
  const clock = new FakeClock(START);
  const sources = {
    clusterVersions: informer<ClusterVersion & KubeObject>(ClusterVersions),
    clusterOperators: informer<ClusterOperator & KubeObject>(ClusterOperators),
    deployments: informer<Deployment & KubeObject>(Deployments),
    nodes: informer<Node & KubeObject>(Nodes),
    pools: informer<MachineConfigPool & KubeObject>(MachineConfigPools),
    machineConfigs: informer<MachineConfig & KubeObject>(MachineConfigs),
    statuses: informer<Status>(UpdateStatuses),
  } satisfies UpdateStatusSources;
  const statuses = new MemoryStatuses((type, obj) => sources.statuses.apply(type, obj));
  const { controller, stats } = createUpdateStatusControllerFromSources(sources, statuses, {
    minWriteIntervalMs: MIN_WRITE_MS,
    resyncMs: RESYNC_MS,
    clock,
  });
  const state = simulatedState(plan, step);
  sources.clusterVersions.replace([rv(state.clusterVersion)], '1');
  sources.clusterOperators.replace(
    state.clusterOperators.map((co) => rv(co)),
    '1',
  );
  sources.pools.replace(
    state.machineConfigPools.map((p) => rv(p)),
    '1',
  );
  sources.machineConfigs.replace(
    ['master', 'worker'].flatMap((pool) =>
      [plan.from, plan.to].map((v) =>
        rv({
          metadata: { name: renderedConfig(pool, v), annotations: { [Annotations.releaseImageVersion]: v } },
        }),
      ),
    ),
    '1',
  );
  sources.deployments.replace([], '1');
  sources.nodes.replace(
    [...state.nodeAnnotations.keys()].map((n) => node(n, step)),
    '1',
  );
  sources.statuses.replace([], '1');

  const stop = new AbortController();
  const running = controller.start(stop.signal);
  /** Lets reconciles, writes and their echoes run without moving the clock. */
  const settle = async () => {
    for (let i = 0; i < 5; i++) await flushAsync();
  };
  await settle();
  return {
    clock,
    sources,
    statuses,
    stats,
    settle,
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

const CPI = `${INFORMER_MANAGER}cpi`;
const NODES = `${INFORMER_MANAGER}nodes`;
const AGGREGATOR = 'tessera-updatestatus';

describe('update-status controller writes', () => {
  it('writes each informer and the aggregate once at start, then only heartbeats while nothing changes', async () => {
    const t = await setup();
    try {
      expect(t.statuses.written.map((w) => w.manager)).toEqual([CPI, NODES, AGGREGATOR]);
      const first = t.statuses.written[2]?.status;
      expect(shownPhases(first)).toMatchObject({ 'worker-0': 'Draining', 'worker-2': 'Pending' });
      expect(first?.status?.workerPools?.[0]?.conditions?.[0]).toMatchObject({
        type: 'Updating',
        status: 'True',
      });
      const reconciles = t.stats.reconciles;
      for (let period = 0; period < 5; period++) {
        await t.clock.advance(RESYNC_MS);
        await t.settle();
      }
      // The controller did look again (at least once per period); in 150 s each informer renewed its heartbeat
      // twice (every 60 s) and the aggregate, unchanged, was not written again.
      expect(t.stats.reconciles - reconciles).toBeGreaterThanOrEqual(5);
      expect(t.statuses.writesBy(CPI)).toHaveLength(3);
      expect(t.statuses.writesBy(NODES)).toHaveLength(3);
      expect(t.statuses.writesBy(AGGREGATOR)).toHaveLength(1);
      const heartbeats = t.statuses
        .writesBy(NODES)
        .map((s) => s.status?.informers?.find((r) => r.name === 'nodes')?.heartbeatTime);
      expect(heartbeats).toEqual(['2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', '2026-01-01T00:02:00Z']);
      // A heartbeat changes nothing else.
      expect(shownPhases(t.statuses.writesBy(NODES)[2])).toEqual(shownPhases(first));
    } finally {
      await t.stop();
    }
  });

  it('turns a burst of node changes into one write, after the write interval, showing the last state', async () => {
    const t = await setup();
    try {
      expect(t.statuses.writesBy(NODES)).toHaveLength(1);
      const assessments = t.stats.assessments;
      // Right after that write, the rollout moves on three steps, node by node, event by event.
      for (let step = WORKERS_START + 1; step <= WORKERS_START + 3; step++)
        for (const name of plan.workerNodes) t.sources.nodes.apply('MODIFIED', node(name, step));
      await t.settle();
      // Seen, and put off: the last write is less than the interval old, so not even assessed yet.
      expect(t.stats.throttled).toBeGreaterThan(0);
      expect(t.stats.assessments).toBe(assessments);
      expect(t.statuses.writesBy(NODES)).toHaveLength(1);
      await t.clock.advance(MIN_WRITE_MS - 1);
      await t.settle();
      expect(t.statuses.writesBy(NODES)).toHaveLength(1);

      await t.clock.advance(1);
      await t.settle();
      expect(t.statuses.writesBy(NODES)).toHaveLength(2);
      // One look at the whole burst.
      expect(t.stats.assessments).toBe(assessments + 1);
      const last = simulatedState(plan, WORKERS_START + 3).nodePhases;
      expect(shownPhases(t.statuses.writesBy(NODES)[1])).toEqual(Object.fromEntries(last));
      expect(last.get('worker-0')).toBe('Completed');
      // The control plane's informer had nothing new to say.
      expect(t.statuses.writesBy(CPI)).toHaveLength(1);

      // Its echo and later resyncs within the heartbeat interval bring no further write.
      await t.clock.advance(RESYNC_MS);
      await t.settle();
      expect(t.statuses.writesBy(NODES)).toHaveLength(2);
    } finally {
      await t.stop();
    }
  });

  it('writes a change at once when the last write is older than the interval', async () => {
    const t = await setup();
    try {
      await t.clock.advance(MIN_WRITE_MS);
      await t.settle();
      expect(t.statuses.writesBy(NODES)).toHaveLength(1);
      t.sources.nodes.apply('MODIFIED', node('worker-0', WORKERS_START + 1));
      await t.settle();
      expect(t.statuses.writesBy(NODES)).toHaveLength(2);
      expect(shownPhases(t.statuses.writesBy(NODES)[1])['worker-0']).toBe('Updating');
    } finally {
      await t.stop();
    }
  });

  it('does not write for events that change nothing the status shows (kubelet heartbeats)', async () => {
    const t = await setup();
    try {
      await t.clock.advance(MIN_WRITE_MS);
      await t.settle();
      const reconciles = t.stats.reconciles;
      // 50 s of kubelet heartbeats: within the informers' own heartbeat interval.
      for (let beat = 1; beat <= 5; beat++) {
        for (const name of simulatedState(plan, WORKERS_START).nodeAnnotations.keys())
          t.sources.nodes.apply('MODIFIED', node(name, WORKERS_START, START + beat * 10_000));
        await t.clock.advance(10_000);
        await t.settle();
      }
      expect(t.stats.reconciles - reconciles).toBeGreaterThanOrEqual(5);
      expect(t.statuses.written).toHaveLength(3);
    } finally {
      await t.stop();
    }
  });

  it("keeps another informer's insights, marks them stale when it stops, and removes them when they expire", async () => {
    const t = await setup();
    try {
      const health = {
        type: 'Health' as const,
        health: {
          startedAt: '2026-01-01T00:00:00Z',
          scope: { type: 'ControlPlane' as const, resources: [] },
          impact: { level: 'Warning' as const, type: 'Update Speed' as const, summary: 'External finding' },
          remediation: { reference: 'https://example.com/runbook' },
        },
      };
      t.statuses.applyAs(`${INFORMER_MANAGER}external`, {
        metadata: { name: 'cluster' },
        spec: {},
        status: {
          informers: [{ name: 'external', heartbeatTime: '2026-01-01T00:00:00Z' }],
          controlPlane: {
            informers: [
              {
                name: 'external',
                insights: [{ uid: 'ext-1', acquiredAt: '2026-01-01T00:00:00Z', insight: health }],
              },
            ],
          },
        },
      });
      await t.settle();
      const reporting = () =>
        t.statuses
          .writesBy(AGGREGATOR)
          .at(-1)
          ?.status?.conditions?.find((c) => c.type === INFORMERS_REPORTING);
      expect(reporting()?.status).toBe('True');
      // Tessera's own writes leave the external entry alone.
      t.sources.nodes.apply('MODIFIED', node('worker-0', WORKERS_START + 1));
      await t.clock.advance(MIN_WRITE_MS);
      await t.settle();
      const cp = (s: Status | undefined) => s?.status?.controlPlane?.informers?.map((i) => i.name).sort();
      expect(cp(t.statuses.writesBy(NODES).at(-1))).toEqual(['cpi', 'external', 'nodes']);

      // The external informer stops renewing: stale after STALE_AFTER_MS, named by the aggregate.
      await t.clock.advance(STALE_AFTER_MS);
      await t.settle();
      expect(reporting()).toMatchObject({ status: 'False', reason: 'InformerStopped' });
      expect(reporting()?.message).toContain(
        'external (last heartbeat 2026-01-01T00:00:00Z; 1 insights left out)',
      );
      // Tessera's own informers, renewing every minute, stay live.
      expect(reporting()?.message).not.toContain('nodes');

      // Expired: its entries are removed; the aggregate then reports all informers again.
      await t.clock.advance(EXPIRE_AFTER_MS);
      await t.settle();
      await t.clock.advance(MIN_WRITE_MS);
      await t.settle();
      expect(t.statuses.writesBy('json-patch')).toHaveLength(1);
      expect(cp(t.statuses.writesBy(AGGREGATOR).at(-1))).toEqual(['cpi', 'nodes']);
      // The removal is named for ten minutes, then the aggregate reports all informers again.
      expect(reporting()?.message).toEqual(
        expect.stringMatching(
          /^Informers not reporting: external \(removed at 2026-01-01T01:0\d:\d\dZ: no heartbeat for over an hour\)$/,
        ),
      );
      await t.clock.advance(11 * 60_000);
      await t.settle();
      expect(reporting()?.status).toBe('True');
    } finally {
      await t.stop();
    }
  });
});
