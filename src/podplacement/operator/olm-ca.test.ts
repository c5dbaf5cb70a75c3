import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { certManagerSelfSignedSecret } from '../../../test/support/cert-manager.js';
import { createCertificateAuthority } from '../../runtime/index.js';
import type { TlsSecret } from '../self-managed-tls.js';
import { OLM_CA_OVERLAP_MS, RotatingCaBundle, olmCaFromSecret, webhookTrustFromSecret } from './olm-ca.js';

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

describe('the gating webhook trust for the provider that issued the webhook certificate', () => {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
  const where = 'ops/pod-placement-web-hook-service-cert';
  const names = {
    name: 'pod-placement-web-hook-service-cert',
    namespace: 'ops',
    service: 'pod-placement-web-hook-service',
  };

  it('OLM v0: the CA in olmCAKey', async () => {
    const ca = await createCertificateAuthority('olm-selfsigned');
    const leaf = await ca.issue({ commonName: 'pod-placement-web-hook-service.ops', usage: 'server' });
    const secret: TlsSecret = {
      metadata: { name: names.name },
      data: { olmCAKey: b64(ca.certPem), 'tls.crt': b64(leaf.certPem), 'tls.key': b64(leaf.keyPem) },
    };
    const trust = webhookTrustFromSecret(secret, where);
    expect(trust.provider).toBe('olm-v0');
    expect(fingerprint((trust as { caPem: string }).caPem)).toBe(fingerprint(ca.certPem));
  });

  it("OLM v1 with cert-manager: ca.crt, the self-signed leaf of OLM v1's Certificate (not a CA)", async () => {
    const secret = await certManagerSelfSignedSecret(names);
    const served = Buffer.from(secret.data['tls.crt'] ?? '', 'base64').toString();
    expect(new X509Certificate(served).ca).toBe(false);
    const trust = webhookTrustFromSecret(secret, where);
    expect(trust.provider).toBe('cert-manager');
    expect(fingerprint((trust as { caPem: string }).caPem)).toBe(fingerprint(served));
  });

  it('OLM v1 with cert-manager and a CA issuer: the CA in ca.crt', async () => {
    const ca = await createCertificateAuthority('cluster-issuer');
    const leaf = await ca.issue({ commonName: 'x', usage: 'server' });
    const secret: TlsSecret = {
      metadata: { name: names.name, annotations: { 'cert-manager.io/certificate-name': names.name } },
      data: { 'ca.crt': b64(ca.certPem), 'tls.crt': b64(leaf.certPem), 'tls.key': b64(leaf.keyPem) },
    };
    const trust = webhookTrustFromSecret(secret, where);
    expect(fingerprint((trust as { caPem: string }).caPem)).toBe(fingerprint(ca.certPem));
  });

  it("OLM v1 with OpenShift's service CA: asks the service CA to inject its CA", () => {
    const secret: TlsSecret = {
      metadata: {
        name: names.name,
        annotations: { 'service.beta.openshift.io/originating-service-name': names.service },
      },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64('crt'), 'tls.key': b64('key') },
    };
    expect(webhookTrustFromSecret(secret, where)).toEqual({ provider: 'service-ca' });
  });

  it('refuses a Secret no provider made, and a cert-manager CA the apiserver could not use', async () => {
    expect(() =>
      webhookTrustFromSecret({ metadata: { name: names.name }, data: { 'tls.crt': 'eA==' } }, where),
    ).toThrow(
      /ops\/pod-placement-web-hook-service-cert holds no CA \(no olmCAKey from OLM v0, no ca\.crt from cert-manager\)/,
    );
    // Issued, but not yet: the annotation is there before the data.
    expect(() =>
      webhookTrustFromSecret(
        { metadata: { name: names.name, annotations: { 'cert-manager.io/certificate-name': names.name } } },
        where,
      ),
    ).toThrow(/has no ca\.crt entry; cert-manager writes it once the Certificate is issued/);
    // ca.crt from another issuance than tls.crt.
    const one = await certManagerSelfSignedSecret(names);
    const other = await certManagerSelfSignedSecret(names);
    const mixed = { ...one, data: { ...one.data, 'ca.crt': other.data['ca.crt'] ?? '' } };
    expect(() => webhookTrustFromSecret(mixed, where)).toThrow(/ca\.crt did not issue tls\.crt/);
    // A leaf someone else signed is no trust anchor.
    const ca = await createCertificateAuthority('ca');
    const leaf = await ca.issue({ commonName: 'leaf', usage: 'server' });
    const notAnchor = { ...one, data: { ...one.data, 'ca.crt': b64(leaf.certPem) } };
    expect(() => webhookTrustFromSecret(notAnchor, where)).toThrow(/CN=leaf, neither a CA nor self-signed/);
    const huge = { ...one, data: { ...one.data, 'ca.crt': 'A'.repeat(200_000) } };
    expect(() => webhookTrustFromSecret(huge, where)).toThrow(/ca\.crt is larger than 65536 bytes/);
  });
});
