// Log verbosity follows the cluster config's spec.logVerbosity at run time.
import type { LogLevel, Manager, SharedInformer } from '../../runtime/index.js';
import type { ClusterPodPlacementConfig, LogVerbosity } from '../api/schema.js';

const VERBOSITY_TO_LEVEL: Record<LogVerbosity, LogLevel> = {
  Normal: 'info',
  Debug: 'debug',
  Trace: 'trace',
  TraceAll: 'trace',
};

/** The verbosity `config` asks for and its log level, or undefined when it is `current` already. */
export function verbosityChange(
  current: LogVerbosity | undefined,
  config: ClusterPodPlacementConfig,
): { verbosity: LogVerbosity; level: LogLevel } | undefined {
  const verbosity = config.spec?.logVerbosity ?? 'Normal';
  return verbosity === current ? undefined : { verbosity, level: VERBOSITY_TO_LEVEL[verbosity] };
}

/** Sets the manager's log level whenever the cluster config's verbosity changes. */
export function followLogVerbosity(
  clusterConfigs: SharedInformer<ClusterPodPlacementConfig>,
  manager: Pick<Manager, 'setLogLevel'>,
): void {
  let current: LogVerbosity | undefined;
  const apply = (config: ClusterPodPlacementConfig): void => {
    const change = verbosityChange(current, config);
    if (!change) return;
    current = change.verbosity;
    manager.setLogLevel(change.level);
  };
  clusterConfigs.addEventHandler({ onAdd: apply, onUpdate: (_old, config) => apply(config) });
}
