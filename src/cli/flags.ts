// The parsers of every command's flags, as commander argParsers: `.option('--workers <n>', '...', parseCount)`.
// A bad value throws commander's InvalidArgumentError, so commander itself refuses it before the command runs,
// naming the flag ("error: option '--workers <n>' argument 'x' is invalid. <reason>") and exiting 1. Commander
// hands defaults to the command unparsed, so a default is given as the parsed value (a number, not '8'), and a
// flag without a default reaches the command as undefined: the component's own default then applies.
// Area cli.ts files import this module (eslint.config.js allows it) while they register their commands, so it must
// stay as light as commander's types: no module of an area, nothing but commander, required as main.ts requires it.
import { createRequire } from 'node:module';
import type * as Commander from 'commander';

// commander is CommonJS: require() skips the ESM wrapper's export scan, as in main.ts; it is the same loaded module.
const { InvalidArgumentError } = createRequire(import.meta.url)('commander') as typeof Commander;

/** A commander argParser: the flag's text to its value, or InvalidArgumentError. */
export type FlagParser<T> = (value: string) => T;

const DIGITS = /^[0-9]+$/;
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

function wholeNumber(value: string, expected: string): number {
  const n = DIGITS.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`Expected ${expected}.`);
  return n;
}

/** A TCP port to connect to: 1 to 65535. */
export function parsePort(value: string): number {
  const port = wholeNumber(value, 'a port number from 1 to 65535');
  if (port < 1 || port > 65_535) throw new InvalidArgumentError('Expected a port number from 1 to 65535.');
  return port;
}

/** A TCP port to listen on: 1 to 65535, or 0 for any free port. */
export function parseListenPort(value: string): number {
  const expected = 'a port number from 1 to 65535, or 0 for any free port';
  const port = wholeNumber(value, expected);
  if (port > 65_535) throw new InvalidArgumentError(`Expected ${expected}.`);
  return port;
}

/** A count that may be 0: a whole number, at least 0. */
export function parseCount(value: string): number {
  return wholeNumber(value, 'a whole number, 0 or more');
}

/** A count of at least 1: a whole number. */
export function parsePositiveCount(value: string): number {
  const n = wholeNumber(value, 'a whole number, 1 or more');
  if (n < 1) throw new InvalidArgumentError('Expected a whole number, 1 or more.');
  return n;
}

/**
 * The parser of a duration flag given in `unit` (`--step-ms 500`, `--heartbeat 1.5`): a decimal number, to whole
 * milliseconds. 0 only with `allowZero` (where the flag says what 0 means, such as "never").
 */
export function parseDuration(unit: 'ms' | 's', options: { allowZero?: boolean } = {}): FlagParser<number> {
  const unitName = unit === 'ms' ? 'milliseconds' : 'seconds';
  const expected = `a number of ${unitName}, ${options.allowZero ? '0 or more' : 'more than 0'}`;
  return (value) => {
    const n = DECIMAL.test(value) ? Number(value) : NaN;
    const ms = Math.round(unit === 'ms' ? n : n * 1000);
    if (!Number.isSafeInteger(ms) || (ms === 0 && !options.allowZero) || (n > 0 && ms === 0))
      throw new InvalidArgumentError(`Expected ${expected}.`);
    return ms;
  };
}

/** The parser of a flag that takes one of `choices`, worded as commander's own `.choices()`. */
export function parseChoice<const C extends string>(choices: readonly C[]): FlagParser<C> {
  return (value) => {
    if (!(choices as readonly string[]).includes(value))
      throw new InvalidArgumentError(`Allowed choices are ${choices.join(', ')}.`);
    return value as C;
  };
}

/** The parser of a repeatable flag (`--as-group a --as-group b`): every occurrence, in the order given. */
export function collectRepeatable(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * The address of a Kubernetes API server (--server, kubectl's `-s`): an http or https URL, or `host:port`, taken as
 * https (client-go takes it so whenever TLS is configured). Given back without a trailing slash. An empty value
 * stays empty: no override, as in kubectl.
 */
export function parseServerUrl(value: string): string {
  if (value === '') return value;
  const expected = 'Expected an https URL such as https://api.example.com:6443, or host:port.';
  const text = SCHEME.test(value) ? value : `https://${value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError(expected);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '')
    throw new InvalidArgumentError(expected);
  // Request paths are appended to it: a query or fragment would end up in the middle of every URL.
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new InvalidArgumentError('Expected a URL without credentials, query or fragment.');
  return text.replace(/\/+$/, '');
}
