// `tessera dashboard`: reads the cluster with the kubeconfig's credentials through Tessera's informers and serves
// the read-only dashboard on 127.0.0.1, printing its URL. Runs until the signal aborts (SIGINT/SIGTERM).
// `tessera start` serves the same dashboard beside its controllers through serveDashboard.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, loadKubeConfig, type Logger, silentLogger, waitForAbort } from '../runtime/index.js';
import { ListenError } from './errors.js';
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
  await serveDashboard({
    kubeConfig: await loadKubeConfig(opts.kubeconfig),
    port: opts.port,
    ...(opts.pageDir === undefined ? {} : { pageDir: opts.pageDir }),
    signal: opts.signal,
    ...(opts.logger === undefined ? {} : { logger: opts.logger }),
    onListening: (url, server) => opts.out(`dashboard of ${server} at ${url} (read-only; Ctrl-C stops it)`),
  });
}

export interface ServeDashboardOptions {
  readonly kubeConfig: KubeConfig;
  /** 0: any free port. */
  readonly port: number;
  /** When `port` is taken, listen on any free port instead of failing (`tessera start`: a second one still runs). */
  readonly anyPortIfTaken?: boolean;
  readonly pageDir?: string;
  readonly signal: AbortSignal;
  readonly logger?: Logger;
  /** Called once the server listens: the URL to open and the API server it shows. */
  readonly onListening: (url: string, apiServer: string) => void;
}

/** Serves the dashboard of `kubeConfig`'s cluster until `signal` aborts, then stops its informers and server. */
export async function serveDashboard(opts: ServeDashboardOptions): Promise<void> {
  const logger = opts.logger ?? silentLogger;
  const client = new KubeClient(opts.kubeConfig);
  const data = new LiveDashboardData({ client, logger });
  const serverAt = (port: number): DashboardServer =>
    new DashboardServer({ data, pageDir: opts.pageDir ?? DEFAULT_PAGE_DIR, port, logger });
  let server = serverAt(opts.port);
  const informers = new AbortController();
  try {
    const url = await server.start().catch(async (err: unknown) => {
      if (!(err instanceof ListenError) || !opts.anyPortIfTaken || opts.port === 0) throw err;
      await server.close();
      server = serverAt(0);
      return server.start();
    });
    const running = data.start(informers.signal);
    opts.onListening(url, client.server);
    await waitForAbort(opts.signal);
    informers.abort();
    await running;
  } finally {
    informers.abort();
    await server.close();
    await client.close();
  }
}
