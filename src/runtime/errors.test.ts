import { describe, expect, it } from 'vitest';
import { ApiStatusError, ApiTransportError, errorMessage, ignoreNotFound } from './errors.js';

describe('ignoreNotFound', () => {
  const status = (code: number, reason: string) =>
    new ApiStatusError('GET', '/api/v1/namespaces/a/secrets/b', code, reason, reason, {});

  it('gives the object read, or undefined when the API server answers 404', async () => {
    await expect(ignoreNotFound(Promise.resolve({ name: 'b' }))).resolves.toEqual({ name: 'b' });
    await expect(ignoreNotFound(Promise.reject(status(404, 'NotFound')))).resolves.toBeUndefined();
  });

  it('rethrows every other failure, so the caller can name it', async () => {
    const forbidden = status(403, 'Forbidden');
    await expect(ignoreNotFound(Promise.reject(forbidden))).rejects.toBe(forbidden);
    const unreachable = new ApiTransportError('GET', '/api/v1', 'connect ECONNREFUSED');
    await expect(ignoreNotFound(Promise.reject(unreachable))).rejects.toBe(unreachable);
  });
});

describe('errorMessage', () => {
  it("is an Error's message, and anything else thrown as text", () => {
    expect(errorMessage(new ApiTransportError('GET', '/api', new Error('ECONNREFUSED')))).toContain(
      'ECONNREFUSED',
    );
    expect(errorMessage('plain text')).toBe('plain text');
    expect(errorMessage(42)).toBe('42');
  });
});
