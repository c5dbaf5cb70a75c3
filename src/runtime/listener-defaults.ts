// Defaults of the runtime's listeners and of the webhook server's request budgets that an admin sets from the
// command line. They live apart from the servers, which load node:https and prom-client, so a command's flag help
// can name them without loading a server (light.ts exports them).

/** Where the webhook server and the probe server listen when no host is given: every IPv4 interface. */
export const DEFAULT_LISTEN_HOST = '0.0.0.0';
/** The webhook server's HTTPS port (controller-runtime's). */
export const DEFAULT_WEBHOOK_PORT = 9443;
/** The probe server's port: /healthz, /readyz, and /metrics unless metrics have a listener of their own. */
export const DEFAULT_PROBE_PORT = 8081;
/** Largest webhook request body, bytes: the API server sends objects of at most ~3 MiB, and an UPDATE two of them. */
export const DEFAULT_WEBHOOK_MAX_REQUEST_BYTES = 7 * 1024 * 1024;
/** Most open webhook connections: each TLS connection costs ~70 KB, so 256 bound that to ~18 MB. */
export const DEFAULT_WEBHOOK_MAX_CONNECTIONS = 256;
