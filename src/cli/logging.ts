// How every `tessera` command that logs builds its logger: the only place that reads the environment for logging.
// `--log-format text|json|auto` and `--log-level` are options of the root program, so they are the same in every
// command (before or after the sub-command). auto: text when the log stream is a terminal, else JSON.
// Loaded by actions only (it pulls in pino), never by main.ts.
import type { Command } from 'commander';
import { InvalidArgumentError } from '../runtime/errors.js';
import {
  createLogger,
  isLogFormat,
  isLogLevel,
  LOG_LEVELS,
  type LogFormat,
  type LogLevel,
} from '../runtime/logging.js';

export interface LogSettings {
  readonly format: LogFormat;
  readonly level: LogLevel;
  /** Colour the level (text format on a terminal). */
  readonly color: boolean;
}

/**
 * Resolves --log-format/--log-level. Level: the flag, else $TESSERA_LOG_LEVEL, else `defaultLevel`. Pure: the caller
 * passes the raw option values, the environment and whether the log stream is a terminal.
 */
export function resolveLogSettings(input: {
  format?: string;
  level?: string;
  envLevel?: string;
  isTTY: boolean;
  defaultLevel: LogLevel;
}): LogSettings {
  const rawFormat = input.format ?? 'auto';
  if (rawFormat !== 'auto' && !isLogFormat(rawFormat))
    throw new InvalidArgumentError(
      '--log-format',
      `must be text, json or auto, got ${JSON.stringify(rawFormat)}`,
    );
  const format: LogFormat = rawFormat === 'auto' ? (input.isTTY ? 'text' : 'json') : rawFormat;
  let level = input.defaultLevel;
  if (input.level !== undefined) {
    if (!isLogLevel(input.level))
      throw new InvalidArgumentError(
        '--log-level',
        `must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(input.level)}`,
      );
    level = input.level;
  } else if (input.envLevel) {
    if (!isLogLevel(input.envLevel))
      throw new InvalidArgumentError(
        'TESSERA_LOG_LEVEL',
        `must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(input.envLevel)}`,
        'argument',
      );
    level = input.envLevel;
  }
  return { format, level, color: format === 'text' && input.isTTY };
}

/** The logger of a command: its root program's --log-format/--log-level, on `destination` (default stdout). */
export function commandLogger(
  command: Command,
  options: { name: string; destination?: NodeJS.WriteStream; defaultLevel?: LogLevel },
) {
  const destination = options.destination ?? process.stdout;
  const globals = command.optsWithGlobals<{ logFormat?: string; logLevel?: string }>();
  const settings = resolveLogSettings({
    format: globals.logFormat,
    level: globals.logLevel,
    envLevel: process.env.TESSERA_LOG_LEVEL,
    isTTY: destination.isTTY === true,
    defaultLevel: options.defaultLevel ?? 'info',
  });
  return {
    settings,
    logger: createLogger({
      name: options.name,
      destination,
      level: settings.level,
      format: settings.format,
      color: settings.color,
    }),
  };
}
