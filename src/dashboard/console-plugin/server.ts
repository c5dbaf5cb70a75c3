// `tessera console-plugin serve`: the console plugin's files over HTTPS for the console's backend, which fetches
// them through the ConsolePlugin's Service. A server of its own rather than a route on the loopback dashboard: the
// dashboard binds 127.0.0.1 and reads the cluster with a kubeconfig, while this one must listen on the pod's
// network, needs no credentials at all (the plugin's API calls are the browser's, as the logged-in user), and
// runs in its own Deployment. It serves a fixed set of files read once at start (the build is immutable): a
// request is answered only when its path is exactly one of their names, so no request reaches the file system.
// The certificate is the service CA's (the Secret that `service.beta.openshift.io/serving-cert-secret-name` makes),
// re-read when the kubelet swaps the mounted files on rotation.
import { readdir, readFile, stat } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  FileCertificateWatcher,
  generateDevCertificate,
  type Clock,
  type Logger,
  realClock,
  silentLogger,
} from '../../runtime/index.js';
import { ConsolePluginMissingError } from '../errors.js';

/** Files and bytes the server holds; the build is about 1 MB in some 70 files. */
export const MAX_PLUGIN_FILES = 1_000;
export const MAX_PLUGIN_BYTES = 32 * 1024 * 1024;
/** Longest request target looked up (every served name is far shorter). */
export const MAX_REQUEST_TARGET = 1_024;
/** The manifest the console reads first; it must be there. */
export const PLUGIN_MANIFEST = 'plugin-manifest.json';

const CONTENT_TYPES: ReadonlyMap<string, string> = new Map([
  ['.js', 'application/javascript; charset=utf-8'],
  ['.json', 'application/json; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.txt', 'text/plain; charset=utf-8'],
  ['.svg', 'image/svg+xml'],
  ['.png', 'image/png'],
  ['.woff2', 'font/woff2'],
]);

interface Asset {
  readonly body: Buffer;
  readonly contentType: string;
  /** Content-hashed names never change content: cached for a year. The manifest and entry are revalidated. */
  readonly immutable: boolean;
}

/** Every file of the build by its URL path (`/plugin-manifest.json`), within the budgets. */
export async function readPluginAssets(dir: string): Promise<Map<string, Asset>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((err: unknown) => {
    throw new ConsolePluginMissingError(dir, err instanceof Error ? err.message : String(err));
  });
  const files = entries.filter((e) => e.isFile());
  if (files.length > MAX_PLUGIN_FILES)
    throw new ConsolePluginMissingError(dir, `${files.length} files, over the ${MAX_PLUGIN_FILES} served`);
  const assets = new Map<string, Asset>();
  let bytes = 0;
  for (const file of files) {
    const full = path.join(file.parentPath, file.name);
    bytes += (await stat(full)).size;
    if (bytes > MAX_PLUGIN_BYTES)
      throw new ConsolePluginMissingError(dir, `over the ${MAX_PLUGIN_BYTES} bytes served`);
    const name = path.relative(dir, full).split(path.sep).join('/');
    assets.set(`/${name}`, {
      body: await readFile(full),
      contentType: CONTENT_TYPES.get(path.extname(name)) ?? 'application/octet-stream',
      immutable: /-[0-9a-f]{16,}\.min\.js$/.test(name),
    });
  }
  if (!assets.has(`/${PLUGIN_MANIFEST}`)) throw new ConsolePluginMissingError(dir, `no ${PLUGIN_MANIFEST}`);
  return assets;
}

export interface ConsolePluginServerOptions {
  readonly pluginDir: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** 0: any free port. */
  readonly port: number;
  /** Default: every interface (the console's backend connects through the Service). */
  readonly host?: string;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export class ConsolePluginServer {
  private server: https.Server | undefined;
  private certificates: FileCertificateWatcher | undefined;

  constructor(private readonly options: ConsolePluginServerOptions) {}

  /** Reads the files and the certificate, listens; resolves with the port. */
  async start(): Promise<number> {
    const logger = this.options.logger ?? silentLogger;
    const assets = await readPluginAssets(this.options.pluginDir);
    this.certificates = new FileCertificateWatcher(
      {
        certFile: this.options.certFile,
        keyFile: this.options.keyFile,
        clock: this.options.clock ?? realClock,
        logger,
      },
      (pair) => this.server?.setSecureContext({ cert: pair.certPem, key: pair.keyPem }),
    );
    // The Secret is an optional volume (the OLM bundle also runs where no service CA issues it): until its files
    // appear, serve a self-signed certificate, which the console refuses, rather than keep the pods from starting.
    let pair = await this.certificates.startOrWait();
    if (pair === undefined) {
      logger.warn(
        { certFile: this.options.certFile },
        "no serving certificate yet: serving a self-signed one, which the console will not accept, until the Secret the Service's service.beta.openshift.io/serving-cert-secret-name annotation names is mounted",
      );
      pair = await generateDevCertificate({ dnsNames: ['localhost'] });
    }
    const server = https.createServer(
      { cert: pair.certPem, key: pair.keyPem, minVersion: 'TLSv1.2' },
      (req, res) => {
        const target = req.url ?? '/';
        const pathname = target.length > MAX_REQUEST_TARGET ? '' : (target.split('?', 1)[0] ?? '');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' });
          res.end('read-only: GET or HEAD only\n');
          return;
        }
        const asset = assets.get(pathname);
        if (asset === undefined) {
          res.writeHead(404, { 'Content-Type': 'text/plain' });
          res.end('not found\n');
          return;
        }
        res.writeHead(200, {
          'Content-Type': asset.contentType,
          'Content-Length': asset.body.length,
          'Cache-Control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        });
        res.end(req.method === 'HEAD' ? undefined : asset.body);
      },
    );
    // Requests carry no body and answers are in memory: anything slow is a stuck or hostile client.
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    server.keepAliveTimeout = 5_000;
    server.maxConnections = 512;
    this.server = server;
    // Files that appeared while the server was being created were announced before it existed.
    const latest = this.certificates.latest();
    if (latest && latest.certPem !== pair.certPem)
      server.setSecureContext({ cert: latest.certPem, key: latest.keyPem, minVersion: 'TLSv1.2' });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    logger.info({ port, files: assets.size }, 'serving the console plugin over HTTPS');
    return port;
  }

  /** Re-reads the certificate files now (the watcher also does on file notifications and every 10 s). */
  async checkCertificates(): Promise<void> {
    await this.certificates?.check();
  }

  async close(): Promise<void> {
    this.certificates?.stop();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
