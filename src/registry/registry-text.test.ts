import { describe, expect, it } from 'vitest';
import { registryText } from './registry-text.js';

describe('registryText', () => {
  it('removes control and bidi characters that could forge or hide output', () => {
    expect(registryText('manifest unknown\r\n[ERROR] fake\u001b[2J\u202egnp.exe')).toBe(
      'manifest unknown [ERROR] fake [2J gnp.exe',
    );
  });

  it('caps long text at 200 characters', () => {
    const shown = registryText('x'.repeat(5000));
    expect(shown).toBe(`${'x'.repeat(200)}…`);
    expect(registryText('short')).toBe('short');
  });
});
