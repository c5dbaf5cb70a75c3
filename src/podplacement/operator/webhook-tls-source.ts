// The webhook's TLS: both halves need it (the webhook serves the certificate, the controller publishes the CA
// bundle). Self-managed: the controller creates and renews the CA and serving certificate in a Secret, the
// webhook-only half waits for and adopts it (startupStep(), before anything serves or publishes); each renewal
// is written to the files the server watches and then fired on `renewals` (whose subscribers re-publish
// caBundle). Service CA: OpenShift mounts and rotates the files and injects caBundle, so there is nothing to do at
// run time. OLM: OLM (v0, or v1 with cert-manager or the service CA) mounts and rotates the files; the controller
// gives the gating webhook it owns the CA of whichever provider issued them (olm-ca.ts), re-reading it in case the
// provider re-issued it.
import os from 'node:os';
import path from 'node:path';
import {
  Backoff,
  ResourceClient,
  Secrets,
  Trigger,
  retryForever,
  type Clock,
  type KubeClient,
  type Logger,
  type Runnable,
  type StartupStep,
  type TriggerSource,
} from '../../runtime/index.js';
import { MUTATING_WEBHOOK } from '../constants.js';
import type { WebhookTlsTrust } from '../webhook-configurations.js';
import { SelfManagedTls, servingFilePaths, type TlsSecret } from '../self-managed-tls.js';
import { OlmCa } from './olm-ca.js';
import { REGISTRATION_BACKOFF, type WebhookTlsMode } from './options.js';

const RENEWAL_CHECK_INTERVAL_MS = 60 * 60 * 1000;
/** How often the webhook server re-reads self-managed certificate files. */
const CERT_POLL_INTERVAL_MS = 5_000;
/** How often the controller re-reads OLM's CA: one small GET; soon after OLM re-issues, well within the overlap. */
const OLM_CA_CHECK_INTERVAL_MS = 30 * 1000;

export interface WebhookTlsSourceOptions {
  mode: WebhookTlsMode;
  namespace: string;
  /** True in the half that owns the Secret (the controller); the webhook-only half may just `get` it. */
  ownsSecret: boolean;
  client: KubeClient;
  clock: Clock;
  logger: Logger;
}

/** Where the webhook server reads its certificate. */
export interface ServingFiles {
  certFile: string;
  keyFile: string;
  certPollIntervalMs?: number;
}

/** The names a self-managed serving certificate covers: the webhook Service's DNS names and loopback. */
export function servingCertificateNames(namespace: string): { dnsNames: string[]; ipAddresses: string[] } {
  const svc = MUTATING_WEBHOOK.serviceName;
  return {
    dnsNames: [
      svc,
      `${svc}.${namespace}`,
      `${svc}.${namespace}.svc`,
      `${svc}.${namespace}.svc.cluster.local`,
      'localhost',
    ],
    ipAddresses: ['127.0.0.1'],
  };
}

export class WebhookTlsSource implements Runnable {
  readonly name = 'podplacement-webhook-cert-renewal';
  private readonly selfManaged: SelfManagedTls | undefined;
  /** OLM mode, controller half only: the CA OLM issued the webhook's certificate with. */
  private readonly olmCa: OlmCa | undefined;
  private readonly certDir: string;
  private readonly renewed = new Trigger();
  /** Fires after each renewal, once the self-managed files (if served) hold the new certificate. */
  readonly renewals: TriggerSource = this.renewed;
  /** servingFiles() was asked for: each renewal rewrites the self-managed files. */
  private rewritesFiles = false;

  constructor(private readonly o: WebhookTlsSourceOptions) {
    const mode = o.mode;
    this.certDir =
      (mode.mode === 'self-managed' ? mode.certDir : undefined) ??
      path.join(os.tmpdir(), `tessera-podplacement-${process.pid}`);
    if (mode.mode === 'self-managed') {
      this.selfManaged = new SelfManagedTls({
        secrets: new ResourceClient<TlsSecret>(o.client, Secrets),
        namespace: o.namespace,
        ...servingCertificateNames(o.namespace),
        renewBeforeDays: mode.renewBeforeDays,
      });
    }
    if (mode.mode === 'olm' && o.ownsSecret)
      this.olmCa = new OlmCa(o.client, o.namespace, mode.caSecretName, () => o.clock.now());
  }

  /**
   * The Manager's start-up step: prepare(), then (when this process serves the webhook) the files it serves. A
   * failure to write them is retried by the Manager; prepare() retries its API calls itself.
   */
  startupStep(o: { serves: boolean }): StartupStep {
    return {
      name: 'podplacement-webhook-tls',
      run: async (signal) => {
        await this.prepare(signal);
        if (o.serves) await this.servingFiles();
      },
    };
  }

