// Go's encoding/json scanner errors, as `oc` prints them when an alerts answer is not valid JSON.
import { describe, expect, it } from 'vitest';
import { goJsonSyntaxError } from './goerrors.js';

const syntaxError = (text: string): string | undefined => goJsonSyntaxError(Buffer.from(text, 'utf8'));

describe('goJsonSyntaxError', () => {
  it('accepts what Go accepts', () => {
    for (const ok of ['{"a":[1,2.5e-3,{"b":null}],"c":"\\u00e9\\n"}', ' [true, false, -0] ', '"x"', '0'])
      expect(syntaxError(ok), ok).toBeUndefined();
  });

  it("gives Go's text for the first problem", () => {
    const cases: [string, string][] = [
      ['{', 'unexpected end of JSON input'],
      ['', 'unexpected end of JSON input'],
      ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
      ['[1,]', "invalid character ']' looking for beginning of value"],
      ['trux', "invalid character 'x' in literal true (expecting 'e')"],
      ['{"a" 1}', "invalid character '1' after object key"],
      ['{"a":1 "b"}', "invalid character '\"' after object key:value pair"],
      ['[1 2]', "invalid character '2' after array element"],
      ['{"a":1}}', "invalid character '}' after top-level value"],
      ['"\\x"', "invalid character 'x' in string escape code"],
      ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
      ['"a\nb"', "invalid character '\\n' in string literal"],
      ['-a', "invalid character 'a' in numeric literal"],
      ['1.e', "invalid character 'e' after decimal point in numeric literal"],
      ['1e+', "invalid character ' ' in exponent of numeric literal"],
      ['<html>', "invalid character '<' looking for beginning of value"],
    ];
    for (const [text, want] of cases) expect(syntaxError(text), text).toBe(want);
  });

  it('stops at the depth Go stops at', () => {
    expect(syntaxError('['.repeat(10_001))).toBe('exceeded max depth');
    expect(syntaxError('['.repeat(10_000))).toBe('unexpected end of JSON input');
  });
});
