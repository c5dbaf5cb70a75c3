import { describe, expect, it } from 'vitest';
import { keyringFromSecrets } from './credentials.js';
import { decodeStdBase64, parseDockerConfigJson } from './docker-config.js';
import { InvalidPullSecretError } from './errors.js';

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

  it('makes the whole secret unusable when one auth field is malformed', () => {
    const secret = {
      type: 'kubernetes.io/dockerconfigjson',
      data: {
        '.dockerconfigjson': b64(
          JSON.stringify({ auths: { 'quay.io': { auth: b64('u:p') }, 'ghcr.io': { auth: 'dTpw*A==' } } }),
        ),
      },
    };
    const { keyring, problems } = keyringFromSecrets([{ source: 'team/pull', secret }]);
    expect(keyring.lookup('quay.io/a/b')).toEqual([]);
    expect(problems.map((p) => p.source)).toEqual(['team/pull']);
  });
});

describe('decodeStdBase64', () => {
  it('accepts padded standard base64 and ignores CR/LF like Go', () => {
    expect(decodeStdBase64('dTpwYQ==')?.toString()).toBe('u:pa');
    expect(decodeStdBase64('dTpw\r\nYWI=')?.toString()).toBe('u:pab');
    expect(decodeStdBase64('')?.toString()).toBe('');
  });
});
