// Typed errors of the dashboard. Each carries a stable `code`; messages say what happened and what to do.
import { TesseraError, type ApiStatusError } from '../runtime/light.js';

export type DashboardErrorCode =
  | 'TESSERA_DASHBOARD_PAGE_MISSING'
  | 'TESSERA_DASHBOARD_LISTEN'
  | 'TESSERA_DASHBOARD_CONSOLE_PLUGIN_MISSING'
  | 'TESSERA_DASHBOARD_CONSOLE_PLUGIN_BUILD'
  | 'TESSERA_DASHBOARD_CONSOLE_PLUGIN_CERT'
  | 'TESSERA_DASHBOARD_CONSOLE_PLUGIN_REGISTRATION';

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

/** The console plugin's build (dist/console-plugin) is missing, incomplete or larger than the server holds. */
export class ConsolePluginMissingError extends DashboardError {
  constructor(dir: string, detail: string) {
    super(
      'TESSERA_DASHBOARD_CONSOLE_PLUGIN_MISSING',
      `the console plugin in ${dir} cannot be served (${detail}); run \`npm run build:console-plugin\`, or pass --plugin-dir`,
    );
  }
}

/** webpack or the console SDK's validation refused the plugin. */
export class ConsolePluginBuildError extends DashboardError {
  constructor(detail: string) {
    super('TESSERA_DASHBOARD_CONSOLE_PLUGIN_BUILD', `the console plugin build failed:\n${detail}`);
  }
}

/** The serving certificate the console plugin's server needs is not readable or not a usable pair. */
export class ServingCertificateError extends DashboardError {
  constructor(certDir: string, cause: unknown) {
    super(
      'TESSERA_DASHBOARD_CONSOLE_PLUGIN_CERT',
      `no usable serving certificate in ${certDir} (${cause instanceof Error ? cause.message : String(cause)}); ` +
        'mount the Secret the Service annotation service.beta.openshift.io/serving-cert-secret-name names ' +
        '(tls.crt, tls.key), or pass --cert-dir',
      { cause },
    );
  }
}

/** The API server refused to apply the ConsolePlugin (`tessera console-plugin register`). */
export class ConsolePluginRegistrationError extends DashboardError {
  constructor(plugin: string, role: string, cause: ApiStatusError) {
    const hint =
      cause.statusCode === 403
        ? `grant this service account ClusterRole ${role} (patch and create on consoleplugins named ${plugin}), as the OLM bundle does`
        : 'check the API server and the ConsolePlugin API (console.openshift.io/v1)';
    super(
      'TESSERA_DASHBOARD_CONSOLE_PLUGIN_REGISTRATION',
      `the API server refused to apply ConsolePlugin ${plugin} (${cause.statusCode}: ${cause.message}); ${hint}`,
      { cause },
    );
  }
}
