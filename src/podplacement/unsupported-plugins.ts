// What the Multiarch Tuning Operator's API offers that Tessera implements only in part, said out loud instead of
// left implied: an admission warning when a ClusterPodPlacementConfig asks for it (kubectl and oc print it), and a
// status condition. Today that is the exec format error monitor: MTO's eBPF DaemonSet sees every failed execve on a
// node and reports it through ENoExecEvent objects; Tessera detects, without a privileged DaemonSet, what the
// kubelet reports (operator/exec-format-error-monitor.ts): a container instance that fails with "exec format
// error", in its termination message or the last lines of its log. Not seen: a failed exec by a process that a
// running container starts later, when the container does not exit with it in its last log lines. Pure.
import { toV1beta1, V1ALPHA1 } from './api/conversion.js';
import type { ClusterPodPlacementConfig, Condition } from './api/schema.js';

/**
 * Tessera's own condition type (MTO has none for the monitor), in the reference's style: named for the problem,
 * so True would mean the monitor does not run as asked. It stays False, and its message says what is covered.
 */
export const EXEC_FORMAT_ERROR_MONITOR_UNSUPPORTED = 'ExecFormatErrorMonitorUnsupported';

export const EXEC_FORMAT_ERROR_MONITOR_FIELD = 'spec.plugins.execFormatErrorMonitor.enabled';

/**
 * The admission warning: what the monitor does not cover. The API server may truncate a warning over 256 characters
 * (AdmissionResponse.warnings), so the detail is in the condition's message.
 */
export const EXEC_FORMAT_ERROR_MONITOR_WARNING =
  `${EXEC_FORMAT_ERROR_MONITOR_FIELD}: Tessera detects the exec format errors the kubelet reports, without an ` +
  'eBPF DaemonSet; a failed exec in a container that keeps running is not seen, and no ENoExecEvents are made.';

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
    status: 'False',
    reason: enabled ? 'ExecFormatErrorMonitorFromKubeletReports' : 'ExecFormatErrorMonitorNotEnabled',
    message: enabled
      ? 'The exec format error monitor is enabled. Tessera detects, without an eBPF DaemonSet, the containers ' +
        'whose instance fails with "exec format error" as the kubelet reports it (the termination message, or ' +
        'the last lines of the log of an instance that ended within a second): a Warning event ExecFormatError ' +
        'on the pod, the pod label multiarch.openshift.io/exec-format-error=true, the metric ' +
        'mto_enoexecevents_total and the alert ExecFormatErrorsDetected. Not covered, unlike the Multiarch ' +
        "Tuning Operator's eBPF monitor: a failed exec by a process that a running container starts later (the " +
        'container keeps running, or its last log lines do not say it), and ENoExecEvent objects.'
      : 'The exec format error monitor is not enabled.',
    ...(observedGeneration === undefined ? {} : { observedGeneration }),
  };
}
