// What the Multiarch Tuning Operator's API offers that Tessera accepts but does not implement, said out loud
// instead of ignored: an admission warning when a ClusterPodPlacementConfig asks for it (kubectl and oc print
// it), and a status condition for as long as it does. Today that is the exec format error monitor (MTO's eBPF
// DaemonSet, ENoExecEvent objects, pod events, mto_enoexecevents* metrics and alerts). Pure.
import { toV1beta1, V1ALPHA1 } from './api/conversion.js';
import type { ClusterPodPlacementConfig, Condition } from './api/schema.js';

/**
 * Tessera's own condition type (MTO has none for the monitor), in the reference's style: named for the problem,
 * so True means something is not as the user asked.
 */
export const EXEC_FORMAT_ERROR_MONITOR_UNSUPPORTED = 'ExecFormatErrorMonitorUnsupported';

export const EXEC_FORMAT_ERROR_MONITOR_FIELD = 'spec.plugins.execFormatErrorMonitor.enabled';

/**
 * The admission warning. The API server may truncate a warning over 256 characters (AdmissionResponse.warnings),
 * so the detail is in the condition's message.
 */
export const EXEC_FORMAT_ERROR_MONITOR_WARNING =
  `${EXEC_FORMAT_ERROR_MONITOR_FIELD} is true, but Tessera does not implement the exec format error monitor: ` +
  'no ENoExecEvents, events, metrics or alerts. Pod placement is not affected.';

export function execFormatErrorMonitorEnabled(config: ClusterPodPlacementConfig | undefined): boolean {
  return config?.spec?.plugins?.execFormatErrorMonitor?.enabled === true;
}

/**
 * The v1beta1 view of a config the webhook may receive in either version: a v1alpha1 write carries the plugins
 * in an annotation. One whose annotation does not convert is refused by the conversion webhook, so it warns of
 * nothing here.
 */
function asV1beta1(config: ClusterPodPlacementConfig): ClusterPodPlacementConfig {
  if (config.apiVersion !== V1ALPHA1) return config;
  try {
    return toV1beta1(config as unknown as Record<string, unknown>) as unknown as ClusterPodPlacementConfig;
  } catch {
    return config;
  }
}

/** The warnings for a ClusterPodPlacementConfig being created or updated (the object is admitted either way). */
export function clusterConfigWarnings(config: ClusterPodPlacementConfig): string[] {
  return execFormatErrorMonitorEnabled(asV1beta1(config)) ? [EXEC_FORMAT_ERROR_MONITOR_WARNING] : [];
}

/**
 * The condition, present whether or not the monitor is asked for, as the reference lists all its conditions. It
 * leaves Available and Degraded alone: pods are gated and placed as usual.
 */
export function execFormatErrorMonitorCondition(
  enabled: boolean,
  observedGeneration?: number,
): Omit<Condition, 'lastTransitionTime'> {
  return {
    type: EXEC_FORMAT_ERROR_MONITOR_UNSUPPORTED,
    status: enabled ? 'True' : 'False',
    reason: enabled ? 'ExecFormatErrorMonitorNotImplemented' : 'ExecFormatErrorMonitorNotEnabled',
    message: enabled
      ? `${EXEC_FORMAT_ERROR_MONITOR_FIELD} is true, but Tessera does not implement the exec format error ` +
        'monitor of the Multiarch Tuning Operator: containers that fail with "exec format error" are not ' +
        'detected, and no ENoExecEvent objects, pod events, mto_enoexecevents metrics or alerts are produced. ' +
        'Pod placement is not affected. Set enabled to false to clear this condition.'
      : 'The exec format error monitor is not enabled (Tessera does not implement it).',
    ...(observedGeneration === undefined ? {} : { observedGeneration }),
  };
}
