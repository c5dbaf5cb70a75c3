import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../runtime/light.js';
import { maxTrustedCaBundleBytes, readTrustedCaBundle } from './proxy-trust.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-trusted-ca-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, content: string | Buffer): string => {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
};
const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('the trusted CA bundle file', () => {
  it('is skipped while nothing is injected: absent or empty', async () => {
    expect(await readTrustedCaBundle(path.join(dir, 'missing.crt'), '--trusted-ca-bundle')).toBeUndefined();
    expect(await readTrustedCaBundle(file('empty.crt', '\n'), '--trusted-ca-bundle')).toBeUndefined();
  });

  it('is read when it holds certificates', async () => {
    expect(await readTrustedCaBundle(file('bundle.crt', pem), '--trusted-ca-bundle')).toBe(pem);
  });

  it('refuses a file that is not a PEM bundle, or too large to be one, before reading it', async () => {
    await expect(readTrustedCaBundle(file('key.txt', 'hello'), '--trusted-ca-bundle')).rejects.toThrow(
      /invalid value for --trusted-ca-bundle: .* holds no PEM certificate/,
    );
    const big = file('big.crt', Buffer.alloc(maxTrustedCaBundleBytes + 1, 0x41));
    await expect(readTrustedCaBundle(big, '--trusted-ca-bundle')).rejects.toThrow(InvalidArgumentError);
    await expect(readTrustedCaBundle(dir, '--trusted-ca-bundle')).rejects.toThrow(/cannot read .*EISDIR/);
  });
});
