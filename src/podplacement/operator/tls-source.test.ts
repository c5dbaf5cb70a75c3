import { describe, expect, it } from 'vitest';
import { FakeClock, silentLogger, type KubeClient } from '../../runtime/index.js';
import { MUTATING_WEBHOOK } from '../constants.js';
import { WebhookTlsSource, servingCertificateNames } from './tls-source.js';

describe('servingCertificateNames', () => {
  it("covers every name the webhook Service answers to in the operator's namespace, and loopback", () => {
    const svc = MUTATING_WEBHOOK.serviceName;
    expect(servingCertificateNames('ops')).toEqual({
      dnsNames: [svc, `${svc}.ops`, `${svc}.ops.svc`, `${svc}.ops.svc.cluster.local`, 'localhost'],
      ipAddresses: ['127.0.0.1'],
    });
  });
});

describe('WebhookTlsSource with the service CA', () => {
  const source = new WebhookTlsSource({
    mode: { mode: 'service-ca', certFile: '/certs/tls.crt', keyFile: '/certs/tls.key' },
    namespace: 'ops',
    ownsSecret: true,
    client: {} as KubeClient,
    clock: new FakeClock(),
    logger: silentLogger,
  });

  it('serves the mounted files and lets OpenShift inject the CA bundle', async () => {
    await source.prepare();
    await expect(source.servingFiles()).resolves.toEqual({
      certFile: '/certs/tls.crt',
      keyFile: '/certs/tls.key',
    });
    expect(source.trust()).toEqual({ serviceCaInjection: true });
  });

  it('has nothing to renew: its runnable ends at once', async () => {
    await expect(source.start(new AbortController().signal)).resolves.toBeUndefined();
  });
});
