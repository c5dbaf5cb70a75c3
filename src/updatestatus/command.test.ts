// The command's shell behaviour without a cluster: option checking, snapshot mode (same loader as the
// conformance test), --now, -o yaml, and --watch refreshing in place until interrupted.
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/fixtures.js';
import { type CommandIO, parseUpgradeStatusOptions, runUpgradeStatus } from './command.js';
import { UpdateStatusError } from './errors.js';
import type { UpdateStatus } from './api/schema.js';

const fixtures = fixturePath('oc-upgrade-status');
const cv = (c: string) => path.join(fixtures, `${c}-cv.yaml`);

function fakeIO(stopAfterRefreshes = Infinity): CommandIO & { stdout: string[]; stderr: string[] } {
  const controller = new AbortController();
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (t) => stdout.push(t),
    err: (t) => stderr.push(t),
    clock: () => 0n,
    sleep: async () => {
      if (stdout.length >= stopAfterRefreshes) controller.abort();
    },
    signal: controller.signal,
  };
}

describe('option parsing', () => {
  it('rejects an unknown --details value with the accepted ones', () => {
    expect(() => parseUpgradeStatusOptions({ details: 'everything' })).toThrow(
      /must be one of none, all, nodes, health, operators/,
    );
  });
  it('rejects a --now that is not RFC 3339, with a typed error', () => {
    try {
      parseUpgradeStatusOptions({ now: 'yesterday' });
      expect.fail('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(UpdateStatusError);
      expect((err as UpdateStatusError).code).toBe('TESSERA_UPDATESTATUS_INVALID_ARGUMENT');
    }
  });
  it('rejects other output formats', () => {
    expect(() => parseUpgradeStatusOptions({ output: 'wide' })).toThrow(/json or yaml/);
  });
});

describe('snapshot mode', () => {
  it('prints oc output for --mock-clusterversion and warns about missing alerts on stderr only', async () => {
    const io = fakeIO();
    const opts = parseUpgradeStatusOptions({ mockClusterversion: cv('4.14.1-degraded'), details: 'all' });
    expect(await runUpgradeStatus(opts, io)).toBe(0);
    expect(io.stdout.join('')).toBe(
      readFileSync(path.join(fixtures, '4.14.1-degraded.detailed-output'), 'utf8'),
    );
    expect(io.stderr.join('')).toMatch(/ignoring alerts/);
  });

  it('evaluates at --now: durations grow with it', async () => {
    const io = fakeIO();
    await runUpgradeStatus(
      parseUpgradeStatusOptions({ mockClusterversion: cv('4.15.0-ec2-early'), now: '2030-01-01T00:00:00Z' }),
      io,
    );
    expect(io.stdout.join('')).toMatch(/Duration: +\d+h/);
    expect(io.stdout.join('')).not.toBe(readFileSync(path.join(fixtures, '4.15.0-ec2-early.output'), 'utf8'));
  });

  it('prints an UpdateStatus object with -o yaml', async () => {
    const io = fakeIO();
    await runUpgradeStatus(
      parseUpgradeStatusOptions({ mockClusterversion: cv('4.16.0-compact'), output: 'yaml' }),
      io,
    );
    const obj = parse(io.stdout.join('')) as UpdateStatus;
    expect(obj.apiVersion).toBe('update.openshift.io/v1alpha1');
    expect(obj.metadata?.name).toBe('cluster');
    expect(obj.status?.controlPlane?.informers?.map((i) => i.name)).toContain('cpi');
  });

  it('--watch clears the screen before each refresh and stops when interrupted', async () => {
    const io = fakeIO(3);
    await runUpgradeStatus(
      parseUpgradeStatusOptions({ mockClusterversion: cv('not-upgrading'), watch: true }),
      io,
    );
    expect(io.stdout).toHaveLength(3);
    for (const frame of io.stdout) expect(frame).toBe('\x1b[H\x1b[2JThe cluster is not updating.\n');
  });
});
