// MachineConfigNodes as the machine-config operator writes them (openshift/machine-config-operator pkg/daemon,
// pkg/controller/drain, pkg/upgrademonitor), for the tests that check they give the report the node annotations
// give: every condition is created False ("NotYetOccurred"); writing `Updated` resets the others to False; the
// daemon takes an update up by setting status.configVersion.desired; the drain controller reports the cordon
// and the drain (Unknown while under way) before it writes lastAppliedDrain.
import type { MachineConfigNode, Node } from '../../src/updatestatus/inputs.js';
import { Annotations, MCN_CONDITION_TYPES } from '../../src/updatestatus/nodestate.js';

export { MCN_CONDITION_TYPES };
export type McnConditionType = (typeof MCN_CONDITION_TYPES)[number];
export type McnConditionStatus = 'True' | 'False' | 'Unknown';

/** A MachineConfigNode with these config versions; conditions not given are False. */
export function machineConfigNode(
  name: string,
  versions: { spec: string; current: string; desired: string },
  conditions: Partial<Record<McnConditionType, McnConditionStatus>>,
  pool = 'worker',
): MachineConfigNode {
  return {
    metadata: { name },
    spec: { node: { name }, pool: { name: pool }, configVersion: { desired: versions.spec } },
    status: {
      configVersion: { current: versions.current, desired: versions.desired },
      conditions: MCN_CONDITION_TYPES.map((type) => ({
        type,
        status: conditions[type] ?? 'False',
        reason: conditions[type] ? type : 'NotYetOccurred',
        message: conditions[type] ? `${type} message` : `This node has not yet entered the ${type} phase`,
        lastTransitionTime: '2024-01-01T10:01:00Z',
      })),
    },
  };
}

/**
 * The MachineConfigNode the MCO keeps beside a node with these annotations, once both are written for the step
 * they show: not taken up while the daemon still reports Done; cordoned and draining while the drain requested is
 * not applied, drained once it is; NodeDegraded when the daemon is degraded.
 */
export function machineConfigNodeOf(node: Node): MachineConfigNode {
  const a = node.metadata?.annotations ?? {};
  const name = node.metadata?.name ?? '';
  const current = a[Annotations.currentConfig] ?? '';
  const desired = a[Annotations.desiredConfig] ?? '';
  const state = a[Annotations.state] ?? '';
  const desiredDrain = a[Annotations.desiredDrain] ?? '';
  const appliedDrain = a[Annotations.lastAppliedDrain] ?? '';
  if (current === desired || state === 'Done')
    return machineConfigNode(name, { spec: desired, current, desired: current }, { Updated: 'True' });
  const conditions: Partial<Record<McnConditionType, McnConditionStatus>> = { UpdatePrepared: 'True' };
  if (desiredDrain.startsWith('drain-')) {
    conditions.UpdateExecuted = 'Unknown';
    conditions.Cordoned = 'True';
    conditions.Drained = desiredDrain === appliedDrain ? 'True' : 'Unknown';
  }
  if (state === 'Degraded' || state === 'Unreconcilable') conditions.NodeDegraded = 'True';
  return machineConfigNode(name, { spec: desired, current, desired }, conditions);
}
