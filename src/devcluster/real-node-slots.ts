// Machine-wide bookkeeping that lets several clusters with real nodes run at once on one machine, from separate
// processes. A node's slot (its 10.87.<slot>.x link, 10.88.<slot>.0/24 pods, `tessera-n<slot>` interface and
// cgroup) is held by a lock file created exclusively under /run/tessera-nodes/slots, naming the processes that keep
// it in use; a lock whose processes have all ended is stale and reclaimed. The global sysctls the kubelet changes
// are recorded once, by the first cluster, in /run/tessera-nodes/sysctls.json, and written back only by the last
// cluster whose nodes stop (the one that finds no live slot lock but its own). /run is a tmpfs: a reboot forgets
// both, as it forgets the nodes.
import { randomBytes } from 'node:crypto';
import {
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { isAlive } from './processes.js';
import { CONTAINERD_SOCKET_ROOT, KUBELET_GLOBAL_SYSCTLS, MAX_NODE_SLOT } from './real-node-config.js';

/** Where slot locks live: beside the nodes' containerd sockets, removed with them when empty. */
export const SLOT_LOCK_DIR = path.join(CONTAINERD_SOCKET_ROOT, 'slots');
/** The sysctls as found before the first of the live clusters' kubelets started. */
export const SYSCTL_BASELINE_FILE = path.join(CONTAINERD_SOCKET_ROOT, 'sysctls.json');

export interface SlotOwner {
  readonly pid: number;
  /** /proc/<pid>/stat start time: tells a reused pid apart. */
  readonly startTicks?: string;
}

export interface SlotLock {
  readonly slot: number;
  /** The node's state directory: identifies the holder (release and owner updates only touch their own lock). */
  readonly nodeDir: string;
  /** Processes keeping the slot in use: the process that claimed it, then the node's own processes. */
  readonly owners: readonly SlotOwner[];
}

export function slotLockFileName(slot: number): string {
  return `${slot}.lock`;
}

export function serializeSlotLock(lock: SlotLock): string {
  return JSON.stringify(lock) + '\n';
}

/** The lock a file holds, or undefined for anything not shaped like one (then it is treated as stale). */
export function parseSlotLock(text: string): SlotLock | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { slot, nodeDir, owners } = value as Record<string, unknown>;
  if (typeof slot !== 'number' || !Number.isInteger(slot) || slot < 0 || slot > MAX_NODE_SLOT)
    return undefined;
  if (typeof nodeDir !== 'string' || !Array.isArray(owners)) return undefined;
  const parsed: SlotOwner[] = [];
  for (const owner of owners as unknown[]) {
    if (typeof owner !== 'object' || owner === null) return undefined;
    const { pid, startTicks } = owner as Record<string, unknown>;
    if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
    if (startTicks !== undefined && typeof startTicks !== 'string') return undefined;
    parsed.push(startTicks === undefined ? { pid } : { pid, startTicks });
  }
  return { slot, nodeDir, owners: parsed };
}

/** A lock is live while any of its owners runs; an unreadable or owner-less lock is stale. */
export function isSlotLockLive(
  lock: SlotLock | undefined,
  alive: (owner: SlotOwner) => boolean = (o) => isAlive(o.pid, o.startTicks),
): boolean {
  return lock !== undefined && lock.owners.some(alive);
}

/** The lock with `added` among its owners (each pid once). */
export function withOwners(lock: SlotLock, added: readonly SlotOwner[]): SlotLock {
  const owners = [...lock.owners];
  for (const owner of added) {
    if (!owners.some((o) => o.pid === owner.pid && o.startTicks === owner.startTicks)) owners.push(owner);
  }
  return { ...lock, owners };
}

/** Only the kubelet's known tunables, with integer values: what a baseline file may make us write to /proc/sys. */
export function parseSysctlBaseline(text: string): Record<string, string> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const entries = new Map(Object.entries(value as Record<string, unknown>));
  const out: Record<string, string> = {};
  for (const name of KUBELET_GLOBAL_SYSCTLS) {
    const v = entries.get(name);
    if (typeof v === 'string' && /^-?\d{1,20}$/.test(v)) out[name] = v;
  }
  return out;
}

const errnoCode = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err
    ? String((err as { code: unknown }).code)
    : undefined;

