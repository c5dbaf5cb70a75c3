// The command's shell behaviour without a cluster: option checking, snapshot mode (same loader as the
// conformance test), --now, -o yaml, and --watch refreshing in place until interrupted.
import path from 'node:path';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/fixtures.js';
import { type CommandIO, parseUpgradeStatusOptions, runUpgradeStatus } from './command.js';
import { InvalidArgumentError } from '../runtime/errors.js';
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
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).code).toBe('TESSERA_INVALID_ARGUMENT');
      expect((err as InvalidArgumentError).field).toBe('--now');
    }
  });
  it('rejects other output formats', () => {
    expect(() => parseUpgradeStatusOptions({ output: 'wide' })).toThrow(/json or yaml/);
  });
});

describe('snapshot mode', () => {
  it('prints oc output for --mock-clusterversion, after the line oc prints on stdout about missing alerts', async () => {
    const io = fakeIO();
    const opts = parseUpgradeStatusOptions({ mockClusterversion: cv('4.14.1-degraded'), details: 'all' });
    expect(await runUpgradeStatus(opts, io)).toBe(0);
    // oc: fmt.Println("Unable to fetch alerts, ignoring alerts in 'Update Health': ", err) with os.ReadFile's error.
    const alertsPath = path.join(fixtures, '4.14.1-degraded-alerts.json');
    expect(io.stdout.join('')).toBe(
      `Unable to fetch alerts, ignoring alerts in 'Update Health':  open ${alertsPath}: no such file or directory\n` +
        readFileSync(path.join(fixtures, '4.14.1-degraded.detailed-output'), 'utf8'),
    );
    expect(io.stderr.join('')).toBe('');
  });

  it('says nothing about alerts when the cluster is not updating (oc does not read them then)', async () => {
    const io = fakeIO();
    await runUpgradeStatus(parseUpgradeStatusOptions({ mockClusterversion: cv('not-upgrading') }), io);
    expect(io.stdout.join('')).toBe('The cluster is not updating.\n');
    expect(io.stderr.join('')).toBe('');
  });

  it('keeps -o yaml parseable: the alerts line goes to stderr there', async () => {
    const io = fakeIO();
    await runUpgradeStatus(
      parseUpgradeStatusOptions({ mockClusterversion: cv('4.14.1-degraded'), output: 'yaml' }),
      io,
    );
    expect(io.stderr.join('')).toMatch(
      /^Unable to fetch alerts, ignoring alerts in 'Update Health': {2}open /,
    );
    expect((parse(io.stdout.join('')) as UpdateStatus).kind).toBe('UpdateStatus');
  });

  it("reports an unreadable alerts file with Go's words and still renders the rest", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tessera-alerts-'));
    try {
      for (const suffix of ['cv', 'co', 'mcp', 'mc', 'node']) {
        copyFileSync(
          path.join(fixtures, `4.16.0-compact-${suffix}.yaml`),
          path.join(dir, `c-${suffix}.yaml`),
        );
      }
      const expected = readFileSync(path.join(fixtures, '4.16.0-compact.output'), 'utf8');
      const run = async () => {
        const io = fakeIO();
        await runUpgradeStatus(
          parseUpgradeStatusOptions({ mockClusterversion: path.join(dir, 'c-cv.yaml') }),
          io,
        );
        return io.stdout.join('');
      };
      // Not JSON at all: Go's json.Unmarshal error, printed with oc's literal "%w".
      writeFileSync(path.join(dir, 'c-alerts.json'), '');
      expect(await run()).toBe(
        "Ignoring alerts in 'Update Health'. Error unmarshaling alerts: %w unexpected end of JSON input\n" +
          expected,
      );
      // The wrong JSON type: Go's UnmarshalTypeError text.
      writeFileSync(path.join(dir, 'c-alerts.json'), '[1]');
      expect(await run()).toBe(
        "Ignoring alerts in 'Update Health'. Error unmarshaling alerts: %w json: cannot unmarshal array into Go value of type status.AlertData\n" +
          expected,
      );
      // A directory where the file should be: os.ReadFile fails on read.
      rmSync(path.join(dir, 'c-alerts.json'));
      mkdirSync(path.join(dir, 'c-alerts.json'));
      expect(await run()).toBe(
        `Unable to fetch alerts, ignoring alerts in 'Update Health':  read ${path.join(dir, 'c-alerts.json')}: is a directory\n` +
          expected,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
