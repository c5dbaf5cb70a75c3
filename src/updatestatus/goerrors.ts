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
  type Step = (c: number) => string | undefined;
  const stack: ('key' | 'value' | 'array')[] = [];
  let step: Step;
  let endTop = false;
  const invalid = (c: number, context: string) => `invalid character ${goQuoteByte(c)} ${context}`;
  const literal = (rest: string, name: string): Step => {
    let i = 0;
    const next: Step = (c) => {
      const want = rest.charCodeAt(i);
      if (c !== want) return invalid(c, `in literal ${name} (expecting '${rest[i]}')`);
      i++;
      step = i === rest.length ? endValue : next;
      return undefined;
    };
    return next;
  };
  const beginValue: Step = (c) => {
    if (isJsonSpace(c)) return undefined;
    if (c === 0x7b) {
      if (stack.length >= 10000) return 'exceeded max depth';
      stack.push('key');
      step = beginStringOrEmpty;
    } else if (c === 0x5b) {
      if (stack.length >= 10000) return 'exceeded max depth';
      stack.push('array');
      step = beginValueOrEmpty;
    } else if (c === 0x22) step = inString;
    else if (c === 0x2d) step = neg;
    else if (c === 0x30) step = zero;
    else if (c === 0x74) step = literal('rue', 'true');
    else if (c === 0x66) step = literal('alse', 'false');
    else if (c === 0x6e) step = literal('ull', 'null');
    else if (c >= 0x31 && c <= 0x39) step = one;
    else return invalid(c, 'looking for beginning of value');
    return undefined;
  };
  const beginStringOrEmpty: Step = (c) => {
    if (isJsonSpace(c)) return undefined;
    if (c === 0x7d) {
      stack.pop();
      return endValueAfterPop();
    }
    return beginString(c);
  };
  const beginString: Step = (c) => {
    if (isJsonSpace(c)) return undefined;
    if (c === 0x22) {
      step = inString;
      return undefined;
    }
    return invalid(c, 'looking for beginning of object key string');
  };
  const beginValueOrEmpty: Step = (c) => {
    if (isJsonSpace(c)) return undefined;
    if (c === 0x5d) {
      stack.pop();
      return endValueAfterPop();
    }
    return beginValue(c);
  };
  const endValueAfterPop = (): undefined => {
    if (stack.length === 0) {
      endTop = true;
      step = endTopStep;
    } else step = endValue;
    return undefined;
  };
  const endTopStep: Step = (c) => (isJsonSpace(c) ? undefined : invalid(c, 'after top-level value'));
  const endValue: Step = (c) => {
    if (stack.length === 0) {
      endTop = true;
      step = endTopStep;
      return endTopStep(c);
    }
    if (isJsonSpace(c)) {
      step = endValue;
      return undefined;
    }
    const top = stack[stack.length - 1];
    if (top === 'key') {
      if (c === 0x3a) {
        stack[stack.length - 1] = 'value';
        step = beginValue;
        return undefined;
      }
      return invalid(c, 'after object key');
    }
    if (top === 'value') {
      if (c === 0x2c) {
        stack[stack.length - 1] = 'key';
        step = beginString;
        return undefined;
      }
      if (c === 0x7d) {
        stack.pop();
        return endValueAfterPop();
      }
      return invalid(c, 'after object key:value pair');
    }
    if (c === 0x2c) {
      step = beginValue;
      return undefined;
    }
    if (c === 0x5d) {
      stack.pop();
      return endValueAfterPop();
    }
    return invalid(c, 'after array element');
  };
  const inString: Step = (c) => {
    if (c === 0x22) step = endValue;
    else if (c === 0x5c) step = inStringEsc;
    else if (c < 0x20) return invalid(c, 'in string literal');
    return undefined;
  };
  const inStringEsc: Step = (c) => {
    if ([0x62, 0x66, 0x6e, 0x72, 0x74, 0x5c, 0x2f, 0x22].includes(c)) step = inString;
    else if (c === 0x75) step = hexDigits(4);
    else return invalid(c, 'in string escape code');
    return undefined;
  };
  const hexDigits =
    (left: number): Step =>
    (c) => {
      if (!isHex(c)) return invalid(c, 'in \\u hexadecimal character escape');
      step = left === 1 ? inString : hexDigits(left - 1);
      return undefined;
    };
  const neg: Step = (c) => {
    if (c === 0x30) step = zero;
    else if (c >= 0x31 && c <= 0x39) step = one;
    else return invalid(c, 'in numeric literal');
    return undefined;
  };
  const one: Step = (c) => (isDigit(c) ? undefined : zero(c));
  const zero: Step = (c) => {
    if (c === 0x2e) step = dot;
    else if (c === 0x65 || c === 0x45) step = exp;
    else return endValue(c);
    return undefined;
  };
  const dot: Step = (c) => {
    if (!isDigit(c)) return invalid(c, 'after decimal point in numeric literal');
    step = dot0;
    return undefined;
  };
  const dot0: Step = (c) => {
    if (isDigit(c)) return undefined;
    if (c === 0x65 || c === 0x45) {
      step = exp;
      return undefined;
    }
    return endValue(c);
  };
  const exp: Step = (c) => {
    if (c === 0x2b || c === 0x2d) {
      step = expSign;
      return undefined;
    }
    return expSign(c);
  };
  const expSign: Step = (c) => {
    if (!isDigit(c)) return invalid(c, 'in exponent of numeric literal');
    step = exp0;
    return undefined;
  };
  const exp0: Step = (c) => (isDigit(c) ? undefined : endValue(c));

  step = beginValue;
  for (const c of bytes) {
    const err = step(c);
    if (err !== undefined) return err;
  }
  if (endTop) return undefined;
  // scanner.eof: a final space ends a number or a literal-free value at the top.
  const err = step(0x20);
  if (err !== undefined) return err;
  return endTop ? undefined : 'unexpected end of JSON input';
}
