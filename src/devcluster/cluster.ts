// A real local Kubernetes control plane, envtest-style: etcd, kube-apiserver (RBAC, client-certificate auth),
// kube-controller-manager, kube-scheduler and kwok, each a child process on free loopback ports, with state in
// one directory (PKI, kubeconfigs, etcd data, logs, state.json with the pids). Several clusters can run at once
// under different names. The caller must call `stop()` (or `tessera dev down`); processes outlive this one.
import { X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { egressSelectorConfiguration } from './service-router.js';
import {
  binaryPaths,
  DEV_CLUSTER_BINARIES,
  ensureBinaries,
  REAL_NODE_BINARIES,
  requireBinaries,
  readComponentVersions,
  type BinaryPaths,
  type ComponentVersions,
} from './binaries.js';
import { DevClusterError } from './errors.js';
import { renderKubeconfig } from './kubeconfig.js';
import {
  defaultNodeSpecs,
  fakeNode,
  KWOK_NODE_ANNOTATION,
  KWOK_NODE_ANNOTATION_VALUE,
  type FakeNodeSpec,
} from './nodes.js';
import {
  createCertificateAuthority,
  generateSigningKeyPair,
  loadCertificateAuthority,
} from '../runtime/index.js';
import {
  createNodeNetwork,
  prepareRealNodeNetworks,
  realNodeSupportProblem,
  startRealNodes,
  stopRealNodes,
  type RealNodesState,
} from './real-nodes.js';
import {
  freePort,
  isRunning,
  processStartTicks,
  spawnComponent,
  stopProcess,
  waitUntilHealthy,
  type ComponentProcess,
} from './processes.js';

export type ComponentName =
  'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kwok' | 'registry';

export interface DevClusterOptions {
  /** Cluster name: the state directory's name, unique among running clusters. */
  readonly name: string;
  /** Parent of the state directories. Default: `defaultStateRoot()`. */
  readonly stateRoot?: string;
  /** Fake nodes to create: `'default'` (a control-plane node and two workers per architecture), `'none'`, or a list. */
  readonly nodes?: 'default' | 'none' | readonly FakeNodeSpec[];
  /** Start kube-controller-manager. Default: true. */
  readonly controllerManager?: boolean;
  /** Start kube-scheduler. Default: true. */
  readonly scheduler?: boolean;
  /** Start kwok (makes fake nodes Ready and scheduled pods Running). Default: true. */
  readonly kwok?: boolean;
  /**
   * Also start a local OCI registry (CNCF distribution, TLS + htpasswd) for images the cluster's pods
   * name. Default: false (registry tests start their own, with the auth mode they need).
   */
  readonly registry?: boolean;
  /** Progress messages (one line each). Default: none. */
  readonly log?: (message: string) => void;
  /** Build missing binaries instead of failing (interactive commands). Default: false. */
  readonly buildMissingBinaries?: boolean;
  /** How long to wait for each component to become healthy, in milliseconds. Default: 60 000. */
  readonly startTimeoutMs?: number;
  /**
   * Unix socket of a ServiceRouter (./service-router.ts): kube-apiserver then reaches Service-referenced webhooks
   * and aggregated APIs through it, so they can be served by processes on this machine. Default: none (such
   * calls fail, as nothing runs in kwok's pods). The router must be running while the cluster is.
   */
  readonly serviceRouterSocket?: string;
  /**
   * Real kubelet nodes to start beside the fake ones (./real-nodes.ts; root only). With any, kube-apiserver listens
   * on the host's end of the first node's link instead of 127.0.0.1, so the nodes and their pods reach it (also
   * through the `kubernetes` Service). Default: 0.
   */
  readonly realNodes?: number;
  /**
   * Serve kube-apiserver's `/debug/pprof` (to system:masters), for benchmark tools that profile where the API
   * server's CPU goes. Default: false, as a hardened control plane runs.
   */
  readonly apiServerProfiling?: boolean;
}

export interface DevClusterState {
  readonly name: string;
  readonly stateDir: string;
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly kubernetesVersion: string;
  readonly ports: Readonly<Record<string, number>>;
  readonly processes: Readonly<Partial<Record<ComponentName, ComponentProcess>>>;
  /** The local registry, when started with `registry: true`. */
  readonly registry?: LocalRegistryInfo;
  /** The real nodes, when started with `realNodes`. */
  readonly realNodes?: RealNodesState;
  readonly startedAt: string;
}

export interface LocalRegistryInfo {
  /** `127.0.0.1:PORT`: the registry part of image references. */
  readonly host: string;
  /** CA certificate that signed the registry's serving certificate. */
  readonly caFile: string;
  /** A `kubernetes.io/dockerconfigjson` payload with the registry's credentials. */
  readonly dockerConfigJsonFile: string;
}

export interface DevCluster extends DevClusterState {
  kubeConfig(): Promise<KubeConfig>;
  /** Stops and starts kube-apiserver on the same port and data (watch connections break, as in a real restart). */
  restartApiServer(): Promise<void>;
  /**
   * A control-plane outage: stops kube-apiserver, then etcd, and starts them again (same ports, same data) once
   * `during` settles. Every client sees connections refused meanwhile, as when a control-plane node goes down.
   */
  controlPlaneOutage(during: () => Promise<void>): Promise<void>;
  /** Stops every process; with `wipe`, deletes the state directory too. */
  stop(options?: { wipe?: boolean }): Promise<void>;
}

/** `$TESSERA_STATE_DIR`, else `$XDG_STATE_HOME/tessera/clusters`, else `~/.local/state/tessera/clusters`. */
export function defaultStateRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TESSERA_STATE_DIR) return env.TESSERA_STATE_DIR;
  return path.join(env.XDG_STATE_HOME ?? path.join(os.homedir(), '.local', 'state'), 'tessera', 'clusters');
}

