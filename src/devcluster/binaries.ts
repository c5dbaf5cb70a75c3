// Where the Go-built binaries live: the control plane, the local OCI registry, crane (the independent OCI
// client tests compare with) and the operator framework's tools (opm, olm-validate, OLM's operators). hack/versions.env pins each component's version and hack/build-binaries.sh builds
// them into <cache>/bin/<component>-<version>/; this module finds them and fails with instructions when one is
// missing, never silently falling back to whatever is on PATH.
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DevClusterError } from './errors.js';

/** The repository root (this file sits two levels below it, in src/ or dist/). */
export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ComponentVersions {
  readonly kubernetes: string;
  readonly etcd: string;
  readonly kwok: string;
  /** distribution/distribution (the local registry). */
  readonly distribution: string;
  /** go-containerregistry (crane). */
  readonly crane: string;
  /** github.com/prometheus/prometheus (the alerts API of the update-status tests). */
  readonly prometheus: string;
  /** github.com/brancz/kube-rbac-proxy (guards that API as on OpenShift). */
  readonly kubeRbacProxy: string;
  /** github.com/operator-framework/operator-registry (opm). */
  readonly operatorRegistry: string;
  /** github.com/operator-framework/api (the bundle validators hack/operator-framework/olm-validate runs). */
  readonly operatorFrameworkApi: string;
  /** github.com/operator-framework/operator-lifecycle-manager (OLM's olm and catalog operators). */
  readonly olm: string;
  /** github.com/containerd/containerd/v2 (a real node's container runtime). */
  readonly containerd: string;
  /** github.com/containernetworking/plugins (a real node's pod network). */
  readonly cniPlugins: string;
  /** github.com/cert-manager/cert-manager (hack/cert-manager, for the OLM v1 tests). */
  readonly certManager: string;
}

export type BinaryName =
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubectl'
  | 'kwok'
  | 'registry'
  | 'crane'
  | 'prometheus'
  | 'kube-rbac-proxy'
  | 'opm'
  | 'olm-validate'
  | 'olm'
  | 'catalog'
  /** OLM's bundle copier, which its util image carries for bundle-unpack Jobs (real-node OLM test). */
  | 'cpb'
  /** Our gRPC health probe (hack/operator-framework/grpc-health-probe), which catalog images carry for OLM's probes. */
  | 'grpc-health-probe'
  | 'kubelet'
  | 'kube-proxy'
  | 'containerd'
  | 'containerd-shim-runc-v2'
  | 'ctr'
  | 'pause'
  | 'cni-bridge'
  | 'cni-loopback'
  | 'cni-host-local'
  | 'cert-manager';

/** hack/build-binaries.sh selectors: each builds the binaries of one Go tools module. */
export type BuildComponent =
  | 'etcd'
  | 'kwok'
  | 'kubernetes'
  | 'registry'
  | 'crane'
  | 'prometheus'
  | 'kube-rbac-proxy'
  | 'opm'
  | 'olm-validate'
  | 'olm'
  | 'containerd'
  | 'cni-plugins'
  | 'cert-manager';

const COMPONENT_OF: Readonly<Record<BinaryName, BuildComponent>> = {
  etcd: 'etcd',
  'kube-apiserver': 'kubernetes',
  'kube-controller-manager': 'kubernetes',
  'kube-scheduler': 'kubernetes',
  kubectl: 'kubernetes',
  kwok: 'kwok',
  registry: 'registry',
  crane: 'crane',
  prometheus: 'prometheus',
  'kube-rbac-proxy': 'kube-rbac-proxy',
  opm: 'opm',
  'olm-validate': 'olm-validate',
  olm: 'olm',
  catalog: 'olm',
  cpb: 'olm',
  'grpc-health-probe': 'olm',
  kubelet: 'kubernetes',
  'kube-proxy': 'kubernetes',
  containerd: 'containerd',
  'containerd-shim-runc-v2': 'containerd',
  ctr: 'containerd',
  pause: 'containerd',
  'cni-bridge': 'cni-plugins',
  'cni-loopback': 'cni-plugins',
  'cni-host-local': 'cni-plugins',
  'cert-manager': 'cert-manager',
};

/** What `tessera dev up` / `npm start` run: the control plane and the local registry. */
export const DEV_CLUSTER_BINARIES: readonly BinaryName[] = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'kwok',
  'registry',
];