function readLock(file: string): { lock: SlotLock | undefined; ino: number } | undefined {
  try {
    const ino = statSync(file).ino;
    return { lock: parseSlotLock(readFileSync(file, 'utf8')), ino };
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Creates `file` holding `content` only if it does not exist: written beside it first and hard-linked into place
 * (link fails with EEXIST like an O_EXCL create, and no reader ever sees a half-written lock).
 */
function createExclusive(file: string, content: string): boolean {
  const dir = path.dirname(file);
  for (let attempt = 0; ; attempt++) {
    const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(temp, content, { flag: 'wx', mode: 0o600 });
      try {
        linkSync(temp, file);
        return true;
      } catch (err) {
        if (errnoCode(err) === 'EEXIST') return false;
        throw err;
      } finally {
        rmSync(temp, { force: true });
      }
    } catch (err) {
      // Another cluster's `dev down` removed the (then empty) folder meanwhile: make it again.
      if (errnoCode(err) === 'ENOENT' && attempt < 5) continue;
      throw err;
    }
  }
}

/**
 * Removes a stale lock, unless it changed since it was judged stale: it is renamed aside first (atomic) and put
 * back if what was renamed is not the file judged, i.e. another process reclaimed the slot meanwhile.
 */
function reclaimStale(file: string, judgedIno: number): void {
  const aside = `${file}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return; // someone else reclaimed it
    throw err;
  }
  if (statSync(aside).ino !== judgedIno) {
    try {
      linkSync(aside, file);
    } catch {
      // Taken again meanwhile: the newer lock stands.
    }
  }
  unlinkSync(aside);
}

/** Claims `slot` for `lock.nodeDir`, reclaiming a stale lock; false when a live cluster holds it. */
export function tryClaimSlot(lock: SlotLock, dir = SLOT_LOCK_DIR): boolean {
  const file = path.join(dir, slotLockFileName(lock.slot));
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createExclusive(file, serializeSlotLock(lock))) return true;
    const held = readLock(file);
    if (held === undefined) continue; // released meanwhile
    if (isSlotLockLive(held.lock)) return false;
    reclaimStale(file, held.ino);
  }
  return false;
}

/**
 * Claims the first `count` slots that are free on the host (`inUse` says which addresses or links already exist)
 * and unlocked, for the nodes `nodeDirs[i]`; undefined (and nothing held) when fewer are free.
 */
export function claimNodeSlots(
  nodeDirs: readonly string[],
  inUse: (slot: number) => boolean,
  owner: SlotOwner,
  dir = SLOT_LOCK_DIR,
): number[] | undefined {
  const claimed: number[] = [];
  for (let slot = 0; slot <= MAX_NODE_SLOT && claimed.length < nodeDirs.length; slot++) {
    const nodeDir = nodeDirs[claimed.length] ?? '';
    if (!inUse(slot) && tryClaimSlot({ slot, nodeDir, owners: [owner] }, dir)) claimed.push(slot);
  }
  if (claimed.length === nodeDirs.length) return claimed;
  releaseNodeSlots(
    claimed.map((slot, i) => ({ slot, nodeDir: nodeDirs[i] ?? '' })),
    dir,
  );
  return undefined;
}

/** Adds processes to the owners of a slot the node at `nodeDir` holds (replaced atomically). */
export function addSlotOwners(
  slot: number,
  nodeDir: string,
  owners: readonly SlotOwner[],
  dir = SLOT_LOCK_DIR,
): void {
  const file = path.join(dir, slotLockFileName(slot));
  const held = readLock(file);
  if (held?.lock?.nodeDir !== nodeDir) return;
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temp, serializeSlotLock(withOwners(held.lock, owners)), { mode: 0o600 });
  renameSync(temp, file);
}

/** Releases the slots these nodes hold (a lock another node took over is left alone). */
export function releaseNodeSlots(
  nodes: readonly { slot: number; nodeDir: string }[],
  dir = SLOT_LOCK_DIR,
): void {
  for (const { slot, nodeDir } of nodes) {
    const file = path.join(dir, slotLockFileName(slot));
    if (readLock(file)?.lock?.nodeDir === nodeDir) rmSync(file, { force: true });
  }
}

/** The live locks: slots some cluster's real node is using now. */
export function liveSlotLocks(dir = SLOT_LOCK_DIR, alive?: (owner: SlotOwner) => boolean): SlotLock[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => /^\d{1,3}\.lock$/.test(name));
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return [];
    throw err;
  }
  const live: SlotLock[] = [];
  for (const name of names) {
    const lock = readLock(path.join(dir, name))?.lock;
    if (lock && isSlotLockLive(lock, alive)) live.push(lock);
  }
  return live;
}

/**
 * The machine-wide sysctl baseline: the one recorded by a cluster started earlier (live or not stopped cleanly),
 * or `current()` recorded now as the baseline.
 */
export function recordSysctlBaseline(
  current: () => Record<string, string>,
  file = SYSCTL_BASELINE_FILE,
): Record<string, string> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const recorded = parseSysctlBaseline(readFileSync(file, 'utf8'));
      if (recorded) return recorded;
      rmSync(file, { force: true }); // unreadable: record afresh
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
    }
    const values = current();
    if (createExclusive(file, JSON.stringify(values) + '\n')) return values;
  }
  return current();
}

/**
 * Called by a cluster whose nodes have stopped and released their slots: when no other cluster's real node is
 * live, returns the sysctls to write back (the machine-wide baseline, else `own`) and forgets the baseline;
 * otherwise undefined, and the last cluster out restores them.
 */
export function takeSysctlsToRestore(
  own: Readonly<Record<string, string>>,
  options: { lockDir?: string; baselineFile?: string; alive?: (owner: SlotOwner) => boolean } = {},
): Readonly<Record<string, string>> | undefined {
  if (liveSlotLocks(options.lockDir, options.alive).length > 0) return undefined;
  const file = options.baselineFile ?? SYSCTL_BASELINE_FILE;
  let recorded: Record<string, string> | undefined;
  try {
    recorded = parseSysctlBaseline(readFileSync(file, 'utf8'));
  } catch {
    recorded = undefined;
  }
  rmSync(file, { force: true });
  return recorded ?? own;
}
