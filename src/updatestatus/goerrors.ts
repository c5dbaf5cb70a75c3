// Go's error texts where oc prints them verbatim: `*os.PathError` from os.ReadFile ("open PATH: no such file or
// directory"), encoding/json's top-level errors, and k8s.io/apimachinery's error aggregate. Node reports the same
// failures with other words; these turn Node's errno codes and facts into Go's sentences.

/** syscall.Errno strings of Go on Linux, for the codes reading a file can meet. */
const ERRNO_TEXT: ReadonlyMap<string, string> = new Map([
  ['ENOENT', 'no such file or directory'],
  ['EACCES', 'permission denied'],
  ['EPERM', 'operation not permitted'],
  ['EISDIR', 'is a directory'],
  ['ENOTDIR', 'not a directory'],
  ['ELOOP', 'too many levels of symbolic links'],
  ['ENAMETOOLONG', 'file name too long'],
  ['EMFILE', 'too many open files'],
  ['ENFILE', 'too many open files in system'],
  ['EIO', 'input/output error'],
  ['ENXIO', 'no such device or address'],
  ['ENODEV', 'no such device'],
  ['EINVAL', 'invalid argument'],
  ['ENOMEM', 'cannot allocate memory'],
  ['EBUSY', 'device or resource busy'],
  ['EAGAIN', 'resource temporarily unavailable'],
  ['EINTR', 'interrupted system call'],
  ['EFBIG', 'file too large'],
  ['EOVERFLOW', 'value too large for defined data type'],
]);

function errnoOf(err: unknown): { code: string; syscall: string } | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, syscall } = err as { code?: unknown; syscall?: unknown };
  return typeof code === 'string'
    ? { code, syscall: typeof syscall === 'string' ? syscall : 'open' }
    : undefined;
}

/**
 * The text of the error Go's `os.ReadFile(file)` returns for the failure Node reported: `open FILE: no such file
 * or directory`, `read FILE: is a directory`. Unknown failures keep Node's message after Go's prefix.
 */
export function goFileErrorText(file: string, err: unknown): string {
  const errno = errnoOf(err);
  if (errno === undefined) return `open ${file}: ${err instanceof Error ? err.message : String(err)}`;
  // Go opens a directory fine and fails on read; Node may report either syscall.
  const op = errno.code === 'EISDIR' ? 'read' : errno.syscall === 'read' ? 'read' : 'open';
  return `${op} ${file}: ${ERRNO_TEXT.get(errno.code) ?? (err instanceof Error ? err.message : errno.code)}`;
}

/** JSON kind names as encoding/json's UnmarshalTypeError words them. */
export function goJsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  return 'object';
}

/**
 * `errors.NewAggregate(errs).Error()` from k8s.io/apimachinery: one message as is, several de-duplicated in
 * brackets. An empty list is a nil error, which `%s` prints as `%!s(<nil>)`.
 */
export function goAggregateText(messages: readonly string[]): string {
  if (messages.length === 0) return '%!s(<nil>)';
  if (messages.length === 1) return messages[0] ?? '';
  const seen = [...new Set(messages)];
  return seen.length === 1 ? (seen[0] ?? '') : `[${seen.join(', ')}]`;
}

