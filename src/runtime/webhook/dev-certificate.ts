// A throw-away CA and a serving certificate for running webhooks in development and tests (the CA goes into the
// webhook configuration's caBundle). Valid one year, backdated one hour for clock skew; issued by the runtime's
// one certificate generator (`pki/certificates.ts`). Never use this in production: the CA key lives only in memory
// and is discarded.
import { createCertificateAuthority } from '../pki/certificates.js';

const DAY_MS = 86_400_000;

export interface DevCertificate {
  /** PEM of the CA that signed `certPem` (for caBundle). */
  caPem: string;
  certPem: string;
  keyPem: string;
}

export interface DevCertificateOptions {
  /** Subject alternative DNS names. Default: ['localhost']. */
  dnsNames?: readonly string[];
  /** Subject alternative IPs. Default: ['127.0.0.1']. */
  ipAddresses?: readonly string[];
  /** Default: 365. */
  validityDays?: number;
  /** Start of validity is one hour before this. Default: the current time. */
  now?: Date;
}

export async function generateDevCertificate(options: DevCertificateOptions = {}): Promise<DevCertificate> {
  const now = options.now ?? new Date();
  const validityDays = options.validityDays ?? 365;
  const dnsNames = options.dnsNames ?? ['localhost'];
  const ipAddresses = options.ipAddresses ?? ['127.0.0.1'];
  // pathLength 0: this CA signs only the one serving certificate.
  const ca = await createCertificateAuthority('tessera-webhook-dev-ca', { validityDays, now, pathLength: 0 });
  const serving = await ca.issue({
    commonName: dnsNames[0] ?? ipAddresses[0] ?? 'tessera-webhook',
    dnsNames,
    ipAddresses,
    usage: 'server',
    notAfter: new Date(now.getTime() + validityDays * DAY_MS),
  });
  return { caPem: ca.certPem, certPem: serving.certPem, keyPem: serving.keyPem };
}
