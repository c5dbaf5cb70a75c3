// End to end: a simulated update on a real cluster with kwok nodes, followed step by step through the controller's
// UpdateStatus. After each applied step the test waits until the UpdateStatus shows exactly the states that step
// simulates (operators, ClusterVersion, pools, every node's phase), so each phase, including the short Draining
// and Rebooting ones, is seen in order whatever the machine's speed; `tessera upgrade status` is checked on a few
// steps and at the end, where it says the cluster is not updating.
import { setMaxListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { SharedInformerFactory } from '../../../src/runtime/cache/informer-factory.js';
import { KubeClient } from '../../../src/runtime/client.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { UpdateStatuses, installUpdateStatusCrd } from '../../../src/updatestatus/api/install.js';
import type { UpdateStatus } from '../../../src/updatestatus/api/schema.js';
import { type CommandIO, runUpgradeStatus } from '../../../src/updatestatus/command.js';
import { createUpdateStatusController } from '../../../src/updatestatus/controller.js';
import { installOpenShiftDevCrds } from '../../../src/updatestatus/api/dev-crds.js';
import { MILLISECOND } from '../../../src/updatestatus/gotime.js';
import { runSimulation } from '../../../src/demo/update-simulation/driver.js';
import type { SimulatedState } from '../../../src/demo/update-simulation/timeline.js';
import { eventually, startTestCluster } from '../../support/cluster.js';
import { liveStatusOptions } from '../../support/updatestatus.js';

const TO = '4.16.1';

/** What the UpdateStatus says about the update, reduced to the states a step determines. */
interface View {
  /** Assessment of the ClusterVersion insight. */
  readonly controlPlane: string | undefined;
  /** Reason of each ClusterOperator insight's Updating condition, per operator. */
  readonly operators: Record<string, string>;
  /** Assessment of each MachineConfigPool insight, per pool. */
  readonly pools: Record<string, string>;
  /** `<pool>/<node>` -> reason of the node insight's Updating condition (its phase). */
  readonly nodes: Record<string, string>;
}

function viewOf(obj: UpdateStatus): View {
  let controlPlane: string | undefined;
  const operators: Record<string, string> = {};
  const pools: Record<string, string> = {};
  const nodes: Record<string, string> = {};
  const updating = (conditions: readonly { type: string; reason: string }[] | undefined) =>
    conditions?.find((c) => c.type === 'Updating')?.reason ?? '?';
  const informers = [
    ...(obj.status?.controlPlane?.informers ?? []),
    ...(obj.status?.workerPools ?? []).flatMap((p) => p.informers ?? []),
  ];
  for (const { insight } of informers.flatMap((i) => i.insights ?? [])) {
    if ('clusterVersion' in insight && insight.clusterVersion)
      controlPlane = insight.clusterVersion.assessment;
    if ('clusterOperator' in insight && insight.clusterOperator)
      operators[insight.clusterOperator.name] = updating(insight.clusterOperator.conditions);
    if (insight.machineConfigPool)
      pools[insight.machineConfigPool.name] = insight.machineConfigPool.assessment;
    if (insight.node)
      nodes[`${insight.node.poolResource.name}/${insight.node.name}`] = updating(insight.node.conditions);
  }
  return { controlPlane, operators, pools, nodes };
}

/** What a step must show, from the simulated objects and the phases the timeline says it simulates. */
function expectedView(state: SimulatedState): View {
  const operators: Record<string, string> = {};
  for (const co of state.clusterOperators) {
    const updated = co.status?.versions?.some((v) => v.name === 'operator' && v.version === TO);
    const progressing = co.status?.conditions?.find((c) => c.type === 'Progressing')?.status === 'True';
    operators[co.metadata?.name ?? ''] = updated ? 'Updated' : progressing ? 'Progressing' : 'Pending';
  }
  const nodes: Record<string, string> = {};
  const phasesOfPool = new Map<string, string[]>();
  for (const [name, phase] of state.nodePhases) {
    const pool = state.nodePools.get(name) ?? '?';
    nodes[`${pool}/${name}`] = phase;
    phasesOfPool.set(pool, [...(phasesOfPool.get(pool) ?? []), phase]);
  }
  const pools: Record<string, string> = {};
  for (const [pool, phases] of phasesOfPool) {
    pools[pool] = phases.every((p) => p === 'Completed')
      ? 'Completed'
      : phases.every((p) => p === 'Pending')
        ? 'Pending'
        : 'Progressing';
  }
  return {
    controlPlane: state.controlPlaneCompleted ? 'Completed' : 'Progressing',
    operators,
    pools,
    nodes,
  };
}

describe('simulated update, end to end', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await startTestCluster({ name: 'updatestatus-sim', nodes: 'default' });
  });
  afterAll(async () => {
    await cluster?.stop({ wipe: true });
  });

  it('is followed through every phase, in order, by the controller and the CLI', async () => {
    const client = new KubeClient(await cluster.kubeConfig());
    const stop = new AbortController();
    setMaxListeners(32, stop.signal);
    const running: Promise<void>[] = [];

    let out = '';
    const io: CommandIO = {
      out: (t) => {
        out += t;
      },
      err: () => undefined,
      clock: () => BigInt(Date.now()) * MILLISECOND,
      sleep: async () => undefined,
      signal: new AbortController().signal,
    };
    const opts = liveStatusOptions(cluster.kubeconfigPath, { details: 'none', source: 'auto' });
    /** The CLI's text, read from the controller's UpdateStatus and computed from the cluster objects. */
    const cliText = async (): Promise<{ updateStatus: string; computed: string }> => {
      out = '';
      expect(await runUpgradeStatus({ ...opts, source: 'updatestatus' }, io)).toBe(0);
      const updateStatus = out;
      out = '';
      expect(await runUpgradeStatus({ ...opts, source: 'cluster' }, io)).toBe(0);
      // Computed here while updating, the text starts as oc's does on a cluster without the thanos-querier Route
      // (oc reads no alerts when the cluster is not updating).
      if (out === 'The cluster is not updating.\n') return { updateStatus, computed: out };
      expect(out.slice(0, NO_ROUTE_NOTICE.length)).toBe(NO_ROUTE_NOTICE);
      return { updateStatus, computed: out.slice(NO_ROUTE_NOTICE.length) };
    };
    const NO_ROUTE_NOTICE =
      "Unable to fetch alerts, ignoring alerts in 'Update Health':  failed to get alerts from Thanos: " +
      'routes.route.openshift.io "thanos-querier" not found\n';
    const nodeLine = (node: string, phase: string) => new RegExp(`^${node} +\\S+ +${phase} `, 'm');

    // Phases each node was shown in, in order (consecutive repeats dropped), and what the CLI printed on the way.
    const nodePhases = new Map<string, string[]>();
    const controlPlane: string[] = [];
    const cliChecked: string[] = [];
    let steps = 0;
    try {
      await installUpdateStatusCrd(client);
      await installOpenShiftDevCrds(client);
      const informers = new SharedInformerFactory({ client });
      const { controller } = createUpdateStatusController({ client, informers, minWriteIntervalMs: 200 });
      running.push(informers.start(stop.signal), controller.start(stop.signal));
      const statuses = new ResourceClient<UpdateStatus & KubeObject>(client, UpdateStatuses);

      await runSimulation({
        client,
        to: TO,
        // No pause between steps: each waits for the controller instead. Condition times stay at the start.
        stepMs: 0,
        stepSeconds: 0,
        signal: stop.signal,
        onStep: async (step, state) => {
          steps++;
          const expected = expectedView(state);
          const view = await eventually(
            async () => {
              const shown = viewOf(await statuses.get({ name: 'cluster' }));
              expect(shown).toEqual(expected);
              return shown;
            },
            { timeoutMs: 60_000, intervalMs: 100, what: `the UpdateStatus to show step ${step}` },
          );
          for (const [key, phase] of Object.entries(view.nodes)) {
            const seen = nodePhases.get(key) ?? [];
            if (seen.at(-1) !== phase) seen.push(phase);
            nodePhases.set(key, seen);
          }
          if (controlPlane.at(-1) !== view.controlPlane) controlPlane.push(view.controlPlane ?? '?');

          // The CLI at the first step with a control-plane node rebooting and a worker node draining.
          const first = (pool: string, phase: string) =>
            !cliChecked.includes(`${pool}/${phase}`) &&
            [...state.nodePhases].find(([n, p]) => p === phase && state.nodePools.get(n) === pool)?.[0];
          const rebootingMaster = first('master', 'Rebooting');
          if (rebootingMaster) {
            cliChecked.push('master/Rebooting');
            for (const text of Object.values(await cliText())) {
              expect(text).toMatch(/^= Control Plane =\nAssessment: +Progressing\n/);
              expect(text).toMatch(nodeLine(rebootingMaster, 'Rebooting'));
            }
          }
          const drainingWorker = first('worker', 'Draining');
          if (drainingWorker) {
            cliChecked.push('worker/Draining');
            for (const text of Object.values(await cliText())) {
              expect(text).toContain('\n= Worker Upgrade =\n');
              expect(text).toMatch(/^worker +Progressing +/m);
              expect(text).toMatch(nodeLine(drainingWorker, 'Draining'));
            }
          }
        },
      });

      expect(steps).toBeGreaterThan(10);
      expect(controlPlane).toEqual(['Progressing', 'Completed']);
      expect(nodePhases.size).toBe(9);
      for (const [node, phases] of nodePhases)
        expect(phases, node).toEqual(['Pending', 'Draining', 'Updating', 'Rebooting', 'Completed']);
      expect(cliChecked.sort()).toEqual(['master/Rebooting', 'worker/Draining']);

      // Read from the controller's UpdateStatus, then computed here: both say it is over.
      const end = await cliText();
      expect(end.updateStatus).toBe('The cluster is not updating.\n');
      expect(end.computed).toBe('The cluster is not updating.\n');
    } finally {
      stop.abort();
      await Promise.all(running);
      await client.close();
    }
  });
});
