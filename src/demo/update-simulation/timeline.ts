// The simulated update as a pure timeline: the full state of ClusterVersion, ClusterOperators, MachineConfigPools,
// node machine-config annotations and MachineConfigNodes at step k of an update from `from` to `to`. Level-based: any step can be
// computed (and applied) on its own, so the driver can restart or skip steps. Phases: operators update in waves
// (one of them degraded for a while), then the machine-config operator rolls the control-plane nodes one by one
// (drain, update, reboot, done), the ClusterVersion completes, and the worker nodes follow two at a time.
// Each state also says which phase it simulates for every node, so callers can check what an observer reports.
import type {
  ClusterOperator,
  ClusterVersion,
  Condition,
  MachineConfigNode,
  MachineConfigPool,
} from '../../updatestatus/inputs.js';
import { Annotations, MCN_CONDITION_TYPES } from '../../updatestatus/nodestate.js';

export interface SimulationPlan {
  readonly from: string;
  readonly to: string;
  /** Platform operators in update order; the last one should be `machine-config`. */
  readonly operators: readonly string[];
  /** One operator that reports Degraded=True for a while mid-update; '' for none. */
  readonly degradedOperator: string;
  readonly masterNodes: readonly string[];
  readonly workerNodes: readonly string[];
  /** Unix seconds of step 0. */
  readonly startedAtSeconds: number;
  /** Simulated seconds per step (condition times advance by this much per step). */
  readonly stepSeconds: number;
}

/**
 * The node phase a step simulates, named as UpdateStatus node insights name it (the reason of their `Updating`
 * condition; oc's PHASE column says `Updated` for `Completed`).
 */
export type SimulatedNodePhase = 'Pending' | 'Draining' | 'Updating' | 'Rebooting' | 'Completed';

export interface SimulatedState {
  readonly clusterVersion: ClusterVersion;
  readonly clusterOperators: readonly ClusterOperator[];
  readonly machineConfigPools: readonly MachineConfigPool[];
  /** Machine-config annotations per node name. */
  readonly nodeAnnotations: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** The MachineConfigNode the MCO keeps beside those annotations, per node name (and named like the node). */
  readonly machineConfigNodes: ReadonlyMap<string, MachineConfigNode>;
  /** The phase these annotations put each node in, per node name. */
  readonly nodePhases: ReadonlyMap<string, SimulatedNodePhase>;
  /** The MachineConfigPool (`master` or `worker`) of each node, per node name. */
  readonly nodePools: ReadonlyMap<string, string>;
  /** Every operator, the MCO included, is at `to`: the ClusterVersion reports the update completed. */
  readonly controlPlaneCompleted: boolean;
  /** The update and the node rollout are over. */
  readonly done: boolean;
}

const OPERATOR_WAVE = 5;
const STEPS_PER_WAVE = 3;
const STEPS_PER_NODE = 4;
const PARALLEL_WORKERS = 2;

export const renderedConfig = (pool: string, version: string) => `rendered-${pool}-${version}`;

function at(plan: SimulationPlan, step: number): string {
  return new Date((plan.startedAtSeconds + step * plan.stepSeconds) * 1000)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z');
}

function cond(type: string, status: boolean, since: string, reason = '', message = ''): Condition {
  return { type, status: status ? 'True' : 'False', lastTransitionTime: since, reason, message };
}

/** Steps until the operators (except the MCO) are all updated. */
function operatorsDoneStep(plan: SimulationPlan): number {
  const waves = Math.ceil(Math.max(0, plan.operators.length - 1) / OPERATOR_WAVE);
  return 1 + waves * STEPS_PER_WAVE;
}

/** Step at which node `index` of a rollout starting at `start`, `parallel` at a time, begins. */
function nodeStart(start: number, index: number, parallel: number): number {
  return start + Math.floor(index / parallel) * STEPS_PER_NODE;
}

const NODE_PHASES: readonly SimulatedNodePhase[] = ['Draining', 'Updating', 'Rebooting'];

/** The phase of a node whose rollout begins at `startStep`. */
function nodePhase(startStep: number, step: number): SimulatedNodePhase {
  const phase = step - startStep;
  if (phase < 0) return 'Pending';
  return NODE_PHASES[phase] ?? 'Completed';
}

