// Wires a process together: API client, shared informers, controllers and other Runnables, leader election,
// probes/metrics, logs, and graceful shutdown. Start order: probe server -> start-up steps (e.g. installing a CRD
// that an informer lists), each retried until it succeeds -> caches and other non-leader runnables -> (after cache
// sync) leader election -> leader runnables (controllers). Shutdown (signal, SIGTERM or
// SIGINT) runs in reverse: stop intake and drain controllers, release the lease, stop caches/webhooks, close
// probes. Losing the lease is fatal: start() rejects with LeaderElectionLostError so the process exits and restarts
// clean, as client-go/controller-runtime do. A runnable that rejects also shuts everything down.
import os from 'node:os';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { retryForever } from './backoff.js';
import { SharedInformerFactory, type SharedInformerFactoryOptions } from './cache/informer-factory.js';
import { KubeClient } from './client.js';
import { Cluster, type ClusterOptions } from './cluster.js';
import { realClock, type Clock } from './clock.js';
import { Controller, type ControllerOptions } from './controller.js';
import { RuntimeError } from './errors.js';
import { KubeEventRecorder, type EventRecorderOptions } from './event-recorder.js';
import type { KubeConnection } from './kubeconfig.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
import { createLogger, isLogLevel, type LogFormat, type LogLevel, type Logger } from './logging.js';
import { MetricsAuthFilter } from './metrics-auth-filter.js';
import type { MetricsAuthLimits } from './metrics-auth.js';
import { MetricsServer } from './metrics-auth-server.js';
import { ProbeServer, type Check } from './probe-server.js';
import { waitForAbort, type Runnable, type StartupStep } from './runnable.js';
import type { WorkQueueMetricsProvider } from './workqueue/metrics.js';
import { prometheusWorkQueueMetrics } from './workqueue/prometheus-metrics.js';

export class LeaderElectionLostError extends RuntimeError {
  constructor(identity: string) {
    super(
      'TESSERA_LEADER_ELECTION',
      `leader election lost by ${identity}; exiting so a fresh process can compete again`,
    );
  }
}

export interface ManagerOptions {
  kubeConfig: KubeConnection;
  /** Process name for logs and the default lease name. Default: 'tessera'. */
  name?: string;
  /** Leader election for leader runnables; false runs them at once. Default: false. */
  leaderElection?:
    | false
    | (Partial<Omit<LeaderElectionOptions, 'client' | 'callbacks' | 'clock' | 'logger'>> & {
        leaseNamespace: string;
      });
  /**
   * Probe/metrics server; false disables it. Default: { host: '0.0.0.0', port: 8081 }. PUT /debug/loglevel is served
   * only on loopback: on `host` itself when it is loopback, else on 127.0.0.1:`debugPort` (default 8082, a free port
   * when `port` is 0; false: none). See probe-server.ts for why.
   */
  probes?: false | { host?: string; port?: number; debugPort?: number | false };
  /**
   * Where /metrics is served. Default (or no `bindAddress`): on the probe port, plain HTTP, unauthenticated
   * (development). With a `bindAddress`: on its own listener there, HTTPS behind TokenReview + SubjectAccessReview
   * (`get` on /metrics) unless `secure` is false, and no longer on the probe port. `bindAddress: false`: nowhere.
   */
  metrics?: MetricsServingOptions;
  /** Informer tuning (namespace, resync, watchdog...). */
  informers?: Omit<SharedInformerFactoryOptions, 'client' | 'clock' | 'logger'>;
  /** Initial log level. Default: 'info' (the CLI passes --log-level / $TESSERA_LOG_LEVEL). */
  logLevel?: LogLevel;
  /** Line format of the default logger (ignored when `logger` is given). Default: 'json'. */
  logFormat?: LogFormat;
  /** Default: a pino JSON logger on stdout. When given, setLogLevel only works if it has a writable `level`. */
  logger?: Logger;
  /** Stop on SIGTERM/SIGINT; SIGUSR2 toggles debug logs. Default: true. */
  handleSignals?: boolean;
  /** Longest wait for controllers to drain and the lease to be released (ms). Default: 30,000. */
  gracefulShutdownTimeoutMs?: number;
  clock?: Clock;
}

/** The metrics listener, as `--metrics-bind-address`, `--metrics-secure` and `--metrics-cert-dir` give it. */
export interface MetricsServingOptions {
  bindAddress?: { host: string; port: number } | false;
  /** HTTPS with authentication and authorization. Default: true. */
  secure?: boolean;
  /** tls.crt/tls.key (re-read when they change); unset: a self-signed certificate generated at start. */
  certDir?: string;
  /** Budgets of the authentication and authorization filter. */
  authLimits?: Partial<MetricsAuthLimits>;
}

