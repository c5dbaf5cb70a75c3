// `tessera start` (what `npm start` runs) with KUBECONFIG set, as a user runs it against a cluster: a separate
// process on a private API-server-only cluster. Its output names the dashboard's URL beside the controllers' lines,
// that URL answers the dashboard's views, and SIGTERM stops the dashboard with the rest. Without a terminal its
// output carries no info-level JSON log lines (the default level of `start` is warn).
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DASHBOARD_LINE =
  /^\[dashboard\] live view of this cluster at (http:\/\/127\.0\.0\.1:\d+\/) \(read-only\)$/m;

/** Status and body of GET `url`, sent with the Host a browser on this machine sends. */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** The JSON log records in `output` below warn (pino levels: info 30, debug 20, trace 10). */
function belowWarn(output: string): string[] {
  return output.split('\n').filter((line) => {
    if (!line.startsWith('{')) return false;
    try {
      const level = (JSON.parse(line) as { level?: unknown }).level;
      return typeof level === 'number' && level < 40;
    } catch {
      return false; // not a log record
    }
  });
}

/** Resolves with the first match of `pattern` in everything `child` has written to stdout. */
function waitForOutput(
  child: ChildProcess,
  output: () => string,
  pattern: RegExp,
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const match = pattern.exec(output());
      if (match) {
        child.stdout?.off('data', check);
        child.off('exit', exited);
        resolve(match);
      }
    };
    const exited = (code: number | null): void =>
      reject(new Error(`tessera start exited (${code}) before printing ${pattern}:\n${output()}`));
    child.stdout?.on('data', check);
    child.once('exit', exited);
    check();
  });
}

describe('tessera start against $KUBECONFIG', () => {
  let cluster: DevCluster | undefined;
  let child: ChildProcess | undefined;
  let stdout = '';
  let stderr = '';
  let exit: Promise<number | null> | undefined;

  beforeAll(async () => {
    cluster = await startApiServerOnlyTestCluster(uniqueName('start'));
    child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'start'], {
      cwd: projectRoot,
      // The default log level, as a newcomer's `npm start` has it (spawn leaves out undefined variables).
      env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath, TESSERA_LOG_LEVEL: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const running = child;
    exit = new Promise((resolve) => running.once('exit', (code) => resolve(code)));
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exit;
    }
    await cluster?.stop({ wipe: true });
  });

  it('prints the dashboard URL beside the controllers, serves the views there, and stops on SIGTERM', async () => {
    if (!child || !cluster) throw new Error('tessera start not started');
    const url = (await waitForOutput(child, () => stdout, DASHBOARD_LINE))[1] ?? '';
    await waitForOutput(child, () => stdout, /^\[updatestatus\] controller running/m);
    await waitForOutput(child, () => stdout, /^\[podplacement\] operator running/m);
    expect(stdout).toContain(`using the cluster of KUBECONFIG (${cluster.server})`);

    const update = await get(new URL('api/views/update', url).href);
    expect(update.status, update.body).toBe(200);
    // Not OpenShift: the Update view says what is missing instead of failing.
    expect(update.body).toContain('ClusterVersion');
    expect((await get(url)).status).toBe(200);

    child.kill('SIGTERM');
    expect(await exit, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(0);
    // Not a terminal, so logs are JSON lines, and `start`'s default level is warn: a person reading the output
    // sees no info or debug records from any of the controllers, the dashboard or the runtime under them.
    expect(belowWarn(stdout), 'stdout').toEqual([]);
    expect(belowWarn(stderr), 'stderr').toEqual([]);
    // Stopped with the rest: nothing listens at the URL any more.
    await expect(get(url)).rejects.toThrow(/ECONNREFUSED/);
  });
});
