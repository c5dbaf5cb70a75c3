// The `tessera upgrade status` command: the imperative shell around the pure assessment. It gathers a snapshot
// (from files, or from the cluster like oc does), picks "now", assesses, and prints text identical to
// `oc adm upgrade status`, or the UpdateStatus object with -o json|yaml (the controller's, when it runs).
// Like oc, a line about alerts that could not be read comes first on stdout (stderr with -o json|yaml); other
// notes go to stderr.
// Only what rendering a snapshot as text needs is imported here; the live cluster's modules (Kubernetes client,
// undici for alerts) and the UpdateStatus object's (-o json|yaml) load where they are used, so a snapshot's start-up
// does not pay for them.
import type { ConnectionOverrides, KubeClient } from '../runtime/index.js';
import { ApiStatusError, InvalidArgumentError, ignoreNotFound, errorMessage } from '../runtime/light.js';
import { type AssessOptions, type UpdateStatusReport, assessUpdateStatus, snapshotNow } from './assess.js';
import type { AlertsReading } from './alerts.js';
import { NoClusterVersionError, UpdateStatusError } from './errors.js';
import { type Instant, MILLISECOND, parseTime } from './gotime.js';
import type {
  ClusterOperator,
  ClusterSnapshot,
  ClusterVersion,
  Deployment,
  MachineConfig,
  MachineConfigPool,
  Node,
} from './inputs.js';
import type { UpdateStatus } from './api/schema.js';
import { DETAILS_LEVELS, type DetailsLevel, renderUpdateStatus } from './render.js';
import { loadSnapshot, mcoImageOf } from './snapshot.js';
import { Annotations } from './nodestate.js';

export interface UpgradeStatusOptions {
  readonly details: DetailsLevel;
  /** Evaluation time; undefined: the snapshot's latest event, or the wall clock for a live cluster. */
  readonly now: Instant | undefined;
  readonly mockClusterVersion: string | undefined;
  readonly output: 'text' | 'json' | 'yaml';
  readonly watch: boolean;
  /** Refresh interval with watch (ms). */
  readonly intervalMs: number;
  readonly kubeconfig: string | undefined;
  /**
   * Live clusters: `auto` prints the controller's UpdateStatus when it is there and healthy, else computes here;
   * `updatestatus` requires it; `cluster` always computes here (byte-identical to oc).
   */
  readonly source: 'auto' | 'updatestatus' | 'cluster';
  /**
   * Live clusters: the Prometheus-compatible API to read alerts from (its `/api/v1/alerts`), with the kubeconfig
   * user's credentials; undefined: the `thanos-querier` Route in `openshift-monitoring`, as oc does.
   */
  readonly prometheusUrl?: string | undefined;
  /**
   * oc's connection flags (--context, --server, --token, --as...), applied over the kubeconfig for every request,
   * the alerts one included; undefined: none.
   */
  readonly connection?: ConnectionOverrides | undefined;
}

