import { describe, expect, it } from 'vitest';
import {
  decodeStdBase64,
  entriesOfPullSecret,
  parseDockerConfigJson,
  pullSecretBudget,
} from './docker-config.js';
import { InvalidPullSecretError, type RegistryError } from './errors.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('parseDockerConfigJson', () => {
  it('keeps an entry without user name and password, in order, as the kubelet does', () => {
    const entries = parseDockerConfigJson(
      JSON.stringify({
        auths: {
          'quay.io/public': {},
          'quay.io': { auth: b64('u:p') },
          'ghcr.io': { username: '', password: '' },
        },
      }),
      'team/pull',
    );
    expect(entries).toEqual([
      { key: 'quay.io/public', credential: { username: '', password: '' } },
      { key: 'quay.io', credential: { username: 'u', password: 'p' } },
      { key: 'ghcr.io', credential: { username: '', password: '' } },
    ]);
  });

  it.each([
    ['a character outside the alphabet', 'dTpw*A=='],
    ['URL-safe alphabet', 'dTpw_-=='],
    ['missing padding', 'dTpwYQ'],
    ['data after padding', 'dTo=cA=='],
    ['a truncated group', 'dTpwY'],
    ['embedded spaces', 'dTpw YQ=='],
  ])('rejects an auth field with %s, naming the secret but not the value', (_case, auth) => {
    let thrown: unknown;
    try {
      parseDockerConfigJson(JSON.stringify({ auths: { 'quay.io': { auth } } }), 'team/pull');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidPullSecretError);
    const message = thrown instanceof Error ? thrown.message : '';
    expect(message).toContain('team/pull');
    expect(message).toContain('not valid base64');
    expect(message).not.toContain(auth);
  });

  it('rejects the whole secret when one auth field is malformed', () => {
    const secret = {
      type: 'kubernetes.io/dockerconfigjson',
      data: {
        '.dockerconfigjson': b64(
          JSON.stringify({ auths: { 'quay.io': { auth: b64('u:p') }, 'ghcr.io': { auth: 'dTpw*A==' } } }),
        ),
      },
    };
    expect(() => entriesOfPullSecret(secret, 'team/pull')).toThrow(InvalidPullSecretError);
    expect(() => entriesOfPullSecret(secret, 'team/pull')).toThrow(/team\/pull/);
  });
});

describe('decodeStdBase64', () => {
  it('accepts padded standard base64 and ignores CR/LF like Go', () => {
    expect(decodeStdBase64('dTpwYQ==')?.toString()).toBe('u:pa');
    expect(decodeStdBase64('dTpw\r\nYWI=')?.toString()).toBe('u:pab');
    expect(decodeStdBase64('')?.toString()).toBe('');
  });
});

describe('pull secret budgets', () => {
  const secretOf = (doc: unknown) => ({
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(JSON.stringify(doc)) },
  });
  const failure = (fn: () => unknown): RegistryError => {
    try {
      fn();
    } catch (err) {
      return err as RegistryError;
    }
    throw new Error('expected a failure');
  };

  it('refuses a secret with more registry entries than the budget, naming the cause', () => {
    const auths = Object.fromEntries(
      Array.from({ length: pullSecretBudget.maxEntries + 1 }, (_, i) => [
        `r${i}.example.io`,
        { auth: b64('u:p') },
      ]),
    );
    const err = failure(() => entriesOfPullSecret(secretOf({ auths }), 'team/many'));
    expect(err.code).toBe('TESSERA_REGISTRY_INVALID_PULL_SECRET');
    expect(err.message).toContain('team/many');
    expect(err.message).toContain(`more than the ${pullSecretBudget.maxEntries} allowed`);
  });

  it('refuses an oversized secret before decoding or parsing it', () => {
    const huge = {
      auths: { 'quay.io': { auth: b64('u:p') } },
      padding: 'x'.repeat(pullSecretBudget.maxBytes),
    };
    const err = failure(() => entriesOfPullSecret(secretOf(huge), 'team/huge'));
    expect(err.code).toBe('TESSERA_REGISTRY_INVALID_PULL_SECRET');
    expect(err.message).toContain(`${pullSecretBudget.maxBytes}-byte limit`);
    // The same document handed over as text (a file for the CLI) is refused before JSON.parse as well.
    expect(failure(() => parseDockerConfigJson(JSON.stringify(huge), 'file')).message).toContain(
      'byte limit',
    );
  });

  it('refuses a secret of nested or tiny arrays within the byte limit before parsing it, naming the shape', () => {
    const depth = pullSecretBudget.maxBytes / 2 - 16;
    const nested = `{"auths":{},"x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const deep = failure(() => parseDockerConfigJson(nested, 'team/nested'));
    expect(deep.code).toBe('TESSERA_REGISTRY_INVALID_PULL_SECRET');
    expect(deep.message).toContain(`deeper than ${pullSecretBudget.maxDepth} levels`);
    const tiny = `{"auths":{},"x":[${Array.from({ length: 60_000 }, () => '0').join(',')}]}`;
    expect(tiny.length).toBeLessThan(pullSecretBudget.maxBytes);
    const many = failure(() => parseDockerConfigJson(tiny, 'team/tiny'));
    expect(many.message).toContain(`more than ${pullSecretBudget.maxValues} JSON values`);
    // A real secret at the entry limit fits the shape budget.
    const auths = Object.fromEntries(
      Array.from({ length: pullSecretBudget.maxEntries }, (_, i) => [
        `r${i}.example.io`,
        { auth: b64('u:p'), username: 'u', password: 'p', email: 'e@example.io' },
      ]),
    );
    expect(entriesOfPullSecret(secretOf({ auths }), 'team/full')).toHaveLength(pullSecretBudget.maxEntries);
  });

  it('keeps an entry named like an Object.prototype member as plain data', () => {
    const doc = `{"auths":{"__proto__":{"auth":"${b64('u:p')}"},"constructor":{"auth":"${b64('v:q')}"}}}`;
    expect(parseDockerConfigJson(doc, 'x').map((e) => [e.key, e.credential.username])).toEqual([
      ['__proto__', 'u'],
      ['constructor', 'v'],
    ]);
  });
});
