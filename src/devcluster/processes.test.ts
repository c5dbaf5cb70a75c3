import { mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DevClusterError } from './errors.js';
import {
  freePort,
  freePortRange,
  isAlive,
  isRunning,
  processStartTicks,
  spawnComponent,
  stopProcess,
  waitUntilHealthy,
} from './processes.js';

const logDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-proc-'));

describe('component processes', () => {
  it('records a start time, so a reused pid is not mistaken for the process we started', async () => {
    const proc = spawnComponent({
      name: 'sleeper',
      binary: 'sleep',
      args: ['30'],
      logFile: path.join(logDir, 'sleep.log'),
    });
    try {
      expect(proc.startTicks).toBe(processStartTicks(proc.pid));
      expect(isRunning(proc)).toBe(true);
      // Same pid, different start time: what a pid reused after a reboot looks like.
      expect(isRunning({ ...proc, startTicks: '1' })).toBe(false);
      await stopProcess({ ...proc, startTicks: '1' }); // must not signal a process that is not ours
      expect(isAlive(proc.pid)).toBe(true);
    } finally {
      await stopProcess(proc);
    }
    expect(isRunning(proc)).toBe(false);
  });

  it('fails fast with the log tail when a component exits during start-up', async () => {
    const logFile = path.join(logDir, 'fail.log');
    const proc = spawnComponent({
      name: 'failing',
      binary: 'sh',
      args: ['-c', 'echo "listen tcp 127.0.0.1:1: bind: address already in use"; exit 1'],
      logFile,
    });
    const error = await waitUntilHealthy(proc, async () => false, 30_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DevClusterError);
    expect((error as DevClusterError).message).toMatch(
      /failing exited during start-up[\s\S]*address already in use/,
    );
    expect(readFileSync(logFile, 'utf8')).toContain('address already in use');
  });

  it('reports a binary that cannot be executed instead of crashing', async () => {
    const start = (): unknown =>
      spawnComponent({
        name: 'missing',
        binary: path.join(logDir, 'no-such-binary'),
        args: [],
        logFile: path.join(logDir, 'missing.log'),
      });
    expect(start).toThrow(/could not start .*no-such-binary: is it installed and executable\?/);
    // The child's late 'error' event must not become an unhandled error (vitest would fail the run on one).
    await new Promise((r) => setTimeout(r, 50));
  });
});

describe('freePort', () => {
  it('chooses below the ephemeral range (no outgoing connection takes the port before it is bound) and the NodePort range', () => {
    for (const ephemeral of [
      { low: 32_768, high: 60_999 }, // Linux's default
      { low: 15_000, high: 60_999 },
      { low: 49_152, high: 65_535 }, // IANA's
    ]) {
      const range = freePortRange(ephemeral);
      expect(range, JSON.stringify(ephemeral)).toBeDefined();
      expect(range?.high).toBeLessThan(Math.min(ephemeral.low, 30_000));
      expect(range?.low).toBeGreaterThanOrEqual(10_000);
      expect((range?.high ?? 0) - (range?.low ?? 0)).toBeGreaterThanOrEqual(1_000);
    }
    // No room below it: the kernel chooses.
    expect(freePortRange({ low: 1_024, high: 65_535 })).toBeUndefined();
    expect(freePortRange(undefined)).toBeUndefined();
  });

  it('never hands out the same port twice in a process, even before any is bound', async () => {
    const ports = await Promise.all(Array.from({ length: 200 }, () => freePort()));
    expect(new Set(ports).size).toBe(200);
  });

  it('hands out a port that can be bound on loopback', async () => {
    const port = await freePort();
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });
});
