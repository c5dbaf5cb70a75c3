// OLM (operator-lifecycle-manager) on a local control plane, as its upstream install runs it, minus the pods: its
// CRDs of the pinned release (copied beside the binaries by hack/build-binaries.sh), the `olm` and `operators`
// namespaces with upstream's global OperatorGroup, and the `olm` and `catalog` operators as processes on this
// machine with the cluster's admin kubeconfig. Also `opm serve` for a file-based catalog on loopback, which a
// CatalogSource's spec.address can name (the catalog operator dials it from this machine). On a cluster with real
// nodes the catalog operator runs in the first node's network namespace with the cluster DNS, as a pod on that node
// would: it dials an image CatalogSource's registry pod at `<name>.<namespace>.svc:50051` through kube-proxy.
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureBinaries, OLM_TEST_BINARIES, type BinaryPaths } from '../../src/devcluster/binaries.js';
import type { DevCluster } from '../../src/devcluster/cluster.js';
import { inNodeNetwork, type RealNodesState } from '../../src/devcluster/real-nodes.js';
import { waitForCrdsEstablished } from './cluster.js';
import {
  type ComponentProcess,
  freePort,
  logTail,
  processStartTicks,
  stopProcess,
  waitUntilHealthy,
} from '../../src/devcluster/processes.js';

const run = promisify(execFile);

/** Where OLM runs its own objects (CatalogSources it serves to all namespaces, bundle unpack Jobs). */
export const OLM_NAMESPACE = 'olm';
/** Upstream's namespace for operators installed for all namespaces, with the `global-operators` OperatorGroup. */
export const OPERATORS_NAMESPACE = 'operators';

export interface Olm {
  readonly binaries: BinaryPaths;
  readonly olm: ComponentProcess;
  readonly catalog: ComponentProcess;
  /** kubectl with the cluster's admin kubeconfig; resolves to stdout, rejects with stderr in the message. */
  kubectl(args: readonly string[]): Promise<string>;
  /** The last lines of both operators' logs, for failure messages. */
  logs(lines?: number): string;
  /** Starts `opm serve` for a file-based catalog directory on a free loopback port; stopped with `stop()`. */
  serveCatalog(dir: string): Promise<{ readonly address: string; readonly process: ComponentProcess }>;
  stop(): Promise<void>;
}

/**
 * Applies OLM's CRDs to `cluster`, creates its namespaces and starts its two operators; resolves once both have
 * synced their caches and started their workers. Builds the binaries first if they are missing (minutes, once).
 * Call `stop()` in afterAll (before stopping the cluster).
 */
export async function startOlm(
  cluster: DevCluster,
  /** The images of the pods the catalog operator creates; default: upstream's names of the releases built here. */
  images?: { readonly opm: string; readonly util: string },
): Promise<Olm> {
  const binaries = await ensureBinaries(['kubectl', ...OLM_TEST_BINARIES]);
  const dir = path.join(cluster.stateDir, 'olm');
  mkdirSync(dir, { recursive: true });

  const kubectl = async (args: readonly string[]): Promise<string> => {
    try {
      const { stdout } = await run(binaries.kubectl, ['--kubeconfig', cluster.kubeconfigPath, ...args], {
        maxBuffer: 64 * 1024 * 1024,
      });
      return stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
    }
  };

  // Server-side: the CSV CRD is too large for client-side apply's last-applied annotation.
  await kubectl(['apply', '--server-side', ...binaries.olmCrds.flatMap((f) => ['-f', f])]);
  await waitForCrdsEstablished(kubectl, crdNames(binaries.olmCrds));
  await applyStdin(binaries.kubectl, cluster.kubeconfigPath, upstreamNamespaces());

  const started: ComponentProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(started.map((p) => stopProcess(p)));
  };
  try {
    // Neither operator elects a leader unless asked to. Their health endpoints bind :8080 on every interface (not
    // configurable); the second one's bind fails with a logged error and both go on, so readiness is read from
    // their logs instead. --writeStatusName='' : no OpenShift ClusterOperator to report to.
    const olm = spawnOlmProcess(dir, 'olm', binaries.olm, cluster.kubeconfigPath, undefined, [
      `--namespace=${OLM_NAMESPACE}`,
      '--writeStatusName=',
    ]);
    started.push(olm);
    const catalog = spawnOlmProcess(
      dir,
      'catalog',
      binaries.catalog,
      cluster.kubeconfigPath,
      cluster.realNodes,
      [
        `--kubeconfig=${cluster.kubeconfigPath}`,
        `--namespace=${OLM_NAMESPACE}`,
        '--writeStatusName=',
        // Images of the pods the catalog operator creates (bundle unpack Jobs, registry pods); kwok does not run
        // them, but the Jobs name them, so pin the releases built here instead of upstream's `latest`.
        `--opmImage=${images?.opm ?? `quay.io/operator-framework/opm:${versionOf(binaries.opm)}`}`,
        `--util-image=${images?.util ?? `quay.io/operator-framework/olm:${versionOf(binaries.olm)}`}`,
      ],
    );
    started.push(catalog);
    for (const proc of [olm, catalog])
      await waitUntilHealthy(
        proc,
        async () => readFileSync(proc.logFile, 'utf8').includes('starting workers'),
        90_000,
      );

    return {
      binaries,
      olm,
      catalog,
      kubectl,
      logs: (lines = 40) =>
        [olm, catalog].map((p) => `--- ${p.name} (${p.logFile}):\n${logTail(p.logFile, lines)}`).join('\n'),
      async serveCatalog(catalogDir: string) {
        const port = await freePort();
        const proc = spawnLogged(dir, `opm-serve-${port}`, binaries.opm, [
          'serve',
          catalogDir,
          `--port=${port}`,
          // Its gRPC port binds every interface (no flag narrows it); the CatalogSource names the loopback one.
          '--pprof-addr=127.0.0.1:0',
          `--termination-log=${path.join(dir, `opm-serve-${port}.termination-log`)}`,
        ]);
        started.push(proc);
        const address = `127.0.0.1:${port}`;
        await waitUntilHealthy(proc, () => canConnect(port), 60_000);
        return { address, process: proc };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Namespaces and the AllNamespaces OperatorGroup of upstream's deploy/upstream/quickstart/olm.yaml. */
function upstreamNamespaces(): string {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OLM_NAMESPACE } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OPERATORS_NAMESPACE } },
    {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'global-operators', namespace: OPERATORS_NAMESPACE },
      spec: {},
    },
  ]
    .map((o) => JSON.stringify(o))
    .join('\n---\n');
}

