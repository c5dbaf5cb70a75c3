// Structured JSON logs (pino). The runtime logs through the small `Logger` interface so tests can pass a silent or
// capturing logger; `createLogger` returns a pino logger whose level can be changed while running
// (`logger.level = 'debug'`, or the manager's /loglevel endpoint).
import { pino } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The logging surface the runtime uses; a pino Logger satisfies it. */
export interface Logger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  trace(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  /** Initial level. Default: $TESSERA_LOG_LEVEL or 'info'. */
  level?: LogLevel;
  /** Bound as `name` on every line. Default: 'tessera'. */
  name?: string;
  /** Where lines go. Default: stdout. */
  destination?: NodeJS.WritableStream;
}

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** A pino JSON logger with ISO timestamps; `.level` may be reassigned at run time. */
export function createLogger(options: LoggerOptions = {}): pino.Logger {
  const env = process.env.TESSERA_LOG_LEVEL ?? '';
  const level = options.level ?? (isLogLevel(env) ? env : 'info');
  const opts: pino.LoggerOptions = {
    name: options.name ?? 'tessera',
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination ? pino(opts, options.destination) : pino(opts);
}

/** Discards everything. */
export const silentLogger: Logger = {
  error() {},
  warn() {},
  info() {},
  debug() {},
  trace() {},
  child() {
    return silentLogger;
  },
};
