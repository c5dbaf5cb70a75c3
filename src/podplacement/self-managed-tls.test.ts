import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApiStatusError, ResourceClient, Secrets, type KubeClient } from '../runtime/index.js';
import { SelfManagedTls, renewalReason, type TlsSecret } from './self-managed-tls.js';

/** An in-memory Secret store behind the ResourceClient surface SelfManagedTls uses. */
function fakeSecrets(): { client: ResourceClient<TlsSecret>; writes: () => number } {
  let stored: TlsSecret | undefined;
  let rv = 0;
  let writes = 0;
  const notFound = () => new ApiStatusError('GET', '/x', 404, 'NotFound', 'not found', {});
  const client = new ResourceClient<TlsSecret>({} as KubeClient, Secrets);
  Object.assign(client, {
    get: async () => {
      if (!stored) throw notFound();
      return structuredClone(stored);
    },
    create: async (obj: TlsSecret) => {
      writes++;
      stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
      return stored;
    },
    update: async (obj: TlsSecret) => {
      if (obj.metadata?.resourceVersion !== stored?.metadata?.resourceVersion)
        throw new ApiStatusError('PUT', '/x', 409, 'Conflict', 'conflict', {});
      writes++;
      stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
      return stored;
    },
  });
  return { client, writes: () => writes };
}

describe('self-managed webhook TLS', () => {
  const names = { dnsNames: ['pod-placement-web-hook.op.svc'], ipAddresses: ['127.0.0.1'] };

  it('creates a CA and serving certificate once and reuses them', async () => {
    const secrets = fakeSecrets();
    const tls = new SelfManagedTls({ secrets: secrets.client, namespace: 'op', ...names });
    const now = new Date('2026-06-01T00:00:00Z');
    const first = await tls.ensure(now);
    expect(first.renewed).toBe(true);
    const cert = new X509Certificate(first.certificate.certPem);
    expect(cert.subjectAltName).toContain('DNS:pod-placement-web-hook.op.svc');
    expect(cert.checkIssued(new X509Certificate(first.certificate.caBundlePem))).toBe(true);
    const again = await new SelfManagedTls({ secrets: secrets.client, namespace: 'op', ...names }).ensure(
      new Date('2026-07-01T00:00:00Z'),
    );
    expect(again.renewed).toBe(false);
    expect(again.certificate.certPem).toBe(first.certificate.certPem);
    expect(secrets.writes()).toBe(1);
  });

  it('renews before expiry and keeps the previous CA in the bundle', async () => {
    const secrets = fakeSecrets();
    const tls = new SelfManagedTls({
      secrets: secrets.client,
      namespace: 'op',
      ...names,
      validityDays: 60,
      renewBeforeDays: 30,
    });
    const first = await tls.ensure(new Date('2026-06-01T00:00:00Z'));
    const later = await tls.ensure(new Date('2026-07-15T00:00:00Z'));
    expect(later.renewed).toBe(true);
    expect(later.certificate.caBundlePem).toContain(first.certificate.caBundlePem.trim());
    expect(later.certificate.caBundlePem.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
  });

  it("lets the webhook adopt the controller's certificate without writing, and says when it is missing", async () => {
    const secrets = fakeSecrets();
    const reader = new SelfManagedTls({ secrets: secrets.client, namespace: 'op', ...names });
    const now = new Date('2026-06-01T00:00:00Z');
    await expect(reader.load(now)).rejects.toThrow(
      'Secret op/pod-placement-webhook-tls does not exist yet: the pod-placement-controller Deployment creates it',
    );
    const writer = new SelfManagedTls({
      secrets: secrets.client,
      namespace: 'op',
      ...names,
      validityDays: 60,
      renewBeforeDays: 30,
    });
    const stored = await writer.ensure(now);
    const loaded = await reader.load(now);
    expect(loaded.changed).toBe(true);
    expect(loaded.certificate.certPem).toBe(stored.certificate.certPem);
    expect(loaded.certificate.keyPem).toBe(stored.certificate.keyPem);
    expect((await reader.load(now)).changed).toBe(false);
    // The controller renews; the webhook picks the new certificate up, and never wrote anything itself.
    await writer.ensure(new Date('2026-07-15T00:00:00Z'));
    expect((await reader.load(new Date('2026-07-15T00:00:00Z'))).changed).toBe(true);
    expect(secrets.writes()).toBe(2);
    await expect(reader.load(new Date('2027-06-01T00:00:00Z'))).rejects.toThrow('expired');
  });

  it('names the reason to renew', () => {
    expect(renewalReason(undefined, { ...names, renewBeforeDays: 30 }, new Date())).toBe(
      'no certificate yet',
    );
  });
});