/** The metrics flags as commander hands them to an action (registered by addMetricsFlags in src/cli/flags.ts). */
export interface MetricsFlags {
  metricsBindAddress?: { host: string; port: number } | false;
  /** Undefined unless --metrics-secure or --no-metrics-secure is given (secure then). */
  metricsSecure?: boolean;
  metricsCertDir?: string;
}

/** The Manager's `metrics` option from the metrics flags. */
export function metricsServing(flags: MetricsFlags): MetricsServingOptions {
  return {
    ...(flags.metricsBindAddress === undefined ? {} : { bindAddress: flags.metricsBindAddress }),
    ...(flags.metricsSecure === undefined ? {} : { secure: flags.metricsSecure }),
    ...(flags.metricsCertDir === undefined ? {} : { certDir: flags.metricsCertDir }),
  };
}

type LeveledLogger = Logger & { level?: string };

export class Manager {
  readonly client: KubeClient;
  readonly informers: SharedInformerFactory;
  readonly registry: Registry;
  /** Event recorders handed out, flushed on shutdown. */
  private readonly recorders: KubeEventRecorder[] = [];
  readonly queueMetrics: WorkQueueMetricsProvider;
  readonly logger: Logger;
  readonly clock: Clock;
  private readonly probes: ProbeServer | undefined;
  private readonly metricsServer: MetricsServer | undefined;
  private readonly runnables: Runnable[] = [];
  /** Other clusters (Manager.cluster), whose clients close with the Manager's. */
  private readonly clusters: Cluster[] = [];
  private readonly startupSteps: StartupStep[] = [];
  /** The start-up step under way; undefined before start() and once every step is done. */
  private startingUp: string | undefined;
  private readonly options: ManagerOptions;
  private readonly initialLevel: LogLevel;
  private leading = false;
  private shuttingDown = false;
  private started = false;

  constructor(options: ManagerOptions) {
    this.options = options;
    this.clock = options.clock ?? realClock;
    this.initialLevel = options.logLevel ?? 'info';
    this.logger =
      options.logger ??
      createLogger({ level: this.initialLevel, name: options.name ?? 'tessera', format: options.logFormat });
    this.client = new KubeClient(options.kubeConfig, { userAgent: `${options.name ?? 'tessera'}/manager` });
    this.registry = new Registry();
    collectDefaultMetrics({ register: this.registry });
    this.queueMetrics = prometheusWorkQueueMetrics(this.registry);
    this.informers = new SharedInformerFactory({
      ...options.informers,
      client: this.client,
      clock: this.clock,
      logger: this.logger,
    });
    const metrics = options.metrics?.bindAddress;
    if (metrics) {
      const secure = options.metrics?.secure ?? true;
      this.metricsServer = new MetricsServer({
        host: metrics.host,
        port: metrics.port,
        registry: this.registry,
        secure,
        certDir: options.metrics?.certDir,
        clock: this.clock,
        logger: this.logger,
        filter: secure
          ? new MetricsAuthFilter({
              client: this.client,
              limits: options.metrics?.authLimits,
              clock: this.clock,
              logger: this.logger,
            })
          : undefined,
      });
    }
    if (options.probes !== false) {
      this.probes = new ProbeServer({
        serveMetrics:
          metrics === undefined
            ? true
            : metrics === false
              ? false
              : {
                  movedTo: `${options.metrics?.secure === false ? 'http' : 'https'}://:${metrics.port}/metrics`,
                },
        host: options.probes?.host,
        port: options.probes?.port,
        debugPort: options.probes?.debugPort,
        logger: this.logger,
        registry: this.registry,
        getLogLevel: () => this.getLogLevel(),
        setLogLevel: (level) => this.setLogLevel(level),
      });
      this.probes.addHealthCheck('ping', () => true);
      this.probes.addReadyCheck(
        'startup',
        () => this.startingUp === undefined || `start-up step ${this.startingUp} has not completed`,
      );
      this.probes.addReadyCheck(
        'informers-synced',
        () => this.informers.hasSynced() || 'caches have not synced yet',
      );
      this.probes.addReadyCheck('shutdown', () => !this.shuttingDown || 'shutting down');
    }
  }

  /**
   * Adds work to run; leader runnables (needsLeaderElection) start only while leading. Call before start(), or from
   * a start-up step (what it adds starts with the rest, once the last step is done).
   */
  add(runnable: Runnable): void {
    this.runnables.push(runnable);
  }

