import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from './logging.js';
import { MetricsServer } from './metrics-auth-server.js';
import { FakeClock } from './testing/index.js';
import { generateDevCertificate } from './webhook/dev-certificate.js';

/** The certificate the server presents in a TLS handshake, as its SHA-256 fingerprint and subject CN. */
function servedCertificate(port: number): Promise<{ fingerprint: string; commonName: string }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerCertificate();
      socket.destroy();
      resolve({ fingerprint: cert.fingerprint256, commonName: String(cert.subject.CN) });
    });
    socket.once('error', reject);
  });
}

function recordingLogger(lines: string[]): Logger {
  const record = (_fields: object, message?: string): void => void lines.push(message ?? '');
  const logger: Logger = {
    error: record,
    warn: record,
    info: record,
    debug: () => undefined,
    trace: () => undefined,
    child: () => logger,
  };
  return logger;
}

describe('MetricsServer with --metrics-cert-dir', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A secure metrics server reading `--metrics-cert-dir` from a new, empty folder, closed after the test. */
  function serverWithCertDir(
    clock: FakeClock,
    logs: string[] = [],
  ): { server: MetricsServer; certDir: string } {
    const certDir = mkdtempSync(path.join(os.tmpdir(), 'metrics-cert-dir-'));
    const server = new MetricsServer({
      host: '127.0.0.1',
      port: 0,
      registry: new Registry(),
      secure: true,
      certDir,
      certPollIntervalMs: 10_000,
      clock,
      logger: recordingLogger(logs),
    });
    cleanups.push(
      () => rmSync(certDir, { recursive: true, force: true }),
      () => server.close(),
    );
    return { server, certDir };
  }

  it('serves a self-signed certificate while the optional Secret volume is empty, then the mounted one', async () => {
    const clock = new FakeClock();
    const logs: string[] = [];
    const { server, certDir } = serverWithCertDir(clock, logs);
    await server.listen();

    const before = await servedCertificate(server.port());
    expect(before.commonName).toBe('localhost');
    expect(logs.some((l) => l.includes('no tls.crt/tls.key in --metrics-cert-dir yet'))).toBe(true);

    // What the kubelet does once OpenShift's service CA (or an admin) creates the Secret.
    const issued = await generateDevCertificate({ dnsNames: ['pod-placement-metrics.operators.svc'] });
    writeFileSync(path.join(certDir, 'tls.key'), issued.keyPem);
    writeFileSync(path.join(certDir, 'tls.crt'), issued.certPem);
    let after = before;
    for (let poll = 0; poll < 50 && after.commonName !== 'pod-placement-metrics.operators.svc'; poll++) {
      clock.step(10_000);
      await new Promise((resolve) => setImmediate(resolve));
      after = await servedCertificate(server.port());
    }
    expect(after.commonName).toBe('pod-placement-metrics.operators.svc');
    expect(after.fingerprint).not.toBe(before.fingerprint);
    // Waiting for the files is not worth a warning on every poll.
    expect(logs.filter((l) => l.includes('cannot read certificate files'))).toEqual([]);
  });

  it('refuses to start on files that exist but are not a certificate pair: a broken Secret, not a missing one', async () => {
    const { server, certDir } = serverWithCertDir(new FakeClock());
    writeFileSync(path.join(certDir, 'tls.crt'), 'not a certificate');
    writeFileSync(path.join(certDir, 'tls.key'), 'not a key');
    await expect(server.listen()).rejects.toMatchObject({ code: 'TESSERA_CERTIFICATE' });
  });

  it('refuses to start when --metrics-cert-dir does not exist: a wrong flag, not a Secret still to come', async () => {
    const server = new MetricsServer({
      host: '127.0.0.1',
      port: 0,
      registry: new Registry(),
      secure: true,
      certDir: path.join(os.tmpdir(), 'tessera-no-such-cert-dir', 'tls'),
      clock: new FakeClock(),
    });
    cleanups.push(() => server.close());
    const failure = server.listen();
    await expect(failure).rejects.toMatchObject({ code: 'TESSERA_CERTIFICATE' });
    await expect(failure).rejects.toThrow(/cannot read the certificate folder/);
  });
});
