// What a real (kubelet) node of `tessera dev up --real-nodes` is made of, as data: its addresses, the files that
// configure containerd, the CNI bridge, the kubelet and kube-proxy, and the kernel settings the kubelet changes.
// Pure: ./real-nodes.ts writes these files and runs the processes. The settings are those found to work on this
// project's machines (cgroup v1 hybrid, no CAP_SYS_RESOURCE, no systemd): see the README's "Real nodes".
import { createHash } from 'node:crypto';
import path from 'node:path';
import { stringify } from 'yaml';
import { CLUSTER_DOMAIN } from './cluster-dns.js';

/** Host side of a node's veth link: 10.87.<slot>.1; node side 10.87.<slot>.2; pods 10.88.<slot>.0/24. */
export const MAX_NODE_SLOT = 255;

export interface RealNodeAddresses {
  /** 0-255: the third octet of the node's addresses, unique among the real nodes on this machine. */
  readonly slot: number;
  /** The host's end of the link (the API server listens here for the node and its pods). */
  readonly hostIp: string;
  /** The node's end of the link: its InternalIP, where its kubelet serves. */
  readonly nodeIp: string;
  /** Prefix length of the host-node link. */
  readonly linkPrefix: number;
  /** The host's network interface of the link (at most 15 characters). */
  readonly hostLink: string;
  /** The pods' subnet on the node's bridge. */
  readonly podCidr: string;
  /** The bridge's address: the pods' gateway. */
  readonly podGateway: string;
}

export function nodeAddresses(slot: number): RealNodeAddresses {
  if (!Number.isInteger(slot) || slot < 0 || slot > MAX_NODE_SLOT) {
    throw new RangeError(`node slot ${slot} is outside 0-${MAX_NODE_SLOT}`);
  }
  return {
    slot,
    hostIp: `10.87.${slot}.1`,
    nodeIp: `10.87.${slot}.2`,
    linkPrefix: 30,
    hostLink: `tessera-n${slot}`,
    podCidr: `10.88.${slot}.0/24`,
    podGateway: `10.88.${slot}.1`,
  };
}

/**
 * True when an address or interface already on the host (another cluster's real node, or anything else using
 * 10.87.x.1) takes `slot`. Slots held by clusters still starting are told by their locks (./real-node-slots.ts).
 */
export function hostUsesSlot(
  slot: number,
  hostAddresses: ReadonlySet<string>,
  hostLinks: ReadonlySet<string>,
): boolean {
  const a = nodeAddresses(slot);
  return hostAddresses.has(a.hostIp) || hostAddresses.has(a.nodeIp) || hostLinks.has(a.hostLink);
}

/**
 * Global kernel settings the kubelet sets at start (its `protectKernelDefaults: false` tunables), recorded before
 * the first node starts and written back by `dev down`. They are not per network namespace.
 */
export const KUBELET_GLOBAL_SYSCTLS = [
  'kernel.panic',
  'kernel.panic_on_oops',
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
] as const;

/** `kernel.panic` -> `/proc/sys/kernel/panic`. */
export function sysctlPath(name: string): string {
  return `/proc/sys/${name.split('.').join('/')}`;
}

/** The name containerd gives the sandbox image imported at node start (built here, never pulled). */
/** The most bytes of a unix socket path (sun_path is 108 bytes with its terminating NUL). */
export const UNIX_SOCKET_PATH_MAX = 107;

/**
 * A real node's folder in its cluster's state folder. Kept short: the kubelet binds unix sockets under its root
 * folder (`<dir>/kubelet/pod-resources/<10 digits>` before renaming it to `kubelet.sock`), and a socket it cannot bind
 * stops it.
 */
export function realNodeDir(stateDir: string, index: number): string {
  return path.join(stateDir, 'rn', String(index));
}

/**
 * Why the kubelet could not bind its sockets under `nodeDir`, or undefined: the longest socket path it binds
 * (pod-resources' temporary name) must fit UNIX_SOCKET_PATH_MAX. Pure.
 */
