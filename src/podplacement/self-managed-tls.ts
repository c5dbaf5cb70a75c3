// Self-managed TLS for the webhook server, for clusters without OpenShift's service CA: a CA and a serving
// certificate kept in one Secret (shared by all replicas), written to files the webhook server watches, and
// renewed `renewBeforeDays` before expiry. After a renewal the trust bundle holds the old and the new CA, so the
// API server keeps trusting replicas that still serve the old certificate. The caller patches caBundle.
import { mkdir, writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import {
  CertificateError,
  createCertificateAuthority,
  isAlreadyExists,
  isConflict,
  ignoreNotFound,
  type KubeObject,
  type ResourceClient,
} from '../runtime/index.js';

export interface TlsSecret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

export interface ServingCertificate {
  readonly caBundlePem: string;
  readonly certPem: string;
  readonly keyPem: string;
  /** Expiry of the serving certificate. */
  readonly notAfter: Date;
}

export interface SelfManagedTlsOptions {
  secrets: ResourceClient<TlsSecret>;
  namespace: string;
  /** Default: 'pod-placement-webhook-tls'. */
  secretName?: string;
  dnsNames: readonly string[];
  ipAddresses?: readonly string[];
  /** Validity of a new serving certificate, in days. Default: 365. */
  validityDays?: number;
  /** Renew when fewer days than this remain. Default: 30. */
  renewBeforeDays?: number;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined): string => (s ? Buffer.from(s, 'base64').toString('utf8') : '');
const dayMs = 86_400_000;

/** PEM blocks of a bundle, in order. */
function pemBlocks(bundle: string): string[] {
  return (
    bundle
      .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)
      ?.map((b) => (b.endsWith('\n') ? b : `${b}\n`)) ?? []
  );
}

/** Why `cert` cannot be kept at `now`, or undefined when it can. */
export function renewalReason(
  current: ServingCertificate | undefined,
  want: { dnsNames: readonly string[]; ipAddresses: readonly string[]; renewBeforeDays: number },
  now: Date,
): string | undefined {
  if (!current) return 'no certificate yet';
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(current.certPem);
  } catch {
    return 'stored certificate is unreadable';
  }
  const left = new Date(cert.validTo).getTime() - now.getTime();
  if (left < want.renewBeforeDays * dayMs) return `expires in ${Math.floor(left / dayMs)} days`;
  const san = cert.subjectAltName ?? '';
  for (const d of want.dnsNames) if (!san.includes(`DNS:${d}`)) return `missing DNS name ${d}`;
  for (const ip of want.ipAddresses) if (!san.includes(`IP Address:${ip}`)) return `missing IP address ${ip}`;
  return undefined;
}

/** Where writeFiles(dir) puts the certificate and key, known before they are written. */
export function servingFilePaths(dir: string): { certFile: string; keyFile: string } {
  return { certFile: path.join(dir, 'tls.crt'), keyFile: path.join(dir, 'tls.key') };
}

export class SelfManagedTls {
  private readonly secretName: string;
  private current: ServingCertificate | undefined;

  constructor(private readonly o: SelfManagedTlsOptions) {
    this.secretName = o.secretName ?? 'pod-placement-webhook-tls';
  }

  /** The certificate last ensured, if any. */
  certificate(): ServingCertificate | undefined {
    return this.current;
  }