/** What the test suite runs: the dev cluster's binaries plus crane, the independent OCI client. */
export const TEST_BINARIES: readonly BinaryName[] = [...DEV_CLUSTER_BINARIES, 'crane'];

/**
 * The alerts stack of the update-status alerts tests (Prometheus behind kube-rbac-proxy); built on first use by
 * those tests, not by every run's global setup.
 */
export const ALERTS_TEST_BINARIES: readonly BinaryName[] = ['prometheus', 'kube-rbac-proxy'];

/** The operator framework's tools: bundle and catalog validation (opm, olm-validate); built on first use. */
export const OPERATOR_FRAMEWORK_BINARIES: readonly BinaryName[] = ['opm', 'olm-validate'];

/** A real node (`tessera dev up --real-nodes`): kubelet, kube-proxy, containerd and the CNI plugins. */
export const REAL_NODE_BINARIES: readonly BinaryName[] = [
  'kubelet',
  'kube-proxy',
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
  'pause',
  'cni-bridge',
  'cni-loopback',
  'cni-host-local',
];

/** cert-manager (its control loops and CA injector in one command), for the OLM v1 tests; built on first use. */
export const CERT_MANAGER_TEST_BINARIES: readonly BinaryName[] = ['cert-manager'];

/** OLM's operators and opm (serves catalogs), for the OLM install tests; built on first use. */
export const OLM_TEST_BINARIES: readonly BinaryName[] = ['olm', 'catalog', 'opm'];

/**
 * Paths of the binaries, plus kwok's default stage files and OLM's CRDs of the same release (both copied from the
 * modules beside the binaries by the build script), and opm's own containers signature policy (which that opm reads
 * instead of /etc/containers/policy.json).
 */
export type BinaryPaths = Readonly<Record<BinaryName, string>> & {
  readonly kwokStages: readonly string[];
  readonly olmCrds: readonly string[];
  readonly opmPolicy: string;
  /** cert-manager's CRDs (deploy/crds of its module). */
  readonly certManagerCrds: readonly string[];
};

/** OLM's CRDs (deploy/chart/crds of its module), in the order its chart applies them. */
export const OLM_CRD_FILES = [
  '0000_50_olm_00-catalogsources.crd.yaml',
  '0000_50_olm_00-clusterserviceversions.crd.yaml',
  '0000_50_olm_00-installplans.crd.yaml',
  '0000_50_olm_00-olmconfigs.crd.yaml',
  '0000_50_olm_00-operatorconditions.crd.yaml',
  '0000_50_olm_00-operatorgroups.crd.yaml',
  '0000_50_olm_00-operators.crd.yaml',
  '0000_50_olm_00-subscriptions.crd.yaml',
] as const;

/** cert-manager's CRDs (deploy/crds of its module). */
export const CERT_MANAGER_CRD_FILES = [
  'acme.cert-manager.io_challenges.yaml',
  'acme.cert-manager.io_orders.yaml',
  'cert-manager.io_certificaterequests.yaml',
  'cert-manager.io_certificates.yaml',
  'cert-manager.io_clusterissuers.yaml',
  'cert-manager.io_issuers.yaml',
] as const;

export const KWOK_STAGE_FILES = [
  'node-initialize.yaml',
  'node-heartbeat-with-lease.yaml',
  'pod-ready.yaml',
  'pod-complete.yaml',
  'pod-delete.yaml',
] as const;

/** Parses the KEY=value lines of hack/versions.env (comments and blank lines ignored). */
export function parseVersionsEnv(text: string): ComponentVersions {
  const values = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1));
  }
  const get = (key: string): string => {
    const value = values.get(key);
    if (!value)
      throw new DevClusterError('TESSERA_DEVCLUSTER_CONFIG', `hack/versions.env does not set ${key}`);
    return value;
  };
  return {
    kubernetes: get('KUBERNETES_VERSION'),
    etcd: get('ETCD_VERSION'),
    kwok: get('KWOK_VERSION'),
    distribution: get('DISTRIBUTION_VERSION'),
    crane: get('CRANE_VERSION'),
    prometheus: get('PROMETHEUS_VERSION'),
    kubeRbacProxy: get('KUBE_RBAC_PROXY_VERSION'),
    operatorRegistry: get('OPERATOR_REGISTRY_VERSION'),
    operatorFrameworkApi: get('OPERATOR_FRAMEWORK_API_VERSION'),
    olm: get('OLM_VERSION'),
    containerd: get('CONTAINERD_VERSION'),
    cniPlugins: get('CNI_PLUGINS_VERSION'),
    certManager: get('CERT_MANAGER_VERSION'),
  };
}