const SERVICE_CIDR = '10.96.0.0/16';
const SERVICE_IP = '10.96.0.1';

interface Files {
  readonly dir: string;
  readonly pki: string;
  readonly logs: string;
  readonly etcdData: string;
  readonly state: string;
  readonly adminKubeconfig: string;
}

function filesOf(stateDir: string): Files {
  return {
    dir: stateDir,
    pki: path.join(stateDir, 'pki'),
    logs: path.join(stateDir, 'logs'),
    etcdData: path.join(stateDir, 'etcd'),
    state: path.join(stateDir, 'state.json'),
    adminKubeconfig: path.join(stateDir, 'kubeconfig'),
  };
}

/** Reads a cluster's recorded state, or undefined when it has none. */
export function readClusterState(name: string, stateRoot = defaultStateRoot()): DevClusterState | undefined {
  const file = filesOf(path.join(stateRoot, name)).state;
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as DevClusterState;
}

/** True when the cluster's kube-apiserver process is alive. */
export function isClusterRunning(state: DevClusterState): boolean {
  const apiserver = state.processes['kube-apiserver'];
  return apiserver !== undefined && isRunning(apiserver);
}

/** Stops a cluster by the pids recorded in its state (used by `tessera dev down`, from any process). */
export async function stopClusterByState(
  state: DevClusterState,
  options: { wipe?: boolean } = {},
): Promise<void> {
  // Real nodes first: their kubelets would otherwise report to a vanishing API server; they restore the host. A
  // problem there is reported after the control plane is stopped too.
  let realNodeProblem: unknown;
  if (state.realNodes) {
    await stopRealNodes(state.realNodes, binaryPaths().ctr).catch((err: unknown) => (realNodeProblem = err));
  }
  // Reverse start order: clients first, etcd last; the registry stands apart and goes first.
  const order: ComponentName[] = [
    'registry',
    'kwok',
    'kube-scheduler',
    'kube-controller-manager',
    'kube-apiserver',
    'etcd',
  ];
  for (const name of order) {
    const proc = state.processes[name];
    if (proc) await stopProcess(proc);
  }
  if (options.wipe) rmSync(state.stateDir, { recursive: true, force: true });
  else {
    const { realNodes: _stopped, ...rest } = state;
    writeState(filesOf(state.stateDir), { ...rest, processes: {} });
  }
  if (realNodeProblem) throw realNodeProblem;
}