/** The machine-config daemon's annotations that put a node of `pool` in `phase`. */
function nodeAnnotations(
  pool: string,
  plan: SimulationPlan,
  phase: SimulatedNodePhase,
): Record<string, string> {
  const oldConfig = renderedConfig(pool, plan.from);
  const newConfig = renderedConfig(pool, plan.to);
  if (phase === 'Pending' || phase === 'Completed') {
    const config = phase === 'Pending' ? oldConfig : newConfig;
    return {
      [Annotations.currentConfig]: config,
      [Annotations.desiredConfig]: config,
      [Annotations.state]: 'Done',
      [Annotations.desiredDrain]: `uncordon-${config}`,
      [Annotations.lastAppliedDrain]: `uncordon-${config}`,
    };
  }
  return {
    [Annotations.currentConfig]: oldConfig,
    [Annotations.desiredConfig]: newConfig,
    [Annotations.state]: phase === 'Rebooting' ? 'Rebooting' : 'Working',
    [Annotations.desiredDrain]: `drain-${newConfig}`,
    // Draining: drain requested, not yet applied; later: drained.
    [Annotations.lastAppliedDrain]: phase === 'Draining' ? `uncordon-${oldConfig}` : `drain-${newConfig}`,
  };
}

/** MachineConfigNode conditions True in each phase (the MCO sets the others False); `U:` ones are Unknown. */
const MCN_CONDITIONS: Record<SimulatedNodePhase, readonly string[]> = {
  // Writing `Updated` resets every other condition to False.
  Pending: ['Updated'],
  Draining: ['UpdatePrepared', 'U:UpdateExecuted', 'Cordoned', 'U:Drained'],
  Updating: ['UpdatePrepared', 'U:UpdateExecuted', 'Cordoned', 'Drained', 'U:AppliedFilesAndOS'],
  Rebooting: [
    'UpdatePrepared',
    'UpdateExecuted',
    'Cordoned',
    'Drained',
    'AppliedFilesAndOS',
    'U:UpdatePostActionComplete',
    'U:RebootedNode',
  ],
  Completed: ['Updated'],
};

/** The MachineConfigNode of node `name` of `pool` in `phase`, as the MCO writes it beside nodeAnnotations'. */
function machineConfigNode(
  name: string,
  pool: string,
  plan: SimulationPlan,
  phase: SimulatedNodePhase,
  since: string,
): MachineConfigNode {
  const oldConfig = renderedConfig(pool, plan.from);
  const newConfig = renderedConfig(pool, plan.to);
  const current = phase === 'Completed' ? newConfig : oldConfig;
  const desired = phase === 'Pending' ? oldConfig : newConfig;
  const set = MCN_CONDITIONS[phase];
  return {
    metadata: { name },
    spec: { node: { name }, pool: { name: pool }, configVersion: { desired } },
    status: {
      configVersion: { current, desired },
      conditions: MCN_CONDITION_TYPES.map((type) => {
        const status = set.includes(type) ? 'True' : set.includes(`U:${type}`) ? 'Unknown' : 'False';
        return {
          type,
          status,
          lastTransitionTime: since,
          reason: status === 'False' ? 'NotYetOccurred' : type,
          message:
            status === 'False' ? `This node has not yet entered the ${type} phase` : `Simulated ${type}`,
        };
      }),
    },
  };
}

