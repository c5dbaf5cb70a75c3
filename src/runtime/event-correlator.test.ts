import { describe, expect, it } from 'vitest';
import { AGGREGATED_PREFIX, EventCorrelator, type EventInput } from './event-correlator.js';

const pod = { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u1' };
const ev = (message: string, reason = 'Scheduled'): EventInput => ({
  regarding: pod,
  type: 'Normal',
  reason,
  message,
});
const t0 = Date.UTC(2026, 0, 1);

describe('EventCorrelator', () => {
  it('turns an identical repeat into an update of the same event with count+1', () => {
    const c = new EventCorrelator('ctrl');
    const first = c.correlate(ev('hello'), t0);
    const second = c.correlate(ev('hello'), t0 + 1000);
    expect(first.action).toBe('create');
    expect(second.action).toBe('update');
    if (first.action === 'drop' || second.action === 'drop') throw new Error('unexpected drop');
    expect(second.event.name).toBe(first.event.name);
    expect(second.event).toMatchObject({
      count: 2,
      firstTimestamp: t0,
      lastTimestamp: t0 + 1000,
      namespace: 'ns',
    });
  });

  it('aggregates more than 10 similar events with different messages into one', () => {
    const c = new EventCorrelator('ctrl', { burst: 1000 });
    const results = Array.from({ length: 13 }, (_, i) => c.correlate(ev(`attempt ${i}`), t0 + i));
    expect(results.slice(0, 10).every((r) => r.action === 'create')).toBe(true);
    const [eleventh, twelfth] = [results[10], results[11]];
    expect(eleventh).toMatchObject({
      action: 'create',
      event: { message: `${AGGREGATED_PREFIX}attempt 10` },
    });
    expect(twelfth).toMatchObject({
      action: 'update',
      event: { message: `${AGGREGATED_PREFIX}attempt 11`, count: 2 },
    });
  });

  it('starts a fresh aggregation window after 10 minutes', () => {
    const c = new EventCorrelator('ctrl', { burst: 1000 });
    for (let i = 0; i < 11; i++) c.correlate(ev(`m${i}`), t0);
    const later = c.correlate(ev('new message'), t0 + 11 * 60_000);
    expect(later).toMatchObject({ action: 'create', event: { message: 'new message' } });
  });

  it('drops events beyond the per-object burst until tokens refill (1 per 5 minutes)', () => {
    const c = new EventCorrelator('ctrl', { burst: 3 });
    const actions = Array.from({ length: 5 }, (_, i) => c.correlate(ev(`x${i}`), t0).action);
    expect(actions).toEqual(['create', 'create', 'create', 'drop', 'drop']);
    expect(c.correlate(ev('y'), t0 + 299_000).action).toBe('drop');
    expect(c.correlate(ev('y'), t0 + 300_000).action).toBe('create');
    // Another object has its own bucket.
    expect(c.correlate({ ...ev('z'), regarding: { ...pod, name: 'q', uid: 'u2' } }, t0).action).toBe(
      'create',
    );
  });

  it('puts events about cluster-scoped objects in the default namespace', () => {
    const c = new EventCorrelator('ctrl');
    const r = c.correlate(
      { regarding: { kind: 'Node', name: 'n1' }, type: 'Warning', reason: 'R', message: 'm' },
      t0,
    );
    expect(r).toMatchObject({ action: 'create', event: { namespace: 'default' } });
  });
});
