import { describe, expect, it } from 'vitest';
import { BudgetExceededError, StatusUndecodableError } from '../errors.js';
import { encodeProfileStatus } from '../status-codec.js';
import { createStatusDecodeCache } from './status-decode-cache.js';

const status = (message: string): string =>
  encodeProfileStatus({ conditions: [{ type: 'Degraded', status: 'True', reason: 'R', message }] });

describe('createStatusDecodeCache', () => {
  it('decodes a text once, however often it is asked for it', () => {
    let decodes = 0;
    const cache = createStatusDecodeCache({ onDecode: () => decodes++ });
    for (let i = 0; i < 5; i++) expect(cache.decode(status('a')).conditions?.[0]?.message).toBe('a');
    expect(decodes).toBe(1);
    cache.decode(status('b'));
    expect(decodes).toBe(2);
  });

  it('remembers failures too, so garbage is not parsed again on every reconcile', () => {
    let decodes = 0;
    const cache = createStatusDecodeCache({ onDecode: () => decodes++ });
    const garbage = `conditions: ${'{'.repeat(5)} x: [`;
    for (let i = 0; i < 5; i++) expect(() => cache.decode(garbage)).toThrow(StatusUndecodableError);
    expect(decodes).toBe(1);
  });

  it('rejects text over the status budget on its length, without caching it', () => {
    let decodes = 0;
    const cache = createStatusDecodeCache({ onDecode: () => decodes++ });
    const huge = 'x'.repeat(1024 * 1024);
    expect(() => cache.decode(huge)).toThrow(BudgetExceededError);
    expect(cache.size()).toBe(0);
  });

  it('stays within its byte budget however many distinct texts it sees', () => {
    const maxBytes = 32 * 1024;
    const cache = createStatusDecodeCache({ maxBytes });
    for (let i = 0; i < 100; i++) cache.decode(status(`${i}:${'m'.repeat(1000)}`));
    expect(cache.size()).toBeGreaterThan(0);
    expect(cache.size()).toBeLessThanOrEqual(maxBytes);
  });
});