function writeState(files: Files, state: DevClusterState): void {
  writeFileSync(files.state, JSON.stringify(state, null, 2) + '\n');
}

interface Pki {
  readonly caPem: string;
  readonly caFile: string;
  readonly caKeyFile: string;
  readonly file: (name: string) => string;
}

/** Generates the PKI once per state directory; a restarted cluster keeps its CA so old kubeconfigs stay valid. */
async function ensurePki(files: Files): Promise<Pki> {
  const file = (name: string): string => path.join(files.pki, name);
  const pki: Pki = {
    caPem: '',
    caFile: file('ca.crt'),
    caKeyFile: file('ca.key'),
    file,
  };
  if (existsSync(file('complete'))) {
    // Certificates are valid for a year; a state dir older than that gets a new PKI rather than TLS failures.
    const expires = new Date(new X509Certificate(readFileSync(file('apiserver.crt'))).validTo);
    if (expires.getTime() - Date.now() > 30 * 24 * 60 * 60 * 1000) {
      return { ...pki, caPem: readFileSync(pki.caFile, 'utf8') };
    }
    rmSync(files.pki, { recursive: true, force: true });
  }
  mkdirSync(files.pki, { recursive: true, mode: 0o700 });
  const ca = await createCertificateAuthority('tessera-dev-ca');
  const write = (name: string, text: string, mode = 0o600): void => writeFileSync(file(name), text, { mode });
  write('ca.crt', ca.certPem, 0o644);
  write('ca.key', ca.keyPem);
  const serving = await ca.issue({
    commonName: 'kube-apiserver',
    usage: 'server',
    dnsNames: [
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ],
    ipAddresses: ['127.0.0.1', SERVICE_IP],
  });
  write('apiserver.crt', serving.certPem, 0o644);
  write('apiserver.key', serving.keyPem);
  const components = await ca.issue({
    commonName: 'localhost',
    usage: 'server',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
  });
  write('components.crt', components.certPem, 0o644);
  write('components.key', components.keyPem);
  const identities: Array<[string, string, string[]]> = [
    ['admin', 'tessera-admin', ['system:masters']],
    ['kube-controller-manager', 'system:kube-controller-manager', []],
    ['kube-scheduler', 'system:kube-scheduler', []],
    ['kwok', 'kwok', ['system:masters']],
    ['apiserver-kubelet-client', 'kube-apiserver-kubelet-client', ['system:masters']],
  ];
  for (const [fileName, commonName, organizations] of identities) {
    const cert = await ca.issue({ commonName, organizations, usage: 'client' });
    write(`${fileName}.crt`, cert.certPem, 0o644);
    write(`${fileName}.key`, cert.keyPem);
  }
  const sa = await generateSigningKeyPair();
  write('sa.key', sa.privateKeyPem);
  write('sa.pub', sa.publicKeyPem, 0o644);
  write('complete', new Date().toISOString());
  return { ...pki, caPem: ca.certPem };
}

function httpGet(
  url: string,
  tls?: { ca: string; cert: string; key: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage): void => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    };
    const req = tls
      ? https.get(url, { ca: tls.ca, cert: tls.cert, key: tls.key, timeout: 2_000 }, onResponse)
      : http.get(url, { timeout: 2_000 }, onResponse);
    req.on('timeout', () =>
      req.destroy(
        new DevClusterError('TESSERA_DEVCLUSTER_PROBE_TIMEOUT', `GET ${url}: no answer within 2 s`),
      ),
    );
    req.on('error', reject);
  });
}

/**
 * Starts a new cluster (or restarts a stopped one with the same name, keeping its data). Ports are picked free
 * just before use; when another process takes one first (a component fails to bind), everything started is
 * stopped and the start is retried with new ports, up to three attempts.
 */
export async function startDevCluster(options: DevClusterOptions): Promise<DevCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevClusterOnce(options);
    } catch (err) {
      const portClash = err instanceof DevClusterError && /address already in use/i.test(err.message);
      if (!portClash || attempt >= 3) throw err;
      options.log?.(`a port was taken by another process; retrying with new ports (attempt ${attempt + 1})`);
    }
  }
}

