// The CA the gating MutatingWebhookConfiguration must carry when OLM installed the operator. The gating webhook is
// created by the controller (it exists only while a ClusterPodPlacementConfig does), so no installer injects its CA:
// the controller learns it from the certificate Secret of the webhook Deployment (`<deployment>-service-cert`),
// whose shape tells which certificate provider issued it (webhookTrustFromSecret):
// - OLM v0 keeps its CA, PEM, in the `olmCAKey` entry;
// - OLM v1 with cert-manager (operator-controller's CertManagerCertificateProvider: a self-signed Issuer and a leaf
//   Certificate, `isCA: false`) gets a Secret whose `ca.crt` is that self-signed leaf. cert-manager's cainjector
//   would inject the same `ca.crt` for `cert-manager.io/inject-ca-from`; the controller copies it itself, so the old
//   and new CA overlap across a renewal (the injector swaps them at once, before the kubelet has the new files);
// - OLM v1 with OpenShift's service CA (`service.beta.openshift.io/serving-cert-secret-name` on the Service) gets a
//   Secret without a CA: the controller asks the service CA to inject it (`inject-cabundle`), as OLM v1 does for the
//   configurations it renders.
// Each provider re-issues before expiry, with a new CA for OLM v0 and cert-manager, and the pods roll or the kubelet
// swaps the files: for an hour after a change the controller publishes both CAs, so pods of either generation are
// trusted meanwhile (the gating webhook fails open, so a CA the apiserver cannot use would silently stop placement).
import { X509Certificate } from 'node:crypto';
import { ResourceClient, Secrets, type KubeClient } from '../../runtime/index.js';
import { TesseraError } from '../../runtime/light.js';
import type { WebhookTlsTrust } from '../webhook-configurations.js';
import type { TlsSecret } from '../self-managed-tls.js';

/** The Secret entry OLM stores its CA certificate in (install.OLMCAPEMKey in OLM). */
export const OLM_CA_KEY = 'olmCAKey';
/** The Secret entry cert-manager stores the issuing CA in (for a self-signed issuer: the certificate itself). */
export const CERT_MANAGER_CA_KEY = 'ca.crt';
/** Set by cert-manager on the Secrets it issues. */
export const CERT_MANAGER_CERTIFICATE_ANNOTATION = 'cert-manager.io/certificate-name';
/** Set by OpenShift's service CA on the serving-certificate Secrets it creates. */
export const SERVICE_CA_ORIGIN_ANNOTATION = 'service.beta.openshift.io/originating-service-name';
/** OLM names the Service of a webhook Deployment `<deployment>-service` and its certificate Secret `<that>-cert`. */
export const olmServiceName = (deployment: string): string => `${deployment}-service`;
export const olmCertSecretName = (deployment: string): string => `${olmServiceName(deployment)}-cert`;

/** The webhook Deployment's name in deploy/ and hence in the bundle's webhookdefinitions. */
export const WEBHOOK_DEPLOYMENT_NAME = 'pod-placement-web-hook';

/** Largest CA entry accepted from the Secret, base64 (OLM writes one certificate, ~1 KiB). */
const MAX_CA_ENTRY_BYTES = 64 * 1024;
/** How long the CA before a change stays published beside the new one: longer than a webhook rollout. */
export const OLM_CA_OVERLAP_MS = 60 * 60 * 1000;

export class OlmCaUnavailableError extends TesseraError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TESSERA_PODPLACEMENT_OLM_CA_UNAVAILABLE', message, options);
  }
}

/** Who issued the webhook certificate OLM mounted. */
export type WebhookCertificateProvider = 'olm-v0' | 'cert-manager' | 'service-ca';

/** What the gating webhook must carry to be trusted: a CA bundle to publish, or the service CA's injection. */
export type OlmWebhookTrust =
  | { readonly provider: 'olm-v0' | 'cert-manager'; readonly caPem: string }
  | { readonly provider: 'service-ca' };

