import { describe, expect, it } from 'vitest';
import { resolveLogSettings } from './logging.js';
import { InvalidArgumentError } from '../runtime/errors.js';

const base = { isTTY: false, defaultLevel: 'info' as const };

describe('resolveLogSettings', () => {
  it('auto: text on a terminal, JSON otherwise', () => {
    expect(resolveLogSettings({ ...base, isTTY: true }).format).toBe('text');
    expect(resolveLogSettings({ ...base, isTTY: true }).color).toBe(true);
    expect(resolveLogSettings({ ...base, isTTY: false }).format).toBe('json');
    expect(resolveLogSettings({ ...base, format: 'auto' }).format).toBe('json');
  });

  it('an explicit format wins over the terminal check', () => {
    expect(resolveLogSettings({ ...base, isTTY: true, format: 'json' })).toMatchObject({
      format: 'json',
      color: false,
    });
    expect(resolveLogSettings({ ...base, format: 'text' })).toMatchObject({ format: 'text', color: false });
  });

  it('level: the flag, else $TESSERA_LOG_LEVEL, else the command default', () => {
    expect(resolveLogSettings({ ...base, defaultLevel: 'warn' }).level).toBe('warn');
    expect(resolveLogSettings({ ...base, envLevel: 'debug', defaultLevel: 'warn' }).level).toBe('debug');
    expect(resolveLogSettings({ ...base, envLevel: 'debug', level: 'error' }).level).toBe('error');
  });

  it('names the bad value of a flag or the environment', () => {
    expect(() => resolveLogSettings({ ...base, format: 'yaml' })).toThrow(
      /^invalid value for --log-format: .*"yaml"$/,
    );
    expect(() => resolveLogSettings({ ...base, level: 'loud' })).toThrow(
      /^invalid value for --log-level: .*"loud"$/,
    );
    expect(() => resolveLogSettings({ ...base, envLevel: 'loud' })).toThrow(
      /^invalid value for TESSERA_LOG_LEVEL: .*"loud"$/,
    );
    expect(() => resolveLogSettings({ ...base, envLevel: 'loud' })).toThrow(InvalidArgumentError);
  });
});
