// Log verbosity follows the cluster config's spec.logVerbosity at run time. Normal means the level the process was
// started with (--log-level, $TESSERA_LOG_LEVEL or the command's default: info for the operator, warn for
// `tessera start`), so a config left at its default never makes a command louder than its user asked; Debug and
// Trace make it more verbose than that, never quieter.
import { LOG_LEVELS, type LogLevel, type Manager, type SharedInformer } from '../../runtime/index.js';
import type { ClusterPodPlacementConfig, LogVerbosity } from '../api/schema.js';

const VERBOSITY_TO_LEVEL: Record<Exclude<LogVerbosity, 'Normal'>, LogLevel> = {
  Debug: 'debug',
  Trace: 'trace',
  TraceAll: 'trace',
};

/** The more verbose of two levels ('silent' is the least verbose of all). */
function moreVerbose(a: LogLevel, b: LogLevel): LogLevel {
  const rank = (l: LogLevel): number => (l === 'silent' ? -1 : LOG_LEVELS.indexOf(l));
  return rank(a) >= rank(b) ? a : b;
}

/**
 * The verbosity `config` asks for and its log level over `startLevel` (the process's own), or undefined when it is
 * `current` already.
 */
export function verbosityChange(
  current: LogVerbosity | undefined,
  config: ClusterPodPlacementConfig,
  startLevel: LogLevel,
): { verbosity: LogVerbosity; level: LogLevel } | undefined {
  const verbosity = config.spec?.logVerbosity ?? 'Normal';
  if (verbosity === current) return undefined;
  const level = verbosity === 'Normal' ? startLevel : moreVerbose(startLevel, VERBOSITY_TO_LEVEL[verbosity]);
  return { verbosity, level };
}

/** Sets the manager's log level whenever the cluster config's verbosity changes. */
export function followLogVerbosity(
  clusterConfigs: SharedInformer<ClusterPodPlacementConfig>,
  manager: Pick<Manager, 'setLogLevel' | 'getLogLevel'>,
): void {
  const startLevel = manager.getLogLevel();
  let current: LogVerbosity | undefined;
  const apply = (config: ClusterPodPlacementConfig): void => {
    const change = verbosityChange(current, config, startLevel);
    if (!change) return;
    current = change.verbosity;
    manager.setLogLevel(change.level);
  };
  clusterConfigs.addEventHandler({ onAdd: apply, onUpdate: (_old, config) => apply(config) });
}
