import { describe, expect, it } from 'vitest';
import { TerminalError } from './errors.js';
import { decideRequeue } from './requeue-policy.js';

describe('decideRequeue', () => {
  it.each([
    ['success without result', { ok: true as const, result: undefined }, { kind: 'forget' }],
    ['success with zero delay', { ok: true as const, result: { requeueAfterMs: 0 } }, { kind: 'forget' }],
    [
      'requeue after',
      { ok: true as const, result: { requeueAfterMs: 2500 } },
      { kind: 'forgetAndAddAfter', delayMs: 2500 },
    ],
    ['ordinary error', { ok: false as const, error: new Error('boom') }, { kind: 'addRateLimited' }],
    ['thrown non-Error', { ok: false as const, error: 'str' }, { kind: 'addRateLimited' }],
    ['terminal error', { ok: false as const, error: new TerminalError('bad spec') }, { kind: 'terminal' }],
  ])('%s', (_name, outcome, expected) => {
    expect(decideRequeue(outcome)).toEqual(expected);
  });
});
