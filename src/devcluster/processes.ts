// Starting and stopping the control plane's child processes. Each runs detached in its own process group with
// its output in a log file, so `tessera dev up` can exit and leave the cluster running; everything is stopped
// by the pid recorded in the cluster's state file. Waiting fails fast, with the log's tail, when a process dies.
import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DevClusterError } from './errors.js';

export interface ComponentProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
}

export interface SpawnOptions {
  readonly name: string;
  readonly binary: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly cwd?: string;
}

export function spawnComponent(options: SpawnOptions): ComponentProcess {
  const out = openSync(options.logFile, 'a');
  try {
    const child = spawn(options.binary, options.args, {
      cwd: options.cwd,
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...process.env, KUBECONFIG: '' },
    });
    if (child.pid === undefined) {
      throw new DevClusterError('TESSERA_DEVCLUSTER_START_FAILED', `could not start ${options.binary}`);
    }
    child.unref();
    return { name: options.name, pid: child.pid, logFile: options.logFile };
  } finally {
    closeSync(out);
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGTERM, then SIGKILL after `graceMs` (default 5 s). Resolves once the process is gone. */
export async function stopProcess(pid: number, graceMs = 5_000): Promise<void> {
  if (!isAlive(pid)) return;
  signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(50);
  if (isAlive(pid)) {
    signal(pid, 'SIGKILL');
    while (isAlive(pid)) await sleep(20);
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    // The child leads its own process group (detached), so this reaches anything it spawned too.
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

export function logTail(logFile: string, lines = 25): string {
  if (!existsSync(logFile)) return '(no log)';
  const text = readFileSync(logFile, 'utf8').trimEnd().split('\n');
  return text.slice(-lines).join('\n');
}

/**
 * Polls `probe` until it returns true. Throws when `timeoutMs` passes or the process dies first, quoting the
 * end of its log so the user sees why.
 */
export async function waitUntilHealthy(
  component: ComponentProcess,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isAlive(component.pid)) {
      throw new DevClusterError(
        'TESSERA_DEVCLUSTER_START_FAILED',
        `${component.name} exited during start-up; last lines of ${component.logFile}:\n${logTail(component.logFile)}`,
      );
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new DevClusterError(
        'TESSERA_DEVCLUSTER_START_FAILED',
        `${component.name} was not healthy after ${timeoutMs / 1000} s; last lines of ${component.logFile}:\n` +
          logTail(component.logFile),
      );
    }
    await sleep(100);
  }
}

/** A free TCP port on 127.0.0.1, chosen by the kernel. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
