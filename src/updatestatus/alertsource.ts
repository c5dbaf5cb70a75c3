// Reads firing and pending alerts from a live cluster the way oc does (pkg/cli/admin/inspectalerts): find the
// `thanos-querier` Route in `openshift-monitoring`, GET `https://<each ingress host>/api/v1/alerts` until one
// answers 200, authenticated as the kubeconfig user and trusting what the kubeconfig trusts for the API server.
// `--prometheus-url` replaces the Route for clusters without one (kube-prometheus on plain Kubernetes). Every
// failure becomes oc's notice with Go's error text, never an exception: the report then ignores alerts.
// Budgets (the endpoint is outside our control): the answer is cut off at `maxBytes` and `timeoutMs`, and its
// JSON shape and alert count are checked before it is parsed and decoded (DEFAULT_ALERTS_BUDGET in alerts.ts).
import type https from 'node:https';
import { Agent, request } from 'undici';
import type { KubeClient, KubeConnection } from '../runtime/index.js';
import { ApiStatusError, errorMessage } from '../runtime/light.js';
import { type AlertsBudget, type AlertsReading, alertsUnavailableNotice, decodeAlerts } from './alerts.js';
import { goAggregateText } from './goerrors.js';

/** Largest alerts answer read (bytes). A 5,000-node cluster with every alert firing stays far below. */
export const DEFAULT_ALERTS_MAX_BYTES = 32 * 1024 * 1024;
/** Time for one alerts request, headers and body (ms). */
export const DEFAULT_ALERTS_TIMEOUT_MS = 30_000;

export const MONITORING_NAMESPACE = 'openshift-monitoring';
export const THANOS_ROUTE = 'thanos-querier';
const ALERTS_PATH = '/api/v1/alerts';

export interface LiveAlertsOptions {
  /** Base URL of a Prometheus-compatible API; undefined: the thanos-querier Route. */
  readonly prometheusUrl?: string | undefined;
  /** Default: DEFAULT_ALERTS_MAX_BYTES. */
  readonly maxBytes?: number;
  /** Default: DEFAULT_ALERTS_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /** Shape and alert-count budget of the answer. Default: DEFAULT_ALERTS_BUDGET. */
  readonly budget?: AlertsBudget;
  readonly userAgent?: string;
}

export interface LiveAlertsReader {
  read(): Promise<AlertsReading>;
  close(): Promise<void>;
}

interface Route {
  readonly status?: { readonly ingress?: readonly { readonly host?: string }[] };
}

/**
 * The user's TLS material and auth headers, as the kubeconfig gives them for the API server (with oc's connection
 * flags applied: --token, and the impersonation headers, which oc sends to the alerts endpoint too).
 */
async function credentials(
  kc: KubeConnection,
): Promise<{ tls: https.RequestOptions; headers: Record<string, string | string[]> }> {
  const tls: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(tls.headers ?? {})) {
    if (typeof v === 'string' || typeof v === 'number') headers[k.toLowerCase()] = String(v);
    // One header line per value: Impersonate-Group lines are groups each, never split on commas.
    else if (Array.isArray(v)) headers[k.toLowerCase()] = v.map(String);
  }
  if (tls.auth) headers.authorization = `Basic ${Buffer.from(tls.auth).toString('base64')}`;
  return { tls, headers };
}

class AlertsFetchError extends Error {}

/** An alerts answer as received: the URL that gave it and its bytes, not yet parsed. */
interface AlertsAnswer {
  readonly url: string;
  readonly body: Buffer;
}

// Go's net/http error texts for the transport failures a user meets most; others keep Node's words.
function goTransportText(url: string, err: unknown): string {
  const cause = (err as { cause?: { code?: string; address?: string; port?: number; hostname?: string } })
    ?.cause;
  const code = cause?.code ?? (err as { code?: string })?.code;
  let detail = errorMessage(err);
  if (code === 'ECONNREFUSED' && cause?.address) {
    detail = `dial tcp ${cause.address}:${cause.port ?? ''}: connect: connection refused`;
  } else if (code === 'ENOTFOUND') {
    detail = `dial tcp: lookup ${cause?.hostname ?? new URL(url).hostname}: no such host`;
  } else if (cause instanceof Error) {
    detail = cause.message;
  }
  return `Get "${url}": ${detail}`;
}