  /**
   * Makes the Secret hold a valid certificate for the configured names (creating or renewing it) and returns it.
   * Safe to run in several replicas at once: the loser of a write race adopts the winner's certificate.
   */
  async ensure(
    now: Date,
    signal?: AbortSignal,
  ): Promise<{ certificate: ServingCertificate; renewed: boolean }> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const secret = await ignoreNotFound(
        this.o.secrets.get({ namespace: this.o.namespace, name: this.secretName }, signal),
      );
      const stored = secret ? fromSecret(secret) : undefined;
      const reason = renewalReason(
        stored,
        {
          dnsNames: this.o.dnsNames,
          ipAddresses: this.o.ipAddresses ?? [],
          renewBeforeDays: this.o.renewBeforeDays ?? 30,
        },
        now,
      );
      if (stored && reason === undefined) {
        this.current = stored;
        return { certificate: stored, renewed: false };
      }
      const fresh = await this.issue(now, stored);
      const body: TlsSecret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: this.secretName,
          namespace: this.o.namespace,
          labels: { 'app.kubernetes.io/managed-by': 'tessera-podplacement' },
        },
        type: 'kubernetes.io/tls',
        data: {
          'tls.crt': b64(fresh.certPem),
          'tls.key': b64(fresh.keyPem),
          'ca.crt': b64(fresh.caBundlePem),
        },
      };
      try {
        if (secret?.metadata) {
          body.metadata = { ...body.metadata, resourceVersion: secret.metadata.resourceVersion };
          await this.o.secrets.update(body, { signal });
        } else {
          await this.o.secrets.create(body, { signal });
        }
        this.current = fresh;
        return { certificate: fresh, renewed: true };
      } catch (err) {
        if (isConflict(err) || isAlreadyExists(err)) continue; // another replica won; adopt its certificate
        throw err;
      }
    }
    throw new CertificateError(
      `could not store the webhook certificate in Secret ${this.o.namespace}/${this.secretName} after 5 attempts (write conflicts)`,
    );
  }

  /**
   * Read-only counterpart of ensure() for the webhook Deployment, whose service account may only `get` this one
   * Secret: adopts the certificate the controller stored. `changed` is true when it differs from the one held.
   * Throws CertificateError while the Secret is missing, unreadable or expired (the controller writes it at start).
   */
  async load(
    now: Date,
    signal?: AbortSignal,
  ): Promise<{ certificate: ServingCertificate; changed: boolean }> {
    const where = `Secret ${this.o.namespace}/${this.secretName}`;
    const secret = await ignoreNotFound(
      this.o.secrets.get({ namespace: this.o.namespace, name: this.secretName }, signal),
    );
    const stored = secret ? fromSecret(secret) : undefined;
    if (!stored)
      throw new CertificateError(
        `${where} ${secret ? 'holds no readable certificate' : 'does not exist'} yet: the pod-placement-controller Deployment creates it; check that it runs`,
      );
    if (stored.notAfter.getTime() <= now.getTime())
      throw new CertificateError(
        `${where} holds a certificate that expired at ${stored.notAfter.toISOString()}: the pod-placement-controller Deployment renews it; check that it runs`,
      );
    const changed = stored.certPem !== this.current?.certPem || stored.keyPem !== this.current.keyPem;
    this.current = stored;
    return { certificate: stored, changed };
  }

  /** Writes tls.crt/tls.key into `dir` atomically (rename), for the webhook server's file watcher. */
  async writeFiles(dir: string): Promise<{ certFile: string; keyFile: string }> {
    const cert = this.current;
    if (!cert)
      throw new CertificateError('no webhook certificate yet to write: call ensure() or load() first');
    await mkdir(dir, { recursive: true });
    const { certFile, keyFile } = servingFilePaths(dir);
    await writeFile(`${keyFile}.tmp`, cert.keyPem, { mode: 0o600 });
    await writeFile(`${certFile}.tmp`, cert.certPem);
    await rename(`${keyFile}.tmp`, keyFile);
    await rename(`${certFile}.tmp`, certFile);
    return { certFile, keyFile };
  }

  private async issue(now: Date, previous: ServingCertificate | undefined): Promise<ServingCertificate> {
    const validityDays = this.o.validityDays ?? 365;
    const ca = await createCertificateAuthority('tessera-podplacement-webhook-ca', {
      validityDays: validityDays + 30,
      now,
    });
    const leaf = await ca.issue({
      commonName: this.o.dnsNames[0] ?? 'pod-placement-web-hook',
      dnsNames: this.o.dnsNames,
      ipAddresses: this.o.ipAddresses ?? [],
      usage: 'server',
      validityDays,
      notBefore: new Date(now.getTime() - 3_600_000),
    });
    // Keep the previous CA (still valid) in the bundle so replicas serving the old certificate stay trusted.
    const keep = previous
      ? pemBlocks(previous.caBundlePem)
          .filter((b) => stillValid(b, now))
          .slice(0, 1)
      : [];
    return {
      caBundlePem: [ca.certPem, ...keep].join(''),
      certPem: leaf.certPem,
      keyPem: leaf.keyPem,
      notAfter: new Date(now.getTime() + validityDays * dayMs),
    };
  }
}

function stillValid(pem: string, now: Date): boolean {
  try {
    return new Date(new X509Certificate(pem).validTo).getTime() > now.getTime();
  } catch {
    return false;
  }
}

function fromSecret(secret: TlsSecret): ServingCertificate | undefined {
  const certPem = unb64(secret.data?.['tls.crt']);
  const keyPem = unb64(secret.data?.['tls.key']);
  const caBundlePem = unb64(secret.data?.['ca.crt']);
  if (!certPem || !keyPem || !caBundlePem) return undefined;
  try {
    return { certPem, keyPem, caBundlePem, notAfter: new Date(new X509Certificate(certPem).validTo) };
  } catch {
    return undefined;
  }
}
