// Go `time` semantics the oc output depends on: instants and durations as integer nanoseconds (bigint), Go's
// `Duration.String()`, `Round`/`Truncate`, `Seconds()`, RFC 3339 parsing with nanoseconds, and the zero time.
// Guarantees: results equal Go's for every int64 duration, including at the edges: `Time.Sub` saturates at the
// int64 bounds, while Duration arithmetic (`+`, `-`, unary minus, `*`) wraps around in two's complement, as int64
// does in Go. Both matter when "now" is the zero time (a snapshot whose conditions carry no timestamps): oc's
// elapsed times then saturate and its sums wrap, and its output shows it. All Duration arithmetic that can reach
// the bounds goes through the helpers below. Callers must treat `GO_ZERO_TIME` as "unset", like
// `time.Time{}.IsZero()`; parsing an absent timestamp yields it.

/** Nanoseconds since the Unix epoch. */
export type Instant = bigint;
/** Nanoseconds, int64 range like Go's `time.Duration`. */
export type Duration = bigint;

export const NANOSECOND: Duration = 1n;
export const MICROSECOND: Duration = 1_000n;
export const MILLISECOND: Duration = 1_000_000n;
export const SECOND: Duration = 1_000_000_000n;
export const MINUTE: Duration = 60n * SECOND;
export const HOUR: Duration = 60n * MINUTE;

const MAX_DURATION: Duration = (1n << 63n) - 1n;
const MIN_DURATION: Duration = -(1n << 63n);

/** Go's `time.Time{}` (0001-01-01T00:00:00Z) in Unix nanoseconds. */
export const GO_ZERO_TIME: Instant = -62_135_596_800n * SECOND;

export function isZeroTime(t: Instant): boolean {
  return t === GO_ZERO_TIME;
}

/** Go's int64 wrap-around: `x` reduced to [-2^63, 2^63). */
export function wrapInt64(x: bigint): Duration {
  return BigInt.asIntN(64, x);
}

/** `a + b` on Go Durations (wraps on overflow). */
export function addDurations(a: Duration, b: Duration): Duration {
  return wrapInt64(a + b);
}

/** `-d` on a Go Duration: `-math.MinInt64` is `math.MinInt64` again. */
export function negateDuration(d: Duration): Duration {
  return wrapInt64(-d);
}

/** `a * b` on Go Durations (wraps on overflow), e.g. `time.Duration(x) * time.Second`. */
export function mulDuration(a: Duration, b: Duration): Duration {
  return wrapInt64(a * b);
}

/**
 * `t.Add(d)`. Go keeps seconds in an int64 besides the nanoseconds, so no instant reachable from a Duration and
 * a Kubernetes timestamp overflows: plain addition is exact.
 */
export function addToTime(t: Instant, d: Duration): Instant {
  return t + d;
}

/** `t.Sub(u)`, saturating at the int64 bounds as Go does. */
export function sub(t: Instant, u: Instant): Duration {
  const d = t - u;
  if (d > MAX_DURATION) return MAX_DURATION;
  if (d < MIN_DURATION) return MIN_DURATION;
  return d;
}

/** `d.Round(m)`: halves round away from zero. */
export function roundDuration(d: Duration, m: Duration): Duration {
  if (m <= 0n) return d;
  let r = d % m;
  if (d < 0n) {
    r = -r;
    if (r + r < m) return d + r;
    const d1 = wrapInt64(d - m + r);
    return d1 < d ? d1 : MIN_DURATION;
  }
  if (r + r < m) return d - r;
  const d1 = wrapInt64(d + m - r);
  return d1 > d ? d1 : MAX_DURATION;
}

/** `d.Truncate(m)`: towards zero. */
export function truncateDuration(d: Duration, m: Duration): Duration {
  if (m <= 0n) return d;
  return d - (d % m);
}

/** `d.Seconds()` with Go's float composition (whole seconds plus the fraction). */
export function durationSeconds(d: Duration): number {
  const sec = d / SECOND;
  const nsec = d % SECOND;
  return Number(sec) + Number(nsec) / 1e9;
}

/**
 * `time.Duration(f)`: float to int64 nanoseconds, truncating towards zero. Go leaves out-of-range conversions to
 * the platform; oc's reference outputs come from amd64, whose CVTTSD2SQ gives math.MinInt64 for NaN, infinities
 * and anything outside [-2^63, 2^63). We reproduce amd64 (arm64 would saturate instead).
 */