export function readComponentVersions(root: string = projectRoot): ComponentVersions {
  return parseVersionsEnv(readFileSync(path.join(root, 'hack', 'versions.env'), 'utf8'));
}

/** `$TESSERA_CACHE_DIR`, else `$XDG_CACHE_HOME/tessera`, else `~/.cache/tessera` (same rule as the build script). */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TESSERA_CACHE_DIR) return env.TESSERA_CACHE_DIR;
  return path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'tessera');
}

export function binaryPaths(
  versions: ComponentVersions = readComponentVersions(),
  cache = cacheDir(),
): BinaryPaths {
  const bin = path.join(cache, 'bin');
  const k8s = path.join(bin, `kubernetes-${versions.kubernetes}`);
  const olm = path.join(bin, `olm-${versions.olm}`);
  const containerd = path.join(bin, `containerd-${versions.containerd}`);
  const cni = path.join(bin, `cni-plugins-${versions.cniPlugins}`);
  const certManager = path.join(bin, `cert-manager-${versions.certManager}`);
  return {
    etcd: path.join(bin, `etcd-${versions.etcd}`, 'etcd'),
    'kube-apiserver': path.join(k8s, 'kube-apiserver'),
    'kube-controller-manager': path.join(k8s, 'kube-controller-manager'),
    'kube-scheduler': path.join(k8s, 'kube-scheduler'),
    kubectl: path.join(k8s, 'kubectl'),
    kwok: path.join(bin, `kwok-${versions.kwok}`, 'kwok'),
    registry: path.join(bin, `registry-${versions.distribution}`, 'registry'),
    crane: path.join(bin, `crane-${versions.crane}`, 'crane'),
    prometheus: path.join(bin, `prometheus-${versions.prometheus}`, 'prometheus'),
    'kube-rbac-proxy': path.join(bin, `kube-rbac-proxy-${versions.kubeRbacProxy}`, 'kube-rbac-proxy'),
    opm: path.join(bin, `opm-${versions.operatorRegistry}`, 'opm'),
    'olm-validate': path.join(bin, `olm-validate-${versions.operatorFrameworkApi}`, 'olm-validate'),
    olm: path.join(olm, 'olm'),
    catalog: path.join(olm, 'catalog'),
    cpb: path.join(olm, 'cpb'),
    'grpc-health-probe': path.join(olm, 'grpc_health_probe'),
    kubelet: path.join(k8s, 'kubelet'),
    'kube-proxy': path.join(k8s, 'kube-proxy'),
    containerd: path.join(containerd, 'containerd'),
    'containerd-shim-runc-v2': path.join(containerd, 'containerd-shim-runc-v2'),
    ctr: path.join(containerd, 'ctr'),
    pause: path.join(containerd, 'pause'),
    'cni-bridge': path.join(cni, 'bridge'),
    'cni-loopback': path.join(cni, 'loopback'),
    'cni-host-local': path.join(cni, 'host-local'),
    'cert-manager': path.join(certManager, 'cert-manager'),
    kwokStages: KWOK_STAGE_FILES.map((f) => path.join(bin, `kwok-${versions.kwok}`, 'stages', f)),
    olmCrds: OLM_CRD_FILES.map((f) => path.join(olm, 'crds', f)),
    opmPolicy: path.join(bin, `opm-${versions.operatorRegistry}`, 'policy.json'),
    certManagerCrds: CERT_MANAGER_CRD_FILES.map((f) => path.join(certManager, 'crds', f)),
  };
}

/**
 * The binaries among `names` (and kwok's stage files, with kwok; OLM's CRDs, with olm; opm's policy, with opm: an
 * opm built without one reads /etc/containers/policy.json) that are not there yet.
 */
