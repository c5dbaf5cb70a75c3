// Starting and stopping the control plane's child processes. Each runs detached in its own process group with
// its output in a log file, so `tessera dev up` can exit and leave the cluster running; everything is stopped
// by the pid recorded in the cluster's state file, together with the process's start time, so a pid reused by
// another process after a crash or reboot is never signalled. Waiting fails fast, with the log's tail, when a
// process dies.
import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { projectRoot } from './binaries.js';
import { DevClusterError } from './errors.js';

export interface ComponentProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat field 22): its identity beside the pid. */
  readonly startTicks?: string;
}

export interface SpawnOptions {
  readonly name: string;
  readonly binary: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly cwd?: string;
  /** Variables to set besides this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * How to run this Tessera's own CLI as a component (`tessera dev cluster-dns`): the built CLI, or, where this code
 * runs from its TypeScript sources (the tests), those sources through tsx, as the tests run the CLI.
 */
export function tesseraCliCommand(): {
  readonly binary: string;
  readonly args: string[];
  readonly cwd: string;
} {
  const fromSources = fileURLToPath(import.meta.url).endsWith('.ts');
  return {
    binary: process.execPath,
    args: fromSources
      ? ['--import', 'tsx', path.join(projectRoot, 'src', 'cli', 'main.ts')]
      : [path.join(projectRoot, 'dist', 'cli', 'main.js')],
    cwd: projectRoot,
  };
}

export function spawnComponent(options: SpawnOptions): ComponentProcess {
  const out = openSync(options.logFile, 'a');
  try {
    const child = spawn(options.binary, options.args, {
      cwd: options.cwd,
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...process.env, KUBECONFIG: '', ...options.env },
    });
    // Without a listener a failed exec (ENOENT, EACCES) would surface later as an unhandled 'error' event.
    child.on('error', () => undefined);
    if (child.pid === undefined) {
      throw new DevClusterError(
        'TESSERA_DEVCLUSTER_START_FAILED',
        `could not start ${options.binary}: is it installed and executable?`,
      );
    }
    child.unref();
    const startTicks = processStartTicks(child.pid);
    return {
      name: options.name,
      pid: child.pid,
      logFile: options.logFile,
      ...(startTicks ? { startTicks } : {}),
    };
  } finally {
    closeSync(out);
  }
}

/** Field 22 of /proc/<pid>/stat (start time), or undefined where /proc is not readable. */
export function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses; fields after it follow the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * True when `pid` is a live process of ours. A pid we may not signal (EPERM) belongs to someone else, so it is not
 * ours; with `startTicks` recorded, a reused pid is told apart from the process we started.
 */
export function isAlive(pid: number, startTicks?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (startTicks === undefined) return true;
  const now = processStartTicks(pid);
  return now === undefined || now === startTicks;
}

/** True when the recorded component process still runs (same pid and start time). */
export function isRunning(proc: ComponentProcess): boolean {
  return isAlive(proc.pid, proc.startTicks);
}

/**
 * SIGTERM, then SIGKILL after `graceMs` (default 5 s). Resolves once the process is gone; a process that ignores
 * even SIGKILL for 10 s (stuck in the kernel) is reported instead of waited on forever.
 */
export async function stopProcess(proc: ComponentProcess | number, graceMs = 5_000): Promise<void> {
  const { pid, startTicks } = typeof proc === 'number' ? { pid: proc, startTicks: undefined } : proc;
  if (!isAlive(pid, startTicks)) return;
  signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid, startTicks) && Date.now() < deadline) await sleep(50);
  if (!isAlive(pid, startTicks)) return;
  signal(pid, 'SIGKILL');
  const killDeadline = Date.now() + 10_000;
  while (isAlive(pid, startTicks)) {
    if (Date.now() > killDeadline) {
      throw new DevClusterError(
        'TESSERA_DEVCLUSTER_START_FAILED',
        `process ${pid} survived SIGKILL for 10 s`,
      );
    }
    await sleep(20);
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
    if (!isRunning(component)) {
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

/** A free TCP port on 127.0.0.1, outside the ephemeral range where the system allows (freePortRange). */
export async function freePort(): Promise<number> {
  const range = freePortRange(readEphemeralRange());
  if (range) {
    for (let attempt = 0; attempt < 64; attempt++) {
      const port = range.low + randomInt(range.high - range.low + 1);
      // Callers often take several ports before binding any: never hand out the same one twice (reserved before the
      // check, so concurrent calls cannot both take it).
      if (handedOut.has(port)) continue;
      remember(port);
      if (await canListen(port)) return port;
      handedOut.delete(port);
    }
  }
  return remember(await listen(0));
}

/** Ports freePort handed out recently in this process (the newest HANDED_OUT_KEPT). */
const handedOut = new Set<number>();
const HANDED_OUT_KEPT = 4_096;

function remember(port: number): number {
  handedOut.add(port);
  if (handedOut.size > HANDED_OUT_KEPT) handedOut.delete(handedOut.values().next().value as number);
  return port;
}

/**
 * Where freePort chooses: below the kernel's ephemeral range, which outgoing connections draw their local ports
 * from, so none of them can take a chosen port before its process binds it (or while it restarts), and below the
 * NodePort range. Undefined when the range leaves no room (then the kernel chooses). Pure.
 */
export function freePortRange(
  ephemeral: { low: number; high: number } | undefined,
): { low: number; high: number } | undefined {
  if (!ephemeral) return undefined;
  // Below Kubernetes' default NodePort range (30000-32767) too, which kube-proxy may hold on a real node.
  const high = Math.min(ephemeral.low - 1, 29_999);
  const low = Math.max(10_000, high - 12_000);
  return high - low >= 1_000 ? { low, high } : undefined;
}

function readEphemeralRange(): { low: number; high: number } | undefined {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    return low && high && low <= high ? { low, high } : undefined;
  } catch {
    return undefined; // not Linux
  }
}

function canListen(port: number): Promise<boolean> {
  return listen(port).then(
    () => true,
    () => false,
  );
}

/** Binds `port` (0: any) on loopback, closes it, and resolves with the port bound. */
function listen(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}