function startDevClusterOnce(options: DevClusterOptions): Promise<DevCluster> {
  return ClusterStart.prepare(options).then((start) => start.run());
}

interface ComponentTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * One attempt at starting a cluster: the state every step shares (files, PKI, ports, started processes) and the
 * steps, in order: etcd, kube-apiserver, then the other components at once, then the cluster's first objects.
 * On any failure, everything this attempt started is stopped.
 */
class ClusterStart {
  private readonly log: (message: string) => void;
  private readonly timeoutMs: number;
  private readonly server: string;
  private readonly adminTls: ComponentTls;
  private readonly processes: Partial<Record<ComponentName, ComponentProcess>> = {};
  private registry: LocalRegistryInfo | undefined;
  /** Where kube-apiserver listens: 127.0.0.1, or with real nodes the host's end of the first node's link. */
  private readonly apiAddress: string;

  private constructor(
    private readonly options: DevClusterOptions,
    private readonly binaries: BinaryPaths,
    private readonly versions: ComponentVersions,
    private readonly files: Files,
    private readonly pki: Pki,
    private readonly ports: ClusterPorts,
    private realNodes: RealNodesState | undefined,
  ) {
    this.log = options.log ?? ((): void => undefined);
    this.timeoutMs = options.startTimeoutMs ?? 60_000;
    this.apiAddress = realNodes?.nodes[0]?.addresses.hostIp ?? '127.0.0.1';
    this.server = `https://${this.apiAddress}:${ports.apiserver}`;
    this.adminTls = {
      ca: pki.caPem,
      cert: readFileSync(pki.file('admin.crt'), 'utf8'),
      key: readFileSync(pki.file('admin.key'), 'utf8'),
    };
  }

  /** Checks the cluster is not running, creates its directories and PKI, and picks free ports. */
  static async prepare(options: DevClusterOptions): Promise<ClusterStart> {
    const realNodeCount = options.realNodes ?? 0;
    const unsupported = realNodeCount > 0 ? realNodeSupportProblem() : undefined;
    if (unsupported) throw new DevClusterError('TESSERA_DEVCLUSTER_REAL_NODES_UNSUPPORTED', unsupported);
    const names = realNodeCount > 0 ? [...DEV_CLUSTER_BINARIES, ...REAL_NODE_BINARIES] : DEV_CLUSTER_BINARIES;
    const binaries = options.buildMissingBinaries
      ? await ensureBinaries(names)
      : requireBinaries(binaryPaths(), names);
    const versions = readComponentVersions();
    const stateRoot = options.stateRoot ?? defaultStateRoot();
    const files = filesOf(path.join(stateRoot, options.name));
    const previous = readClusterState(options.name, stateRoot);
    if (previous && isClusterRunning(previous)) {
      throw new DevClusterError(
        'TESSERA_DEVCLUSTER_ALREADY_RUNNING',
        `cluster "${options.name}" is already running (${previous.server}); stop it with \`tessera dev down --name ${options.name}\``,
      );
    }
    // A cluster that was not stopped cleanly may have left real nodes behind: clean up before reusing its state.
    if (previous?.realNodes) await stopRealNodes(previous.realNodes, binaries.ctr);
    for (const dir of [files.dir, files.logs, files.etcdData])
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    const pki = await ensurePki(files);
    const realNodes =
      realNodeCount > 0
        ? await prepareRealNodeNetworks(
            {
              clusterName: options.name,
              stateDir: files.dir,
              count: realNodeCount,
            },
            previous?.realNodes,
          )
        : undefined;
    const ports: ClusterPorts = {
      etcdClient: await freePort(),
      etcdPeer: await freePort(),
      apiserver: await freePort(),
      controllerManager: await freePort(),
      scheduler: await freePort(),
      kwok: await freePort(),
    };
    return new ClusterStart(options, binaries, versions, files, pki, ports, realNodes);
  }

