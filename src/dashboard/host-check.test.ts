import { describe, expect, it } from 'vitest';
import { isAllowedHost } from './host-check.js';

describe('the Host-header check against DNS rebinding', () => {
  it('accepts only the loopback names with the server port', () => {
    for (const host of ['localhost:7480', '127.0.0.1:7480', '[::1]:7480', 'LOCALHOST:7480'])
      expect(isAllowedHost(host, 7480)).toBe(true);
    for (const host of [
      undefined,
      '',
      'localhost',
      '127.0.0.1',
      'localhost:7481',
      'attacker.example:7480',
      'localhost.attacker.example:7480',
      '127.0.0.1.nip.io:7480',
      '0.0.0.0:7480',
      `localhost:7480${' '.repeat(100)}`,
    ])
      expect(isAllowedHost(host, 7480)).toBe(false);
  });
});
