import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WORKERS,
  InspectionSlots,
  defaultInspectionSlotCaps,
  inspectionSlotCaps,
} from './inspection-slots.js';
import { InvalidArgumentError } from '../runtime/index.js';
import { FakeClock } from '../runtime/testing/index.js';

function slots(caps: { total?: number; perNamespace?: number; perRegistry?: number } = {}) {
  const clock = new FakeClock();
  const woken: string[] = [];
  const s = new InspectionSlots({
    maxInspections: caps.total ?? 6,
    maxInspectionsPerNamespace: caps.perNamespace ?? 2,
    maxInspectionsPerRegistry: caps.perRegistry ?? 4,
    clock,
    wake: (key) => void woken.push(key),
    reservationTtlMs: 1_000,
  });
  /** Takes a slot for pod `ns/name` on `hosts`; returns its release, or throws naming the cap it waits for. */
  const take = (key: string, hosts: string[] = [`${key.split('/')[0] ?? ''}.reg`]): (() => void) => {
    const got = s.tryAcquire(key, key.split('/')[0] ?? '', hosts);
    if ('saturated' in got) throw new Error(`${key} waits for ${got.saturated}`);
    return got.release;
  };
  const waitsFor = (key: string, hosts: string[] = [`${key.split('/')[0] ?? ''}.reg`]): string => {
    const got = s.tryAcquire(key, key.split('/')[0] ?? '', hosts);
    if ('release' in got) throw new Error(`${key} got a slot`);
    return got.saturated;
  };
  return { s, clock, woken, take, waitsFor };
}

describe('InspectionSlots', () => {
  it('caps inspections per namespace, per registry host across namespaces, and in total', () => {
    const t = slots({ total: 3, perNamespace: 2, perRegistry: 2 });
    t.take('a/1', ['shared.reg']);
    t.take('a/2', ['a.reg']);
    expect(t.waitsFor('a/3', ['a.reg'])).toBe('namespace');
    t.take('b/1', ['shared.reg']);
    expect(t.waitsFor('c/1', ['shared.reg'])).toBe('registry shared.reg');
    expect(t.waitsFor('c/2', ['c.reg'])).toBe('total');
    expect(t.s.inFlightTotal()).toBe(3);
    expect(t.s.waiting()).toBe(3);
  });

  it('sets a freed slot aside for a waiting pod and wakes it; a newcomer does not take it', () => {
    const t = slots({ total: 1 });
    const release = t.take('a/1');
    expect(t.waitsFor('b/1')).toBe('total');
    release();
    expect(t.woken).toEqual(['b/1']);
    expect(t.waitsFor('c/1')).toBe('total'); // the slot is b/1's
    const b = t.take('b/1'); // b/1 comes back and finds its slot
    expect(t.s.inFlightTotal()).toBe(1);
    b();
    expect(t.woken).toEqual(['b/1', 'c/1']);
  });

  it('serves the namespace with the fewest in flight first, then the one served least recently', () => {
    // 8 hostile namespaces with 2 registry names each fill the 6 slots and keep pods waiting; a tenant that starts
    // waiting later is served after only the namespaces that wait with nothing in flight since before it (the 2
    // hostile ones the 6 slots did not reach), so within the first 6 slots that free: within one deadline.
    const t = slots({ total: 6, perNamespace: 2, perRegistry: 4 });
    const releases: (() => void)[] = [];
    for (let round = 0; round < 4; round++)
      for (let n = 0; n < 8; n++) {
        const got = t.s.tryAcquire(`hostile-${n}/p${round}`, `hostile-${n}`, [`h${n}-${round % 2}.reg`]);
        if ('release' in got) releases.push(got.release);
      }
    expect(releases).toHaveLength(6);
    expect(t.s.waiting()).toBe(26);
    expect(t.waitsFor('good/web', ['fast.reg'])).toBe('total');
    for (const release of releases.slice(0, 3)) release();
    expect(t.woken).toEqual(['hostile-6/p0', 'hostile-7/p0', 'good/web']);
    // Then, of those with nothing in flight (hostile-0..2, whose p0 ended), the one served longest ago.
    t.take('good/web', ['fast.reg'])();
    expect(t.woken.at(-1)).toBe('hostile-0/p1');
  });

  it('skips a waiting pod whose registry host is full and serves the next one that fits', () => {
    const t = slots({ total: 2, perNamespace: 2, perRegistry: 1 });
    t.take('a/1', ['slow.reg']);
    const other = t.take('b/1', ['b.reg']);
    expect(t.waitsFor('c/1', ['slow.reg'])).toBe('registry slow.reg');
    expect(t.waitsFor('d/1', ['d.reg'])).toBe('total');
    other();
    expect(t.woken).toEqual(['d/1']);
  });

  it('gives a slot set aside for a pod that does not come back to the next pod, and forgets gone pods', () => {
    const t = slots({ total: 1 });
    const release = t.take('a/1');
    t.waitsFor('b/1');
    t.waitsFor('c/1');
    t.waitsFor('d/1');
    release();
    expect(t.woken).toEqual(['b/1']);
    t.clock.step(1_000); // b/1 never came back: its turn passes at the next call
    expect(t.waitsFor('e/1')).toBe('total');
    expect(t.woken).toEqual(['b/1', 'c/1']);
    t.s.forget('c/1', 'c'); // c/1's pod was deleted: its slot goes on to d/1
    expect(t.woken).toEqual(['b/1', 'c/1', 'd/1']);
    t.take('d/1')();
    // e/1 was next; once it is gone too, nothing is held and nothing is kept.
    expect(t.woken.at(-1)).toBe('e/1');
    t.s.forget('e/1', 'e');
    t.s.forget('b/1', 'b');
    expect(t.s.inFlightTotal()).toBe(0);
    expect(t.s.waiting()).toBe(0);
  });

  it('drops a slot set aside for a pod whose images changed, and treats it as a newcomer', () => {
    const t = slots({ total: 1 });
    const release = t.take('a/1');
    t.waitsFor('b/1', ['old.reg']);
    release();
    const got = t.s.tryAcquire('b/1', 'b', ['new.reg']);
    expect('release' in got).toBe(true); // the set-aside slot was given back, then taken afresh
    expect(t.s.inFlightTotal()).toBe(1);
  });

  it('fills in the default caps, keeps the ones given, and refuses a cap below 1 naming it', () => {
    expect(inspectionSlotCaps()).toEqual(defaultInspectionSlotCaps(DEFAULT_WORKERS));
    expect(inspectionSlotCaps({}, 12)).toEqual(defaultInspectionSlotCaps(12));
    expect(inspectionSlotCaps({ maxInspectionsPerRegistry: 1 }).maxInspectionsPerRegistry).toBe(1);
    expect(() => inspectionSlotCaps({ maxInspectionsPerNamespace: 0 })).toThrow(InvalidArgumentError);
    expect(() => inspectionSlotCaps({ maxInspections: 2.5 })).toThrow(/maxInspections\b/);
  });
});
