// The one certificate generator of the project: a CA, serving and client certificates it signs, and the
// service-account signing key pair. Used by the local control plane and registry (devcluster), the pod placement
// webhook's self-managed TLS and the webhook server's throw-away development certificate. Keys are ECDSA P-256
// (fast to generate, accepted by every component). Everything is PEM so it can be written to files, Secrets and
// caBundle fields.
import { webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

type CryptoKeyPair = webcrypto.CryptoKeyPair;

let x509Module: Promise<typeof X509> | undefined;

/**
 * @peculiar/x509, loaded on first use: it and its polyfill take a few hundred milliseconds to load, which every
 * importer of the runtime would otherwise pay (most never issue a certificate). It resolves its ASN.1 services
 * through tsyringe, which needs the Reflect metadata polyfill loaded first.
 */
function loadX509(): Promise<typeof X509> {
  x509Module ??= (async () => {
    await import('reflect-metadata');
    const x509 = await import('@peculiar/x509');
    // Node's WebCrypto implements the interface @peculiar/x509 expects; the DOM typings it names are not loaded.
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
    return x509;
  })();
  return x509Module;
}

const ecdsa = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const dayMs = 24 * 60 * 60 * 1000;
/** Certificates start this long before "now", to tolerate clock skew between the issuer and the verifier. */
const backdateMs = 60 * 60 * 1000;

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

export interface CertificateAuthorityOptions {
  /** Validity in days from `now`. Default: 3650. */
  readonly validityDays?: number;
  /** The CA is valid from one hour before this; also the default start of the leaves it issues. Default: now. */
  readonly now?: Date;
  /** Basic constraints path length (0: may sign only leaves). Default: unlimited. */
  readonly pathLength?: number;
}

export interface LeafOptions {
  readonly commonName: string;
  /** Subject organisations; Kubernetes maps them to groups (e.g. `system:masters`). */
  readonly organizations?: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly usage: 'server' | 'client' | 'server-and-client';
  /** Validity in days from `notBefore`. Default: 365. Ignored when `notAfter` is given. */
  readonly validityDays?: number;
  /** Start of validity. Default: one hour before the CA's `now`, to tolerate clock skew. */
  readonly notBefore?: Date;
  /** End of validity. Default: `notBefore` + `validityDays`. */
  readonly notAfter?: Date;
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

function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive
  return Buffer.from(bytes).toString('hex');
}

/** A service-account token signing key pair (PKCS#8 private key, SPKI public key). */
export async function generateSigningKeyPair(): Promise<KeyPairPem> {
  const keys = await generateKeys();
  return {
    privateKeyPem: await privateKeyPem(keys),
    publicKeyPem: toPem('PUBLIC KEY', await webcrypto.subtle.exportKey('spki', keys.publicKey)),
  };
}

/** Creates a self-signed CA (key usages keyCertSign and cRLSign) that keeps its key in memory to issue leaves. */
export async function createCertificateAuthority(
  commonName: string,
  options: CertificateAuthorityOptions = {},
): Promise<CertificateAuthority> {
  const x509 = await loadX509();
  const now = options.now ?? new Date();
  const keys = await generateKeys();
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: distinguishedName(commonName),
    notBefore: new Date(now.getTime() - backdateMs),
    notAfter: new Date(now.getTime() + (options.validityDays ?? 3650) * dayMs),
    signingAlgorithm: ecdsa,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, options.pathLength, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certPem: caCert.toString('pem') + '\n',
    keyPem: await privateKeyPem(keys),
    issue: (leaf) => issueLeaf(x509, caCert, keys.privateKey, leaf, new Date(now.getTime() - backdateMs)),
  };
}

/**
 * A CA from its PEM certificate and PKCS#8 key (as `createCertificateAuthority` wrote them), to issue more leaves
 * later, e.g. a dev cluster's node identities. Leaves start one hour before now, like those of a new CA.
 */
export async function loadCertificateAuthority(
  certPem: string,
  keyPem: string,
): Promise<CertificateAuthority> {
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(certPem);
  const der = Buffer.from(keyPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  const caKey = await webcrypto.subtle.importKey('pkcs8', der, ecdsa, false, ['sign']);
  return {
    certPem,
    keyPem,
    issue: (leaf) => issueLeaf(x509, caCert, caKey, leaf, new Date(Date.now() - backdateMs)),
  };
}

async function issueLeaf(
  x509: typeof X509,
  caCert: X509.X509Certificate,
  caKey: webcrypto.CryptoKey,
  leaf: LeafOptions,
  defaultNotBefore: Date,
): Promise<CertificatePem> {
  const leafKeys = await generateKeys();
  const notBefore = leaf.notBefore ?? defaultNotBefore;
  const notAfter = leaf.notAfter ?? new Date(notBefore.getTime() + (leaf.validityDays ?? 365) * dayMs);
  const extendedUsages: string[] = [];
  if (leaf.usage !== 'client') extendedUsages.push(x509.ExtendedKeyUsage.serverAuth);
  if (leaf.usage !== 'server') extendedUsages.push(x509.ExtendedKeyUsage.clientAuth);
  const altNames = [
    ...(leaf.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(leaf.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const extensions: X509.Extension[] = [
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
    notAfter,
    signingAlgorithm: ecdsa,
    publicKey: leafKeys.publicKey,
    signingKey: caKey,
    extensions,
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await privateKeyPem(leafKeys) };
}