/** Where output goes; tests pass their own. */
export interface CommandIO {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Wall clock in Unix nanoseconds. */
  readonly clock: () => Instant;
  /** Resolves after `ms`, or early when the signal aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly signal: AbortSignal;
}

/** Default refresh interval with --watch (ms). */
export const DEFAULT_WATCH_INTERVAL_MS = 5_000;

/**
 * The flags of `tessera upgrade status` as commander gives them (src/updatestatus/cli.ts): --interval already
 * parsed to ms; the rest as typed, checked here.
 */
export interface UpgradeStatusFlags {
  readonly details?: string;
  readonly now?: string;
  readonly mockClusterversion?: string;
  readonly output?: string;
  readonly source?: string;
  readonly watch?: boolean;
  /** --interval in ms. */
  readonly interval?: number;
  readonly kubeconfig?: string;
  readonly prometheusUrl?: string;
  readonly context?: string;
  /** --server, already checked by parseServerUrl. */
  readonly server?: string;
  readonly certificateAuthority?: string;
  readonly insecureSkipTlsVerify?: boolean;
  readonly token?: string;
  readonly as?: string;
  /** --as-group, every occurrence. */
  readonly asGroup?: readonly string[];
  readonly asUid?: string;
}

export function parseUpgradeStatusOptions(raw: UpgradeStatusFlags): UpgradeStatusOptions {
  const details = raw.details ?? 'none';
  if (!(DETAILS_LEVELS as readonly string[]).includes(details)) {
    throw new InvalidArgumentError('--details', `${details} (must be one of ${DETAILS_LEVELS.join(', ')})`);
  }
  let now: Instant | undefined;
  const nowText = raw.now;
  if (nowText !== undefined) {
    now = parseTime(nowText);
    if (now === undefined || nowText === '')
      throw new InvalidArgumentError(
        '--now',
        `${nowText} is not an RFC 3339 time such as 2024-02-27T15:42:58Z`,
      );
  }
  const output = raw.output ?? 'text';
  if (output !== 'text' && output !== 'json' && output !== 'yaml') {
    throw new InvalidArgumentError('--output', `${output} (must be json or yaml)`);
  }
  const source = raw.source ?? 'auto';
  if (source !== 'auto' && source !== 'updatestatus' && source !== 'cluster') {
    throw new InvalidArgumentError('--source', `${source} (must be auto, updatestatus or cluster)`);
  }
  return {
    source,
    details: details as DetailsLevel,
    now,
    mockClusterVersion: raw.mockClusterversion,
    output,
    watch: raw.watch === true,
    intervalMs: raw.interval ?? DEFAULT_WATCH_INTERVAL_MS,
    kubeconfig: raw.kubeconfig,
    prometheusUrl: parsePrometheusUrl(raw.prometheusUrl),
    connection: {
      context: raw.context,
      server: raw.server,
      certificateAuthority: raw.certificateAuthority,
      insecureSkipTlsVerify: raw.insecureSkipTlsVerify,
      token: raw.token,
      impersonateUser: raw.as,
      impersonateGroups: raw.asGroup,
      impersonateUid: raw.asUid,
    },
  };
}

function parsePrometheusUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError(
      '--prometheus-url',
      `${text} is not a URL such as https://prometheus.example:9091`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new InvalidArgumentError('--prometheus-url', `${text} (must be an http or https URL)`);
  }
  return text;
}

function getOrUndefined<T>(client: KubeClient, path: string): Promise<T | undefined> {
  return ignoreNotFound(client.request<T>({ method: 'GET', path }));
}

async function listItems<T>(client: KubeClient, path: string): Promise<T[]> {
  const list = await getOrUndefined<{ items?: T[] }>(client, path);
  return list?.items ?? [];
}

/**
 * Reads what oc reads, and the MachineConfigNodes where the cluster serves them. MachineConfigs are fetched by the
 * names nodes reference, not listed (they are large).
 */
