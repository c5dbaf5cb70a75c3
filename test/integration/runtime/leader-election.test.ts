// Two managers in two processes compete for one Lease. SIGKILL the leader: the other must lead within the lease
// duration plus one retry period (15 s + 2 s), and the two must never reconcile at the same time. SIGTERM then
// makes the survivor release the lease.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { KubeClient } from '../../../src/runtime/client.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { Leases } from '../../../src/runtime/resources.js';
import type { LeaseSpec } from '../../../src/runtime/lease-decision.js';
import { eventually, testKubeConfig, useTestNamespace } from '../../support/cluster.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');

interface Mark {
  what: string;
  who: string;
  at: number;
}

/** One reconcile of one process, [begin, end] in epoch ms. */
interface Interval {
  who: string;
  begin: number;
  end: number;
}

/**
 * Pairs each process's begin/end marks into reconcile intervals (they must alternate: one worker, one key). A
 * reconcile still open when the process died ends at `openUntil`, a time the process was known to be gone by.
 */
function intervalsOf(marks: Mark[], who: string, openUntil: number): Interval[] {
  const out: Interval[] = [];
  let begin: number | undefined;
  for (const m of marks.filter((x) => x.who === who)) {
    if (m.what === 'begin') {
      expect(begin, `${who}: two reconciles began without an end between them`).toBeUndefined();
      begin = m.at;
    } else if (m.what === 'end') {
      if (begin === undefined) throw new Error(`${who}: reconcile end at ${m.at} without a begin`);
      out.push({ who, begin, end: m.at });
      begin = undefined;
    }
  }
  if (begin !== undefined) out.push({ who, begin, end: Math.max(begin, openUntil) });
  return out;
}

/** Every pair of intervals, one from each list, that overlap in time. */
function overlapping(xs: Interval[], ys: Interval[]): Array<[Interval, Interval]> {
  const out: Array<[Interval, Interval]> = [];
  for (const x of xs) for (const y of ys) if (x.begin < y.end && y.begin < x.end) out.push([x, y]);
  return out;
}

function readMarks(file: string): Mark[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [what = '', who = '', at = '0'] = line.split(' ');
      return { what, who, at: Number(at) };
    });
}

describe('leader election across two processes', () => {
  const ns = useTestNamespace('rt-leader');
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });

  it('fails over after SIGKILL within twice the lease duration and never runs two leaders at once', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-le-'));
    const log = path.join(dir, 'marks.log');
    writeFileSync(log, '');
    const kubeconfig = inject('kubeconfigPath');
    const spawnChild = (identity: string): ChildProcess => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(here, 'leader-child.ts'),
          kubeconfig,
          ns.name,
          'le-test',
          identity,
          log,
        ],
        {
          cwd: root,
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
      child.on('exit', (code, signal) => {
        if (code !== 0 && signal !== 'SIGKILL')
          process.stderr.write(`[${identity}] exited ${code ?? signal}\n${stderr}\n`);
      });
      children.push(child);
      return child;
    };
    const beginsBy = (who: string): Mark[] =>
      readMarks(log).filter((m) => m.what === 'begin' && m.who === who);

    const a = spawnChild('alpha');
    await eventually(async () => expect(beginsBy('alpha').length).toBeGreaterThan(0), {
      timeoutMs: 60_000,
      what: 'alpha to lead',
    });
    const b = spawnChild('beta');
    await eventually(
      async () => expect(readMarks(log).some((m) => m.what === 'started' && m.who === 'beta')).toBe(true),
      { timeoutMs: 60_000, what: 'beta to start' },
    );
    await new Promise((r) => setTimeout(r, 3000));
    expect(beginsBy('beta')).toHaveLength(0);

    const alphaGone = new Promise<number>((resolve) => a.on('exit', () => resolve(Date.now())));
    const killedAt = Date.now();
    a.kill('SIGKILL');
    // The lease (15 s) must expire first; twice that is a bound no loaded machine misses and a broken elector does.
    await eventually(async () => expect(beginsBy('beta').length).toBeGreaterThan(0), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'beta to take over within twice the lease duration',
    });
    const takeoverMs = (beginsBy('beta')[0]?.at ?? Infinity) - killedAt;
    console.log(`leader election: beta reconciled ${takeoverMs} ms after alpha was killed`);

    const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
      b.on('exit', (code) => resolve({ code, at: Date.now() })),
    );
    b.kill('SIGTERM');
    const betaExit = await exited;
    expect(betaExit.code).toBe(0);

    // Never two reconciling at once: no reconcile of alpha overlaps any reconcile of beta. Alpha's reconcile cut by
    // SIGKILL counts as running until we saw the process exit.
    const marks = readMarks(log);
    const alpha = intervalsOf(marks, 'alpha', await alphaGone);
    const beta = intervalsOf(marks, 'beta', betaExit.at);
    expect(alpha.length).toBeGreaterThan(0);
    expect(beta.length).toBeGreaterThan(0);
    expect(overlapping(alpha, beta)).toEqual([]);

    // Graceful stop released the lease.
    const leases = new ResourceClient<KubeObject & { spec?: LeaseSpec }>(
      new KubeClient(testKubeConfig()),
      Leases,
    );
    const lease = await leases.get({ namespace: ns.name, name: 'le-test' });
    expect(lease.spec?.holderIdentity ?? '').toBe('');
    expect(readMarks(log).some((m) => m.what === 'exited' && m.who === 'beta')).toBe(true);
  }, 120_000);
});
