// Typed errors of the dashboard. Each carries a stable `code`; messages say what happened and what to do.
import { TesseraError } from '../runtime/light.js';

export type DashboardErrorCode = 'TESSERA_DASHBOARD_PAGE_MISSING' | 'TESSERA_DASHBOARD_LISTEN';

export class DashboardError extends TesseraError<DashboardErrorCode> {}

/** The built page (vite's output) is not where the server looks for it. */
export class PageMissingError extends DashboardError {
  constructor(dir: string) {
    super(
      'TESSERA_DASHBOARD_PAGE_MISSING',
      `the dashboard page is not built (no ${dir}/index.html); run \`npm run build\` first`,
    );
  }
}

/** The server could not listen on its loopback port. */
export class ListenError extends DashboardError {
  constructor(port: number, cause: unknown) {
    super(
      'TESSERA_DASHBOARD_LISTEN',
      `could not listen on 127.0.0.1:${port} (${cause instanceof Error ? cause.message : String(cause)}); choose another port with --port`,
      { cause },
    );
  }
}
