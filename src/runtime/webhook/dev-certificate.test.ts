import 'reflect-metadata';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { describe, expect, it } from 'vitest';
import { generateDevCertificate } from './dev-certificate.js';

const DAY_MS = 86_400_000;
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

describe('generateDevCertificate', () => {
  it('issues a serving certificate for localhost and 127.0.0.1, valid a year, from a CA that signs only leaves', async () => {
    const now = new Date('2026-03-01T12:00:00Z');
    const dev = await generateDevCertificate({ now });
    const ca = new X509Certificate(dev.caPem);
    const cert = new X509Certificate(dev.certPem);

    expect(ca.subject).toBe('CN=tessera-webhook-dev-ca');
    expect(ca.ca).toBe(true);
    const constraints = new x509.X509Certificate(dev.caPem).getExtension(x509.BasicConstraintsExtension);
    expect(constraints?.pathLength).toBe(0);

    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(dev.keyPem))).toBe(true);
    expect(cert.subject).toBe('CN=localhost');
    expect(cert.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1');
    expect(cert.keyUsage).toEqual([SERVER_AUTH]);
    for (const c of [ca, cert]) {
      expect(new Date(c.validFrom).getTime()).toBe(now.getTime() - 3_600_000);
      expect(new Date(c.validTo).getTime()).toBe(now.getTime() + 365 * DAY_MS);
    }
  });

  it('names the configured DNS names and IPs and takes the first DNS name as the subject', async () => {
    const dev = await generateDevCertificate({
      dnsNames: ['webhook.tessera.svc', 'webhook'],
      ipAddresses: ['10.0.0.7'],
      validityDays: 2,
    });
    const cert = new X509Certificate(dev.certPem);
    expect(cert.subject).toBe('CN=webhook.tessera.svc');
    expect(cert.checkHost('webhook')).toBe('webhook');
    expect(cert.checkIP('10.0.0.7')).toBe('10.0.0.7');
    expect(cert.checkHost('localhost')).toBeUndefined();
    expect(new Date(cert.validTo).getTime() - new Date(cert.validFrom).getTime()).toBe(
      2 * DAY_MS + 3_600_000,
    );
  });
});
