// Generates a throw-away CA and a serving certificate for running webhooks in development and tests (the CA goes
// into the webhook configuration's caBundle). ECDSA P-256, valid one year, backdated one hour for clock skew.
// Never use this in production: the CA key lives only in memory and is discarded.
// @peculiar/x509 resolves its ASN.1 services through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
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

function pem(label: string, der: ArrayBuffer): string {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

function serial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

export async function generateDevCertificate(options: DevCertificateOptions = {}): Promise<DevCertificate> {
  const now = options.now ?? new Date();
  const notBefore = new Date(now.getTime() - 3_600_000);
  const notAfter = new Date(now.getTime() + (options.validityDays ?? 365) * DAY_MS);
  const caKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=tessera-webhook-dev-ca',
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const dnsNames = options.dnsNames ?? ['localhost'];
  const ips = options.ipAddresses ?? ['127.0.0.1'];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${dnsNames[0] ?? ips[0] ?? 'tessera-webhook'}`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(ca, false),
      new x509.SubjectAlternativeNameExtension([
        ...dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
    ],
  });
  return {
    caPem: ca.toString('pem') + '\n',
    certPem: cert.toString('pem') + '\n',
    keyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
  };
}
