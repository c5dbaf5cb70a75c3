import { X509Certificate, createPrivateKey, createPublicKey, createSign, createVerify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createCertificateAuthority,
  generateSigningKeyPair,
  loadCertificateAuthority,
} from './certificates.js';

describe('pki', () => {
  it('issues a serving certificate that verifies against its CA and names every SAN', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const ca = await createCertificateAuthority('test-ca', { validityDays: 10, now });
    const leaf = await ca.issue({
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: ['localhost', 'kubernetes.default.svc'],
      ipAddresses: ['127.0.0.1'],
    });
    const caCert = new X509Certificate(ca.certPem);
    const cert = new X509Certificate(leaf.certPem);
    expect(caCert.ca).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.checkHost('kubernetes.default.svc')).toBe('kubernetes.default.svc');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkHost('example.com')).toBeUndefined();
    // The private key belongs to the certificate.
    expect(cert.checkPrivateKey(createPrivateKey(leaf.keyPem))).toBe(true);
    expect(new Date(cert.validFrom).getTime()).toBeLessThan(now.getTime());
  });

  it('issues more leaves later from the CA it wrote as PEM', async () => {
    const written = await createCertificateAuthority('test-ca');
    const ca = await loadCertificateAuthority(written.certPem, written.keyPem);
    const node = await ca.issue({
      commonName: 'system:node:real-amd64-0',
      organizations: ['system:nodes'],
      usage: 'client',
    });
    const cert = new X509Certificate(node.certPem);
    expect(cert.verify(new X509Certificate(written.certPem).publicKey)).toBe(true);
    expect(cert.subject).toContain('O=system:nodes');
  });

  it('puts organisations in the subject so Kubernetes maps them to groups', async () => {
    const ca = await createCertificateAuthority('test-ca');
    const admin = await ca.issue({
      commonName: 'tessera-admin',
      organizations: ['system:masters'],
      usage: 'client',
    });
    const subject = new X509Certificate(admin.certPem).subject;
    expect(subject).toContain('CN=tessera-admin');
    expect(subject).toContain('O=system:masters');
  });

  it('generates a signing key pair whose halves match', async () => {
    const pair = await generateSigningKeyPair();
    const data = Buffer.from('token');
    const signature = createSign('SHA256').update(data).sign(createPrivateKey(pair.privateKeyPem));
    expect(createVerify('SHA256').update(data).verify(createPublicKey(pair.publicKeyPem), signature)).toBe(
      true,
    );
  });
});