  async run(): Promise<DevCluster> {
    try {
      if (this.realNodes) await this.createRealNodeNetworks(this.realNodes);
      this.log(`starting etcd ${this.versions.etcd}`);
      await this.startEtcd();
      this.log(`starting kube-apiserver ${this.versions.kubernetes}`);
      await this.startApiServer();
      this.writeKubeconfig('kubeconfig', 'admin');
      await this.startOtherComponents();
      this.writeState();
      const cluster = handle(this.snapshot(), this, this.processes, this.files);
      await this.createFirstObjects(cluster);
      if (this.realNodes) {
        this.realNodes = await startRealNodes(
          this.realNodes,
          {
            clusterName: this.options.name,
            stateDir: this.files.dir,
            server: this.server,
            caFile: this.pki.caFile,
            caKeyFile: this.pki.caKeyFile,
            ...(this.registry ? { registry: this.registry } : {}),
            binaries: this.binaries,
            kubernetesVersion: this.versions.kubernetes,
            timeoutMs: this.timeoutMs,
            log: this.log,
          },
          () => cluster.kubeConfig(),
          (state) => {
            this.realNodes = state;
            this.writeState();
          },
        );
        return handle(this.snapshot(), this, this.processes, this.files);
      }
      return cluster;
    } catch (err) {
      await stopClusterByState({ ...this.snapshot(), processes: this.processes }, {});
      throw err;
    }
  }

  private snapshot(): DevClusterState {
    return {
      name: this.options.name,
      stateDir: this.files.dir,
      server: this.server,
      kubeconfigPath: this.files.adminKubeconfig,
      kubernetesVersion: this.versions.kubernetes,
      ports: this.ports,
      processes: { ...this.processes },
      ...(this.registry ? { registry: this.registry } : {}),
      ...(this.realNodes ? { realNodes: this.realNodes } : {}),
      startedAt: new Date().toISOString(),
    };
  }

  private writeState(): void {
    writeState(this.files, this.snapshot());
  }

  /**
   * Each node's network namespace and link, recorded first so a failure cleans them up; and a serving certificate
   * for the address kube-apiserver then listens on.
   */
  private async createRealNodeNetworks(realNodes: RealNodesState): Promise<void> {
    this.writeState();
    for (const node of realNodes.nodes) await createNodeNetwork(node);
    const ca = await loadCertificateAuthority(this.pki.caPem, readFileSync(this.pki.caKeyFile, 'utf8'));
    const serving = await ca.issue({
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
      ipAddresses: ['127.0.0.1', SERVICE_IP, this.apiAddress],
    });
    writeFileSync(this.pki.file('apiserver-real-nodes.crt'), serving.certPem, { mode: 0o644 });
    writeFileSync(this.pki.file('apiserver-real-nodes.key'), serving.keyPem, { mode: 0o600 });
  }

  private logFile(name: string): string {
    return path.join(this.files.logs, `${name}.log`);
  }

  /** Writes a kubeconfig for one of the PKI's client identities and returns its path. */
  private writeKubeconfig(fileName: string, identity: string): string {
    const target = path.join(this.files.dir, fileName);
    const text = renderKubeconfig({
      clusterName: this.options.name,
      server: this.server,
      caPem: this.pki.caPem,
      user: identity,
      clientCertPem: readFileSync(this.pki.file(`${identity}.crt`), 'utf8'),
      clientKeyPem: readFileSync(this.pki.file(`${identity}.key`), 'utf8'),
    });
    writeFileSync(target, text, { mode: 0o600 });
    return target;
  }

  /** Spawns a component, records it in the state file's process list, and waits until `healthy`. */
  private spawn(
    name: ComponentName,
    binary: string,
    args: string[],
    healthy: () => Promise<boolean>,
  ): Promise<void> {
    const proc = spawnComponent({ name, binary, args, logFile: this.logFile(name) });
    this.processes[name] = proc;
    return waitUntilHealthy(proc, healthy, this.timeoutMs);
  }

  /** Also restarts it (DevCluster.controlPlaneOutage): same port, same data. */
  async startEtcd(): Promise<void> {
    const proc = spawnComponent({
      name: 'etcd',
      binary: this.binaries.etcd,
      args: etcdArgs(this.ports, this.files),
      logFile: this.logFile('etcd'),
    });
    this.processes.etcd = proc;
    this.writeState();
    await waitUntilHealthy(
      proc,
      async () => (await httpGet(`http://127.0.0.1:${this.ports.etcdClient}/health`)).status === 200,
      this.timeoutMs,
    );
  }

