// The CA of the certificate OLM issues for the webhook Deployment (a CSV webhookdefinition). OLM keeps it, PEM, in
// the `olmCAKey` entry of the Secret it mounts into that Deployment (`<deployment>-service-cert`), and injects it
// only into the webhook configurations and CRDs it creates itself. The gating MutatingWebhookConfiguration is
// created by the controller (it exists only while a ClusterPodPlacementConfig does), so the controller copies the
// CA from that Secret. OLM re-issues the certificate before it expires, with a new CA, and rolls the webhook pods:
// for an hour after a change the controller publishes both CAs, so pods of either generation are trusted while
// they roll (the gating webhook fails open, so a CA the apiserver cannot use would silently stop placement).
import { X509Certificate } from 'node:crypto';
import { ResourceClient, Secrets, type KubeClient } from '../../runtime/index.js';
import { TesseraError } from '../../runtime/light.js';
import type { TlsSecret } from '../webhook-tls.js';

/** The Secret entry OLM stores its CA certificate in (install.OLMCAPEMKey in OLM). */
export const OLM_CA_KEY = 'olmCAKey';
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

/** The CA certificate in an OLM certificate Secret, re-encoded as PEM; throws naming what is wrong. Pure. */
export function olmCaFromSecret(secret: TlsSecret, where: string): string {
  const encoded = secret.data?.[OLM_CA_KEY];
  if (!encoded)
    throw new OlmCaUnavailableError(
      `Secret ${where} has no ${OLM_CA_KEY} entry; is the operator installed by OLM with a webhookdefinition for its webhook Deployment?`,
    );
  if (encoded.length > MAX_CA_ENTRY_BYTES)
    throw new OlmCaUnavailableError(
      `Secret ${where}: ${OLM_CA_KEY} is larger than ${MAX_CA_ENTRY_BYTES} bytes`,
    );
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(Buffer.from(encoded, 'base64'));
  } catch (err) {
    throw new OlmCaUnavailableError(`Secret ${where}: ${OLM_CA_KEY} is not a PEM certificate`, {
      cause: err,
    });
  }
  if (!cert.ca) throw new OlmCaUnavailableError(`Secret ${where}: ${OLM_CA_KEY} is not a CA certificate`);
  return cert.toString();
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

  constructor(
    client: KubeClient,
    private readonly namespace: string,
    private readonly secretName: string,
    private readonly now: () => number,
  ) {
    this.secrets = new ResourceClient<TlsSecret>(client, Secrets);
  }

  /** The CA bundle to publish (undefined before the first successful load). */
  pem(): string | undefined {
    return this.cas.bundle(this.now());
  }

  overlapEnded(): boolean {
    return this.cas.overlapEnded(this.now());
  }

  /** Reads the Secret; resolves true when the CA differs from the one held before. */
  async load(signal?: AbortSignal): Promise<boolean> {
    const where = `${this.namespace}/${this.secretName}`;
    const secret = await this.secrets.get({ namespace: this.namespace, name: this.secretName }, signal);
    return this.cas.update(olmCaFromSecret(secret, where), this.now());
  }
}
