// Real kubelet nodes beside kwok's (`tessera dev up --real-nodes[=N]`): per node, containerd (Go-built, runc from
// the host) in the host's network namespace, and the kubelet, kube-proxy and the pods' bridge in a network
// namespace of the node's own, joined to the host by a veth pair. Everything a node mounts is under its state
// directory, every process it runs is in one cgroup, and the global kernel settings the kubelet changes are
// recorded first: `dev down` ends the processes, unmounts, drops the namespace (and with it the bridge, the veth,
// its routes and every iptables rule) and writes the settings back. Needs root; ./real-node-config.ts holds the
// configuration as data.
import { execFile } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import type { BinaryPaths } from './binaries.js';
import { CLUSTER_DOMAIN, clusterResolvConf } from './cluster-dns.js';
import { DevClusterError } from './errors.js';
import { renderKubeconfig } from './kubeconfig.js';
import { filesImage, ociLayoutArchive } from './oci-archive.js';
import {
  CONTAINERD_SOCKET_ROOT,
  KUBELET_GLOBAL_SYSCTLS,
  PAUSE_IMAGE,
  containerdSocketPath,
  cniBridgeConfig,
  cniPluginWrapper,
  containerdConfig,
  hostUsesSlot,
  kubeProxyConfiguration,
  kubeletConfiguration,
  kubeletSocketPathProblem,
  nodeAddresses,
  nodeCgroup,
  realNodeDir,
  registryHostsToml,
  sysctlPath,
  type RealNodeAddresses,
} from './real-node-config.js';
import {
  SLOT_LOCK_DIR,
  addSlotOwners,
  claimNodeSlots,
  recordSysctlBaseline,
  releaseNodeSlots,
  takeSysctlsToRestore,
} from './real-node-slots.js';
import {
  isAlive,
  isRunning,
  processStartTicks,
  spawnComponent,
  stopProcess,
  tesseraCliCommand,
  waitUntilHealthy,
  type ComponentProcess,
} from './processes.js';
import { loadCertificateAuthority } from '../runtime/index.js';

/** cluster-dns runs once per cluster, with the first node. */
export type RealNodeComponent = 'containerd' | 'kubelet' | 'kube-proxy' | 'cluster-dns';

export interface RealNodeState {
  readonly name: string;
  readonly dir: string;
  /** The node's network namespace, bind-mounted on this file (no /run/netns entry). */
  readonly netnsFile: string;
  readonly addresses: RealNodeAddresses;
  /** Its cgroup under every hierarchy. */
  readonly cgroup: string;
  readonly processes: Partial<Record<RealNodeComponent, ComponentProcess>>;
}

export interface RealNodesState {
  readonly nodes: readonly RealNodeState[];
  /**
   * The global sysctls as found before the first real node on this machine started (recorded machine-wide by the
   * first of the clusters running at once); the last cluster's `dev down` writes them back.
   */
  readonly sysctls: Readonly<Record<string, string>>;
  /** Whether /run/containerd existed before (the shims keep their sockets there). */
  readonly runContainerdExisted: boolean;
}

export interface RealNodeClusterInfo {
  readonly clusterName: string;
  readonly stateDir: string;
  readonly server: string;
  readonly caFile: string;
  readonly caKeyFile: string;
  readonly registry?: {
    readonly host: string;
    readonly caFile: string;
    /** The registry's credentials, given to the node as a cluster's global pull secret is (below). */
    readonly dockerConfigJsonFile?: string;
  };
  readonly binaries: BinaryPaths;
  readonly kubernetesVersion: string;
  readonly timeoutMs: number;
  readonly log: (message: string) => void;
}

/** `process.arch` as Kubernetes and OCI spell it. */
export function hostArchitecture(arch: string = process.arch): string {
  const names: Readonly<Record<string, string>> = {
    x64: 'amd64',
    arm64: 'arm64',
    ppc64: 'ppc64le',
    s390x: 's390x',
  };
  return names[arch] ?? arch;
}

export function realNodeName(index: number): string {
  return `real-${hostArchitecture()}-${index}`;
}

const RUNC_CANDIDATES = ['/usr/sbin/runc', '/usr/bin/runc', '/usr/local/sbin/runc', '/usr/local/bin/runc'];
const TOOLS = ['ip', 'nsenter', 'unshare', 'iptables', 'mount', 'umount'] as const;

