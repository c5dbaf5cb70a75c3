import { describe, expect, it } from 'vitest';
import { InvalidReferenceError, RegistryError, RegistryResponseError } from './errors.js';
import { classifyRegistryFailure } from './failure-class.js';

const response = (
  code: ConstructorParameters<typeof RegistryResponseError>[0],
  status?: number,
  retryable = false,
) => new RegistryResponseError(code, 'https://r.test/v2/a/manifests/1', status, 'x', { retryable });

describe('classifyRegistryFailure', () => {
  it('calls answers that cannot change by asking again permanent', () => {
    for (const err of [
      response('TESSERA_REGISTRY_NOT_FOUND', 404),
      response('TESSERA_REGISTRY_UNAUTHORIZED', 401),
      response('TESSERA_REGISTRY_UNAUTHORIZED', 403),
      new InvalidReferenceError('UPPER/case', 'repository names are lower case'),
      new RegistryError('TESSERA_REGISTRY_UNSUPPORTED_MANIFEST', 'application/vnd.unknown'),
      new RegistryError('TESSERA_REGISTRY_BLOCKED', 'blocked registry'),
      response('TESSERA_REGISTRY_REDIRECT_REFUSED', 302),
      new RegistryError('TESSERA_REGISTRY_UNTRUSTED_REALM', 'realm elsewhere'),
      new RegistryError('TESSERA_REGISTRY_DIGEST_MISMATCH', 'digest'),
      new RegistryError('TESSERA_REGISTRY_TOO_LARGE', 'big'),
      // An unexpected 4xx and an untrusted certificate are made non-retryable by the transport.
      response('TESSERA_REGISTRY_BAD_RESPONSE', 400),
      response('TESSERA_REGISTRY_UNAVAILABLE', undefined, false),
    ]) {
      expect(classifyRegistryFailure(err), err.code).toBe('permanent');
    }
  });

  it('calls timeouts, 429, 5xx, broken connections and cancelled waits transient', () => {
    for (const err of [
      response('TESSERA_REGISTRY_TIMEOUT', undefined, true),
      response('TESSERA_REGISTRY_UNAVAILABLE', 429, true),
      response('TESSERA_REGISTRY_UNAVAILABLE', 503, true),
      response('TESSERA_REGISTRY_UNAVAILABLE', undefined, true), // ECONNREFUSED, ECONNRESET
      response('TESSERA_REGISTRY_ABORTED'),
      // TIMEOUT is transient even when its maker forgot the flag.
      response('TESSERA_REGISTRY_TIMEOUT'),
    ]) {
      expect(classifyRegistryFailure(err), err.code).toBe('transient');
    }
  });

  it('is transient when any of several pull sources failed transiently', () => {
    // RegistryInspector folds mirror failures into one error carrying the last code and `some(retryable)`.
    const folded = new RegistryError('TESSERA_REGISTRY_NOT_FOUND', 'every source failed', {
      retryable: true,
    });
    expect(classifyRegistryFailure(folded)).toBe('transient');
    const allPermanent = new RegistryError('TESSERA_REGISTRY_NOT_FOUND', 'every source failed');
    expect(classifyRegistryFailure(allPermanent)).toBe('permanent');
  });

  it('calls errors it does not know transient', () => {
    expect(classifyRegistryFailure(new Error('socket hang up'))).toBe('transient');
    expect(classifyRegistryFailure('weird')).toBe('transient');
    expect(classifyRegistryFailure(undefined)).toBe('transient');
  });
});