async function applyStdin(kubectlBin: string, kubeconfig: string, yaml: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(kubectlBin, ['--kubeconfig', kubeconfig, 'apply', '--server-side', '-f', '-'], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`kubectl apply of OLM's namespaces failed: ${stderr.trim()}`)),
    );
    child.stdin.end(yaml);
  });
}

function crdNames(files: readonly string[]): string[] {
  return files.map((f) => {
    const name = /^\s*name:\s*(\S+)/m.exec(readFileSync(f, 'utf8'))?.[1];
    if (!name) throw new Error(`${f}: no metadata.name; rebuild it with \`npm run binaries -- olm\``);
    return `crd/${name}`;
  });
}

/** `<cache>/bin/olm-v0.36.0/olm` -> `v0.36.0`. */
function versionOf(binary: string): string {
  return path.basename(path.dirname(binary)).replace(/^[a-z-]+-(?=v\d)/, '');
}

function spawnOlmProcess(
  dir: string,
  name: string,
  binary: string,
  kubeconfig: string,
  /** The cluster's real nodes: run in the first one's network, as a pod there would (see inNodeNetwork). */
  realNodes: RealNodesState | undefined,
  args: readonly string[],
): ComponentProcess {
  // controller-runtime (the olm operator's manager) reads the kubeconfig from $KUBECONFIG only.
  const env = { KUBECONFIG: kubeconfig };
  if (!realNodes) return spawnLogged(dir, name, binary, args, env);
  const command = inNodeNetwork(realNodes, [linkIn(dir, binary), ...args]);
  return spawnLogged(dir, name, command.binary, command.args, env);
}

/** A link to `binary` in `dir`, so the command line names the state directory (see spawnLogged). */
function linkIn(dir: string, binary: string): string {
  const link = path.join(dir, path.basename(binary));
  if (!existsSync(link)) symlinkSync(binary, link);
  return link;
}

/**
 * Starts `binary` in its own process group with its output in `<dir>/<name>.log`. It runs through a link in `dir`
 * (the cluster's state directory), so its command line names that directory as the control plane's processes do:
 * whatever stops a test run's processes by their temporary folder stops these too.
 */
function spawnLogged(
  dir: string,
  name: string,
  binary: string,
  args: readonly string[],
  env: Record<string, string> = {},
): ComponentProcess {
  const link = path.isAbsolute(binary) ? linkIn(dir, binary) : binary;
  const logFile = path.join(dir, `${name}.log`);
  const out = openSync(logFile, 'a');
  try {
    const child = spawn(link, args, {
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...process.env, KUBECONFIG: '', ...env },
    });
    child.on('error', () => undefined);
    if (child.pid === undefined) throw new Error(`could not start ${binary}: is it built and executable?`);
    child.unref();
    const startTicks = processStartTicks(child.pid);
    return { name, pid: child.pid, logFile, ...(startTicks ? { startTicks } : {}) };
  } finally {
    closeSync(out);
  }
}

async function canConnect(port: number): Promise<boolean> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
