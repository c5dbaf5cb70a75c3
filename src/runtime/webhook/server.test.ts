// WebhookServer lifecycle on loopback with a FakeClock: a clean stop leaves no timer behind (so the process can
// exit), and a failed start (port taken, unreadable certificate) rejects ready() and stops the certificate watcher.
// Also: budget options are validated, and refusals are counted by reason. Attacks on the budgets are in
// test/unit/hostile/webhook-*.test.ts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileCertificateWatcher } from './certificate-source.js';
import { generateDevCertificate } from './dev-certificate.js';
import { WEBHOOK_BUDGET_DEFAULTS, WebhookServer } from './server.js';
import { FakeClock } from '../testing/index.js';

async function certificateFiles(): Promise<{ certFile: string; keyFile: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-webhook-'));
  const dev = await generateDevCertificate({});
  const certFile = path.join(dir, 'tls.crt');
  const keyFile = path.join(dir, 'tls.key');
  writeFileSync(certFile, dev.certPem);
  writeFileSync(keyFile, dev.keyPem);
  return { certFile, keyFile };
}

/** Holds a loopback port so the webhook server cannot bind it. */
async function occupiedPort(): Promise<{ port: number; release(): Promise<void> }> {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const addr = blocker.address();
  const port = addr && typeof addr === 'object' ? addr.port : 0;
  return { port, release: () => new Promise((resolve) => blocker.close(() => resolve())) };
}

describe('WebhookServer lifecycle', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('leaves no pending timer after a clean stop (the 5 s force-close timer is cancelled)', async () => {
    const clock = new FakeClock(0);
    const server = new WebhookServer({ host: '127.0.0.1', port: 0, devCertificate: {}, clock });
    const stop = new AbortController();
    const running = server.start(stop.signal);
    await server.ready();
    expect(server.port()).toBeGreaterThan(0);
    stop.abort();
    await running;
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects ready() and stops the certificate watcher when the port is taken', async () => {
    const clock = new FakeClock(0);
    const files = await certificateFiles();
    const taken = await occupiedPort();
    const stopWatcher = vi.spyOn(FileCertificateWatcher.prototype, 'stop');
    try {
      const server = new WebhookServer({ host: '127.0.0.1', port: taken.port, ...files, clock });
      const ready = server.ready();
      await expect(server.start(new AbortController().signal)).rejects.toMatchObject({ code: 'EADDRINUSE' });
      await expect(ready).rejects.toMatchObject({ code: 'EADDRINUSE' });
      await expect(server.ready()).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect(stopWatcher).toHaveBeenCalledTimes(1);
      expect(clock.pendingTimers()).toBe(0); // no certificate poll left scheduled
      expect(server.port()).toBe(0);
    } finally {
      await taken.release();
    }
  });

  it('rejects ready() with a certificate error when the certificate files cannot be read', async () => {
    const clock = new FakeClock(0);
    const server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      certFile: '/nonexistent/tls.crt',
      keyFile: '/nonexistent/tls.key',
      clock,
    });
    await expect(server.start(new AbortController().signal)).rejects.toMatchObject({
      code: 'TESSERA_CERTIFICATE',
    });
    await expect(server.ready()).rejects.toMatchObject({ code: 'TESSERA_CERTIFICATE' });
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('WebhookServer budgets', () => {
  it.each([
    ['maxJsonDepth', 0],
    ['maxRequestBytes', -1],
    ['handlerTimeoutMs', 1.5],
    ['maxConnections', Number.NaN],
  ] as const)('refuses %s = %s', (key, value) => {
    expect(() => new WebhookServer({ devCertificate: {}, [key]: value })).toThrow(
      expect.objectContaining({ code: 'TESSERA_INVALID_ARGUMENT', field: key }),
    );
  });

  it('refuses a headers timeout longer than the request timeout (Node would fail at listen)', () => {
    expect(
      () => new WebhookServer({ devCertificate: {}, headersTimeoutMs: 20_000, requestTimeoutMs: 15_000 }),
    ).toThrow(/headersTimeoutMs/);
  });

  it('keeps every default budget a positive integer and the handler budget under the API server timeout', () => {
    for (const value of Object.values(WEBHOOK_BUDGET_DEFAULTS))
      expect(Number.isInteger(value) && value > 0).toBe(true);
    expect(WEBHOOK_BUDGET_DEFAULTS.handlerTimeoutMs).toBeLessThan(10_000);
  });

  it('counts refusals by reason in the given registry, shared by servers on the same registry', async () => {
    const registry = new Registry();
    const servers = [1, 2].map(
      () => new WebhookServer({ host: '127.0.0.1', port: 0, devCertificate: {}, registry }),
    );
    const stop = new AbortController();
    const running = servers.map((s) => s.start(stop.signal));
    try {
      await Promise.all(servers.map((s) => s.ready()));
      for (const s of servers) {
        const res = await new Promise<number>((resolve, reject) => {
          const req = https.request(
            {
              host: '127.0.0.1',
              port: s.port(),
              path: '/nowhere',
              method: 'POST',
              ca: s.caBundle(),
              agent: false,
            },
            (r) => {
              r.resume();
              resolve(r.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          req.end('{}');
        });
        expect(res).toBe(404);
      }
      expect(await registry.metrics()).toContain('tessera_webhook_refusals_total{reason="not_found"} 2');
      expect(servers[0]?.stats().refusals).toEqual({ not_found: 1 });
    } finally {
      stop.abort();
      await Promise.all(running);
    }
  });
});