  /** Also restarts it (DevCluster.restartApiServer): same port, same data. */
  async startApiServer(): Promise<void> {
    const proc = spawnComponent({
      name: 'kube-apiserver',
      binary: this.binaries['kube-apiserver'],
      args: apiServerArgs(
        this.ports,
        this.pki,
        this.files,
        this.options.serviceRouterSocket,
        this.realNodes ? this.apiAddress : undefined,
        this.options.apiServerProfiling ?? false,
      ),
      logFile: this.logFile('kube-apiserver'),
    });
    this.processes['kube-apiserver'] = proc;
    this.writeState();
    await waitUntilHealthy(
      proc,
      async () => (await httpGet(`${this.server}/readyz`, this.adminTls)).status === 200,
      this.timeoutMs,
    );
  }

  /** Starts the enabled components at once; settles every start before failing, so cleanup knows each process. */
  private async startOtherComponents(): Promise<void> {
    const started: Array<Promise<void>> = [];
    if (this.options.controllerManager ?? true) started.push(this.startControllerManager());
    if (this.options.scheduler ?? true) started.push(this.startScheduler());
    if (this.options.kwok ?? true) started.push(this.startKwok());
    if (this.options.registry) started.push(this.startRegistry());
    this.log('waiting for the other components to become healthy');
    const results = await Promise.allSettled(started);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private startControllerManager(): Promise<void> {
    const kubeconfig = this.writeKubeconfig('kube-controller-manager.kubeconfig', 'kube-controller-manager');
    const healthz = `https://127.0.0.1:${this.ports.controllerManager}/healthz`;
    return this.spawn(
      'kube-controller-manager',
      this.binaries['kube-controller-manager'],
      controllerManagerArgs(kubeconfig, this.ports, this.pki),
      async () => (await httpGet(healthz, this.adminTls)).status === 200,
    );
  }

  private startScheduler(): Promise<void> {
    const kubeconfig = this.writeKubeconfig('kube-scheduler.kubeconfig', 'kube-scheduler');
    const healthz = `https://127.0.0.1:${this.ports.scheduler}/healthz`;
    return this.spawn(
      'kube-scheduler',
      this.binaries['kube-scheduler'],
      schedulerArgs(kubeconfig, this.ports, this.pki),
      async () => (await httpGet(healthz, this.adminTls)).status === 200,
    );
  }

  private startKwok(): Promise<void> {
    const kubeconfig = this.writeKubeconfig('kwok.kubeconfig', 'kwok');
    return this.spawn(
      'kwok',
      this.binaries.kwok,
      kwokArgs(kubeconfig, this.ports, this.binaries.kwokStages),
      async () => (await httpGet(`http://127.0.0.1:${this.ports.kwok}/healthz`)).status === 200,
    );
  }

  private async startRegistry(): Promise<void> {
    const { startLocalRegistry } = await import('./registry.js');
    const dir = path.join(this.files.dir, 'registry');
    const local = await startLocalRegistry({ stateDir: dir, auth: 'htpasswd' });
    const dockerConfigJsonFile = path.join(dir, 'dockerconfig.json');
    writeFileSync(dockerConfigJsonFile, local.dockerConfigJson(), { mode: 0o600 });
    const startTicks = processStartTicks(local.pid);
    this.processes.registry = {
      name: 'registry',
      pid: local.pid,
      logFile: local.logFile,
      ...(startTicks ? { startTicks } : {}),
    };
    this.registry = { host: local.host, caFile: local.caFile, dockerConfigJsonFile };
  }

  /** Waits for the `default` service account and creates the fake nodes, so the cluster is usable. */
  private async createFirstObjects(cluster: DevCluster): Promise<void> {
    if (this.options.controllerManager ?? true) {
      // Pods are refused until the service-account controller creates `default`.
      await waitForDefaultServiceAccount(await cluster.kubeConfig(), this.timeoutMs);
    }
    const nodes = this.options.nodes;
    const nodeSpecs =
      nodes === undefined || nodes === 'default' ? defaultNodeSpecs() : nodes === 'none' ? [] : nodes;
    if (nodeSpecs.length > 0) {
      this.log(`creating ${nodeSpecs.length} fake nodes`);
      await createFakeNodes(await cluster.kubeConfig(), nodeSpecs, this.versions.kubernetes);
    }
  }
}

// A type, not an interface: it must be assignable to DevClusterState's Record of ports.
type ClusterPorts = {
  readonly etcdClient: number;
  readonly etcdPeer: number;
  readonly apiserver: number;
  readonly controllerManager: number;
  readonly scheduler: number;
  readonly kwok: number;
};

function etcdArgs(ports: ClusterPorts, files: Files): string[] {
  return [
    '--name=default',
    `--data-dir=${files.etcdData}`,
    `--listen-client-urls=http://127.0.0.1:${ports.etcdClient}`,
    `--advertise-client-urls=http://127.0.0.1:${ports.etcdClient}`,
    `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
    `--initial-cluster=default=http://127.0.0.1:${ports.etcdPeer}`,
    // A development store: durability across power loss is not worth the fsync latency here.
    '--unsafe-no-fsync',
    '--quota-backend-bytes=4294967296',
    '--log-level=warn',
  ];
}

function controllerManagerArgs(kubeconfig: string, ports: ClusterPorts, pki: Pki): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${ports.controllerManager}`,
    `--tls-cert-file=${pki.file('components.crt')}`,
    `--tls-private-key-file=${pki.file('components.key')}`,
    `--client-ca-file=${pki.caFile}`,
    `--root-ca-file=${pki.caFile}`,
    `--service-account-private-key-file=${pki.file('sa.key')}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--use-service-account-credentials=true',
    '--leader-elect=false',
    '--controllers=*',
    '--v=1',
  ];
}

