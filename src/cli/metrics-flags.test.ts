import { Command, InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { metricsServing, type MetricsFlags } from '../runtime/index.js';
import { addMetricsFlags, parseBindAddress } from './flags.js';

describe('parseBindAddress', () => {
  it('takes host:port, :port (every interface), [ipv6]:port, and 0 (off)', () => {
    expect(parseBindAddress(':8443')).toEqual({ host: '0.0.0.0', port: 8443 });
    expect(parseBindAddress('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseBindAddress('localhost:9090')).toEqual({ host: 'localhost', port: 9090 });
    expect(parseBindAddress('[::1]:8443')).toEqual({ host: '::1', port: 8443 });
    expect(parseBindAddress('0')).toBe(false);
  });

  it.each(['8443', 'host:', 'host:65536', 'host:-1', 'a b:1', '[zz]:1', 'http://x:1', ':port'])(
    'refuses %j, saying what it takes',
    (value) => {
      expect(() => parseBindAddress(value)).toThrow(InvalidArgumentError);
      expect(() => parseBindAddress(value)).toThrow(/host:port, :port/);
    },
  );
});

describe('addMetricsFlags', () => {
  function parse(args: string[]): MetricsFlags {
    let seen: MetricsFlags = {};
    const program = new Command().exitOverride();
    addMetricsFlags(program.command('run')).action((opts: MetricsFlags) => {
      seen = opts;
    });
    program.parse(['node', 'tessera', 'run', ...args]);
    return seen;
  }

  it('without flags the Manager keeps /metrics on the probe port (development)', () => {
    expect(metricsServing(parse([]))).toEqual({});
  });

  it('as the deploy manifests pass them: a secure listener with the mounted certificate', () => {
    expect(
      metricsServing(
        parse(['--metrics-bind-address=:8443', '--metrics-secure', '--metrics-cert-dir=/certs']),
      ),
    ).toEqual({ bindAddress: { host: '0.0.0.0', port: 8443 }, secure: true, certDir: '/certs' });
  });

  it('--no-metrics-secure serves plain HTTP; 0 turns metrics off', () => {
    expect(metricsServing(parse(['--metrics-bind-address=127.0.0.1:9000', '--no-metrics-secure']))).toEqual({
      bindAddress: { host: '127.0.0.1', port: 9000 },
      secure: false,
    });
    expect(metricsServing(parse(['--metrics-bind-address=0']))).toEqual({ bindAddress: false });
  });
});