export function kubeletSocketPathProblem(nodeDir: string): string | undefined {
  const longest = path.join(nodeDir, 'kubelet', 'pod-resources', '0123456789');
  const bytes = Buffer.byteLength(longest);
  return bytes > UNIX_SOCKET_PATH_MAX
    ? `the real node's folder ${nodeDir} is too deep: the kubelet binds unix sockets of up to ${bytes} bytes under it, and a socket path has at most ${UNIX_SOCKET_PATH_MAX}; use a state folder (or TMPDIR) at least ${bytes - UNIX_SOCKET_PATH_MAX} bytes shorter`
    : undefined;
}

/** Where the nodes' containerd sockets live: a short path of its own, removed by `dev down` when empty. */
export const CONTAINERD_SOCKET_ROOT = '/run/tessera-nodes';

/**
 * A node's containerd socket. A unix socket path has at most 107 bytes and the node's folder sits under the
 * cluster's state folder (under TMPDIR in CI: too long for `containerd.sock.ttrpc`), so the socket gets a short
 * folder named by a hash of the node's folder.
 */
export function containerdSocketPath(nodeDir: string): string {
  const id = createHash('sha256').update(path.resolve(nodeDir)).digest('hex').slice(0, 16);
  return path.posix.join(CONTAINERD_SOCKET_ROOT, id, 'containerd.sock');
}

export const PAUSE_IMAGE = 'tessera.dev/dev/pause:1';

/**
 * The cgroup (under every hierarchy) that holds everything one real node runs: `dev down` ends its processes. The
 * slot keeps two clusters of the same name (under different state directories) apart.
 */
export function nodeCgroup(cluster: string, node: string, slot: number): string {
  return `/tessera/${cluster}-${node}-${slot}`;
}

export interface ContainerdConfigInput {
  readonly rootDir: string;
  readonly stateDir: string;
  readonly socket: string;
  /** Directory of the CNI plugin wrappers (they run the plugins in the node's network namespace). */
  readonly cniBinDir: string;
  readonly cniConfDir: string;
  /** `certs.d` directory: one `<host:port>/hosts.toml` per registry. */
  readonly registryConfigDir: string;
  readonly runc: string;
  /** Where the CRI streaming server (exec, attach, port-forward) listens: the host end of the node's link. */
  readonly streamAddress: string;
}

const toml = (value: string): string => JSON.stringify(value);

/**
 * containerd 2.x configuration (version 3) for one node: its own root, state and socket; runc through the cgroupfs
 * driver (there is no systemd); OOM score adjustments restricted to what the process may set (a negative score
 * needs CAP_SYS_RESOURCE, without which every sandbox fails); network namespaces under its state directory, so
 * everything it mounts is under one directory `dev down` unmounts.
 */
export function containerdConfig(input: ContainerdConfigInput): string {
  return `version = 3
root = ${toml(input.rootDir)}
state = ${toml(input.stateDir)}
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing", "io.containerd.nri.v1.nri"]

[grpc]
  address = ${toml(input.socket)}

[ttrpc]
  address = ${toml(`${input.socket}.ttrpc`)}

[plugins."io.containerd.cri.v1.runtime"]
  enable_selinux = false
  disable_apparmor = true
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true

  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"

    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = ${toml(input.runc)}
        SystemdCgroup = false

  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [${toml(input.cniBinDir)}]
    conf_dir = ${toml(input.cniConfDir)}

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"

  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = ${toml(PAUSE_IMAGE)}

  [plugins."io.containerd.cri.v1.images".registry]
    config_path = ${toml(input.registryConfigDir)}

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = ${toml(input.streamAddress)}
  stream_server_port = "0"
`;
}