function findOnPath(tool: string): string | undefined {
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin', '/usr/bin', '/bin']);
  return dirs.map((d) => path.join(d, tool)).find((file) => existsSync(file));
}

/**
 * Why this machine cannot run real nodes, or undefined when it can: root (namespaces, cgroups, mounts), runc and
 * the iproute2/util-linux/iptables tools. The message names what to install.
 */
export function realNodeSupportProblem(uid = process.getuid?.()): string | undefined {
  if (uid !== 0) {
    return 'real nodes need root (they create a network namespace, cgroups and mounts); run as root, or use kwok nodes only';
  }
  const missing: string[] = TOOLS.filter((tool) => findOnPath(tool) === undefined);
  if (!RUNC_CANDIDATES.some((file) => existsSync(file))) missing.push('runc');
  if (missing.length > 0) {
    return `real nodes need ${missing.join(', ')}; on Debian: apt-get install -y runc iproute2 iptables util-linux`;
  }
  return undefined;
}

function runc(): string {
  return RUNC_CANDIDATES.find((file) => existsSync(file)) ?? 'runc';
}

function run(command: string, args: readonly string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        reject(
          new DevClusterError(
            'TESSERA_DEVCLUSTER_REAL_NODE_FAILED',
            `${command} ${args.join(' ')} failed: ${stderr.trim() || err.message}`,
            { cause: err },
          ),
        );
      } else resolve(stdout);
    });
  });
}

const inNetns = (netnsFile: string, command: string, args: readonly string[]): Promise<string> =>
  run('nsenter', [`--net=${netnsFile}`, command, ...args]);

function readSysctls(): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of KUBELET_GLOBAL_SYSCTLS) {
    try {
      values[name] = readFileSync(sysctlPath(name), 'utf8').trim();
    } catch {
      // not on this kernel: nothing to restore
    }
  }
  return values;
}