/** Reads alerts like oc's inspectalerts, or from `prometheusUrl`. */
export function createLiveAlertsReader(
  kc: KubeConnection,
  client: KubeClient,
  options: LiveAlertsOptions = {},
): LiveAlertsReader {
  const maxBytes = options.maxBytes ?? DEFAULT_ALERTS_MAX_BYTES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_ALERTS_TIMEOUT_MS;
  let agent: Agent | undefined;

  async function get(url: string): Promise<AlertsAnswer> {
    const { tls, headers } = await credentials(kc);
    agent ??= new Agent({
      connect: {
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        pfx: tls.pfx,
        passphrase: tls.passphrase,
        rejectUnauthorized: tls.rejectUnauthorized ?? true,
      },
    });
    const signal = AbortSignal.timeout(timeoutMs);
    let res;
    try {
      res = await request(url, {
        dispatcher: agent,
        method: 'GET',
        headers: {
          ...headers,
          accept: 'application/json',
          'user-agent': options.userAgent ?? 'tessera-upgrade-status',
        },
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (err) {
      throw new AlertsFetchError(goTransportText(url, err));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) {
          res.body.destroy();
          throw new AlertsFetchError(`the answer of ${url} exceeds ${maxBytes} bytes`);
        }
        chunks.push(chunk);
      }
    } catch (err) {
      if (err instanceof AlertsFetchError) throw err;
      throw new AlertsFetchError(goTransportText(url, err));
    }
    if (res.statusCode !== 200) throw new AlertsFetchError(`GET status code=${res.statusCode}`);
    return { url, body: Buffer.concat(chunks) };
  }

  /** The user must be able to authenticate to the endpoint; oc requires a token, we also take a client cert. */
  async function checkCredentials(): Promise<void> {
    const { tls, headers } = await credentials(kc);
    if (headers.authorization === undefined && tls.cert === undefined && tls.pfx === undefined) {
      throw new AlertsFetchError('no token is currently in use for this session');
    }
  }

  async function fromRoute(): Promise<AlertsAnswer> {
    let route: Route;
    try {
      route = await client.request<Route>({
        method: 'GET',
        path: `/apis/route.openshift.io/v1/namespaces/${MONITORING_NAMESPACE}/routes/${THANOS_ROUTE}`,
      });
    } catch (err) {
      // client-go's StatusError prints the Status message, e.g. `routes.route.openshift.io "thanos-querier" not found`.
      const message =
        err instanceof ApiStatusError
          ? String((err.body as { message?: unknown } | undefined)?.message ?? err.message)
          : err instanceof Error
            ? err.message
            : String(err);
      throw new AlertsFetchError(`failed to get alerts from Thanos: ${message}`);
    }
    const errors: string[] = [];
    const ingresses = route.status?.ingress ?? [];
    for (const ingress of ingresses) {
      const host = ingress.host ?? '';
      try {
        return await get(`https://${host}${ALERTS_PATH}`);
      } catch (err) {
        errors.push(`${host}->${errorMessage(err)}`);
      }
    }
    const where = `${MONITORING_NAMESPACE}/${THANOS_ROUTE} Route`;
    const what =
      errors.length === 1
        ? `unable to get ${ALERTS_PATH} from URI in the ${where}`
        : `unable to get ${ALERTS_PATH} from any of ${errors.length} URIs in the ${where}`;
    throw new AlertsFetchError(`failed to get alerts from Thanos: ${what}: ${goAggregateText(errors)}`);
  }

  async function fromUrl(base: string): Promise<AlertsAnswer> {
    const url = `${base.replace(/\/+$/, '')}${ALERTS_PATH}`;
    try {
      return await get(url);
    } catch (err) {
      throw new AlertsFetchError(`failed to get alerts from ${url}: ${errorMessage(err)}`);
    }
  }

  return {
    async read() {
      try {
        await checkCredentials();
        const answer =
          options.prometheusUrl === undefined ? await fromRoute() : await fromUrl(options.prometheusUrl);
        return decodeAlerts(answer.body, {
          what: `the alerts answer of ${answer.url}`,
          ...(options.budget ? { budget: options.budget } : {}),
        });
      } catch (err) {
        if (!(err instanceof AlertsFetchError)) throw err;
        return { alerts: undefined, notice: alertsUnavailableNotice(err.message) };
      }
    },
    async close() {
      const a = agent;
      agent = undefined;
      if (a) await a.destroy();
    },
  };
}
