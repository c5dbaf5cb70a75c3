// Runs a component in a child process under a Deployment's heap flags, for the hostile tests where memory is the
// point: the child prints one JSON line of what it observed on stdout; an OOM shows as SIGABRT, a crash as a
// non-zero exit code, both with the end of stderr.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** NODE_OPTIONS of the pod placement and NodePool Deployments (deploy/podplacement/base/deployments.yaml). */
export const controllerHeapFlags = ['--max-semi-space-size=4', '--max-old-space-size=160'] as const;
/** NODE_OPTIONS of the update status Deployment (deploy/updatestatus/deployment.yaml). */
export const updateStatusHeapFlags = ['--max-semi-space-size=4', '--max-old-space-size=384'] as const;

export interface ChildOutcome<T> {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The last 2,000 characters of stderr. */
  readonly stderr: string;
  /** The child's last stdout line, parsed; undefined when it printed none. */
  readonly printed: T | undefined;
}

/** Runs `script` (a path under the repository, TypeScript run through tsx) with `heapFlags` and `env` added. */
export function runChild<T>(
  script: string,
  heapFlags: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<ChildOutcome<T>> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      [...heapFlags, '--import', 'tsx', path.join(repositoryRoot, script)],
      {
        cwd: repositoryRoot,
        // No inherited NODE_OPTIONS: the heap flags are the Deployment's, nothing else.
        env: { ...process.env, ...env, NODE_OPTIONS: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    proc.on('error', reject);
    proc.on('close', (exitCode, signal) => {
      const line = stdout.trim().split('\n').at(-1) ?? '';
      resolve({
        exitCode,
        signal,
        stderr: stderr.slice(-2000),
        printed: line.startsWith('{') ? (JSON.parse(line) as T) : undefined,
      });
    });
  });
}
