// The CA of the certificate OLM issues for the webhook Deployment (a CSV webhookdefinition). OLM keeps it, PEM, in
// the `olmCAKey` entry of the Secret it mounts into that Deployment (`<deployment>-service-cert`), and injects it
// only into the webhook configurations and CRDs it creates itself. The gating MutatingWebhookConfiguration is
// created by the controller (it exists only while a ClusterPodPlacementConfig does), so the controller copies the
// CA from that Secret. OLM re-issues the certificate before it expires, sometimes with a new CA: re-read it.
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

/** Largest CA bundle accepted from the Secret (OLM writes one certificate, ~1 KiB). */
const MAX_CA_PEM_BYTES = 64 * 1024;

export class OlmCaUnavailableError extends TesseraError {
  constructor(message: string) {
    super('TESSERA_PODPLACEMENT_OLM_CA_UNAVAILABLE', message);
  }
}

/** The CA PEM in an OLM certificate Secret; throws naming what is missing. Pure. */
export function olmCaFromSecret(secret: TlsSecret, where: string): string {
  const encoded = secret.data?.[OLM_CA_KEY];
  if (!encoded)
    throw new OlmCaUnavailableError(
      `Secret ${where} has no ${OLM_CA_KEY} entry; is the operator installed by OLM with a webhookdefinition for its webhook Deployment?`,
    );
  if (encoded.length > (MAX_CA_PEM_BYTES * 4) / 3 + 4)
    throw new OlmCaUnavailableError(
      `Secret ${where}: ${OLM_CA_KEY} is larger than ${MAX_CA_PEM_BYTES} bytes`,
    );
  const pem = Buffer.from(encoded, 'base64').toString('utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new OlmCaUnavailableError(`Secret ${where}: ${OLM_CA_KEY} is not a PEM certificate`);
  return pem;
}

export class OlmCa {
  private readonly secrets: ResourceClient<TlsSecret>;
  private current: string | undefined;

  constructor(
    client: KubeClient,
    private readonly namespace: string,
    private readonly secretName: string,
  ) {
    this.secrets = new ResourceClient<TlsSecret>(client, Secrets);
  }

  /** The CA last read (undefined before the first successful load). */
  pem(): string | undefined {
    return this.current;
  }

  /** Reads the Secret; resolves true when the CA differs from the one held before. */
  async load(signal?: AbortSignal): Promise<boolean> {
    const where = `${this.namespace}/${this.secretName}`;
    const secret = await this.secrets.get({ namespace: this.namespace, name: this.secretName }, signal);
    const pem = olmCaFromSecret(secret, where);
    const changed = pem !== this.current;
    this.current = pem;
    return changed;
  }
}
