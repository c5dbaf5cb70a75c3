import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  addSlotOwners,
  claimNodeSlots,
  isSlotLockLive,
  liveSlotLocks,
  parseSlotLock,
  parseSysctlBaseline,
  recordSysctlBaseline,
  releaseNodeSlots,
  serializeSlotLock,
  takeSysctlsToRestore,
  tryClaimSlot,
  withOwners,
} from './real-node-slots.js';
import { processStartTicks } from './processes.js';

// A pid no process has (above the kernel's pid_max limit of 2^22).
const DEAD = { pid: 4_194_304 + 17 };
const ME = { pid: process.pid, startTicks: processStartTicks(process.pid) ?? '0' };
const free = (): boolean => false;

describe('real node slot locks', () => {
  let dir: string;
  beforeEach(() => {
    dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'tessera-slots-')), 'slots');
  });
  afterEach(() => rmSync(path.dirname(dir), { recursive: true, force: true }));

  it('gives two clusters starting at once different slots', () => {
    const first = claimNodeSlots(['/a/real-0', '/a/real-1'], free, ME, dir);
    const second = claimNodeSlots(['/b/real-0'], free, ME, dir);
    expect(first).toEqual([0, 1]);
    expect(second).toEqual([2]);
  });

  it('skips slots the host already uses and holds nothing when too few are free', () => {
    expect(claimNodeSlots(['/a/real-0'], (slot) => slot < 5, ME, dir)).toEqual([5]);
    expect(claimNodeSlots(['/b/0', '/b/1'], (slot) => slot !== 7, ME, dir)).toBeUndefined();
    expect(liveSlotLocks(dir).map((l) => l.slot)).toEqual([5]);
  });

  it('reclaims a slot whose holders have all ended, and keeps one any holder still runs', () => {
    expect(tryClaimSlot({ slot: 3, nodeDir: '/crashed', owners: [DEAD] }, dir)).toBe(true);
    expect(tryClaimSlot({ slot: 3, nodeDir: '/new', owners: [ME] }, dir)).toBe(true);
    expect(parseSlotLock(readFileSync(path.join(dir, '3.lock'), 'utf8'))?.nodeDir).toBe('/new');
    expect(tryClaimSlot({ slot: 3, nodeDir: '/other', owners: [ME] }, dir)).toBe(false);
  });

  it("treats an unreadable lock as stale, and a pid reused by another process as not the holder's", () => {
    expect(tryClaimSlot({ slot: 9, nodeDir: '/x', owners: [ME] }, dir)).toBe(true);
    writeFileSync(path.join(dir, '9.lock'), '{"half');
    expect(tryClaimSlot({ slot: 9, nodeDir: '/y', owners: [ME] }, dir)).toBe(true);
    expect(
      isSlotLockLive({ slot: 1, nodeDir: '/z', owners: [{ pid: process.pid, startTicks: 'not-it' }] }),
    ).toBe(false);
  });

  it("stays held by the node's processes once the process that claimed it is gone", () => {
    expect(claimNodeSlots(['/a/real-0'], free, DEAD, dir)).toEqual([0]);
    expect(liveSlotLocks(dir)).toEqual([]);
    addSlotOwners(0, '/a/real-0', [ME], dir);
    expect(liveSlotLocks(dir)).toMatchObject([{ slot: 0, nodeDir: '/a/real-0' }]);
    // Another node's update does not touch it.
    addSlotOwners(0, '/b/real-0', [DEAD], dir);
    expect(liveSlotLocks(dir)[0]?.owners).toEqual([DEAD, ME]);
  });

  it('is released only by the node that holds it', () => {
    claimNodeSlots(['/a/real-0'], free, ME, dir);
    releaseNodeSlots([{ slot: 0, nodeDir: '/b/real-0' }], dir);
    expect(liveSlotLocks(dir)).toHaveLength(1);
    releaseNodeSlots([{ slot: 0, nodeDir: '/a/real-0' }], dir);
    expect(liveSlotLocks(dir)).toHaveLength(0);
  });

  it('parses only well-formed locks and adds each owner once', () => {
    const lock = { slot: 4, nodeDir: '/n', owners: [{ pid: 10, startTicks: '5' }] };
    expect(parseSlotLock(serializeSlotLock(lock))).toEqual(lock);
    for (const bad of [
      '',
      'null',
      '{"slot":300,"nodeDir":"/n","owners":[]}',
      '{"slot":1,"nodeDir":"/n","owners":[{"pid":-1}]}',
    ])
      expect(parseSlotLock(bad)).toBeUndefined();
    expect(withOwners(lock, [{ pid: 10, startTicks: '5' }, { pid: 11 }]).owners).toHaveLength(2);
  });
});

describe('the sysctls the kubelet changes, across clusters', () => {
  let dir: string;
  let baseline: string;
  beforeEach(() => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'tessera-sysctls-'));
    dir = path.join(root, 'slots');
    baseline = path.join(root, 'sysctls.json');
  });
  afterEach(() => rmSync(path.dirname(dir), { recursive: true, force: true }));

  const original = { 'kernel.panic': '0', 'vm.overcommit_memory': '0' };
  const kubelets = { 'kernel.panic': '10', 'vm.overcommit_memory': '1' };

  it('are recorded by the first cluster and restored only by the last one out', () => {
    // Cluster A starts: nothing recorded yet, so the current values are the baseline.
    claimNodeSlots(['/a/0'], free, ME, dir);
    expect(recordSysctlBaseline(() => original, baseline)).toEqual(original);
    // Cluster B starts while A's kubelet runs: the current values are the kubelet's, the baseline is kept.
    claimNodeSlots(['/b/0'], free, ME, dir);
    expect(recordSysctlBaseline(() => kubelets, baseline)).toEqual(original);
    // A stops first: B's node still runs, so nothing is written back.
    releaseNodeSlots([{ slot: 0, nodeDir: '/a/0' }], dir);
    expect(takeSysctlsToRestore(original, { lockDir: dir, baselineFile: baseline })).toBeUndefined();
    // B stops last: the machine's original values come back, and the baseline is forgotten.
    releaseNodeSlots([{ slot: 1, nodeDir: '/b/0' }], dir);
    expect(takeSysctlsToRestore(kubelets, { lockDir: dir, baselineFile: baseline })).toEqual(original);
    expect(recordSysctlBaseline(() => ({ 'kernel.panic': '3' }), baseline)).toEqual({ 'kernel.panic': '3' });
  });

  it("fall back to the cluster's own record when no baseline file is left", () => {
    expect(takeSysctlsToRestore(original, { lockDir: dir, baselineFile: baseline })).toEqual(original);
  });

  it('are only ever written back as the known tunables with integer values', () => {
    expect(
      parseSysctlBaseline(
        '{"kernel.panic":"0","vm.overcommit_memory":"1; reboot","kernel.core_pattern":"|/bin/sh","__proto__":"1"}',
      ),
    ).toEqual({ 'kernel.panic': '0' });
    expect(parseSysctlBaseline('not json')).toBeUndefined();
  });
});
