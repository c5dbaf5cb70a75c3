// `tessera dashboard`: reads the cluster with the kubeconfig's credentials through Tessera's informers and serves
// the read-only dashboard on 127.0.0.1, printing its URL. Runs until the signal aborts (SIGINT/SIGTERM).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient, loadKubeConfig, type Logger, silentLogger } from '../runtime/index.js';
import { LiveDashboardData } from './live-data.js';
import { DashboardServer } from './server.js';

/** The port `tessera dashboard` listens on without --port. */
export const DEFAULT_DASHBOARD_PORT = 7480;

/**
 * Where `npm run build` writes the page: dist/dashboard-page at the package root (this file is src/dashboard or
 * dist/dashboard, two levels below it).
 */
export const DEFAULT_PAGE_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../dist/dashboard-page',
);

export interface DashboardCommandOptions {
  readonly port: number;
  readonly kubeconfig: string | undefined;
  readonly pageDir?: string;
  readonly out: (line: string) => void;
  readonly signal: AbortSignal;
  readonly logger?: Logger;
}

export async function runDashboard(opts: DashboardCommandOptions): Promise<void> {
  const logger = opts.logger ?? silentLogger;
  const client = new KubeClient(await loadKubeConfig(opts.kubeconfig));
  const data = new LiveDashboardData({ client, logger });
  const server = new DashboardServer({
    data,
    pageDir: opts.pageDir ?? DEFAULT_PAGE_DIR,
    port: opts.port,
    logger,
  });
  const informers = new AbortController();
  try {
    const url = await server.start();
    const running = data.start(informers.signal);
    opts.out(`dashboard of ${client.server} at ${url} (read-only; Ctrl-C stops it)`);
    await new Promise<void>((resolve) => {
      if (opts.signal.aborted) resolve();
      else opts.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    informers.abort();
    await running;
  } finally {
    informers.abort();
    await server.close();
    await client.close();
  }
}
