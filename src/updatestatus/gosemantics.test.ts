// The Go behaviours oc's output depends on, checked against values produced by Go 1.26 (fmt, time,
// text/tabwriter, sort.Slice). A difference here shows up as a byte difference in `tessera upgrade status`.
import { describe, expect, it } from 'vitest';
import { ellipsis, formatFloat0, goQuote, goSortSlice } from './gofmt.js';
import {
  HOUR,
  MILLISECOND,
  MINUTE,
  SECOND,
  durationFromFloat,
  formatDuration,
  formatRFC3339,
  parseDuration,
  parseTime,
  roundDuration,
  truncateDuration,
} from './gotime.js';
import { shortDuration } from './render.js';
import { formatTable } from './tabwriter.js';

describe('Go Duration.String', () => {
  it.each([
    [0n, '0s'],
    [1n, '1ns'],
    [1_500n, '1.5µs'],
    [368_975n, '368.975µs'],
    [1_500_000n, '1.5ms'],
    [SECOND, '1s'],
    [2n * MINUTE, '2m0s'],
    [HOUR, '1h0m0s'],
    [HOUR + 2n * MINUTE + 3n * SECOND + 368_975n, '1h2m3.000368975s'],
    [-90n * SECOND, '-1m30s'],
  ])('%s ns -> %s', (d, s) => {
    expect(formatDuration(d)).toBe(s);
  });
});

describe('Round and Truncate', () => {
  it('rounds halves away from zero', () => {
    expect(roundDuration(90n * SECOND, MINUTE)).toBe(2n * MINUTE);
    expect(roundDuration(-90n * SECOND, MINUTE)).toBe(-2n * MINUTE);
    expect(roundDuration(89n * SECOND, MINUTE)).toBe(MINUTE);
  });
  it('truncates towards zero', () => {
    expect(truncateDuration(-90n * SECOND, MINUTE)).toBe(-MINUTE);
    expect(truncateDuration(119n * SECOND, MINUTE)).toBe(MINUTE);
  });
  it('converts floats to durations by truncation', () => {
    expect(durationFromFloat(-1.9)).toBe(-1n);
    expect(durationFromFloat(1.9)).toBe(1n);
  });
});

describe('oc shortDuration', () => {
  it.each([
    [0n, 'now'],
    [HOUR, '1h'],
    [5n * MINUTE, '5m'],
    [HOUR + 5n * MINUTE, '1h5m'],
    [HOUR + 2n * MINUTE + 3n * SECOND + 368_975n, '1h2m3s'],
    // oc cuts the fraction and keeps "s": 368.975µs becomes "368s", i.e. 6m8s.
    [368_975n, '6m8s'],
    [1_500n * MILLISECOND, '1s'],
  ])('%s ns -> %s', (d, s) => {
    expect(shortDuration(d)).toBe(s);
  });
  it('parses what Go parses', () => {
    expect(parseDuration('1h2m3.5s')).toBe(HOUR + 2n * MINUTE + 3500n * MILLISECOND);
    expect(parseDuration('x')).toBeUndefined();
  });
});

describe('RFC 3339', () => {
  it('keeps nanoseconds and offsets', () => {
    expect(parseTime('2024-02-27T15:42:58.123456789+01:00')).toBe(
      (parseTime('2024-02-27T14:42:58Z') ?? 0n) + 123_456_789n,
    );
    expect(formatRFC3339((parseTime('2024-02-27T15:42:58Z') ?? 0n) + 999n)).toBe('2024-02-27T15:42:58Z');
  });
});

describe('%.0f', () => {
  it('rounds exact halves to even, like Go (not like toFixed)', () => {
    expect(formatFloat0(12.5)).toBe('12');
    expect(formatFloat0(13.5)).toBe('14');
    expect(formatFloat0(0.5)).toBe('0');
    expect(formatFloat0(96.96969696969697)).toBe('97');
    expect(formatFloat0(100)).toBe('100');
  });
});

describe('%q and ellipsis', () => {
  it('quotes like strconv.Quote', () => {
    expect(goQuote('a "b"\n\x01é')).toBe('"a \\"b\\"\\n\\x01é"');
  });
  it('cuts to runes with "..."', () => {
    expect(ellipsis('NodeController_MasterNodesReady', 20)).toBe('NodeController_Ma...');
    expect(ellipsis('short', 20)).toBe('short');
  });
});

describe('sort.Slice', () => {
  it('leaves equal elements where Go pdqsort leaves them', () => {
    const keys = [3, 0, 2, 1, 0, 0, 0, 1, 0, 8, 0, 1, 2, 1, 1, 2, 0, 4, 4, 1, 3, 2, 1];
    const order = keys.map((_, i) => i);
    goSortSlice(order, (a, b) => (keys[a] ?? 0) > (keys[b] ?? 0));
    expect(order).toEqual([9, 17, 18, 0, 20, 12, 21, 2, 15, 7, 19, 3, 11, 22, 13, 14, 5, 16, 10, 8, 6, 4, 1]);
  });
  it('is insertion sort (stable) up to 12 elements', () => {
    const items = ['b1', 'a1', 'b2', 'a2', 'b3'];
    goSortSlice(items, (x, y) => x[0] === 'a' && y[0] === 'b');
    expect(items).toEqual(['a1', 'a2', 'b1', 'b2', 'b3']);
  });
});

describe('text/tabwriter', () => {
  it('pads columns per block and never pads the last cell', () => {
    expect(formatTable('NAME\tX\nlonger\ty\n')).toBe('NAME     X\nlonger   y\n');
  });
  it('restarts column widths after a line without tabs', () => {
    expect(formatTable('a\tb\nno tabs\nlonger\tc\n')).toBe('a   b\nno tabs\nlonger   c\n');
  });
  it('counts runes, and nested columns form their own blocks', () => {
    expect(formatTable('héllo\tx\ty\na\tb\n\tz\tw\n')).toBe('héllo   x   y\na       b\n        z   w\n');
  });
  it('drops an empty unterminated last cell as Flush does', () => {
    expect(formatTable('x\ty\t')).toBe('x   y');
  });
});
