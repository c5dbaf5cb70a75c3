// Runs a component process the way the kubelet runs a Deployment's container: started again whenever it exits,
// whatever the cause (a crash, an out-of-memory kill, a lost leader Lease), and counting those restarts, so the
// fault tests can tell "recovered by itself" from "never failed" and from "crash-looping".
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What the supervisor needs of one run of the process. */
export interface ProcessRun {
  readonly child: ChildProcess;
  readonly logFile: string;
}

export interface Supervised<R extends ProcessRun> {
  current(): R;
  /** Exits that were not asked for through stop(), i.e. restarts. */
  restarts(): number;
  /** SIGKILLs the current run and waits for it to exit; the supervisor starts the next one. */
  kill(): Promise<void>;
  /** Stops supervising and SIGKILLs the current run. */
  stop(): Promise<void>;
}

export function supervise<R extends ProcessRun>(start: () => R): Supervised<R> {
  let stopping = false;
  let restarts = 0;
  let run = start();
  const exited = (r: R): Promise<void> =>
    r.child.exitCode !== null || r.child.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => r.child.once('exit', () => resolve()));
  const watch = (r: R): void => {
    r.child.once('exit', () => {
      if (stopping) return;
      restarts++;
      run = start();
      watch(run);
    });
  };
  watch(run);
  return {
    current: () => run,
    restarts: () => restarts,
    async kill() {
      const r = run;
      r.child.kill('SIGKILL');
      await exited(r);
    },
    async stop() {
      stopping = true;
      run.child.kill('SIGKILL');
      await exited(run);
    },
  };
}

const projectRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** One run of the `tessera` CLI from source with `nodeOptions` (e.g. a Deployment's heap flags); output to a log. */
export function startTessera(
  args: readonly string[],
  options: { nodeOptions?: readonly string[]; env?: NodeJS.ProcessEnv } = {},
): ProcessRun & { log(): string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-run-'));
  const logFile = path.join(dir, 'out.log');
  const fd = openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [...(options.nodeOptions ?? []), '--import', 'tsx', 'src/cli/main.ts', ...args],
    { cwd: projectRoot, stdio: ['ignore', fd, fd], env: { ...process.env, ...options.env } },
  );
  return { child, logFile, log: () => readFileSync(logFile, 'utf8') };
}