function schedulerArgs(kubeconfig: string, ports: ClusterPorts, pki: Pki): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${ports.scheduler}`,
    `--tls-cert-file=${pki.file('components.crt')}`,
    `--tls-private-key-file=${pki.file('components.key')}`,
    `--client-ca-file=${pki.caFile}`,
    '--leader-elect=false',
    '--v=1',
  ];
}

/**
 * Explicit stage files (kwok's release defaults) keep kwok from reading ~/.kwok/kwok.yaml: nodes become Ready and
 * renew their Leases, pods bound to them become Running, and deleted pods go away.
 */
function kwokArgs(kubeconfig: string, ports: ClusterPorts, stages: readonly string[]): string[] {
  return [
    ...stages.map((stage) => `--config=${stage}`),
    '--node-lease-duration-seconds=40',
    `--kubeconfig=${kubeconfig}`,
    `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=${KWOK_NODE_ANNOTATION_VALUE}`,
    `--server-address=127.0.0.1:${ports.kwok}`,
    '--cidr=10.244.0.0/16',
    '--node-ip=127.0.0.1',
  ];
}

function apiServerArgs(
  ports: ClusterPorts,
  pki: Pki,
  files: Files,
  serviceRouterSocket?: string,
  realNodeAddress?: string,
  profiling = false,
): string[] {
  const egress: string[] = [];
  if (serviceRouterSocket) {
    const file = path.join(files.dir, 'egress-selector.yaml');
    writeFileSync(file, egressSelectorConfiguration(serviceRouterSocket));
    egress.push(`--egress-selector-config-file=${file}`);
  }
  // With real nodes: listen where the nodes and their pods reach it, publish that address as the `kubernetes`
  // Service's endpoint (kube-proxy routes 10.96.0.1 there), dial kubelets by their InternalIP, and dial webhook,
  // conversion and aggregated API Services at their endpoints (pod IPs, which the host routes to each node), as a
  // control plane without kube-proxy does: this machine has no route to the Service range, which every cluster on it
  // shares.
  const listen = realNodeAddress
    ? [
        `--bind-address=${realNodeAddress}`,
        `--advertise-address=${realNodeAddress}`,
        '--endpoint-reconciler-type=lease',
        '--kubelet-preferred-address-types=InternalIP,Hostname',
        '--enable-aggregator-routing=true',
        `--tls-cert-file=${pki.file('apiserver-real-nodes.crt')}`,
        `--tls-private-key-file=${pki.file('apiserver-real-nodes.key')}`,
      ]
    : [
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        // The default reconciler refuses a loopback advertise address; in-cluster clients are not used here.
        '--endpoint-reconciler-type=none',
        `--tls-cert-file=${pki.file('apiserver.crt')}`,
        `--tls-private-key-file=${pki.file('apiserver.key')}`,
      ];
  return [
    ...egress,
    `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
    ...listen,
    `--secure-port=${ports.apiserver}`,
    `--client-ca-file=${pki.caFile}`,
    `--kubelet-client-certificate=${pki.file('apiserver-kubelet-client.crt')}`,
    `--kubelet-client-key=${pki.file('apiserver-kubelet-client.key')}`,
    '--authorization-mode=Node,RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${pki.file('sa.pub')}`,
    `--service-account-signing-key-file=${pki.file('sa.key')}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--allow-privileged=true',
    `--profiling=${profiling}`,
    `--cert-dir=${path.join(files.dir, 'apiserver-certs')}`,
    '--v=1',
  ];
}

function handle(
  state: DevClusterState,
  start: Pick<ClusterStart, 'startApiServer' | 'startEtcd'>,
  processes: Partial<Record<ComponentName, ComponentProcess>>,
  files: Files,
): DevCluster {
  return {
    ...state,
    get processes() {
      return { ...processes };
    },
    async kubeConfig(): Promise<KubeConfig> {
      const { KubeConfig } = await import('@kubernetes/client-node');
      const kc = new KubeConfig();
      kc.loadFromFile(state.kubeconfigPath);
      return kc;
    },
    async restartApiServer(): Promise<void> {
      const proc = processes['kube-apiserver'];
      if (proc) await stopProcess(proc);
      await start.startApiServer();
      writeState(files, { ...state, processes: { ...processes } });
    },
    async controlPlaneOutage(during: () => Promise<void>): Promise<void> {
      for (const name of ['kube-apiserver', 'etcd'] as const) {
        const proc = processes[name];
        if (proc) await stopProcess(proc);
      }
      try {
        await during();
      } finally {
        await start.startEtcd();
        await start.startApiServer();
        writeState(files, { ...state, processes: { ...processes } });
      }
    },
    async stop(options: { wipe?: boolean } = {}): Promise<void> {
      await stopClusterByState({ ...state, processes: { ...processes } }, options);
    },
  };
}

async function waitForDefaultServiceAccount(kc: KubeConfig, timeoutMs: number): Promise<void> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(CoreV1Api);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' });
      return;
    } catch (err) {
      if (Date.now() > deadline) {
        throw new DevClusterError(
          'TESSERA_DEVCLUSTER_START_FAILED',
          'kube-controller-manager did not create the default service account; see its log in the state dir',
          { cause: err },
        );
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Creates (or leaves in place) fake nodes and waits until kwok reports each Ready. */
export async function createFakeNodes(
  kc: KubeConfig,
  specs: readonly FakeNodeSpec[],
  kubeletVersion: string,
  timeoutMs = 60_000,
): Promise<void> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(CoreV1Api);
  const names = new Set(specs.map((s) => s.name));
  // Bounded parallelism keeps a 100-node topology fast without flooding a freshly started apiserver.
  const queue = [...specs];
  const worker = async (): Promise<void> => {
    for (let spec = queue.shift(); spec; spec = queue.shift()) {
      try {
        await core.createNode({ body: fakeNode(spec, kubeletVersion) });
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await core.listNode();
    const ready = list.items.filter(
      (n) =>
        names.has(n.metadata?.name ?? '') &&
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    ).length;
    if (ready === names.size) return;
    if (Date.now() > deadline) {
      throw new DevClusterError(
        'TESSERA_DEVCLUSTER_START_FAILED',
        `only ${ready} of ${names.size} fake nodes became Ready within ${timeoutMs / 1000} s; is kwok running? see its log in the state dir`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