/** `certs.d/<host>/hosts.toml`: pull `<host>/...` over HTTPS trusting `caFile` (the local registry's CA). */
export function registryHostsToml(host: string, caFile: string): string {
  return `server = ${toml(`https://${host}`)}

[host.${toml(`https://${host}`)}]
  capabilities = ["pull", "resolve"]
  ca = ${toml(caFile)}
`;
}

/**
 * The pods' network: a bridge with host-local addresses and masquerading for traffic leaving the pod subnet (to
 * the API server, through kube-proxy's DNAT), so the host never needs a route back to the pods.
 */
export function cniBridgeConfig(addresses: RealNodeAddresses, ipamDataDir: string): string {
  return (
    JSON.stringify(
      {
        cniVersion: '1.0.0',
        name: 'tessera-dev',
        plugins: [
          {
            type: 'bridge',
            bridge: 'cni0',
            isGateway: true,
            ipMasq: true,
            hairpinMode: true,
            ipam: {
              type: 'host-local',
              dataDir: ipamDataDir,
              ranges: [[{ subnet: addresses.podCidr, gateway: addresses.podGateway }]],
              routes: [{ dst: '0.0.0.0/0' }],
            },
          },
        ],
      },
      null,
      2,
    ) + '\n'
  );
}

/**
 * A CNI plugin wrapper: containerd runs in the host's network namespace (it pulls from the loopback registry), but
 * the plugin must create the bridge and its rules in the node's own namespace.
 */
export function cniPluginWrapper(nsenter: string, netnsFile: string, plugin: string): string {
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  return `#!/bin/sh\nexec ${q(nsenter)} --net=${q(netnsFile)} ${q(plugin)} "$@"\n`;
}

export interface KubeletConfigInput {
  readonly nodeIp: string;
  readonly clientCaFile: string;
  readonly containerdSocket: string;
  readonly cgroupRoot: string;
  readonly podCidr: string;
  /** The cluster DNS's address (./cluster-dns.ts), pods' nameserver. */
  readonly clusterDns: string;
}

/**
 * KubeletConfiguration for a dev node: webhook authn/authz on its API, cgroupfs, cgroup v1 allowed, the kernel
 * and OOM settings a container without CAP_SYS_RESOURCE can live with, no swap or disk checks, and images usable
 * by any pod once pulled (a dev node has one tenant).
 */
export function kubeletConfiguration(input: KubeletConfigInput): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: input.nodeIp,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: input.clientCaFile },
    },
    authorization: { mode: 'Webhook' },
    containerRuntimeEndpoint: `unix://${input.containerdSocket}`,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: input.cgroupRoot,
    cgroupsPerQOS: true,
    enforceNodeAllocatable: ['pods'],
    failCgroupV1: false,
    failSwapOn: false,
    oomScoreAdj: 0,
    localStorageCapacityIsolation: false,
    protectKernelDefaults: false,
    podCIDR: input.podCidr,
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    imagePullCredentialsVerificationPolicy: 'NeverVerify',
    evictionHard: { 'memory.available': '1Mi' },
    clusterDNS: [input.clusterDns],
    clusterDomain: CLUSTER_DOMAIN,
    resolvConf: '/etc/resolv.conf',
    rotateCertificates: false,
    serializeImagePulls: false,
    shutdownGracePeriod: '0s',
    nodeStatusReportFrequency: '10s',
  });
}

/**
 * KubeProxyConfiguration (iptables, in the node's namespace): masquerade all Service traffic so replies return
 * through the node (pod to Service to pod on one bridge needs no br_netfilter), and leave the global conntrack
 * limits alone (zero: do not set).
 */
export function kubeProxyConfiguration(input: {
  nodeName: string;
  kubeconfig: string;
  podCidr: string;
}): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: input.kubeconfig },
    hostnameOverride: input.nodeName,
    mode: 'iptables',
    clusterCIDR: input.podCidr,
    healthzBindAddress: '127.0.0.1:10256',
    metricsBindAddress: '127.0.0.1:10249',
    iptables: { masqueradeAll: true, localhostNodePorts: false },
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
      udpTimeout: '0s',
      udpStreamTimeout: '0s',
    },
  });
}
