// The ValidatingWebhookConfiguration for the config validators. A configuration left by an earlier process may
// name a URL nobody answers (a killed operator, another port), and its failurePolicy Fail refuses every config
// change: nothing that writes configs may run before this process has rewritten it (ValidatingWebhookGate).
import {
  Backoff,
  ResourceClient,
  ignoreNotFound,
  ValidatingWebhookConfigurations,
  retryForever,
  type Clock,
  type KubeClient,
  type KubeObject,
  type Logger,
  type Runnable,
  waitForAbort,
} from '../../runtime/index.js';
import { VALIDATING_WEBHOOK } from '../constants.js';
import {
  validatingWebhookConfiguration,
  type WebhookConfigurationObject,
  type WebhookEndpoint,
  type WebhookTlsTrust,
} from '../webhook-configurations.js';
import { REGISTRATION_BACKOFF } from './options.js';

/** Opens once the ValidatingWebhookConfiguration names this process (or at once when nobody manages it here). */
export class ValidatingWebhookGate {
  /** Resolves when the gate opens. */
  readonly opened: Promise<void>;
  private isOpen = false;
  private resolveOpened: () => void = () => undefined;

  constructor(openAtOnce: boolean) {
    this.opened = new Promise<void>((resolve) => {
      this.resolveOpened = resolve;
    });
    if (openAtOnce) this.open();
  }

  open(): void {
    this.isOpen = true;
    this.resolveOpened();
  }

  /** Resolves once the gate is open or `signal` aborts, whichever comes first. */
  async wait(signal: AbortSignal): Promise<void> {
    if (!this.isOpen) await Promise.race([this.opened, waitForAbort(signal)]);
  }
}

export interface ValidatingWebhookRegistrarOptions {
  client: KubeClient;
  endpoint: WebhookEndpoint;
  operatorNamespace: string;
  trust: () => WebhookTlsTrust;
  /** Resolves once this process's webhook server listens (at once when it runs none). */
  webhookServing: () => Promise<void>;
  gate: ValidatingWebhookGate;
  clock: Clock;
  logger: Logger;
}

/**
 * Leader runnable: writes the configuration (retried: a failed write must not take the whole operator down, nor
 * leave a stale URL in place), opens the gate, and at shutdown deletes a URL configuration: outside the cluster
 * nothing answers once this process is gone, and a Fail-policy webhook left behind would block every config change.
 */
export class ValidatingWebhookRegistrar implements Runnable {
  readonly name = 'podplacement-validating-webhook-configuration';
  readonly needsLeaderElection = true;
  private readonly configurations: ResourceClient<WebhookConfigurationObject & KubeObject>;

  constructor(private readonly o: ValidatingWebhookRegistrarOptions) {
    this.configurations = new ResourceClient<WebhookConfigurationObject & KubeObject>(
      o.client,
      ValidatingWebhookConfigurations,
    );
  }

  /** Re-applies with the current trust (after a certificate renewal); failures are logged. */
  refresh(): void {
    void this.apply().catch((err: unknown) =>
      this.o.logger.error({ err }, 'could not update the validating webhook configuration'),
    );
  }

  async start(signal: AbortSignal): Promise<void> {
    await this.o.webhookServing();
    const written = await retryForever(() => this.apply(signal), {
      what: 'write the validating webhook configuration',
      impact: 'config changes are refused until it is written',
      log: this.o.logger,
      signal,
      backoff: new Backoff(REGISTRATION_BACKOFF),
      clock: this.o.clock,
    });
    if (written) {
      this.o.logger.info(
        { name: VALIDATING_WEBHOOK.configurationName },
        'validating webhook configuration written',
      );
      this.o.gate.open();
    }
    await waitForAbort(signal);
    if (this.o.endpoint.kind === 'url')
      await ignoreNotFound(this.configurations.delete({ name: VALIDATING_WEBHOOK.configurationName })).catch(
        (err: unknown) =>
          this.o.logger.warn(
            { err, name: VALIDATING_WEBHOOK.configurationName },
            'could not delete the validating webhook configuration at exit; it names a URL nothing answers: delete it by hand',
          ),
      );
  }

  private apply(signal?: AbortSignal): Promise<WebhookConfigurationObject & KubeObject> {
    const configuration = validatingWebhookConfiguration(this.o.endpoint, this.o.trust(), {
      operatorNamespace: this.o.operatorNamespace,
    });
    return this.configurations.apply(configuration, {
      fieldManager: 'tessera-podplacement',
      force: true,
      signal,
    });
  }
}