export function simulatedState(plan: SimulationPlan, step: number): SimulatedState {
  const opsDone = operatorsDoneStep(plan);
  const mastersStart = opsDone;
  const mastersDone = nodeStart(mastersStart, plan.masterNodes.length, 1);
  const workersStart = mastersDone;
  const workersDone = nodeStart(
    workersStart,
    plan.workerNodes.length + PARALLEL_WORKERS - 1,
    PARALLEL_WORKERS,
  );
  const cvDone = step >= mastersDone;
  const started = at(plan, 0);

  const operators: ClusterOperator[] = plan.operators.map((name, i) => {
    const isMco = i === plan.operators.length - 1;
    const wave = Math.floor(i / OPERATOR_WAVE);
    const begins = isMco ? opsDone - 1 : 1 + wave * STEPS_PER_WAVE;
    const ends = isMco ? mastersDone : begins + STEPS_PER_WAVE - 1;
    const updated = step >= ends;
    const progressing = step >= begins && !updated;
    const degradedFrom = 2;
    const degradedUntil = Math.max(degradedFrom + 6, Math.floor(opsDone / 2));
    const degraded = name === plan.degradedOperator && step >= degradedFrom && step < degradedUntil;
    return {
      metadata: {
        name,
        annotations: { 'include.release.openshift.io/self-managed-high-availability': 'true' },
      },
      status: {
        versions: [{ name: 'operator', version: updated ? plan.to : plan.from }],
        conditions: [
          cond('Available', true, started, 'AsExpected'),
          cond(
            'Degraded',
            degraded,
            at(
              plan,
              degraded
                ? degradedFrom
                : step >= degradedUntil && name === plan.degradedOperator
                  ? degradedUntil
                  : 0,
            ),
            degraded ? 'SimulatedFailure' : 'AsExpected',
            degraded ? 'A simulated operand is crash-looping' : '',
          ),
          cond(
            'Progressing',
            progressing,
            at(plan, progressing ? begins : updated ? ends : 0),
            progressing ? 'Updating' : 'AsExpected',
            progressing ? `Working towards ${plan.to}` : '',
          ),
        ],
      },
    };
  });

  const history = [
    cvDone
      ? {
          state: 'Completed',
          startedTime: started,
          completionTime: at(plan, mastersDone),
          version: plan.to,
          image: `sim/${plan.to}`,
        }
      : {
          state: 'Partial',
          startedTime: started,
          completionTime: null,
          version: plan.to,
          image: `sim/${plan.to}`,
        },
    {
      state: 'Completed',
      startedTime: '2024-01-01T00:00:00Z',
      completionTime: '2024-01-01T01:00:00Z',
      version: plan.from,
      image: `sim/${plan.from}`,
    },
  ];
  const clusterVersion: ClusterVersion = {
    metadata: { name: 'version' },
    status: {
      desired: { version: plan.to, image: `sim/${plan.to}` },
      history,
      conditions: [
        cond(
          'Available',
          true,
          '2024-01-01T01:00:00Z',
          'AsExpected',
          `Done applying ${cvDone ? plan.to : plan.from}`,
        ),
        cond('Failing', false, started, 'AsExpected'),
        cond(
          'Progressing',
          !cvDone,
          cvDone ? at(plan, mastersDone) : started,
          cvDone ? 'AsExpected' : 'Updating',
          cvDone ? `Cluster version is ${plan.to}` : `Working towards ${plan.to}`,
        ),
      ],
    },
  };

  const pool = (name: string): MachineConfigPool => ({
    metadata: { name },
    spec: {
      paused: false,
      configuration: {
        name: renderedConfig(
          name,
          step >= (name === 'master' ? mastersStart : workersStart) ? plan.to : plan.from,
        ),
      },
      nodeSelector: { matchLabels: { [`node-role.kubernetes.io/${name}`]: '' } },
    },
  });

  const annotations = new Map<string, Record<string, string>>();
  const machineConfigNodes = new Map<string, MachineConfigNode>();
  const phases = new Map<string, SimulatedNodePhase>();
  const pools = new Map<string, string>();
  const rollout = (pool: string, nodes: readonly string[], start: number, parallel: number) =>
    nodes.forEach((n, i) => {
      const begins = nodeStart(start, i, parallel);
      const phase = nodePhase(begins, step);
      annotations.set(n, nodeAnnotations(pool, plan, phase));
      // Conditions changed when the node's current phase began (each in-progress phase lasts one step).
      const phaseBegan = phase === 'Pending' ? 0 : Math.min(step, begins + NODE_PHASES.length);
      machineConfigNodes.set(n, machineConfigNode(n, pool, plan, phase, at(plan, phaseBegan)));
      phases.set(n, phase);
      pools.set(n, pool);
    });
  rollout('master', plan.masterNodes, mastersStart, 1);
  rollout('worker', plan.workerNodes, workersStart, PARALLEL_WORKERS);

  return {
    clusterVersion,
    clusterOperators: operators,
    machineConfigPools: [pool('master'), pool('worker')],
    nodeAnnotations: annotations,
    machineConfigNodes,
    nodePhases: phases,
    nodePools: pools,
    controlPlaneCompleted: cvDone,
    done: step >= workersDone,
  };
}
