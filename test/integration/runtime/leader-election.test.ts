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

  it('fails over within leaseDuration + retryPeriod after SIGKILL and never runs two leaders at once', async () => {
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

    const killedAt = Date.now();
    a.kill('SIGKILL');
    await eventually(async () => expect(beginsBy('beta').length).toBeGreaterThan(0), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'beta to take over',
    });
    const takeoverMs = (beginsBy('beta')[0]?.at ?? Infinity) - killedAt;
    console.log(`leader election: beta reconciled ${takeoverMs} ms after alpha was killed`);
    expect(takeoverMs).toBeLessThanOrEqual(15_000 + 2_000);

    // No overlap: every alpha interval (its last one cut by the kill) ends before beta's first begin.
    const marks = readMarks(log);
    const alphaEnd = Math.max(
      ...marks.filter((m) => m.who === 'alpha' && (m.what === 'end' || m.what === 'begin')).map((m) => m.at),
      killedAt,
    );
    const betaFirst = Math.min(
      ...marks.filter((m) => m.who === 'beta' && m.what === 'begin').map((m) => m.at),
    );
    expect(betaFirst).toBeGreaterThan(Math.min(alphaEnd, killedAt));
    // Within each process begin/end alternate (one worker, one key: never concurrent).
    for (const who of ['alpha', 'beta']) {
      let open = 0;
      for (const m of marks.filter((x) => x.who === who)) {
        if (m.what === 'begin') open++;
        if (m.what === 'end') open--;
        expect(open).toBeLessThanOrEqual(1);
      }
    }

    // Graceful stop releases the lease.
    const exited = new Promise<number | null>((resolve) => b.on('exit', (code) => resolve(code)));
    b.kill('SIGTERM');
    expect(await exited).toBe(0);
    const leases = new ResourceClient<KubeObject & { spec?: LeaseSpec }>(
      new KubeClient(testKubeConfig()),
      Leases,
    );
    const lease = await leases.get({ namespace: ns.name, name: 'le-test' });
    expect(lease.spec?.holderIdentity ?? '').toBe('');
    expect(readMarks(log).some((m) => m.what === 'exited' && m.who === 'beta')).toBe(true);
  }, 120_000);
});