/** Go's time package `quote`: the string in double quotes, `"` and `\` escaped. */
function goTimeQuote(s: string): string {
  return `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00';

/**
 * The error `time.Parse(time.RFC3339, value)` returns, as `time.Time`'s UnmarshalJSON reports it for a bad
 * timestamp; undefined when Go accepts the value. Covers what Go checks in order: each layout element, the
 * field ranges, and trailing text.
 */
export function goRFC3339ParseError(value: string): string | undefined {
  const prefix = `parsing time ${goTimeQuote(value)}`;
  const bad = (rest: string, elem: string) =>
    `${prefix} as ${goTimeQuote(RFC3339_LAYOUT)}: cannot parse ${goTimeQuote(rest)} as ${goTimeQuote(elem)}`;
  let rest = value;
  const numbers: Record<string, number> = {};
  const steps: readonly (readonly [elem: string, digits: number, fixed: boolean])[] = [
    ['2006', 4, true],
    ['-', 0, true],
    ['01', 2, true],
    ['-', 0, true],
    ['02', 2, true],
    ['T', 0, true],
    ['15', 2, false],
    [':', 0, true],
    ['04', 2, true],
    [':', 0, true],
    ['05', 2, true],
  ];
  for (const [elem, digits, fixed] of steps) {
    if (digits === 0) {
      if (!rest.startsWith(elem)) return bad(rest, elem);
      rest = rest.slice(elem.length);
      continue;
    }
    const m = (fixed ? new RegExp(`^\\d{${digits}}`) : /^\d{1,2}/).exec(rest);
    if (!m) return bad(rest, elem);
    numbers[elem] = Number(m[0]);
    rest = rest.slice(m[0].length);
  }
  const frac = /^[.,]\d+/.exec(rest);
  if (frac) rest = rest.slice(frac[0].length);
  if (rest.startsWith('Z')) rest = rest.slice(1);
  else if (/^[+-]\d{2}:\d{2}/.test(rest)) rest = rest.slice(6);
  else return bad(rest, 'Z07:00');
  if (rest !== '') return `${prefix}: extra text: ${goTimeQuote(rest)}`;
  const range = (what: string) => `${prefix}: ${what} out of range`;
  const month = numbers['01'] ?? 0;
  if (month < 1 || month > 12) return range('month');
  const year = numbers['2006'] ?? 0;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 31;
  const day = numbers['02'] ?? 0;
  if (day < 1 || day > days) return range('day');
  if ((numbers['15'] ?? 0) >= 24) return range('hour');
  if ((numbers['04'] ?? 0) >= 60) return range('minute');
  if ((numbers['05'] ?? 0) >= 60) return range('second');
  return undefined;
}

/** encoding/json's quoteChar: a byte as Go quotes it in a syntax error. */
function goQuoteByte(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  const named: Record<number, string> = {
    7: '\\a',
    8: '\\b',
    9: '\\t',
    10: '\\n',
    11: '\\v',
    12: '\\f',
    13: '\\r',
    0x5c: '\\\\',
  };
  const text = named[c];
  if (text !== undefined) return `'${text}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  // Go converts the byte to the rune of the same value; U+0080..U+009F are not printable.
  if (c >= 0x80 && c < 0xa0) return `'\\u${c.toString(16).padStart(4, '0')}'`;
  if (c === 0xad) return "'\\u00ad'";
  return `'${String.fromCharCode(c)}'`;
}

const isJsonSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/**
 * The SyntaxError text of Go's `json.Unmarshal` for `bytes` (its scanner's first complaint), or undefined when
 * Go's scanner accepts them. A port of encoding/json/scanner.go's state machine, for error messages only.
 */
export function goJsonSyntaxError(bytes: Uint8Array): string | undefined {
  return new GoJsonScanner().scan(bytes);
}

/** One step of the scanner: consumes a byte, returns an error text or undefined. */
type Step = (c: number) => string | undefined;
type Container = 'key' | 'value' | 'array';

const JSON_MAX_DEPTH = 10000;

/** encoding/json's scanner: `step` is the state, each state a method (names as in scanner.go). */
class GoJsonScanner {
  private readonly stack: Container[] = [];
  private step: Step = (c) => this.beginValue(c);
  private endTop = false;

  scan(bytes: Uint8Array): string | undefined {
    for (const c of bytes) {
      const err = this.step(c);
      if (err !== undefined) return err;
    }
    if (this.endTop) return undefined;
    // scanner.eof: a final space ends a number or a literal-free value at the top.
    const err = this.step(0x20);
    if (err !== undefined) return err;
    return this.endTop ? undefined : 'unexpected end of JSON input';
  }

  private next(step: Step): undefined {
    this.step = step;
    return undefined;
  }

  private push(container: Container, then: Step): string | undefined {
    if (this.stack.length >= JSON_MAX_DEPTH) return 'exceeded max depth';
    this.stack.push(container);
    return this.next(then);
  }

  private beginValue(c: number): string | undefined {
    if (isJsonSpace(c)) return undefined;
    if (c === 0x7b) return this.push('key', (x) => this.beginStringOrEmpty(x));
    if (c === 0x5b) return this.push('array', (x) => this.beginValueOrEmpty(x));
    if (c === 0x22) return this.next((x) => this.inString(x));
    if (c === 0x2d) return this.next((x) => this.neg(x));
    if (c === 0x30) return this.next((x) => this.zero(x));
    if (c === 0x74) return this.next(this.literal('rue', 'true'));
    if (c === 0x66) return this.next(this.literal('alse', 'false'));
    if (c === 0x6e) return this.next(this.literal('ull', 'null'));
    if (c >= 0x31 && c <= 0x39) return this.next((x) => this.one(x));
    return invalid(c, 'looking for beginning of value');
  }

  private literal(rest: string, name: string): Step {
    let i = 0;
    const step: Step = (c) => {
      if (c !== rest.charCodeAt(i)) return invalid(c, `in literal ${name} (expecting '${rest[i]}')`);
      i++;
      return this.next(i === rest.length ? (x) => this.endValue(x) : step);
    };
    return step;
  }