export function missingBinaries(
  names: readonly BinaryName[] = DEV_CLUSTER_BINARIES,
  paths: BinaryPaths = binaryPaths(),
): { readonly names: BinaryName[]; readonly files: string[] } {
  const usable = (file: string, mode: number): boolean => {
    try {
      accessSync(file, mode);
      return true;
    } catch {
      return false;
    }
  };
  const missing = names.filter((name) => !usable(paths[name], constants.X_OK));
  const files = missing.map((name) => paths[name]);
  if (names.includes('kwok')) {
    const stages = paths.kwokStages.filter((file) => !usable(file, constants.R_OK));
    if (stages.length > 0 && !missing.includes('kwok')) missing.push('kwok');
    files.push(...stages);
  }
  if (names.includes('opm') && !usable(paths.opmPolicy, constants.R_OK)) {
    if (!missing.includes('opm')) missing.push('opm');
    files.push(paths.opmPolicy);
  }
  if (names.includes('olm')) {
    const crds = paths.olmCrds.filter((file) => !usable(file, constants.R_OK));
    if (crds.length > 0 && !missing.includes('olm')) missing.push('olm');
    files.push(...crds);
  }
  if (names.includes('cert-manager')) {
    const crds = paths.certManagerCrds.filter((file) => !usable(file, constants.R_OK));
    if (crds.length > 0 && !missing.includes('cert-manager')) missing.push('cert-manager');
    files.push(...crds);
  }
  return { names: missing, files };
}

/** The build-binaries.sh selectors that build `names`, each once. */
export function buildComponentsFor(names: readonly BinaryName[]): BuildComponent[] {
  return [...new Set(names.map((name) => COMPONENT_OF[name]))];
}

/** Returns the binaries' paths, or throws naming each missing one and the command that builds it. */
export function requireBinaries(
  paths: BinaryPaths = binaryPaths(),
  names: readonly BinaryName[] = DEV_CLUSTER_BINARIES,
): BinaryPaths {
  const missing = missingBinaries(names, paths);
  if (missing.files.length > 0) {
    const components = buildComponentsFor(missing.names).join(' ');
    throw new DevClusterError(
      'TESSERA_DEVCLUSTER_BINARIES_MISSING',
      `binaries are missing:\n  ${missing.files.join('\n  ')}\n` +
        `Build them once with \`npm run binaries -- ${components}\` (bash hack/build-binaries.sh; a cold build ` +
        'takes minutes, later runs reuse the cache). `tessera dev up`, `npm start` and `npm test` build them ' +
        'by themselves.',
    );
  }
  return paths;
}

/** Where hack/build-binaries.sh keeps Go's output of its last run that had something to build. */
export function buildLogPath(cache: string = cacheDir()): string {
  return path.join(cache, 'bin', 'build.log');
}

/**
 * Like `requireBinaries`, but builds what is missing first by running hack/build-binaries.sh for the missing
 * components only (its progress goes to stderr, Go's output to `buildLogPath`). For `tessera dev up`, `npm start`
 * and the test suite's global setup, so a fresh clone needs nothing but Node and Go.
 */
export async function ensureBinaries(
  names: readonly BinaryName[] = DEV_CLUSTER_BINARIES,
  root: string = projectRoot,
  env: NodeJS.ProcessEnv = process.env,
): Promise<BinaryPaths> {
  const cache = cacheDir(env);
  const paths = binaryPaths(readComponentVersions(root), cache);
  const missing = missingBinaries(names, paths);
  if (missing.files.length === 0) return paths;
  const components = buildComponentsFor(missing.names);
  const { spawn } = await import('node:child_process');
  const script = path.join(root, 'hack', 'build-binaries.sh');
  const log = buildLogPath(cache);
  const logBefore = modifiedAt(log);
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn('bash', [script, ...components], { stdio: ['ignore', 'inherit', 'inherit'], env });
    child.on('error', reject);
    child.on('exit', (status) => resolve(status ?? 1));
  });
  if (code !== 0) {
    // The script opens its log only once it starts Go; a failure before that (no Go, a bad pin) is on stderr alone.
    const wroteLog = modifiedAt(log) !== logBefore;
    throw new DevClusterError(
      'TESSERA_DEVCLUSTER_BINARIES_MISSING',
      `${script} ${components.join(' ')} failed (exit ${code}); ` +
        (wroteLog ? `Go's output is in ${log} (its last lines are above)` : 'see its output above'),
    );
  }
  return requireBinaries(paths, names);
}

function modifiedAt(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}
