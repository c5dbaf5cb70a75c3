// `tessera console-plugin serve`: runs ConsolePluginServer until SIGINT/SIGTERM. In the cluster the Deployment
// (manifests.ts) mounts the service CA's certificate at SERVING_CERT_DIR.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CertificateError, type Logger, waitForAbort } from '../../runtime/index.js';
import { ServingCertificateError } from '../errors.js';
import { ConsolePluginServer } from './server.js';

/** The port the plugin's container listens on and its Service exposes (the console plugin template's). */
export const CONSOLE_PLUGIN_PORT = 9443;
/** Where the Deployment mounts the serving certificate Secret (tls.crt, tls.key). */
export const SERVING_CERT_DIR = '/var/serving-cert';

/** Where `npm run build` writes the plugin: dist/console-plugin at the package root (this file is two below it). */
export const DEFAULT_PLUGIN_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../dist/console-plugin',
);

export interface ServeConsolePluginOptions {
  readonly port: number;
  readonly certDir: string;
  readonly pluginDir: string;
  readonly signal: AbortSignal;
  readonly logger: Logger;
  readonly out: (line: string) => void;
}

export async function serveConsolePlugin(opts: ServeConsolePluginOptions): Promise<void> {
  const server = new ConsolePluginServer({
    pluginDir: opts.pluginDir,
    certFile: path.join(opts.certDir, 'tls.crt'),
    keyFile: path.join(opts.certDir, 'tls.key'),
    port: opts.port,
    logger: opts.logger,
  });
  try {
    const port = await server.start().catch((err: unknown) => {
      throw err instanceof CertificateError ? new ServingCertificateError(opts.certDir, err) : err;
    });
    opts.out(`console plugin ${opts.pluginDir} served over HTTPS on port ${port}`);
    await waitForAbort(opts.signal);
  } finally {
    await server.close();
  }
}
