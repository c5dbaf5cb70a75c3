// One error base for every area: each area's errors are TesseraErrors with a stable code, and a malformed option,
// flag or argument is the one InvalidArgumentError whatever the area.
import { describe, expect, it } from 'vitest';
import { DevClusterError } from '../../src/devcluster/errors.js';
import { StatusUndecodableError } from '../../src/nodepool/errors.js';
import { parseNodePoolTarget } from '../../src/nodepool/management/status-command.js';
import { InvalidReferenceError } from '../../src/registry/errors.js';
import { parseUpgradeStatusOptions } from '../../src/updatestatus/command.js';
import { NoClusterVersionError } from '../../src/updatestatus/errors.js';
import { InvalidArgumentError, isNotFound, ApiStatusError, TesseraError } from '../../src/runtime/errors.js';
import { WebhookBadRequestError } from '../../src/runtime/webhook/admission.js';

describe('TesseraError', () => {
  it('is the base of every area, each error with its code and class name', () => {
    const errors = [
      new DevClusterError('TESSERA_DEVCLUSTER_CONFIG', 'x'),
      new StatusUndecodableError('x'),
      new InvalidReferenceError('ref', 'x'),
      new NoClusterVersionError(),
      new WebhookBadRequestError('x'),
    ];
    for (const err of errors) {
      expect(err).toBeInstanceOf(TesseraError);
      expect(err.code).toMatch(/^TESSERA_[A-Z_]+$/);
      expect(err.name).toBe(err.constructor.name);
    }
  });
});

describe('InvalidArgumentError', () => {
  it('reads "invalid option" for an option and "invalid value for" for a flag or an argument', () => {
    expect(new InvalidArgumentError('maxBytes', 'must be >= 1').message).toBe(
      'invalid option maxBytes: must be >= 1',
    );
    expect(new InvalidArgumentError('--output', 'must be json or yaml').message).toBe(
      'invalid value for --output: must be json or yaml',
    );
    expect(new InvalidArgumentError('the NodePool', 'expected NAMESPACE/NAME', 'argument').message).toBe(
      'invalid value for the NodePool: expected NAMESPACE/NAME',
    );
  });

  it('is what every area throws for a bad command-line value', () => {
    for (const attempt of [
      () => parseUpgradeStatusOptions({ output: 'wide' }),
      () => parseNodePoolTarget('no-slash'),
    ]) {
      expect(attempt).toThrow(InvalidArgumentError);
      expect(attempt).toThrow(expect.objectContaining({ code: 'TESSERA_INVALID_ARGUMENT' }));
    }
  });
});

describe('isNotFound', () => {
  it('is true for a 404 from the API server only', () => {
    expect(isNotFound(new ApiStatusError('GET', '/x', 404, 'NotFound', 'gone', {}))).toBe(true);
    expect(isNotFound(new ApiStatusError('GET', '/x', 409, 'Conflict', 'c', {}))).toBe(false);
    expect(isNotFound(new Error('404'))).toBe(false);
  });
});
