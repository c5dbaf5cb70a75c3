import { describe, expect, it } from 'vitest';
import {
  MAX_ENTRY_BYTES,
  decodeInFlightRecord,
  encodeInFlightRecord,
  recordBudgetBytes,
} from './inflight-record.js';

describe('the in-flight record', () => {
  it('round-trips, each pod once, sorted', () => {
    const text = encodeInFlightRecord([
      { key: 'b/pod', uid: 'u2' },
      { key: 'a/pod', uid: 'u1' },
      { key: 'b/pod', uid: 'u2' },
    ]);
    expect(text).toBe('a/pod u1\nb/pod u2\n');
    expect(decodeInFlightRecord(text, 1024)).toEqual({
      entries: [
        { key: 'a/pod', uid: 'u1' },
        { key: 'b/pod', uid: 'u2' },
      ],
      invalid: 0,
      truncated: false,
    });
  });

  it('skips lines that are not a pod reference (an edited ConfigMap never releases a pod by accident)', () => {
    const text = [
      'UPPER/pod u',
      'ns/pod',
      'ns pod u',
      'ns/a/b u',
      `ns/${'x'.repeat(300)} u`,
      'ok/pod u-1',
    ].join('\n');
    const decoded = decodeInFlightRecord(text, 64 * 1024);
    expect(decoded.entries).toEqual([{ key: 'ok/pod', uid: 'u-1' }]);
    expect(decoded.invalid).toBe(5);
  });

  it('reads no further than its budget, at a line boundary, and says it stopped', () => {
    const line = 'ns/pod-0000 uid\n';
    const text = Array.from({ length: 10_000 }, (_, i) =>
      line.replace('0000', String(i).padStart(4, '0')),
    ).join('');
    const decoded = decodeInFlightRecord(text, 10 * line.length + 3);
    expect(decoded.entries).toHaveLength(10);
    expect(decoded.truncated).toBe(true);
  });

  it('is sized for the pods in flight now and as many carried over, far below the 1 MiB ConfigMap limit', () => {
    expect(recordBudgetBytes(8)).toBe(16 * MAX_ENTRY_BYTES);
    expect(recordBudgetBytes(8)).toBeLessThan(7 * 1024);
    expect(recordBudgetBytes(1_000)).toBeLessThanOrEqual(512 * 1024);
  });
});