export async function loadLiveSnapshot(client: KubeClient): Promise<ClusterSnapshot> {
  const clusterVersion = await getOrUndefined<ClusterVersion>(
    client,
    '/apis/config.openshift.io/v1/clusterversions/version',
  );
  if (clusterVersion === undefined) throw new NoClusterVersionError();
  // Optional, as oc does not read them: 404 (not served, before OpenShift 4.19) or 403 (a user oc would serve)
  // leaves them out, and the annotations alone decide, which gives the same report.
  const machineConfigNodesRead = client
    .request<{ items?: NonNullable<ClusterSnapshot['machineConfigNodes']> }>({
      method: 'GET',
      path: '/apis/machineconfiguration.openshift.io/v1/machineconfignodes',
    })
    .then(
      (list) => list.items ?? [],
      (err: unknown) => {
        if (err instanceof ApiStatusError && (err.statusCode === 404 || err.statusCode === 403))
          return undefined;
        throw err;
      },
    );
  const [clusterOperators, machineConfigPools, nodes, deployment, machineConfigNodes] = await Promise.all([
    listItems<ClusterOperator>(client, '/apis/config.openshift.io/v1/clusteroperators'),
    listItems<MachineConfigPool>(client, '/apis/machineconfiguration.openshift.io/v1/machineconfigpools'),
    listItems<Node>(client, '/api/v1/nodes'),
    getOrUndefined<Deployment>(
      client,
      '/apis/apps/v1/namespaces/openshift-machine-config-operator/deployments/machine-config-operator',
    ),
    machineConfigNodesRead,
  ]);
  const names = new Set<string>();
  for (const node of nodes) {
    for (const key of [Annotations.currentConfig, Annotations.desiredConfig]) {
      const name = node.metadata?.annotations?.[key];
      if (name) names.add(name);
    }
  }
  const machineConfigs: MachineConfig[] = [];
  const queue = [...names];
  await Promise.all(
    Array.from({ length: Math.min(8, queue.length) }, async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        const mc = await getOrUndefined<MachineConfig>(
          client,
          `/apis/machineconfiguration.openshift.io/v1/machineconfigs/${encodeURIComponent(name)}`,
        );
        if (mc) machineConfigs.push(mc);
      }
    }),
  );
  return {
    clusterVersion,
    clusterOperators,
    machineConfigPools,
    machineConfigs,
    nodes,
    machineConfigNodes,
    alerts: undefined,
    mcoImagePullSpec: mcoImageOf(deployment),
  };
}

interface Source {
  /** One rendering of the command's output at this moment. */
  render(): Promise<string>;
  close(): Promise<void>;
}

async function formatObject(obj: UpdateStatus, output: 'json' | 'yaml'): Promise<string> {
  if (output === 'json') return `${JSON.stringify(obj, null, 2)}\n`;
  const { stringify } = await import('yaml');
  return stringify(obj);
}

/**
 * Assesses like oc: the cluster's state first; only when it is updating, alerts are read (oc never reads them
 * otherwise) and the assessment repeated with them. Returns the report and oc's notice about the alerts.
 */
async function assessWithAlerts(
  snapshot: ClusterSnapshot,
  now: Instant,
  readAlerts: () => Promise<AlertsReading>,
  options: AssessOptions,
): Promise<{ report: UpdateStatusReport; notice: string }> {
  const report = assessUpdateStatus({ ...snapshot, alerts: undefined }, now, options);
  if (!report.updating) return { report, notice: '' };
  const { alerts, notice } = await readAlerts();
  if (alerts === undefined) return { report, notice };
  return { report: assessUpdateStatus({ ...snapshot, alerts }, now, options), notice };
}

/** Text: oc's alerts notice is the first stdout line; with -o json|yaml it goes to stderr, keeping the object clean. */
async function present(
  opts: UpgradeStatusOptions,
  io: CommandIO,
  report: UpdateStatusReport,
  notice: string,
  now: Instant,
): Promise<string> {
  if (opts.output === 'text') return notice + renderUpdateStatus(report, opts.details);
  if (notice !== '') io.err(notice);
  const { projectUpdateStatus, updateStatusObject } = await import('./api/project.js');
  return formatObject(updateStatusObject(projectUpdateStatus(report, now)), opts.output);
}

function snapshotSource(opts: UpgradeStatusOptions, cvPath: string, io: CommandIO): Source {
  return {
    async render() {
      const { snapshot, alertsNotice } = await loadSnapshot(cvPath);
      const now = opts.now ?? snapshotNow(snapshot);
      // Like oc, judge node unavailability by the wall clock even for a snapshot.
      const { report, notice } = await assessWithAlerts(
        snapshot,
        now,
        () => Promise.resolve({ alerts: snapshot.alerts, notice: alertsNotice }),
        { unavailableAgeReference: io.clock() },
      );
      return present(opts, io, report, notice, now);
    },
    async close() {},
  };
}

