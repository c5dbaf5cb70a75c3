// Drives a simulated update on a development cluster: installs the stand-in OpenShift CRDs, assigns the existing
// (kwok) nodes to a master and a worker pool, creates the rendered MachineConfigs, then applies the timeline's
// state step by step in real time (node annotations, then MachineConfigNodes, in the MCO's order), so the
// controller and `tessera upgrade status` see a realistic update.
// Steps are applied in order, each one completely before `onStep`; a caller that must observe every step (tests)
// returns a promise from `onStep` and the next step waits for it.
// Only for development clusters: it overwrites ClusterVersion `version`, ClusterOperators and pools it names.
import {
  type KubeClient,
  realClock,
  type Clock,
  type KubeObject,
  ResourceClient,
  Nodes,
} from '../../runtime/index.js';
import { UpdateStatusError } from '../../updatestatus/errors.js';
import {
  ClusterOperators,
  ClusterVersions,
  MachineConfigNodes,
  MachineConfigPools,
  MachineConfigs,
  installOpenShiftDevCrds,
} from '../../updatestatus/api/dev-crds.js';
import { Annotations } from '../../updatestatus/nodestate.js';
import { type SimulatedState, type SimulationPlan, renderedConfig, simulatedState } from './timeline.js';

/** A realistic set of platform operators; the MCO goes last, as in a real update. */
export const DEFAULT_OPERATORS = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'config-operator',
  'openshift-apiserver',
  'authentication',
  'cloud-credential',
  'machine-api',
  'cluster-autoscaler',
  'network',
  'dns',
  'ingress',
  'image-registry',
  'console',
  'monitoring',
  'insights',
  'storage',
  'service-ca',
  'node-tuning',
  'marketplace',
  'operator-lifecycle-manager',
  'openshift-samples',
  'csi-snapshot-controller',
  'cloud-controller-manager',
  'control-plane-machine-set',
  'baremetal',
  'olm',
  'machine-config',
];

/** Options for {@link runSimulation}. */
export interface SimulationOptions {
  readonly client: KubeClient;
  /** Version the cluster updates from. Default: 4.16.0. */
  readonly from?: string;
  readonly to: string;
  /** Real time between steps (ms), after `onStep` has settled; 0 for none. Default: 2,000. */
  readonly stepMs?: number;
  /** Simulated time per step (s): how far condition times advance per step. Default: stepMs / 1,000. */
  readonly stepSeconds?: number;
  readonly signal: AbortSignal;
  readonly clock?: Clock;
  /**
   * Called after each step has been applied to the cluster. The next step waits until a returned promise
   * settles; a rejection ends the simulation with that error.
   */
  readonly onStep?: (step: number, state: SimulatedState) => void | Promise<void>;
}

const FIELD_MANAGER = 'tessera-simulator';

/** Runs the simulation to its end (or until the signal aborts). */
export async function runSimulation(options: SimulationOptions): Promise<void> {
  const { client, signal } = options;
  const clock = options.clock ?? realClock;
  const stepMs = options.stepMs ?? 2_000;
  const from = options.from ?? '4.16.0';
  await installOpenShiftDevCrds(client);

  const nodes = new ResourceClient<KubeObject>(client, Nodes);
  const listed = (await nodes.list()).items.filter((n) => n.metadata?.name);
  const names = listed.map((n) => n.metadata?.name ?? '').sort();
  // Nodes that already are control-plane nodes form the master pool; only a cluster without any gets some
  // promoted (by name order), so the simulation never relabels a real worker of a cluster that has masters.
  const labelled = listed
    .filter((n) => {
      const labels = n.metadata?.labels ?? {};
      return 'node-role.kubernetes.io/control-plane' in labels || 'node-role.kubernetes.io/master' in labels;
    })
    .map((n) => n.metadata?.name ?? '')
    .sort();
  if (names.length < 2) {
    throw new UpdateStatusError(
      'TESSERA_UPDATESTATUS_TOO_FEW_NODES',
      `the simulation needs at least 2 nodes, found ${names.length}; start the dev cluster with nodes`,
    );
  }
  const masterNodes =
    labelled.length > 0 && labelled.length < names.length
      ? labelled
      : names.slice(0, names.length >= 6 ? 3 : 1);
  const plan: SimulationPlan = {
    from,
    to: options.to,
    operators: DEFAULT_OPERATORS,
    degradedOperator: 'console',
    masterNodes,
    workerNodes: names.filter((n) => !masterNodes.includes(n)),
    startedAtSeconds: Math.floor(clock.now() / 1000),
    stepSeconds: options.stepSeconds ?? stepMs / 1000,
  };
  for (const name of names) {
    const pool = plan.masterNodes.includes(name) ? 'master' : 'worker';
    await nodes.mergePatch({ name }, { metadata: { labels: { [`node-role.kubernetes.io/${pool}`]: '' } } });
  }
  const mcs = new ResourceClient<KubeObject>(client, MachineConfigs);
  for (const pool of ['master', 'worker']) {
    for (const version of [from, options.to]) {
      await mcs.apply(
        {
          metadata: {
            name: renderedConfig(pool, version),
            annotations: { [Annotations.releaseImageVersion]: version },
          },
        },
        { fieldManager: FIELD_MANAGER, force: true },
      );
    }
  }

  const cvs = new ResourceClient<KubeObject>(client, ClusterVersions);
  const cos = new ResourceClient<KubeObject>(client, ClusterOperators);
  const mcps = new ResourceClient<KubeObject>(client, MachineConfigPools);
  const mcns = new ResourceClient<KubeObject>(client, MachineConfigNodes);
  const apply = { fieldManager: FIELD_MANAGER, force: true } as const;
  for (let step = 0; !signal.aborted; step++) {
    const state = simulatedState(plan, step);
    await cvs.apply(state.clusterVersion as KubeObject, apply);
    await Promise.all(state.clusterOperators.map((co) => cos.apply(co as KubeObject, apply)));
    await Promise.all(state.machineConfigPools.map((p) => mcps.apply(p as KubeObject, apply)));
    await Promise.all(
      [...state.nodeAnnotations].map(([name, annotations]) =>
        nodes.mergePatch({ name }, { metadata: { annotations } }),
      ),
    );
    await Promise.all([...state.machineConfigNodes.values()].map((m) => mcns.apply(m as KubeObject, apply)));
    await options.onStep?.(step, state);
    if (state.done) return;
    if (stepMs > 0) await clock.sleep(stepMs, signal);
  }
}
