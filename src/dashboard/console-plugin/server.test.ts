// The console plugin's HTTPS server: serves exactly the build's files with the mounted serving certificate (a
// client that trusts the issuing CA and names the Service verifies it), refuses anything else, and picks up a
// rotated certificate from the same files without a restart.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDevCertificate } from '../../runtime/index.js';
import { ConsolePluginMissingError } from '../errors.js';
import { ConsolePluginServer, MAX_REQUEST_TARGET } from './server.js';

const SERVICE_DNS = 'tessera-console-plugin.openshift-multiarch-tuning-operator.svc';
const CHUNK = '/319-chunk-adb63f09459263f4ec21.min.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function request(port: number, ca: string, target: string, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: target, method, ca, servername: SERVICE_DNS, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function writePair(dir: string): Promise<string> {
  const cert = await generateDevCertificate({ dnsNames: [SERVICE_DNS] });
  await writeFile(path.join(dir, 'tls.key'), cert.keyPem);
  await writeFile(path.join(dir, 'tls.crt'), cert.certPem);
  return cert.caPem;
}

/**
 * Whether the server comes to serve a certificate `ca` verifies. The watcher re-reads on file notifications (or its
 * poll); each attempt asks it to re-read now, so this waits for the observed state, not for time.
 */
async function servedWith(server: ConsolePluginServer, port: number, ca: string): Promise<boolean> {
  for (let attempt = 0; attempt < 600; attempt++) {
    await server.checkCertificates();
    const ok = await request(port, ca, '/plugin-manifest.json').then(
      (a) => a.status === 200,
      () => false,
    );
    if (ok) return true;
  }
  return false;
}

describe('console plugin HTTPS server', () => {
  let root: string;
  let pluginDir: string;
  let certDir: string;
  let ca: string;
  let server: ConsolePluginServer;
  let port: number;
  const manifest = JSON.stringify({ name: 'tessera-console-plugin', extensions: [] });

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'tessera-console-plugin-'));
    pluginDir = path.join(root, 'plugin');
    certDir = path.join(root, 'cert');
    await mkdir(pluginDir);
    await mkdir(certDir);
    await writeFile(path.join(pluginDir, 'plugin-manifest.json'), manifest);
    await writeFile(path.join(pluginDir, 'plugin-entry.js'), '__load_plugin_entry__("x", {});');
    await writeFile(path.join(pluginDir, CHUNK), 'console.log(1);');
    // Beside the build, not in it: never served.
    await writeFile(path.join(root, 'secret.txt'), 'not for the console');
    ca = await writePair(certDir);
    server = new ConsolePluginServer({
      pluginDir,
      certFile: path.join(certDir, 'tls.crt'),
      keyFile: path.join(certDir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
    });
    port = await server.start();
  });

  afterAll(async () => {
    await server?.close();
  });

  it('serves the manifest and the scripts over TLS with the mounted certificate', async () => {
    const answer = await request(port, ca, '/plugin-manifest.json');
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(manifest);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-cache');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    const entry = await request(port, ca, '/plugin-entry.js?cache=1');
    expect(entry.status).toBe(200);
    expect(entry.headers['content-type']).toBe('application/javascript; charset=utf-8');
    const chunk = await request(port, ca, CHUNK);
    expect(chunk.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const head = await request(port, ca, '/plugin-manifest.json', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('is refused by a client that does not trust the issuing CA', async () => {
    const other = await generateDevCertificate({ dnsNames: [SERVICE_DNS] });
    await expect(request(port, other.caPem, '/plugin-manifest.json')).rejects.toThrow();
  });

  it('answers nothing outside the build, and only reads', async () => {
    for (const target of ['/../secret.txt', '/%2e%2e/secret.txt', '//secret.txt', '/', '/plugin'])
      expect((await request(port, ca, target)).status, target).toBe(404);
    expect((await request(port, ca, `/${'a'.repeat(MAX_REQUEST_TARGET + 1)}`)).status).toBe(404);
    const post = await request(port, ca, '/plugin-manifest.json', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('GET, HEAD');
  });

  it('serves a rotated certificate once the mounted files change', async () => {
    const rotatedCa = await writePair(certDir);
    expect(await servedWith(server, port, rotatedCa)).toBe(true);
    // The old certificate is no longer served.
    await expect(request(port, ca, '/plugin-manifest.json')).rejects.toThrow();
  });

  it('starts before its optional Secret is mounted, with a certificate no client trusts, then serves the mounted one', async () => {
    const laterCertDir = await mkdtemp(path.join(os.tmpdir(), 'tessera-console-plugin-cert-'));
    const early = new ConsolePluginServer({
      pluginDir,
      certFile: path.join(laterCertDir, 'tls.crt'),
      keyFile: path.join(laterCertDir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
    });
    const earlyPort = await early.start();
    try {
      // Until the Secret's files appear, what is served is self-signed: a client trusting the issuing CA refuses it.
      const mounted = await generateDevCertificate({ dnsNames: [SERVICE_DNS] });
      await expect(request(earlyPort, mounted.caPem, '/plugin-manifest.json')).rejects.toThrow();
      await writeFile(path.join(laterCertDir, 'tls.key'), mounted.keyPem);
      await writeFile(path.join(laterCertDir, 'tls.crt'), mounted.certPem);
      const mountedCa = mounted.caPem;
      expect(await servedWith(early, earlyPort, mountedCa)).toBe(true);
    } finally {
      await early.close();
    }
  });

  it('refuses to start without a built plugin, saying what to run', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'tessera-console-plugin-empty-'));
    const missing = new ConsolePluginServer({
      pluginDir: empty,
      certFile: path.join(certDir, 'tls.crt'),
      keyFile: path.join(certDir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
    });
    const failure = missing.start();
    await expect(failure).rejects.toBeInstanceOf(ConsolePluginMissingError);
    await expect(failure).rejects.toThrow(/npm run build:console-plugin/);
  });
});
