// WebhookServer lifecycle on loopback with a FakeClock: a clean stop leaves no timer behind (so the process can
// exit), and a failed start (port taken, unreadable certificate) rejects ready() and stops the certificate watcher.
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../clock.js';
import { FileCertificateWatcher } from './certificate-source.js';
import { generateDevCertificate } from './dev-certificate.js';
import { WebhookServer } from './server.js';

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
