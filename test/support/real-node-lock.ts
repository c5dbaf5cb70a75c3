// Test files that start real kubelet nodes take the machine one at a time. Each node leaves traces on the host while
// it runs (links, routes, sysctls, cgroups) that another file's "the host as it found it" check would see, the
// clusters share the Service range the host routes into a node, and several nodes starting at once on a small
// machine miss their Ready deadline. vitest runs test files in separate processes, so the lock is a file: created
// with its content in one step (link(2) fails when it exists), and taken over once the process named in it is gone.
import { linkSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { isAlive, processStartTicks } from '../../src/devcluster/processes.js';

const LOCK_FILE = '/run/tessera-real-node-tests.lock';
const POLL_MS = 500;

/** Waits until this process holds the machine's real-node test lock; the function returned releases it. */
export async function holdRealNodeMachine(lockFile = LOCK_FILE): Promise<() => void> {
  const mine = `${process.pid} ${processStartTicks(process.pid) ?? ''}\n`;
  const draft = `${lockFile}.${process.pid}`;
  writeFileSync(draft, mine);
  try {
    for (;;) {
      try {
        linkSync(draft, lockFile);
        return () => {
          if (readHolder(lockFile) === mine) unlinkSync(lockFile);
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = readHolder(lockFile);
      if (holder !== undefined && !holderAlive(holder) && readHolder(lockFile) === holder) {
        rmSync(lockFile, { force: true }); // its test process ended without releasing it
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    rmSync(draft, { force: true });
  }
}

function readHolder(lockFile: string): string | undefined {
  try {
    return readFileSync(lockFile, 'utf8');
  } catch {
    return undefined;
  }
}

function holderAlive(holder: string): boolean {
  const [pid, startTicks] = holder.trim().split(' ');
  const holderPid = Number(pid);
  return Number.isInteger(holderPid) && holderPid > 0 && isAlive(holderPid, startTicks || undefined);
}
