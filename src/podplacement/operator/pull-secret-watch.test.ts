import { describe, expect, it } from 'vitest';
import { globalPullSecretChange } from './pull-secret-watch.js';

const secret = (auth: string) => ({
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': auth },
});

describe('globalPullSecretChange', () => {
  it('is no change on the first observation, present or absent', () => {
    expect(globalPullSecretChange(undefined, secret('a')).changed).toBe(false);
    expect(globalPullSecretChange(undefined, undefined).changed).toBe(false);
  });

  it('is no change when the data stays the same (a metadata-only update, a resync)', () => {
    const first = globalPullSecretChange(undefined, secret('a'));
    expect(globalPullSecretChange(first.fingerprint, secret('a'))).toEqual({
      fingerprint: first.fingerprint,
      changed: false,
    });
  });

  it('is a change when the credentials change, or the secret is deleted or created', () => {
    const a = globalPullSecretChange(undefined, secret('a')).fingerprint;
    expect(globalPullSecretChange(a, secret('b')).changed).toBe(true);
    const deleted = globalPullSecretChange(a, undefined);
    expect(deleted.changed).toBe(true);
    expect(globalPullSecretChange(deleted.fingerprint, secret('a')).changed).toBe(true);
  });
});