// The Kubernetes client, undici and the UpdateStatus API load only here: rendering a snapshot never pays for them.
async function liveSource(opts: UpgradeStatusOptions, io: CommandIO): Promise<Source> {
  const [
    { KubeClient, loadKubeConfig },
    { createLiveAlertsReader },
    { isHealthyStatus, reportFromUpdateStatus },
    { GROUP, PLURAL, SINGLETON_NAME, VERSION },
  ] = await Promise.all([
    import('../runtime/index.js'),
    import('./alertsource.js'),
    import('./api/read.js'),
    import('./api/names.js'),
  ]);
  const kc = await loadKubeConfig(opts.kubeconfig, '--kubeconfig', opts.connection ?? {});
  const client = new KubeClient(kc, { userAgent: 'tessera-upgrade-status' });
  const alerts = createLiveAlertsReader(kc, client, { prometheusUrl: opts.prometheusUrl });
  const noted = new Set<string>();
  const note = (text: string) => {
    if (noted.has(text)) return;
    noted.add(text);
    io.err(text);
  };
  return {
    async render() {
      const now = opts.now ?? io.clock();
      if (opts.source !== 'cluster') {
        // The controller's view, when it runs and could gather its data.
        const stored = await getOrUndefined<UpdateStatus>(
          client,
          `/apis/${GROUP}/${VERSION}/${PLURAL}/${SINGLETON_NAME}`,
        ).catch((err: unknown) => {
          // Not there is no news (no controller runs); any other failure is named, then treated alike.
          note(
            `(could not read UpdateStatus cluster: ${errorMessage(err)}${opts.source === 'auto' ? '; computing the status here' : ''})\n`,
          );
          return undefined;
        });
        if (stored?.status && (opts.output !== 'text' || isHealthyStatus(stored.status))) {
          if (opts.output !== 'text') return formatObject(stored, opts.output);
          const report = reportFromUpdateStatus(stored.status, now, { livenessAt: io.clock() });
          if (report) {
            note(
              '(from UpdateStatus cluster, maintained by the update-status controller; --source=cluster computes it here)\n',
            );
            return renderUpdateStatus(report, opts.details);
          }
        }
        if (opts.source === 'updatestatus') {
          throw new UpdateStatusError(
            'TESSERA_UPDATESTATUS_NOT_AVAILABLE',
            'UpdateStatus cluster is missing or reports its controller unhealthy; use --source=cluster to compute the status here',
          );
        }
      }
      const snapshot = await loadLiveSnapshot(client);
      // oc judges node unavailability by the wall clock; with --now too, like the snapshot mode.
      const { report, notice } = await assessWithAlerts(snapshot, now, () => alerts.read(), {
        unavailableAgeReference: io.clock(),
      });
      return present(opts, io, report, notice, now);
    },
    async close() {
      await alerts.close();
      await client.close();
    },
  };
}

/** ANSI: cursor home, clear screen (what `watch` does between refreshes). */
const CLEAR_SCREEN = '\x1b[H\x1b[2J';

/** Runs the command; returns the exit code. Errors other than usage errors propagate to main's handler. */
export async function runUpgradeStatus(
  opts: UpgradeStatusOptions,
  io: CommandIO = processIO(),
): Promise<number> {
  const source = opts.mockClusterVersion
    ? snapshotSource(opts, opts.mockClusterVersion, io)
    : await liveSource(opts, io);
  try {
    if (!opts.watch) {
      io.out(await source.render());
      return 0;
    }
    while (!io.signal.aborted) {
      let text: string;
      try {
        text = await source.render();
      } catch (err) {
        text = `error: ${errorMessage(err)} (retrying)\n`;
      }
      io.out(`${CLEAR_SCREEN}${text}`);
      await io.sleep(opts.intervalMs, io.signal);
    }
    return 0;
  } finally {
    await source.close();
  }
}

function processIO(): CommandIO {
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  process.once('SIGTERM', () => controller.abort());
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    clock: () => BigInt(Date.now()) * MILLISECOND,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      }),
    signal: controller.signal,
  };
}