function certificatesOf(encoded: string, where: string, key: string): X509Certificate[] {
  if (encoded.length > MAX_CA_ENTRY_BYTES)
    throw new OlmCaUnavailableError(`Secret ${where}: ${key} is larger than ${MAX_CA_ENTRY_BYTES} bytes`);
  const pem = Buffer.from(encoded, 'base64').toString('latin1');
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  try {
    if (blocks.length === 0) throw new OlmCaUnavailableError('no PEM block');
    return blocks.map((block) => new X509Certificate(block));
  } catch (err) {
    throw new OlmCaUnavailableError(`Secret ${where}: ${key} is not a PEM certificate`, { cause: err });
  }
}

/**
 * Self-signed: the apiserver (Go's verifier) trusts it as an anchor even without `CA:TRUE` when it is the served
 * certificate itself. Not checkIssued(): OpenSSL's issuer check also wants keyCertSign, which a leaf lacks.
 */
const isSelfSigned = (cert: X509Certificate): boolean =>
  cert.subject === cert.issuer && cert.verify(cert.publicKey);

/** The CA certificate in an OLM v0 certificate Secret, re-encoded as PEM; throws naming what is wrong. Pure. */
export function olmCaFromSecret(secret: TlsSecret, where: string): string {
  const encoded = secret.data?.[OLM_CA_KEY];
  if (!encoded)
    throw new OlmCaUnavailableError(
      `Secret ${where} has no ${OLM_CA_KEY} entry; is the operator installed by OLM with a webhookdefinition for its webhook Deployment?`,
    );
  const [cert] = certificatesOf(encoded, where, OLM_CA_KEY);
  if (!cert?.ca) throw new OlmCaUnavailableError(`Secret ${where}: ${OLM_CA_KEY} is not a CA certificate`);
  return cert.toString();
}

/**
 * The `ca.crt` of a cert-manager Secret, re-encoded as PEM: every certificate in it must be a CA or self-signed,
 * and one of them must be or have issued a certificate of the served chain `tls.crt`, else the apiserver would
 * refuse the webhook's TLS. Throws naming what is wrong. Pure.
 */
export function certManagerCaFromSecret(secret: TlsSecret, where: string): string {
  const encoded = secret.data?.[CERT_MANAGER_CA_KEY];
  if (!encoded)
    throw new OlmCaUnavailableError(
      `Secret ${where} has no ${CERT_MANAGER_CA_KEY} entry; cert-manager writes it once the Certificate is issued`,
    );
  const cas = certificatesOf(encoded, where, CERT_MANAGER_CA_KEY);
  const notAnchor = cas.find((c) => !c.ca && !isSelfSigned(c));
  if (notAnchor)
    throw new OlmCaUnavailableError(
      `Secret ${where}: ${CERT_MANAGER_CA_KEY} holds ${notAnchor.subject.replace(/\n/g, ', ')}, neither a CA nor self-signed`,
    );
  const servingEncoded = secret.data?.['tls.crt'];
  if (servingEncoded) {
    // The served chain (leaf, then any intermediates) must lead to a certificate in ca.crt.
    const chain = certificatesOf(servingEncoded, where, 'tls.crt');
    const trusted = cas.some((ca) =>
      chain.some((c) => c.raw.equals(ca.raw) || (c.checkIssued(ca) && c.verify(ca.publicKey))),
    );
    if (!trusted)
      throw new OlmCaUnavailableError(
        `Secret ${where}: ${CERT_MANAGER_CA_KEY} did not issue tls.crt; wait for cert-manager to finish issuing, or check the Certificate's issuer`,
      );
  }
  return cas.map((c) => c.toString()).join('');
}

/**
 * Which provider issued the webhook certificate in `secret` (the Secret OLM v0 or v1 mounts into the webhook
 * Deployment), and how the gating webhook is to be trusted for it. Throws OlmCaUnavailableError naming what is
 * missing. Pure.
 */