/** The host's IPv4 addresses and interface names (to pick slots no one uses). */
async function hostNetwork(): Promise<{ addresses: string[]; links: string[] }> {
  const addr = await run('ip', ['-4', '-o', 'addr', 'show']);
  const addresses = [...addr.matchAll(/inet (\d+\.\d+\.\d+\.\d+)\//g)].map((m) => m[1] ?? '');
  const links = readdirSync('/sys/class/net');
  return { addresses, links };
}

/**
 * Claims a slot per node (see ./real-node-slots.ts: safe against other clusters starting at the same time) and
 * records the sysctls to restore; the networks are made by `createNodeNetwork`. `previous` is the state of a run
 * that was not stopped cleanly: its recorded sysctls are kept, as the current ones may be the kubelet's.
 */
export async function prepareRealNodeNetworks(
  info: { clusterName: string; stateDir: string; count: number },
  previous: RealNodesState | undefined,
): Promise<RealNodesState> {
  const problem = realNodeSupportProblem();
  if (problem) throw new DevClusterError('TESSERA_DEVCLUSTER_REAL_NODES_UNSUPPORTED', problem);
  const host = await hostNetwork();
  const addresses = new Set(host.addresses);
  const links = new Set(host.links);
  const inUse = (slot: number): boolean => hostUsesSlot(slot, addresses, links);
  const names = Array.from({ length: info.count }, (_, index) => realNodeName(index));
  const dirs = names.map((_, index) => realNodeDir(info.stateDir, index));
  const tooDeep = dirs.map(kubeletSocketPathProblem).find((problem) => problem !== undefined);
  if (tooDeep) throw new DevClusterError('TESSERA_DEVCLUSTER_REAL_NODE_FAILED', tooDeep);
  const startTicks = processStartTicks(process.pid);
  const slots = claimNodeSlots(dirs, inUse, { pid: process.pid, ...(startTicks ? { startTicks } : {}) });
  if (!slots) {
    throw new DevClusterError(
      'TESSERA_DEVCLUSTER_REAL_NODE_FAILED',
      `no ${info.count} free 10.87.x.0/30 links for real nodes (each live real node on this machine holds one, see ${SLOT_LOCK_DIR}); stop other clusters' real nodes first`,
    );
  }
  const state: RealNodesState = {
    nodes: slots.map((slot, index) => {
      const name = names[index] ?? realNodeName(index);
      const dir = dirs[index] ?? realNodeDir(info.stateDir, index);
      return {
        name,
        dir,
        netnsFile: path.join(dir, 'netns'),
        addresses: nodeAddresses(slot),
        cgroup: nodeCgroup(info.clusterName, name, slot),
        processes: {},
      };
    }),
    // After the slots are held, so a cluster stopping meanwhile sees this one and leaves the baseline in place.
    sysctls: recordSysctlBaseline(() => ({ ...(previous?.sysctls ?? readSysctls()) })),
    runContainerdExisted: previous?.runContainerdExisted ?? existsSync('/run/containerd'),
  };
  return state;
}

/**
 * Creates the network of `node` (namespace, link, addresses, routes). The host gets a route to the node's pods only:
 * no route to the Service range, which every cluster on this machine shares (10.96.0.0/16). kube-apiserver reaches
 * webhook and conversion Services at their endpoints (--enable-aggregator-routing), and a host process that dials
 * ClusterIPs runs in a node's network namespace, where kube-proxy's rules are (`inNodeNetwork`).
 */
export async function createNodeNetwork(node: RealNodeState): Promise<void> {
  const a = node.addresses;
  mkdirSync(node.dir, { recursive: true, mode: 0o700 });
  writeFileSync(node.netnsFile, '');
  await run('unshare', [`--net=${node.netnsFile}`, 'true']);
  await run('ip', [
    'link',
    'add',
    a.hostLink,
    'type',
    'veth',
    'peer',
    'name',
    'eth0',
    'netns',
    node.netnsFile,
  ]);
  await run('ip', ['addr', 'add', `${a.hostIp}/${a.linkPrefix}`, 'dev', a.hostLink]);
  await run('ip', ['link', 'set', a.hostLink, 'up']);
  await inNetns(node.netnsFile, 'ip', ['link', 'set', 'lo', 'up']);
  await inNetns(node.netnsFile, 'ip', ['addr', 'add', `${a.nodeIp}/${a.linkPrefix}`, 'dev', 'eth0']);
  await inNetns(node.netnsFile, 'ip', ['link', 'set', 'eth0', 'up']);
  await inNetns(node.netnsFile, 'ip', ['route', 'add', 'default', 'via', a.hostIp]);
  // Per namespace: the node routes between its pods' bridge and its link.
  await inNetns(node.netnsFile, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
  // Routes on the host's end of the link go away with it. The pods' subnet lets the host reach pod IPs.
  await run('ip', ['route', 'add', a.podCidr, 'via', a.nodeIp, 'dev', a.hostLink]);
}

/**
 * The command line that runs `command` in the first node's network namespace, as a hostNetwork pod on that node
 * runs, with the cluster DNS as its resolver (a mount namespace of its own; this machine's /etc/resolv.conf stays as
 * it is): it reaches ClusterIPs through that node's kube-proxy and resolves Service names. The command is exec'd, not
 * forked: the process started is the command's. Root only, as real nodes are.
 */
export function inNodeNetwork(
  state: RealNodesState,
  command: readonly string[],
): { readonly binary: string; readonly args: string[] } {
  const first = state.nodes[0];
  if (!first) {
    throw new DevClusterError(
      'TESSERA_DEVCLUSTER_REAL_NODE_FAILED',
      'the cluster has no real node to run in',
    );
  }
  return {
    binary: findOnPath('nsenter') ?? 'nsenter',
    args: [
      `--net=${first.netnsFile}`,
      '--',
      findOnPath('unshare') ?? 'unshare',
      '--mount',
      '--propagation=private',
      '--',
      'sh',
      '-c',
      'mount --bind "$0" /etc/resolv.conf && exec "$@"',
      resolvConfOf(first),
      ...command,
    ],
  };
}

/** Starts every node's containerd, kubelet and kube-proxy, recording each process in `record` as it starts. */
export async function startRealNodes(
  state: RealNodesState,
  info: RealNodeClusterInfo,
  kubeConfig: () => Promise<KubeConfig>,
  record: (state: RealNodesState) => void,
): Promise<RealNodesState> {
  let current = state;
  for (const [index, node] of state.nodes.entries()) {
    const started = Date.now();
    info.log(`starting real node ${node.name} (containerd, kubelet, kube-proxy)`);
    const processes: Partial<Record<RealNodeComponent, ComponentProcess>> = {};
    const update = (): void => {
      // The node's processes keep its slot held once this process (`dev up`) exits.
      addSlotOwners(
        node.addresses.slot,
        node.dir,
        Object.values(processes).map((p) => ({
          pid: p.pid,
          ...(p.startTicks ? { startTicks: p.startTicks } : {}),
        })),
      );
      current = {
        ...current,
        nodes: current.nodes.map((n, i) => (i === index ? { ...n, processes: { ...processes } } : n)),
      };
      record(current);
    };
    // The first node runs the cluster DNS too; every node's pods use it.
    await startNode(node, info, processes, update, state.nodes[0] ?? node);
    await waitForNodeReady(await kubeConfig(), node.name, info.timeoutMs);
    info.log(`real node ${node.name} is Ready (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
  return current;
}

async function startNode(
  node: RealNodeState,
  info: RealNodeClusterInfo,
  processes: Partial<Record<RealNodeComponent, ComponentProcess>>,
  update: () => void,
  dnsNode: RealNodeState,
): Promise<void> {
  const d = (...parts: string[]): string => path.join(node.dir, ...parts);
  const clusterDns = clusterDnsAddress(dnsNode.addresses);
  for (const dir of ['containerd', 'cni-bin', 'net.d', 'certs.d', 'kubelet', 'logs', 'ipam'])
    mkdirSync(d(dir), { recursive: true, mode: 0o700 });
  const socket = containerdSocketPath(node.dir);
  mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 });
  const b = info.binaries;
  // The CNI plugins run in the node's namespace (containerd runs in the host's).
  for (const [plugin, binary] of [
    ['bridge', b['cni-bridge']],
    ['loopback', b['cni-loopback']],
    ['host-local', b['cni-host-local']],
  ] as const) {
    const wrapper = d('cni-bin', plugin);
    writeFileSync(wrapper, cniPluginWrapper(findOnPath('nsenter') ?? 'nsenter', node.netnsFile, binary));
    chmodSync(wrapper, 0o755);
  }
  writeFileSync(d('net.d', '10-tessera.conflist'), cniBridgeConfig(node.addresses, d('ipam')));
  if (info.registry) {
    // The kubelet reads pull credentials from config.json in its root directory (as OpenShift nodes get the
    // global pull secret): pods pull from the local registry without pull secrets of their own, as deploy/'s do.
    if (info.registry.dockerConfigJsonFile) {
      writeFileSync(d('kubelet', 'config.json'), readFileSync(info.registry.dockerConfigJsonFile), {
        mode: 0o600,
      });
    }
    mkdirSync(d('certs.d', info.registry.host), { recursive: true });
    writeFileSync(
      d('certs.d', info.registry.host, 'hosts.toml'),
      registryHostsToml(info.registry.host, info.registry.caFile),
    );
  }
  writeFileSync(
    d('containerd', 'config.toml'),
    containerdConfig({
      rootDir: d('containerd', 'root'),
      stateDir: d('containerd', 'state'),
      socket,
      cniBinDir: d('cni-bin'),
      cniConfDir: d('net.d'),
      registryConfigDir: d('certs.d'),
      runc: runc(),
      streamAddress: node.addresses.hostIp,
    }),
  );

  // containerd's shims live in its cgroup: the node's, so `dev down` finds them.
  const containerd = spawnComponent({
    name: 'containerd',
    binary: b.containerd,
    args: ['--config', d('containerd', 'config.toml')],
    logFile: d('logs', 'containerd.log'),
    env: { PATH: `${path.dirname(b['containerd-shim-runc-v2'])}:${process.env.PATH ?? ''}` },
  });
  processes.containerd = containerd;
  update();
  joinCgroup(containerd.pid, `${node.cgroup}/runtime`);
  const ctr = (args: readonly string[]): Promise<string> =>
    run(b.ctr, ['--address', socket, '--namespace', 'k8s.io', ...args]);
  await waitUntilHealthy(
    containerd,
    async () => existsSync(socket) && (await ctr(['version']).then(() => true)),
    info.timeoutMs,
  );
  const pause = filesImage({
    architecture: hostArchitecture(),
    files: [{ path: 'pause', bytes: readFileSync(b.pause), mode: 0o755 }],
    entrypoint: ['/pause'],
  });
  writeFileSync(d('pause.tar'), ociLayoutArchive(pause, PAUSE_IMAGE));
  await ctr(['images', 'import', d('pause.tar')]);

  const ca = await loadCertificateAuthority(
    readFileSync(info.caFile, 'utf8'),
    readFileSync(info.caKeyFile, 'utf8'),
  );
  const caPem = readFileSync(info.caFile, 'utf8');
  const kubeconfig = async (file: string, commonName: string, organizations: string[]): Promise<void> => {
    const cert = await ca.issue({ commonName, organizations, usage: 'client' });
    writeFileSync(
      file,
      renderKubeconfig({
        clusterName: info.clusterName,
        server: info.server,
        caPem,
        user: commonName,
        clientCertPem: cert.certPem,
        clientKeyPem: cert.keyPem,
      }),
      { mode: 0o600 },
    );
  };
  await kubeconfig(d('kubelet.kubeconfig'), `system:node:${node.name}`, ['system:nodes']);
  await kubeconfig(d('kube-proxy.kubeconfig'), 'system:kube-proxy', []);
  if (node === dnsNode) await startClusterDns(node, info, processes, update, d('kube-proxy.kubeconfig'));
  writeFileSync(
    d('kubelet.yaml'),
    kubeletConfiguration({
      nodeIp: node.addresses.nodeIp,
      clientCaFile: info.caFile,
      containerdSocket: socket,
      cgroupRoot: node.cgroup,
      podCidr: node.addresses.podCidr,
      clusterDns,
    }),
  );
  writeFileSync(
    d('kube-proxy.yaml'),
    kubeProxyConfiguration({
      nodeName: node.name,
      kubeconfig: d('kube-proxy.kubeconfig'),
      podCidr: node.addresses.podCidr,
    }),
  );

  const nsenter = findOnPath('nsenter') ?? 'nsenter';
  const kubelet = spawnComponent({
    name: 'kubelet',
    binary: nsenter,
    args: [
      `--net=${node.netnsFile}`,
      b.kubelet,
      `--config=${d('kubelet.yaml')}`,
      `--kubeconfig=${d('kubelet.kubeconfig')}`,
      `--root-dir=${d('kubelet')}`,
      `--hostname-override=${node.name}`,
      `--node-ip=${node.addresses.nodeIp}`,
      '--node-labels=tessera.dev/real-node=true',
      '--v=1',
    ],
    logFile: d('logs', 'kubelet.log'),
  });
  processes.kubelet = kubelet;
  update();
  joinCgroup(kubelet.pid, `${node.cgroup}/runtime`);
  const proxy = spawnComponent({
    name: 'kube-proxy',
    binary: nsenter,
    args: [`--net=${node.netnsFile}`, b['kube-proxy'], `--config=${d('kube-proxy.yaml')}`, '--v=1'],
    logFile: d('logs', 'kube-proxy.log'),
  });
  processes['kube-proxy'] = proxy;
  update();
  joinCgroup(proxy.pid, `${node.cgroup}/runtime`);
}

/** Where the cluster DNS listens: the host's end of the first node's link, which every node's pods reach. */
function clusterDnsAddress(firstNode: RealNodeAddresses): string {
  return firstNode.hostIp;
}

/**
 * The resolv.conf naming the cluster DNS, written beside the node that runs it: what a host process is given to
 * resolve the cluster's Service names (inNodeNetwork).
 */
function resolvConfOf(dnsNode: RealNodeState): string {
  return path.join(dnsNode.dir, 'resolv.conf');
}

/**
 * Starts the cluster DNS (`tessera dev cluster-dns`, a process of its own so it outlives `dev up`) with the
 * node-proxier identity kube-proxy has, which reads Services and EndpointSlices and nothing else; ready once it
 * answers for the `kubernetes` Service.
 */
async function startClusterDns(
  node: RealNodeState,
  info: RealNodeClusterInfo,
  processes: Partial<Record<RealNodeComponent, ComponentProcess>>,
  update: () => void,
  kubeconfig: string,
): Promise<void> {
  const address = clusterDnsAddress(node.addresses);
  const cli = tesseraCliCommand();
  const dns = spawnComponent({
    name: 'cluster-dns',
    binary: cli.binary,
    args: [...cli.args, 'dev', 'cluster-dns', `--kubeconfig=${kubeconfig}`, `--listen=${address}:53`],
    cwd: cli.cwd,
    logFile: path.join(node.dir, 'logs', 'cluster-dns.log'),
  });
  processes['cluster-dns'] = dns;
  update();
  joinCgroup(dns.pid, `${node.cgroup}/runtime`);
  const resolver = new Resolver({ timeout: 1_000, tries: 1 });
  resolver.setServers([`${address}:53`]);
  await waitUntilHealthy(
    dns,
    () =>
      resolver.resolve4(`kubernetes.default.svc.${CLUSTER_DOMAIN}`).then(
        (ips) => ips.length > 0,
        () => false,
      ),
    info.timeoutMs,
  );
  writeFileSync(resolvConfOf(node), clusterResolvConf(address));
}

async function waitForNodeReady(kc: KubeConfig, name: string, timeoutMs: number): Promise<void> {
  const { CoreV1Api, PatchStrategy, setHeaderOptions } = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(CoreV1Api);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const node = await core.readNode({ name }).catch(() => undefined);
    if (node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) break;
    if (Date.now() > deadline) {
      throw new DevClusterError(
        'TESSERA_DEVCLUSTER_REAL_NODE_FAILED',
        `real node ${name} was not Ready within ${timeoutMs / 1000} s; see the kubelet's and containerd's logs in its state directory`,
      );
    }
    await sleep(200);
  }
  // The kubelet may not set node-role labels on itself; the admin does, as for a kubeadm worker.
  await core.patchNode(
    { name, body: { metadata: { labels: { 'node-role.kubernetes.io/worker': '' } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// cgroups: v1 hierarchies and/or the v2 unified one, from /proc/self/mountinfo.

function cgroupMounts(): string[] {
  const lines = readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
  const mounts: string[] = [];
  for (const line of lines) {
    const [before, after] = line.split(' - ');
    const fsType = after?.split(' ')[0];
    if (fsType === 'cgroup' || fsType === 'cgroup2') {
      const mountPoint = before?.split(' ')[4];
      if (mountPoint) mounts.push(unescapeMountPath(mountPoint));
    }
  }
  return mounts;
}

function unescapeMountPath(value: string): string {
  return value.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Moves `pid` into `cgroup` in every hierarchy, creating it (cpuset v1 needs its cpus and mems copied down). */
function joinCgroup(pid: number, cgroup: string): void {
  for (const mount of cgroupMounts()) {
    let dir = mount;
    for (const part of cgroup.split('/').filter(Boolean)) {
      const parent = dir;
      dir = path.join(dir, part);
      if (!existsSync(dir)) {
        mkdirSync(dir);
        for (const file of ['cpuset.cpus', 'cpuset.mems']) {
          if (existsSync(path.join(parent, file)) && existsSync(path.join(dir, file))) {
            writeFileSync(path.join(dir, file), readFileSync(path.join(parent, file)));
          }
        }
      }
    }
    try {
      writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
    } catch {
      // A hierarchy that refuses it (e.g. a v2 threaded one): the others still hold the process.
    }
  }
}

function cgroupPids(cgroup: string): number[] {
  const pids = new Set<number>();
  const walk = (dir: string): void => {
    try {
      for (const line of readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n')) {
        const pid = Number(line);
        if (pid > 0) pids.add(pid);
      }
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(path.join(dir, entry.name));
      }
    } catch {
      // gone meanwhile
    }
  };
  for (const mount of cgroupMounts()) walk(path.join(mount, cgroup));
  return [...pids];
}

function removeCgroup(cgroup: string): void {
  const remove = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) remove(path.join(dir, entry.name));
    }
    try {
      rmdirSync(dir);
    } catch {
      // still busy: reported by the caller's check
    }
  };
  for (const mount of cgroupMounts()) {
    remove(path.join(mount, cgroup));
    // The shared parent (/tessera) goes when no other cluster's node uses it.
    try {
      rmdirSync(path.join(mount, path.dirname(cgroup)));
    } catch {
      // in use or already gone
    }
  }
}

/** Mount points at or below `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => unescapeMountPath(line.split(' ')[4] ?? ''))
    .filter((mountPoint) => mountPoint === dir || mountPoint.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
}

/** The pids of containerd shims serving `socket` (they leave containerd's process group at start). */
function shimPids(socket: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!(pid > 0)) continue;
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith('containerd-shim-runc-v2') && args.includes(socket)) pids.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * Stops every real node and removes what it created: processes (kube-proxy, kubelet, the pods' containers through
 * containerd, the shims, containerd), mounts under its directory (volumes, rootfs, network namespaces), its
 * network namespace (so its veth, bridge, routes and iptables rules), its cgroups; then writes the recorded
 * sysctls back. Safe to run twice, and after a crash.
 */
export async function stopRealNodes(state: RealNodesState, ctrBinary: string): Promise<void> {
  const problems: string[] = [];
  for (const node of state.nodes) {
    const { kubelet, containerd } = node.processes;
    const proxy = node.processes['kube-proxy'];
    if (proxy) await stopProcess(proxy);
    const dns = node.processes['cluster-dns'];
    if (dns) await stopProcess(dns);
    if (kubelet) await stopProcess(kubelet);
    const socket = containerdSocketPath(node.dir);
    // Tasks deleted through containerd end their shims cleanly (each removes its socket in /run/containerd/s).
    if (containerd && isRunning(containerd) && existsSync(ctrBinary)) {
      await stopContainers(ctrBinary, socket).catch(() => undefined);
    }
    if (containerd) await stopProcess(containerd);
    for (const pid of [...shimPids(socket), ...cgroupPids(node.cgroup)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    const deadline = Date.now() + 10_000;
    while (cgroupPids(node.cgroup).some((pid) => isAlive(pid)) && Date.now() < deadline) await sleep(50);
    for (let round = 0; round < 5; round++) {
      const mounts = mountsUnder(node.dir);
      if (mounts.length === 0) break;
      for (const mountPoint of mounts) await run('umount', ['-l', mountPoint]).catch(() => undefined);
    }
    // The namespace is gone once unmounted and empty; its veth (and the host end's routes) go with it.
    const linkDeadline = Date.now() + 10_000;
    while (existsSync(`/sys/class/net/${node.addresses.hostLink}`) && Date.now() < linkDeadline)
      await sleep(50);
    if (existsSync(`/sys/class/net/${node.addresses.hostLink}`)) {
      await run('ip', ['link', 'delete', node.addresses.hostLink]).catch(() => undefined);
    }
    removeCgroup(node.cgroup);
    rmSync(path.dirname(socket), { recursive: true, force: true });
    if (mountsUnder(node.dir).length > 0) problems.push(`mounts remain under ${node.dir}`);
    if (cgroupPids(node.cgroup).length > 0) problems.push(`processes remain in cgroup ${node.cgroup}`);
  }
  // Only the last cluster with real nodes on this machine writes the sysctls back: the others' kubelets run.
  releaseNodeSlots(state.nodes.map((n) => ({ slot: n.addresses.slot, nodeDir: n.dir })));
  const restore = takeSysctlsToRestore(state.sysctls);
  for (const [name, value] of Object.entries(restore ?? {})) {
    try {
      writeFileSync(sysctlPath(name), value);
    } catch {
      problems.push(`could not restore ${name}=${value}`);
    }
  }
  if (!state.runContainerdExisted) removeEmptyDirs('/run/containerd');
  removeEmptyDirs(CONTAINERD_SOCKET_ROOT);
  if (problems.length > 0) {
    throw new DevClusterError(
      'TESSERA_DEVCLUSTER_REAL_NODE_FAILED',
      `real nodes stopped, but: ${problems.join('; ')}`,
    );
  }
}

async function stopContainers(ctr: string, socket: string): Promise<void> {
  const ctrIn = (args: readonly string[]): Promise<string> =>
    run(ctr, ['--address', socket, '--namespace', 'k8s.io', ...args], 15_000);
  const tasks = (await ctrIn(['tasks', 'list', '--quiet'])).split('\n').filter(Boolean);
  for (const id of tasks) await ctrIn(['tasks', 'kill', '--signal', 'SIGKILL', id]).catch(() => undefined);
  for (const id of tasks) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const deleted = await ctrIn(['tasks', 'delete', id]).then(
        () => true,
        (err: unknown) => /not found/i.test(String(err)),
      );
      if (deleted) break;
      await sleep(100);
    }
  }
}

function removeEmptyDirs(dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) removeEmptyDirs(path.join(dir, entry.name));
  }
  try {
    rmdirSync(dir);
  } catch {
    // not empty: someone else's
  }
}

/** Lines for `dev status`: each real node and its processes. */
export function describeRealNodes(state: RealNodesState): string[] {
  const lines: string[] = [];
  for (const node of state.nodes) {
    lines.push(
      `  real node ${node.name}  ${node.addresses.nodeIp} (pods ${node.addresses.podCidr}, link ${node.addresses.hostLink})`,
    );
    for (const [name, proc] of Object.entries(node.processes)) {
      lines.push(
        `    ${name.padEnd(22)} pid ${String(proc.pid).padEnd(8)} ${isRunning(proc) ? 'running' : 'exited'}  log ${proc.logFile}`,
      );
    }
  }
  return lines;
}
