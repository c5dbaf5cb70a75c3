// The webhook's time budget seen through the real kube-apiserver (issue #10 item 19): a validating handler that
// never decides is answered by the webhook itself at handlerBudgetMs(timeoutSeconds), before the API server's own
// timeout, so the user reads the webhook's explanation instead of a bare "context deadline exceeded". Afterwards
// the webhook keeps serving (a normal handler on the same server admits).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/runtime/client.js';
import { ApiStatusError } from '../../../src/runtime/errors.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { ConfigMaps, ValidatingWebhookConfigurations } from '../../../src/runtime/resources.js';
import { WebhookServer, handlerBudgetMs } from '../../../src/runtime/webhook/server.js';
import { eventually, testKubeConfig, uniqueName, useTestNamespace } from '../../support/cluster.js';

const TIMEOUT_SECONDS = 3;

describe('webhook handler budget against kube-apiserver', () => {
  const ns = useTestNamespace('hostile-webhook-deadline');
  const client = new KubeClient(testKubeConfig());
  const configs = new ResourceClient<KubeObject & Record<string, unknown>>(
    client,
    ValidatingWebhookConfigurations,
  );
  const configName = uniqueName('tessera-hostile-deadline');
  const stop = new AbortController();
  let server: WebhookServer;
  let running: Promise<void>;

  beforeAll(async () => {
    server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      devCertificate: { ipAddresses: ['127.0.0.1'] },
      handlerTimeoutMs: handlerBudgetMs(TIMEOUT_SECONDS),
    });
    server.register('/never', { handle: () => new Promise(() => undefined) });
    server.register('/allow', { handle: () => ({ allowed: true }) });
    running = server.start(stop.signal);
    await server.ready();
    const hook = (name: string, path: string, label: string) => ({
      name,
      clientConfig: {
        url: `https://127.0.0.1:${server.port()}${path}`,
        caBundle: Buffer.from(server.caBundle() ?? '').toString('base64'),
      },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns.name } },
      objectSelector: { matchLabels: { hook: label } },
      failurePolicy: 'Fail',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      timeoutSeconds: TIMEOUT_SECONDS,
    });
    await configs.create({
      metadata: { name: configName },
      webhooks: [hook('never.tessera.dev', '/never', 'never'), hook('allow.tessera.dev', '/allow', 'allow')],
    });
  });

  afterAll(async () => {
    await configs.delete({ name: configName }).catch(() => undefined);
    stop.abort();
    await running;
    await client.close();
  });

  it("shows the user the webhook's own explanation, not the API server's timeout", async () => {
    const cms = new ResourceClient<KubeObject>(client, ConfigMaps);
    const refusal = await eventually(
      async () => {
        const err = await cms
          .create({ metadata: { namespace: ns.name, name: uniqueName('cm'), labels: { hook: 'never' } } })
          .then(() => undefined)
          .catch((e: unknown) => e);
        // Until the configuration takes effect the create succeeds; retry with a fresh name.
        expect(err).toBeInstanceOf(ApiStatusError);
        return err as ApiStatusError;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the never-deciding webhook to be called' },
    );
    expect(refusal.message).toContain(
      `did not decide within its ${handlerBudgetMs(TIMEOUT_SECONDS)} ms budget`,
    );
    expect(refusal.message).not.toMatch(/context deadline exceeded|Timeout/);
    expect(server.stats().refusals.handler_timeout).toBeGreaterThanOrEqual(1);

    // The same server keeps serving.
    const ok = await cms.create({
      metadata: { namespace: ns.name, name: uniqueName('cm'), labels: { hook: 'allow' } },
    });
    expect(ok.metadata?.name).toBeTruthy();
  });
});
