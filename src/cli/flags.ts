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

/** Where a listener binds: `host:port`, `:port` (every interface) or `[ipv6]:port`. */
export interface BindAddress {
  readonly host: string;
  readonly port: number;
}

const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;
const IPV6 = /^[0-9A-Fa-f:.]{2,45}$/;

/**
 * A listen address as controller-runtime's `--metrics-bind-address` takes it: `host:port`, `:port` (every
 * interface), `[ipv6]:port`; port 0 picks a free one; `0` alone turns the listener off (false).
 */
export function parseBindAddress(value: string): BindAddress | false {
  if (value === '0') return false;
  const expected = 'Expected host:port, :port (every interface), [ipv6]:port, or 0 to turn it off.';
  const colon = value.lastIndexOf(':');
  if (colon === -1) throw new InvalidArgumentError(expected);
  const rawHost = value.slice(0, colon);
  const portText = value.slice(colon + 1);
  const port = DIGITS.test(portText) ? Number(portText) : NaN;
  if (!Number.isSafeInteger(port) || port > 65_535) throw new InvalidArgumentError(expected);
  if (rawHost === '') return { host: '0.0.0.0', port };
  if (rawHost.startsWith('[') && rawHost.endsWith(']')) {
    const host = rawHost.slice(1, -1);
    if (!IPV6.test(host) || !host.includes(':')) throw new InvalidArgumentError(expected);
    return { host, port };
  }
  if (!HOSTNAME.test(rawHost)) throw new InvalidArgumentError(expected);
  return { host: rawHost, port };
}

/** A listen address that cannot be turned off: parseBindAddress without `0`. */
export function parseRequiredBindAddress(value: string): BindAddress {
  const address = parseBindAddress(value);
  if (address === false) throw new InvalidArgumentError('Expected host:port, :port or [ipv6]:port.');
  return address;
}

/**
 * Registers `--metrics-bind-address`, `--metrics-secure` / `--no-metrics-secure` and `--metrics-cert-dir` on a
 * command that runs a Manager (the same three flags on every such command, as controller-runtime's). The action
 * receives them as the runtime's MetricsFlags; metricsServing() (src/runtime/manager.ts) makes the Manager's option.
 */
export function addMetricsFlags(command: Commander.Command): Commander.Command {
  return command
    .option(
      '--metrics-bind-address <address>',
      'serve /metrics on its own listener at host:port or :port (HTTPS, TokenReview + SubjectAccessReview for get /metrics, unless --no-metrics-secure); 0: no metrics (default: /metrics on the probe port, plain HTTP, for development)',
      parseBindAddress,
    )
    .option(
      '--metrics-secure',
      'serve --metrics-bind-address over HTTPS with authentication and authorization (default)',
    )
    .option(
      '--no-metrics-secure',
      'serve --metrics-bind-address over plain HTTP, unauthenticated (development)',
    )
    .option(
      '--metrics-cert-dir <dir>',
      'directory with tls.crt and tls.key for the metrics listener, re-read when they change (default: a self-signed certificate generated at start)',
    );
}
