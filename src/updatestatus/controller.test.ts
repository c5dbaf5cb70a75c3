// The controller's write discipline, on a fake clock with its informers fed directly and an in-memory UpdateStatus
// store that echoes writes back like a watch: one write per batch of changes, none sooner than minWriteIntervalMs
// after the previous one, and none at all (resyncs included) while nothing the status shows has changed.
import { describe, expect, it } from 'vitest';
import { DefaultSharedInformer } from '../runtime/cache/shared-informer.js';
import { FakeListWatch } from '../runtime/cache/fake-list-watch.js';
import { FakeClock, flushAsync } from '../runtime/clock.js';
import { ApiStatusError } from '../runtime/errors.js';
import type { KubeObject } from '../runtime/object.js';
import type { ResourceType } from '../runtime/resources.js';
import { Nodes } from '../runtime/resources.js';
import { UpdateStatuses } from './api/install.js';
import type { UpdateStatus } from './api/schema.js';
import {
  type UpdateStatusSources,
  type UpdateStatusWriter,
  newUpdateStatusController,
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

const Deployments: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
  namespaced: true,
};
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

/** One UpdateStatus kept in memory like the API server would: resourceVersions, conflicts, watch echoes. */
class MemoryStatuses implements UpdateStatusWriter {
  private stored: Status | undefined;
  private revision = 100;
  /** Every successful status write, in order. */
  readonly written: Status[] = [];

  constructor(private readonly echo: (type: 'ADDED' | 'MODIFIED', obj: Status) => void) {}

  async get(): Promise<Status> {
    if (!this.stored) throw new ApiStatusError('GET', 'updatestatuses/cluster', 404, 'NotFound', '', {});
    return structuredClone(this.stored);
  }

  async create(obj: Status): Promise<Status> {
    if (this.stored) throw new ApiStatusError('POST', 'updatestatuses', 409, 'AlreadyExists', '', {});
    return this.store('ADDED', obj);
  }

  async updateStatus(obj: Status): Promise<Status> {
    if (obj.metadata?.resourceVersion !== this.stored?.metadata?.resourceVersion)
      throw new ApiStatusError('PUT', 'updatestatuses/cluster/status', 409, 'Conflict', '', {});
    const saved = this.store('MODIFIED', obj);
    this.written.push(saved);
    return saved;
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
  const { controller, stats } = newUpdateStatusController(sources, statuses, {
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

describe('update-status controller writes', () => {
  it('writes once at start, and not again over many resync periods while nothing changes', async () => {
    const t = await setup();
    try {
      expect(t.statuses.written).toHaveLength(1);
      expect(shownPhases(t.statuses.written[0])).toMatchObject({
        'worker-0': 'Draining',
        'worker-2': 'Pending',
      });
      const reconciles = t.stats.reconciles;
      for (let period = 0; period < 5; period++) {
        await t.clock.advance(RESYNC_MS);
        await t.settle();
      }
      // The controller did look again (at least once per period), and found nothing to write.
      expect(t.stats.reconciles - reconciles).toBeGreaterThanOrEqual(5);
      expect(t.statuses.written).toHaveLength(1);
      expect(t.stats.writes).toBe(1);
    } finally {
      await t.stop();
    }
  });

  it('turns a burst of node changes into one write, after the write interval, showing the last state', async () => {
    const t = await setup();
    try {
      expect(t.statuses.written).toHaveLength(1);
      // Right after that write, the rollout moves on three steps, node by node, event by event.
      for (let step = WORKERS_START + 1; step <= WORKERS_START + 3; step++)
        for (const name of plan.workerNodes) t.sources.nodes.apply('MODIFIED', node(name, step));
      await t.settle();
      // Seen, and put off: the last write is less than the interval old.
      expect(t.stats.throttled).toBeGreaterThan(0);
      expect(t.statuses.written).toHaveLength(1);
      await t.clock.advance(MIN_WRITE_MS - 1);
      await t.settle();
      expect(t.statuses.written).toHaveLength(1);

      await t.clock.advance(1);
      await t.settle();
      expect(t.statuses.written).toHaveLength(2);
      const last = simulatedState(plan, WORKERS_START + 3).nodePhases;
      expect(shownPhases(t.statuses.written[1])).toEqual(Object.fromEntries(last));
      expect(last.get('worker-0')).toBe('Completed');

      // Its echo and later resyncs bring no further write.
      for (let period = 0; period < 3; period++) {
        await t.clock.advance(RESYNC_MS);
        await t.settle();
      }
      expect(t.statuses.written).toHaveLength(2);
    } finally {
      await t.stop();
    }
  });

  it('writes a change at once when the last write is older than the interval', async () => {
    const t = await setup();
    try {
      await t.clock.advance(MIN_WRITE_MS);
      await t.settle();
      expect(t.statuses.written).toHaveLength(1);
      t.sources.nodes.apply('MODIFIED', node('worker-0', WORKERS_START + 1));
      await t.settle();
      expect(t.statuses.written).toHaveLength(2);
      expect(shownPhases(t.statuses.written[1])['worker-0']).toBe('Updating');
    } finally {
      await t.stop();
    }
  });

  it('does not write for events that change nothing the status shows (heartbeats)', async () => {
    const t = await setup();
    try {
      await t.clock.advance(MIN_WRITE_MS);
      await t.settle();
      const reconciles = t.stats.reconciles;
      for (let beat = 1; beat <= 20; beat++) {
        for (const name of simulatedState(plan, WORKERS_START).nodeAnnotations.keys())
          t.sources.nodes.apply('MODIFIED', node(name, WORKERS_START, START + beat * 10_000));
        await t.clock.advance(10_000);
        await t.settle();
      }
      expect(t.stats.reconciles - reconciles).toBeGreaterThanOrEqual(20);
      expect(t.statuses.written).toHaveLength(1);
    } finally {
      await t.stop();
    }
  });
});