export function webhookTrustFromSecret(secret: TlsSecret, where: string): OlmWebhookTrust {
  const data = secret.data ?? {};
  const annotations = secret.metadata?.annotations ?? {};
  if (data[OLM_CA_KEY] !== undefined) return { provider: 'olm-v0', caPem: olmCaFromSecret(secret, where) };
  if (
    data[CERT_MANAGER_CA_KEY] !== undefined ||
    annotations[CERT_MANAGER_CERTIFICATE_ANNOTATION] !== undefined
  )
    return { provider: 'cert-manager', caPem: certManagerCaFromSecret(secret, where) };
  if (annotations[SERVICE_CA_ORIGIN_ANNOTATION] !== undefined) return { provider: 'service-ca' };
  throw new OlmCaUnavailableError(
    `Secret ${where} holds no CA (no ${OLM_CA_KEY} from OLM v0, no ${CERT_MANAGER_CA_KEY} from cert-manager) and was not made by OpenShift's service CA; install the operator with OLM v0, or with OLM v1 with its cert-manager or service-CA webhook provider`,
  );
}

/**
 * The CA bundle to publish for a CA that changes now and then: the newest CA, and for `overlapMs` after a change
 * the one before it too. Pure (time is passed in).
 */
export class RotatingCaBundle {
  private current: string | undefined;
  private previous: { pem: string; until: number } | undefined;

  constructor(private readonly overlapMs: number = OLM_CA_OVERLAP_MS) {}

  /** Takes the CA read at `now`; true when it differs from the one held before. */
  update(pem: string, now: number): boolean {
    if (pem === this.current) return false;
    if (this.current !== undefined) this.previous = { pem: this.current, until: now + this.overlapMs };
    this.current = pem;
    return true;
  }

  bundle(now: number): string | undefined {
    if (this.previous && now < this.previous.until) return `${this.current ?? ''}${this.previous.pem}`;
    return this.current;
  }

  /** True once, when the overlap after a change has ended (the bundle just shrank to the newest CA). */
  overlapEnded(now: number): boolean {
    if (!this.previous || now < this.previous.until) return false;
    this.previous = undefined;
    return true;
  }
}

export class OlmCa {
  private readonly secrets: ResourceClient<TlsSecret>;
  private readonly cas = new RotatingCaBundle();
  private provider: WebhookCertificateProvider | undefined;

  constructor(
    client: KubeClient,
    private readonly namespace: string,
    private readonly secretName: string,
    private readonly now: () => number,
  ) {
    this.secrets = new ResourceClient<TlsSecret>(client, Secrets);
  }

  /** The CA bundle to publish (undefined before the first successful load, and under the service CA). */
  pem(): string | undefined {
    return this.provider === 'service-ca' ? undefined : this.cas.bundle(this.now());
  }

  /** How the gating webhook is trusted now (nothing before the first successful load). */
  trust(): WebhookTlsTrust {
    if (this.provider === 'service-ca') return { serviceCaInjection: true };
    return { caBundlePem: this.pem() };
  }

  overlapEnded(): boolean {
    return this.cas.overlapEnded(this.now());
  }

  /** Reads the Secret; resolves true when the trust differs from the one held before. */
  async load(signal?: AbortSignal): Promise<boolean> {
    const where = `${this.namespace}/${this.secretName}`;
    const secret = await this.secrets.get({ namespace: this.namespace, name: this.secretName }, signal);
    const trust = webhookTrustFromSecret(secret, where);
    const providerChanged = trust.provider !== this.provider;
    this.provider = trust.provider;
    const caChanged = trust.provider !== 'service-ca' && this.cas.update(trust.caPem, this.now());
    return providerChanged || caChanged;
  }

  /** Who issued the certificate (undefined before the first successful load). */
  certificateProvider(): WebhookCertificateProvider | undefined {
    return this.provider;
  }
}
