// Certificates for a local control plane: one CA, a serving certificate per server, client certificates per
// identity, and the service-account signing key pair. Keys are ECDSA P-256 (fast to generate, accepted by every
// component). Everything is PEM so it can be written to the state dir and handed to the Go binaries as files.
// @peculiar/x509 resolves its ASN.1 services through tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type CryptoKeyPair = webcrypto.CryptoKeyPair;

// Node's WebCrypto implements the interface @peculiar/x509 expects; the DOM typings it names are not loaded here.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ecdsa = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const dayMs = 24 * 60 * 60 * 1000;

export interface KeyPairPem {
  readonly privateKeyPem: string;
  readonly publicKeyPem: string;
}

export interface CertificatePem {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface CertificateAuthority extends CertificatePem {
  /** Signs a leaf certificate with this CA. */
  issue(leaf: LeafOptions): Promise<CertificatePem>;
}

export interface LeafOptions {
  readonly commonName: string;
  /** Subject organisations; Kubernetes maps them to groups (e.g. `system:masters`). */
  readonly organizations?: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly usage: 'server' | 'client' | 'server-and-client';
  /** Validity in days. Default: 365. */
  readonly validityDays?: number;
  /** Start of validity. Default: one hour before now, to tolerate clock skew. */
  readonly notBefore?: Date;
}

function toPem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64');
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ecdsa, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function privateKeyPem(keys: CryptoKeyPair): Promise<string> {
  return toPem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
}

function distinguishedName(commonName: string, organizations: readonly string[] = []): string {
  const escape = (v: string): string => v.replace(/([,+"\\<>;=])/g, '\\$1');
  return [`CN=${escape(commonName)}`, ...organizations.map((o) => `O=${escape(o)}`)].join(', ');
}

/** A service-account token signing key pair (PKCS#8 private key, SPKI public key). */
export async function generateSigningKeyPair(): Promise<KeyPairPem> {
  const keys = await generateKeys();
  return {
    privateKeyPem: await privateKeyPem(keys),
    publicKeyPem: toPem('PUBLIC KEY', await webcrypto.subtle.exportKey('spki', keys.publicKey)),
  };
}

/** Creates a self-signed CA valid for `validityDays` (default 3650). */
export async function createCertificateAuthority(
  commonName: string,
  validityDays = 3650,
  now: Date = new Date(),
): Promise<CertificateAuthority> {
  const keys = await generateKeys();
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: distinguishedName(commonName),
    notBefore: new Date(now.getTime() - 60 * 60 * 1000),
    notAfter: new Date(now.getTime() + validityDays * dayMs),
    signingAlgorithm: ecdsa,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const keyPem = await privateKeyPem(keys);
  return {
    certPem: caCert.toString('pem') + '\n',
    keyPem,
    async issue(leaf: LeafOptions): Promise<CertificatePem> {
      const leafKeys = await generateKeys();
      const notBefore = leaf.notBefore ?? new Date(now.getTime() - 60 * 60 * 1000);
      const extendedUsages: string[] = [];
      if (leaf.usage !== 'client') extendedUsages.push(x509.ExtendedKeyUsage.serverAuth);
      if (leaf.usage !== 'server') extendedUsages.push(x509.ExtendedKeyUsage.clientAuth);
      const altNames = [
        ...(leaf.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
        ...(leaf.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
      ];
      const extensions: x509.Extension[] = [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
          true,
        ),
        new x509.ExtendedKeyUsageExtension(extendedUsages),
        await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
      ];
      if (altNames.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(altNames));
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: randomSerial(),
        subject: distinguishedName(leaf.commonName, leaf.organizations),
        issuer: caCert.subject,
        notBefore,
        notAfter: new Date(notBefore.getTime() + (leaf.validityDays ?? 365) * dayMs),
        signingAlgorithm: ecdsa,
        publicKey: leafKeys.publicKey,
        signingKey: keys.privateKey,
        extensions,
      });
      return { certPem: cert.toString('pem') + '\n', keyPem: await privateKeyPem(leafKeys) };
    },
  };
}

function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive
  return Buffer.from(bytes).toString('hex');
}