  private beginStringOrEmpty(c: number): string | undefined {
    if (isJsonSpace(c)) return undefined;
    if (c === 0x7d) return this.popContainer();
    return this.beginString(c);
  }

  private beginString(c: number): string | undefined {
    if (isJsonSpace(c)) return undefined;
    if (c === 0x22) return this.next((x) => this.inString(x));
    return invalid(c, 'looking for beginning of object key string');
  }

  private beginValueOrEmpty(c: number): string | undefined {
    if (isJsonSpace(c)) return undefined;
    if (c === 0x5d) return this.popContainer();
    return this.beginValue(c);
  }

  /** A container closed: the top-level value ended, or the enclosing one goes on. */
  private popContainer(): undefined {
    this.stack.pop();
    if (this.stack.length > 0) return this.next((x) => this.endValue(x));
    this.endTop = true;
    return this.next((x) => this.endTopStep(x));
  }

  private endTopStep(c: number): string | undefined {
    return isJsonSpace(c) ? undefined : invalid(c, 'after top-level value');
  }

  private endValue(c: number): string | undefined {
    if (this.stack.length === 0) {
      this.endTop = true;
      this.step = (x) => this.endTopStep(x);
      return this.endTopStep(c);
    }
    if (isJsonSpace(c)) return this.next((x) => this.endValue(x));
    const top = this.stack.length - 1;
    switch (this.stack[top]) {
      case 'key':
        if (c !== 0x3a) return invalid(c, 'after object key');
        this.stack[top] = 'value';
        return this.next((x) => this.beginValue(x));
      case 'value':
        if (c === 0x2c) {
          this.stack[top] = 'key';
          return this.next((x) => this.beginString(x));
        }
        if (c === 0x7d) return this.popContainer();
        return invalid(c, 'after object key:value pair');
      case 'array':
      case undefined:
        if (c === 0x2c) return this.next((x) => this.beginValue(x));
        if (c === 0x5d) return this.popContainer();
        return invalid(c, 'after array element');
    }
  }

  private inString(c: number): string | undefined {
    if (c === 0x22) return this.next((x) => this.endValue(x));
    if (c === 0x5c) return this.next((x) => this.inStringEsc(x));
    if (c < 0x20) return invalid(c, 'in string literal');
    return undefined;
  }

  private inStringEsc(c: number): string | undefined {
    if ([0x62, 0x66, 0x6e, 0x72, 0x74, 0x5c, 0x2f, 0x22].includes(c))
      return this.next((x) => this.inString(x));
    if (c === 0x75) return this.next(this.hexDigits(4));
    return invalid(c, 'in string escape code');
  }

  private hexDigits(left: number): Step {
    return (c) => {
      if (!isHex(c)) return invalid(c, 'in \\u hexadecimal character escape');
      return this.next(left === 1 ? (x) => this.inString(x) : this.hexDigits(left - 1));
    };
  }

  private neg(c: number): string | undefined {
    if (c === 0x30) return this.next((x) => this.zero(x));
    if (c >= 0x31 && c <= 0x39) return this.next((x) => this.one(x));
    return invalid(c, 'in numeric literal');
  }

  private one(c: number): string | undefined {
    return isDigit(c) ? undefined : this.zero(c);
  }

  private zero(c: number): string | undefined {
    if (c === 0x2e) return this.next((x) => this.dot(x));
    if (c === 0x65 || c === 0x45) return this.next((x) => this.exp(x));
    return this.endValue(c);
  }

  private dot(c: number): string | undefined {
    if (!isDigit(c)) return invalid(c, 'after decimal point in numeric literal');
    return this.next((x) => this.dot0(x));
  }

  private dot0(c: number): string | undefined {
    if (isDigit(c)) return undefined;
    if (c === 0x65 || c === 0x45) return this.next((x) => this.exp(x));
    return this.endValue(c);
  }

  private exp(c: number): string | undefined {
    if (c === 0x2b || c === 0x2d) return this.next((x) => this.expSign(x));
    return this.expSign(c);
  }

  private expSign(c: number): string | undefined {
    if (!isDigit(c)) return invalid(c, 'in exponent of numeric literal');
    return this.next((x) => this.exp0(x));
  }

  private exp0(c: number): string | undefined {
    return isDigit(c) ? undefined : this.endValue(c);
  }
}

function invalid(c: number, context: string): string {
  return `invalid character ${goQuoteByte(c)} ${context}`;
}