  /**
   * Adds a step that start() runs, in the order added, after the probe server listens and before any informer or
   * runnable starts. A step that fails is retried with backoff (and logged) until it succeeds or the manager
   * stops: the process stays up, live and not ready, rather than exiting into a crash loop. Call before start().
   */
  addStartupStep(step: StartupStep): void {
    this.startupSteps.push(step);
  }

  /**
   * Another cluster (such as a hosted cluster), with its own client and informers, run by this Manager: its caches
   * start beside the Manager's on every replica, without gating /readyz or leader election (see cluster.ts), and
   * stop after the controllers drained. Call before start().
   */
  cluster(kubeConfig: KubeConnection, options: Pick<ClusterOptions, 'name' | 'informers'>): Cluster {
    const cluster = new Cluster({
      ...options,
      kubeConfig,
      userAgent: `${this.options.name ?? 'tessera'}/${options.name}`,
      clock: this.clock,
      logger: this.logger,
    });
    this.clusters.push(cluster);
    this.add(cluster);
    return cluster;
  }

  /** Creates a controller wired to this manager's logger, metrics and clock, and adds it. */
  newController<K = string>(options: ControllerOptions<K>): Controller<K> {
    const controller = new Controller<K>({
      logger: this.logger,
      registry: this.registry,
      queueMetrics: this.queueMetrics,
      clock: this.clock,
      ...options,
    });
    this.add(controller);
    return controller;
  }

  /** An event recorder reporting as `component` (events.k8s.io/v1 unless `api: 'v1'`). */
  eventRecorder(
    component: string,
    options: Omit<EventRecorderOptions, 'client' | 'component'> = {},
  ): KubeEventRecorder {
    const recorder = new KubeEventRecorder({
      clock: this.clock,
      logger: this.logger,
      registry: this.registry,
      ...options,
      client: this.client,
      component,
    });
    this.recorders.push(recorder);
    return recorder;
  }

  addHealthCheck(name: string, check: Check): void {
    this.probes?.addHealthCheck(name, check);
  }
  addReadyCheck(name: string, check: Check): void {
    this.probes?.addReadyCheck(name, check);
  }

  /** Bound probe port (0 before start or when disabled). */
  probePort(): number {
    return this.probes?.port() ?? 0;
  }

  /** Bound port of the metrics listener (0 before start, or when /metrics has none of its own). */
  metricsPort(): number {
    return this.metricsServer?.port() ?? 0;
  }

  /** Bound port of the loopback-only listener that accepts log level changes (0 when there is none). */
  debugPort(): number {
    return this.probes?.debugPort() ?? 0;
  }

  isLeader(): boolean {
    return this.leading;
  }

  getLogLevel(): LogLevel {
    const level = (this.logger as LeveledLogger).level;
    return level && isLogLevel(level) ? level : this.initialLevel;
  }

  /** Changes verbosity at run time (pino loggers). */
  setLogLevel(level: LogLevel): void {
    const logger = this.logger as LeveledLogger;
    const from = this.getLogLevel();
    if (from === level) return;
    // Logged before the change, so even a switch to 'silent' leaves a trace; at warn only when the new level hides
    // info lines (a routine change, such as a config's logVerbosity, stays at info).
    const quieter = level === 'silent' || level === 'fatal' || level === 'error' || level === 'warn';
    this.logger[quieter ? 'warn' : 'info']({ from, to: level }, 'log level changed');
    if ('level' in logger) logger.level = level;
  }