  /**
   * Before anything serves or publishes: the controller makes the Secret hold a valid certificate; the
   * webhook-only half waits (with backoff) until the controller has stored one. Rejects if `signal` aborts first.
   */
  async prepare(signal?: AbortSignal): Promise<void> {
    const olmCa = this.olmCa;
    if (olmCa) {
      const loaded = await retryForever(() => olmCa.load(signal), {
        what: "read the CA of OLM's webhook certificate",
        impact: 'pods are not gated until it is available',
        log: this.o.logger,
        signal,
        backoff: new Backoff(REGISTRATION_BACKOFF),
        clock: this.o.clock,
      });
      if (loaded === undefined) signal?.throwIfAborted();
      else
        this.o.logger.info({ provider: olmCa.certificateProvider() }, 'webhook certificate provider found');
      return;
    }
    const tls = this.selfManaged;
    if (!tls) return;
    // The controller creates or renews the Secret, the webhook-only half waits for it; both through API calls that
    // can fail for a while (API server not reachable yet, RBAC not yet bound), so both are retried.
    const retry = {
      log: this.o.logger,
      signal,
      backoff: new Backoff(REGISTRATION_BACKOFF),
      clock: this.o.clock,
    };
    const loaded = this.o.ownsSecret
      ? await retryForever(() => tls.ensure(this.now(), signal), {
          ...retry,
          what: 'store the webhook certificate in its Secret',
          impact: 'the webhook is not serving until it is stored',
        })
      : await retryForever(() => tls.load(this.now(), signal), {
          ...retry,
          what: 'load the webhook certificate the controller stores',
          impact: 'the webhook is not serving until it is available',
        });
    if (!loaded) signal?.throwIfAborted();
  }

  /** What the webhook configurations and the CRD's conversion webhook must trust now. */
  trust(): WebhookTlsTrust {
    if (this.o.mode.mode === 'olm') return this.olmCa?.trust() ?? {};
    if (!this.selfManaged) return { serviceCaInjection: true };
    return { caBundlePem: this.selfManaged.certificate()?.caBundlePem };
  }

  /**
   * Where the webhook server reads its certificate, known before start-up: the server is built then and reads
   * the files only when it starts, after the start-up step wrote them (servingFiles()).
   */
  servingFileLocations(): ServingFiles {
    const mode = this.o.mode;
    if (mode.mode === 'service-ca') return { certFile: mode.certFile, keyFile: mode.keyFile };
    // OLM rotates the mounted files by updating the Secret; the kubelet swaps them in place.
    if (mode.mode === 'olm')
      return { certFile: mode.certFile, keyFile: mode.keyFile, certPollIntervalMs: CERT_POLL_INTERVAL_MS };
    return { ...servingFilePaths(this.certDir), certPollIntervalMs: CERT_POLL_INTERVAL_MS };
  }

  /** The webhook server's certificate files (self-managed: written now, and again after each renewal). */
  async servingFiles(): Promise<ServingFiles> {
    const tls = this.selfManaged;
    if (!tls) return this.servingFileLocations();
    await tls.writeFiles(this.certDir);
    // One rewrite per renewal (in start()), however often the files are asked for.
    this.rewritesFiles = true;
    return this.servingFileLocations();
  }

  /** After a renewal: the server keeps serving the old files until this succeeds, so a failure is logged. */
  private async rewriteFiles(tls: SelfManagedTls): Promise<void> {
    try {
      await tls.writeFiles(this.certDir);
    } catch (err) {
      this.o.logger.error(
        { err, certDir: this.certDir },
        'could not write the renewed webhook certificate; the webhook serves the previous one until the next renewal check',
      );
    }
  }

  /** Checks hourly whether the self-managed certificate was (or must be) renewed. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.olmCa) return this.followOlmCa(this.olmCa, signal);
    const tls = this.selfManaged;
    if (!tls) return;
    while (!signal.aborted) {
      await this.o.clock.sleep(RENEWAL_CHECK_INTERVAL_MS, signal);
      if (signal.aborted) break;
      try {
        const renewed = this.o.ownsSecret
          ? (await tls.ensure(this.now(), signal)).renewed
          : (await tls.load(this.now(), signal)).changed;
        if (!renewed) continue;
        // The files first, then the subscribers (which publish the new CA bundle).
        if (this.rewritesFiles) await this.rewriteFiles(tls);
        this.renewed.fire();
      } catch (err) {
        this.o.logger.error({ err }, 'webhook certificate renewal failed; will retry in an hour');
      }
    }
  }

  private async followOlmCa(olmCa: OlmCa, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.o.clock.sleep(OLM_CA_CHECK_INTERVAL_MS, signal);
      if (signal.aborted) break;
      try {
        const changed = await olmCa.load(signal);
        if (changed || olmCa.overlapEnded()) this.renewed.fire();
      } catch (err) {
        this.o.logger.error(
          { err },
          "could not re-read the CA of OLM's webhook certificate; keeping the one held",
        );
      }
    }
  }

  private now(): Date {
    return new Date(this.o.clock.now());
  }
}