export function durationFromFloat(f: number): Duration {
  if (!Number.isFinite(f)) return MIN_DURATION;
  const t = BigInt(Math.trunc(f));
  if (t > MAX_DURATION || t < MIN_DURATION) return MIN_DURATION;
  return t;
}

// Writes v / 10^prec as a decimal fraction without trailing zeros (and without the dot when it is zero),
// returning the fraction text and the integer part.
function fraction(v: bigint, prec: number): [string, bigint] {
  let digits = '';
  let print = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    print = print || digit !== 0n;
    if (print) digits = digit.toString() + digits;
    v /= 10n;
  }
  return [print ? `.${digits}` : '', v];
}

/** Go's `Duration.String()`: "1h2m3.5s", "2m0s", "1.5ms", "0s". */
export function formatDuration(d: Duration): string {
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < SECOND) {
    if (u === 0n) return '0s';
    let unit: string;
    let prec: number;
    if (u < MICROSECOND) {
      unit = 'ns';
      prec = 0;
    } else if (u < MILLISECOND) {
      unit = 'µs';
      prec = 3;
    } else {
      unit = 'ms';
      prec = 6;
    }
    const [frac, whole] = fraction(u, prec);
    out = `${whole}${frac}${unit}`;
  } else {
    const [frac, wholeSeconds] = fraction(u, 9);
    u = wholeSeconds;
    out = `${u % 60n}${frac}s`;
    u /= 60n;
    if (u > 0n) {
      out = `${u % 60n}m${out}`;
      u /= 60n;
      if (u > 0n) out = `${u}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}

const UNIT_NANOS: Record<string, bigint> = {
  ns: NANOSECOND,
  us: MICROSECOND,
  µs: MICROSECOND,
  μs: MICROSECOND,
  ms: MILLISECOND,
  s: SECOND,
  m: MINUTE,
  h: HOUR,
};

/** Go's `time.ParseDuration`; returns undefined where Go returns an error. */
export function parseDuration(s: string): Duration | undefined {
  let rest = s;
  let neg = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    neg = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return undefined;
  let total = 0n;
  const part = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/u;
  while (rest !== '') {
    const m = part.exec(rest);
    if (!m) return undefined;
    const [all, whole = '', frac, unit = ''] = m;
    if (whole === '' && (frac === undefined || frac === '')) return undefined;
    const scale = UNIT_NANOS[unit];
    if (scale === undefined) return undefined;
    total += BigInt(whole === '' ? '0' : whole) * scale;
    if (frac) total += (BigInt(frac) * scale) / 10n ** BigInt(frac.length);
    rest = rest.slice(all.length);
  }
  if (total > MAX_DURATION + (neg ? 1n : 0n)) return undefined;
  return neg ? -total : total;
}

function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 timestamp (as Kubernetes and Prometheus write them) to nanoseconds. Absent, null or empty
 * values give `GO_ZERO_TIME`; malformed ones give undefined.
 */
export function parseTime(value: unknown): Instant | undefined {
  if (value === undefined || value === null || value === '') return GO_ZERO_TIME;
  if (value instanceof Date) return BigInt(value.getTime()) * MILLISECOND;
  if (typeof value !== 'string') return undefined;
  const m = RFC3339.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const days = daysFromCivil(Number(y), Number(mo), Number(d));
  let seconds = BigInt(days) * 86_400n + BigInt(Number(h) * 3600 + Number(mi) * 60 + Number(s));
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1n : 1n;
    const offset = BigInt(Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
    seconds -= sign * offset;
  }
  const nanos = frac ? BigInt(frac.padEnd(9, '0')) : 0n;
  return seconds * SECOND + nanos;
}

/** `t.UTC().Format(time.RFC3339)`: whole seconds, `Z` suffix. */
export function formatRFC3339(t: Instant): string {
  const seconds = t >= 0n ? t / SECOND : -((-t + SECOND - 1n) / SECOND);
  return new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `t.UTC().Format(time.RFC3339Nano)`: fraction without trailing zeros. */
export function formatRFC3339Nano(t: Instant): string {
  const seconds = t >= 0n ? t / SECOND : -((-t + SECOND - 1n) / SECOND);
  const nanos = t - seconds * SECOND;
  const base = new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, '');
  const frac = nanos === 0n ? '' : `.${nanos.toString().padStart(9, '0').replace(/0+$/, '')}`;
  return `${base}${frac}Z`;
}
