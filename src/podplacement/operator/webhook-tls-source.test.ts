import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  ApiStatusError,
  ApiTransportError,
  silentLogger,
  type KubeClient,
  type KubeObject,
  type Logger,
} from '../../runtime/index.js';
import { MUTATING_WEBHOOK } from '../constants.js';
import { SelfManagedTls } from '../self-managed-tls.js';
import { REGISTRATION_BACKOFF } from './options.js';
import { WebhookTlsSource, servingCertificateNames } from './webhook-tls-source.js';
import { FakeClock } from '../../runtime/testing/index.js';

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

/**
 * The API a self-managed source talks to: one Secret in memory. The first `failures` requests fail as an API
 * server that is not reachable yet does.
 */
function secretApi(failures = 0): { client: KubeClient; requests: () => number } {
  let stored: KubeObject | undefined;
  let resourceVersion = 0;
  let requests = 0;
  const client = {
    request: async ({ method, path, body }: { method: string; path: string; body?: KubeObject }) => {
      requests++;
      if (requests <= failures) throw new ApiTransportError(method, path, 'connect ECONNREFUSED');
      if (method === 'GET') {
        if (!stored) throw new ApiStatusError(method, path, 404, 'NotFound', 'secrets not found', {});
        return structuredClone(stored);
      }
      if ((method !== 'POST' && method !== 'PUT') || !body)
        throw new ApiStatusError(method, path, 405, 'MethodNotAllowed', 'not in this fake', {});
      stored = { ...body, metadata: { ...body.metadata, resourceVersion: String(++resourceVersion) } };
      return structuredClone(stored);
    },
  } as unknown as KubeClient;
  return { client, requests: () => requests };
}

/** A logger that keeps `level message` lines. */
function lines(): { logger: Logger; lines: string[] } {
  const kept: string[] = [];
  const at = (level: string) => (_obj: object, msg?: string) => void kept.push(`${level} ${msg ?? ''}`);
  const logger: Logger = {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    child: () => logger,
  };
  return { logger, lines: kept };
}

describe('WebhookTlsSource, self-managed', () => {
  it('the controller half retries storing the certificate while the API server cannot be reached', async () => {
    const api = secretApi(1);
    const log = lines();
    const clock = new FakeClock();
    const source = new WebhookTlsSource({
      mode: { mode: 'self-managed', certDir: mkdtempSync(path.join(os.tmpdir(), 'tessera-tls-')) },
      namespace: 'ops',
      ownsSecret: true,
      client: api.client,
      clock,
      logger: log.logger,
    });
    const prepared = source.prepare();
    // The failure is logged and a retry is scheduled, instead of prepare() rejecting.
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
    expect(log.lines).toEqual(['warn could not store the webhook certificate in its Secret; retrying']);
    await clock.advance(REGISTRATION_BACKOFF.maxMs ?? 30_000);
    await prepared;
    expect(source.trust().caBundlePem).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it('rewrites the served files once per renewal, however often they were asked for', async () => {
    const certDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-tls-'));
    const clock = new FakeClock(Date.now());
    // Renew at every hourly check: a new certificate (365 days) always has fewer days left than this.
    const source = new WebhookTlsSource({
      mode: { mode: 'self-managed', certDir, renewBeforeDays: 1000 },
      namespace: 'ops',
      ownsSecret: true,
      client: secretApi().client,
      clock,
      logger: silentLogger,
    });
    await source.prepare();
    const writes = vi.spyOn(SelfManagedTls.prototype, 'writeFiles');
    try {
      const files = await source.servingFiles();
      await source.servingFiles();
      await source.servingFiles();
      const served = readFileSync(files.certFile, 'utf8');
      expect(writes).toHaveBeenCalledTimes(3);

      const stop = new AbortController();
      const running = source.start(stop.signal);
      await clock.advance(60 * 60 * 1000);
      await vi.waitFor(() => expect(readFileSync(files.certFile, 'utf8')).not.toBe(served));
      expect(writes).toHaveBeenCalledTimes(4);
      stop.abort();
      await running;
    } finally {
      writes.mockRestore();
    }
  });
});
