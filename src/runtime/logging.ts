// Logs through pino: JSON lines for machines (the default), or one human-readable line per record for a person at a
// terminal (`format: 'text'`). The runtime logs through the small `Logger` interface so tests can pass a silent or
// capturing logger; `createLogger` returns a pino logger whose level can be changed while running
// (`logger.level = 'debug'`, or the manager's /loglevel endpoint). Library code never reads the environment: the
// CLI decides level and format (src/cli/logging.ts) and passes them down.
import { pino } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `json`: one JSON object per line; `text`: `HH:MM:SS.mmm LEVEL [area] message key=value ...`. */
export type LogFormat = 'json' | 'text';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'text'];

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
  /** Initial level. Default: 'info'. */
  level?: LogLevel;
  /** Bound as `name` on every line. Default: 'tessera'. */
  name?: string;
  /** Where lines go. Default: stdout. */
  destination?: NodeJS.WritableStream;
  /** Line format. Default: 'json'. */
  format?: LogFormat;
  /** Text format only: colour the level with ANSI escapes. Default: false. */
  color?: boolean;
}

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export function isLogFormat(value: string): value is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

/** A pino logger with ISO timestamps, JSON or text lines; `.level` may be reassigned at run time. */
export function createLogger(options: LoggerOptions = {}): pino.Logger {
  const opts: pino.LoggerOptions = {
    name: options.name ?? 'tessera',
    level: options.level ?? 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (options.format === 'text') {
    const out = options.destination ?? process.stdout;
    const color = options.color === true;
    return pino(opts, { write: (line: string) => void out.write(formatTextLine(line, color)) });
  }
  return options.destination ? pino(opts, options.destination) : pino(opts);
}

const LEVEL_NAMES: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
const LEVEL_COLORS: Readonly<Record<number, string>> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[31m' };
/** Fields every line carries that a person does not need to read. */
const HIDDEN_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'area']);

function textValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { message?: unknown }).message === 'string'
  )
    return JSON.stringify((value as { message: string }).message);
  return JSON.stringify(value) ?? String(value);
}

/**
 * One pino JSON line as a human-readable line: `12:01:02.345 WARN  [area] message key=value ...` (local time; the
 * `area` binding, else the logger name, in brackets). A line that is not JSON is passed through. Pure.
 */
export function formatTextLine(jsonLine: string, color = false): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.endsWith('\n') ? jsonLine : `${jsonLine}\n`;
  }
  const time = typeof rec['time'] === 'string' ? new Date(rec['time']) : new Date();
  const hh = [time.getHours(), time.getMinutes(), time.getSeconds()]
    .map((n) => String(n).padStart(2, '0'))
    .join(':');
  const stamp = `${hh}.${String(time.getMilliseconds()).padStart(3, '0')}`;
  const levelNumber = typeof rec['level'] === 'number' ? rec['level'] : 30;
  const levelName = (LEVEL_NAMES[levelNumber] ?? String(levelNumber)).padEnd(5);
  const paint = color ? LEVEL_COLORS[levelNumber] : undefined;
  const level = paint ? `${paint}${levelName}\x1b[0m` : levelName;
  const source = rec['area'] ?? rec['name'];
  const parts = [stamp, level];
  if (typeof source === 'string' && source) parts.push(`[${source}]`);
  if (typeof rec['msg'] === 'string') parts.push(rec['msg']);
  for (const [key, value] of Object.entries(rec)) {
    if (HIDDEN_FIELDS.has(key) || value === undefined) continue;
    parts.push(`${key}=${textValue(value)}`);
  }
  return `${parts.join(' ')}\n`;
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
