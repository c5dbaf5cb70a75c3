import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCertificateAuthority } from '../../runtime/index.js';
import { OLM_CA_OVERLAP_MS, RotatingCaBundle, olmCaFromSecret } from './olm-ca.js';

describe("OLM's CA in its certificate Secret", () => {
  const secret = (data?: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's' },
    data,
  });
  const b64 = (text: string) => Buffer.from(text).toString('base64');

  it('reads the CA certificate OLM stores under olmCAKey', async () => {
    const ca = await createCertificateAuthority('olm-ca');
    const pem = olmCaFromSecret(secret({ olmCAKey: b64(ca.certPem) }), 'ns/s');
    expect(new X509Certificate(pem).fingerprint256).toBe(new X509Certificate(ca.certPem).fingerprint256);
  });

  it('says what is wrong when the entry is missing, not a certificate, not a CA, or oversized', async () => {
    expect(() => olmCaFromSecret(secret({}), 'ns/s')).toThrow(
      /ns\/s has no olmCAKey entry; is the operator installed by OLM/,
    );
    // The PEM armour alone is not enough.
    const fake = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    expect(() => olmCaFromSecret(secret({ olmCAKey: b64(fake) }), 'ns/s')).toThrow(/not a PEM certificate/);
    const ca = await createCertificateAuthority('olm-ca');
    const leaf = await ca.issue({ commonName: 'leaf', dnsNames: ['leaf'], usage: 'server' });
    expect(() => olmCaFromSecret(secret({ olmCAKey: b64(leaf.certPem) }), 'ns/s')).toThrow(
      /not a CA certificate/,
    );
    expect(() => olmCaFromSecret(secret({ olmCAKey: 'A'.repeat(200_000) }), 'ns/s')).toThrow(/larger than/);
  });

  it('publishes the old CA beside the new one for an hour after OLM re-issues, then the new one alone', () => {
    const cas = new RotatingCaBundle(OLM_CA_OVERLAP_MS);
    expect(cas.update('A', 0)).toBe(true);
    expect(cas.bundle(0)).toBe('A');
    expect(cas.update('A', 10)).toBe(false);
    expect(cas.update('B', 1_000)).toBe(true);
    expect(cas.bundle(1_000 + OLM_CA_OVERLAP_MS - 1)).toBe('BA');
    expect(cas.overlapEnded(1_000 + OLM_CA_OVERLAP_MS - 1)).toBe(false);
    expect(cas.overlapEnded(1_000 + OLM_CA_OVERLAP_MS)).toBe(true);
    expect(cas.overlapEnded(1_000 + OLM_CA_OVERLAP_MS + 1)).toBe(false);
    expect(cas.bundle(1_000 + OLM_CA_OVERLAP_MS)).toBe('B');
  });
});
