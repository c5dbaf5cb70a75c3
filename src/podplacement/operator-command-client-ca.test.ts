// --webhook-client-ca: the file is read and checked at start-up, and a bad one stops the operator with an error
// naming the flag and what to give instead.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../runtime/index.js';
import { createCertificateAuthority } from '../runtime/pki/certificates.js';
import { readWebhookClientCa } from './operator-command.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-client-ca-'));
const file = (name: string, text: string): string => {
  const at = path.join(dir, name);
  writeFileSync(at, text);
  return at;
};

describe('readWebhookClientCa (--webhook-client-ca)', () => {
  it("returns the PEM of the API server's client CA", async () => {
    const ca = await createCertificateAuthority('kube-apiserver-client-ca');
    expect(await readWebhookClientCa(file('ca.crt', ca.certPem))).toBe(ca.certPem);
  });

  it('names the flag and the file when the file cannot be read', async () => {
    const missing = path.join(dir, 'missing.crt');
    const err = await readWebhookClientCa(missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(
      /^invalid value for --webhook-client-ca: cannot read .*missing\.crt \(ENOENT.*\); give the PEM file of the CA/,
    );
  });

  it('names the flag when the file holds no certificate, or a broken one', async () => {
    await expect(readWebhookClientCa(file('key.pem', '-----BEGIN PRIVATE KEY-----\n'))).rejects.toThrow(
      /^invalid value for --webhook-client-ca: holds no PEM certificate/,
    );
    const broken = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n';
    await expect(readWebhookClientCa(file('broken.crt', broken))).rejects.toThrow(
      /^invalid value for --webhook-client-ca: certificate 1 is unreadable/,
    );
  });
});
