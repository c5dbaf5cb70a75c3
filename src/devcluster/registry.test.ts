import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { htpasswdLine } from './registry.js';

describe('htpasswdLine', () => {
  it('writes user:bcrypt-hash as `htpasswd -nbB` does, and the hash checks the password', () => {
    const line = htpasswdLine('alice', 'alice-secret');
    const [user, hash = ''] = line.split(/:(.*)/s);
    expect(user).toBe('alice');
    expect(hash).toMatch(/^\$2[aby]\$05\$[./A-Za-z0-9]{53}$/);
    expect(bcrypt.compareSync('alice-secret', hash)).toBe(true);
    expect(bcrypt.compareSync('wrong', hash)).toBe(false);
  });

  it('salts each line, so two users with one password get different hashes', () => {
    expect(htpasswdLine('a', 'same').slice(2)).not.toBe(htpasswdLine('b', 'same').slice(2));
  });
});