  /**
   * Runs until `signal` aborts (or SIGTERM/SIGINT), then shuts down gracefully. Rejects if a runnable failed or
   * leadership was lost.
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.started)
      throw new RuntimeError('TESSERA_INVALID_ARGUMENT', 'manager already started; create a new one');
    this.started = true;
    const stop = new AbortController();
    let failure: unknown;
    const fail = (err: unknown): void => {
      if (failure === undefined) failure = err;
      stop.abort();
    };
    const removeSignals = this.installSignals(stop);
    const onOuterAbort = (): void => stop.abort();
    signal?.addEventListener('abort', onOuterAbort, { once: true });
    if (signal?.aborted) stop.abort();

    const caches = new AbortController();
    const leaderWork = new AbortController();
    const election = new AbortController();
    const running: Promise<void>[] = [];
    const leaderRunning: Promise<void>[] = [];
    const startAll = (list: Runnable[], runSignal: AbortSignal, into: Promise<void>[]): void => {
      for (const r of list) {
        into.push(
          r.start(runSignal).catch((err: unknown) => {
            this.logger.error({ err, runnable: r.name ?? 'unnamed' }, 'runnable failed; shutting down');
            fail(err);
          }),
        );
      }
    };

    try {
      this.startingUp = this.startupSteps[0]?.name;
      await this.probes?.listen();
      await this.metricsServer?.listen();
      this.logger.info(
        { probePort: this.probePort(), debugPort: this.debugPort(), metricsPort: this.metricsPort() },
        'manager starting',
      );
      await this.runStartupSteps(stop.signal);
      if (!stop.signal.aborted)
        startAll(
          [this.informers, ...this.runnables.filter((r) => !r.needsLeaderElection)],
          caches.signal,
          running,
        );
      const synced = await this.informers.waitForCacheSync(stop.signal);
      if (synced) this.logger.info({}, 'caches synced');
      const leaders = this.runnables.filter((r) => r.needsLeaderElection);
      let electionDone: Promise<void> = Promise.resolve();
      if (!stop.signal.aborted) {
        const le = this.options.leaderElection;
        if (le) {
          const elector = new LeaderElector({
            ...le,
            leaseName: le.leaseName ?? this.options.name ?? 'tessera',
            identity: le.identity ?? `${os.hostname()}_${process.pid}`,
            client: this.client,
            clock: this.clock,
            logger: this.logger,
            callbacks: {
              onStartedLeading: (leadingSignal) => {
                this.leading = true;
                startAll(leaders, AbortSignal.any([leadingSignal, leaderWork.signal]), leaderRunning);
              },
              onStoppedLeading: () => {
                this.leading = false;
              },
              onNewLeader: (identity) => this.logger.info({ leader: identity }, 'leader observed'),
            },
          });
          electionDone = elector.run(election.signal).then(() => {
            if (!election.signal.aborted && !stop.signal.aborted)
              fail(new LeaderElectionLostError(elector.identity));
          });
        } else {
          this.leading = true;
          startAll(leaders, leaderWork.signal, leaderRunning);
        }
      }
      await waitForAbort(stop.signal);

      // Graceful shutdown, in reverse start order.
      this.shuttingDown = true;
      this.logger.info({}, 'shutting down: draining controllers');
      leaderWork.abort();
      const timeoutMs = this.options.gracefulShutdownTimeoutMs ?? 30_000;
      if (!(await this.within(Promise.all(leaderRunning), timeoutMs)))
        this.logger.warn({ timeoutMs }, 'controllers did not drain in time');
      // Events the drained controllers emitted are written before the client closes.
      if (!(await this.within(Promise.all(this.recorders.map((r) => r.flush())), timeoutMs)))
        this.logger.warn({ timeoutMs }, 'events were not all written in time');
      election.abort();
      if (!(await this.within(electionDone, timeoutMs)))
        this.logger.warn({ timeoutMs }, 'lease release timed out');
      caches.abort();
      await this.within(Promise.all(running), timeoutMs);
      this.logger.info({}, 'manager stopped');
    } finally {
      removeSignals();
      signal?.removeEventListener('abort', onOuterAbort);
      leaderWork.abort();
      election.abort();
      caches.abort();
      await this.probes?.close();
      await this.metricsServer?.close();
      await this.client.close();
      await Promise.all(this.clusters.map((c) => c.client.close()));
    }
    if (failure !== undefined) throw failure;
  }

  /** Runs the start-up steps in order, each until it succeeds; returns early once `signal` aborts. */
  private async runStartupSteps(signal: AbortSignal): Promise<void> {
    for (const step of this.startupSteps) {
      this.startingUp = step.name;
      const done = await retryForever(
        async () => {
          await step.run(signal);
          return true as const;
        },
        {
          what: `complete start-up step ${step.name}`,
          impact: 'no cache or controller starts, and /readyz is not ready, until it does',
          log: this.logger,
          signal,
          clock: this.clock,
        },
      );
      if (!done) return;
    }
    this.startingUp = undefined;
  }

  private async within(p: Promise<unknown>, ms: number): Promise<boolean> {
    let timer: { cancel(): void } | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = this.clock.setTimer(() => resolve(false), ms);
    });
    const result = await Promise.race([p.then(() => true as const), timeout]);
    timer?.cancel();
    return result;
  }

  private installSignals(stop: AbortController): () => void {
    if (this.options.handleSignals === false) return () => {};
    const onStop = (sig: NodeJS.Signals): void => {
      this.logger.info({ signal: sig }, 'received signal; shutting down gracefully');
      stop.abort();
    };
    const onUsr2 = (): void => this.setLogLevel(this.getLogLevel() === 'debug' ? this.initialLevel : 'debug');
    process.on('SIGTERM', onStop);
    process.on('SIGINT', onStop);
    process.on('SIGUSR2', onUsr2);
    return () => {
      process.off('SIGTERM', onStop);
      process.off('SIGINT', onStop);
      process.off('SIGUSR2', onUsr2);
    };
  }
}
