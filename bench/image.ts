// `npm run bench -- image`: the operator image that `npm run image` (hack/image/build.sh) builds, pushed to a local
// registry (CNCF distribution over TLS), all measured in this run:
//  - compressed size per platform: the sum of the layer sizes in that platform's manifest (what a node pulls);
//    goal <= 120 MB each (issue #11);
//  - uncompressed size per platform (the layers' file systems), and the build's wall time (with the download cache
//    as it is: cold the first time on a machine, warm after);
//  - cold start to Ready: the pod placement operator (controller and webhook) from the start of its process until
//    its readiness probe (/readyz) answers 200, in a podman container of this machine's platform (`podman start`
//    of a created container, the image pulled, as on a node that has it) and the same command run outside a
//    container (`node dist/cli/main.js` with the image's own Node binary), alternately, against one local API
//    server; medians of ROUNDS each, and their ratio; goal <= 2 (issue #11). Creating the container is reported
//    apart, without a goal: with the vfs storage these machines need it copies the whole file system (seconds),
//    which overlay storage does not. The pull too is reported without a goal.
import { execFile, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { binaryPaths, cacheDir, requireBinaries } from '../src/devcluster/binaries.js';
import { startDevCluster } from '../src/devcluster/cluster.js';
import { freePort } from '../src/devcluster/processes.js';
import { startLocalRegistry } from '../src/devcluster/registry.js';
import { Podman } from '../test/support/container.js';
import type { BenchMetric, BenchResult } from './types.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PLATFORMS = ['amd64', 'arm64', 'ppc64le', 's390x'] as const;
const MB = 1_000_000;
/** Issue #11: under 120 MB compressed per platform. */
const COMPRESSED_GOAL_MB = 120;
/** Issue #11: the container Ready within 2x the same command outside one. */
const COLD_START_RATIO_GOAL = 2;
/** Cold starts per variant (alternating, so both see the same machine load). */
const ROUNDS = 5;
/** The platform podman runs here. */
const HOST_PLATFORM: Record<string, string> = {
  x64: 'amd64',
  arm64: 'arm64',
  ppc64: 'ppc64le',
  s390x: 's390x',
};

interface Descriptor {
  readonly digest: string;
  readonly size: number;
  readonly platform?: { architecture: string };
}

export async function run(): Promise<BenchResult> {
  const crane = requireBinaries(binaryPaths(), ['crane']).crane;
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-bench-image-'));
  const registry = await startLocalRegistry({ stateDir, auth: 'htpasswd', users: { bench: 'bench-secret' } });
  try {
    const authFile = path.join(stateDir, 'dockerconfig.json');
    writeFileSync(authFile, registry.dockerConfigJson('bench'), { mode: 0o600 });
    const dockerConfig = path.join(stateDir, 'docker');
    mkdirSync(dockerConfig);
    writeFileSync(path.join(dockerConfig, 'config.json'), registry.dockerConfigJson('bench'));
    const env = { ...process.env, DOCKER_CONFIG: dockerConfig, SSL_CERT_FILE: registry.caFile };
    const craneJson = <T>(...args: string[]): T =>
      JSON.parse(execFileSync(crane, args, { encoding: 'utf8', env })) as T;

    const started = performance.now();
    const reference = await new Promise<string>((resolve, reject) => {
      execFile(
        'bash',
        [
          path.join(projectRoot, 'hack/image/build.sh'),
          ...['--registry', registry.host, '--repository', 'tessera/tessera', '--tag', 'bench'],
          ...['--ca-file', registry.caFile, '--auth-file', authFile],
        ],
        { cwd: projectRoot, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) =>
          err
            ? reject(new Error(`hack/image/build.sh failed: ${stderr}`))
            : resolve(stdout.trim().split('\n').at(-1) ?? ''),
      );
    });
    const buildSeconds = (performance.now() - started) / 1000;
    const repo = `${registry.host}/tessera/tessera`;
    const index = craneJson<{ manifests: Descriptor[] }>('manifest', reference);

    const metrics: BenchMetric[] = [];
    for (const platform of PLATFORMS) {
      const entry = index.manifests.find((m) => m.platform?.architecture === platform);
      if (!entry) throw new Error(`${reference} has no ${platform} image`);
      const manifest = craneJson<{ layers: Descriptor[] }>('manifest', `${repo}@${entry.digest}`);
      const compressed = manifest.layers.reduce((sum, layer) => sum + layer.size, 0);
      const config = craneJson<{ rootfs: { diff_ids: string[] } }>('config', `${repo}@${entry.digest}`);
      // Uncompressed: the layers' tar sizes, measured by streaming each blob through gunzip.
      let uncompressed = 0;
      for (const layer of manifest.layers) {
        const tar = execFileSync(
          'sh',
          ['-c', `"$0" blob "$1" | gzip -dc | wc -c`, crane, `${repo}@${layer.digest}`],
          {
            encoding: 'utf8',
            env,
          },
        );
        uncompressed += Number(tar.trim());
      }
      metrics.push(
        {
          name: `${platform}_compressed_mb`,
          value: compressed / MB,
          unit: 'MB',
          goal: { op: '<=', value: COMPRESSED_GOAL_MB },
        },
        { name: `${platform}_uncompressed_mb`, value: uncompressed / MB, unit: 'MB' },
      );
      if (config.rootfs.diff_ids.length !== manifest.layers.length)
        throw new Error(`${platform}: config and manifest disagree on the layer count`);
    }
    metrics.push({ name: 'build_seconds', value: buildSeconds, unit: 's' });
    metrics.push(...(await coldStart(stateDir, reference, registry.caFile, authFile)));
    return { metrics };
  } finally {
    await registry.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Polls /readyz until it answers 200; returns the time of that answer (performance.now()). */
async function readyAt(port: number, what: string, timeoutMs = 120_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return performance.now();
    if (performance.now() > deadline)
      throw new Error(`${what}: /readyz did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The image's own Node for this platform (the npm node-linux-<cpu> package build.sh put in its cache), so the two
 * variants differ by the container only; the running Node when the platform's image carries Debian's instead.
 */
function imageNode(stateDir: string): { path: string; what: string } {
  const version = /^NODE_NPM_VERSION=(\S+)$/m.exec(
    readFileSync(path.join(projectRoot, 'hack/image/versions.env'), 'utf8'),
  )?.[1];
  const cpu = process.arch === 'x64' || process.arch === 'arm64' ? process.arch : undefined;
  const tgz = path.join(cacheDir(), 'image', 'npm', `node-linux-${cpu}-${version}.tgz`);
  if (!version || !cpu || !existsSync(tgz))
    return { path: process.execPath, what: `Node ${process.version}` };
  const dir = path.join(stateDir, 'image-node');
  mkdirSync(dir);
  execFileSync('tar', ['-xzf', tgz, '-C', dir, 'package/bin/node']);
  return { path: path.join(dir, 'package/bin/node'), what: `the image's Node ${version}` };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

/** The pod placement operator's cold start to Ready, in a container and outside one (see the header). */
async function coldStart(
  stateDir: string,
  reference: string,
  caFile: string,
  authFile: string,
): Promise<BenchMetric[]> {
  const platform = HOST_PLATFORM[process.arch];
  if (!platform || process.platform !== 'linux')
    throw new Error(
      `cold start needs a Linux machine of one of the image's platforms, not ${process.platform}/${process.arch}`,
    );
  const cluster = await startDevCluster({
    name: `bench-image-${process.pid}`,
    stateRoot: path.join(stateDir, 'clusters'),
    nodes: 'none',
    controllerManager: false,
    scheduler: false,
    kwok: false,
  });
  const podman = new Podman(path.join(stateDir, 'podman'));
  try {
    // The admin kubeconfig (credentials embedded), readable by the container's user 65532.
    const kubeDir = path.join(stateDir, 'kube');
    mkdirSync(kubeDir, { mode: 0o755 });
    chmodSync(stateDir, 0o755);
    copyFileSync(cluster.kubeconfigPath, path.join(kubeDir, 'kubeconfig'));
    chmodSync(path.join(kubeDir, 'kubeconfig'), 0o644);
    const pullStarted = performance.now();
    await podman.pull(reference.replace(/:[^/@]+@/, '@'), caFile, authFile);
    const pullSeconds = (performance.now() - pullStarted) / 1000;

    const args = (kubeconfig: string, certDir: string, webhookPort: number, probePort: number): string[] => [
      ...['podplacement', 'operator', '--kubeconfig', kubeconfig, '--namespace', 'default'],
      ...['--webhook-host', '127.0.0.1', '--webhook-port', String(webhookPort)],
      ...['--webhook-url', `https://127.0.0.1:${webhookPort}`, '--probe-port', String(probePort)],
      ...['--no-leader-elect', '--install-crds', '--tls', 'self-managed', '--cert-dir', certDir],
    ];
    // The Deployment's V8 limits (deploy/podplacement/base/deployments.yaml), in both variants.
    const nodeOptions = '--max-semi-space-size=4 --max-old-space-size=160';
    const node = imageNode(stateDir);
    const native: number[] = [];
    const container: number[] = [];
    const created: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      {
        const [webhookPort, probePort] = [await freePort(), await freePort()];
        const certDir = mkdtempSync(path.join(stateDir, 'certs-'));
        const started = performance.now();
        const child = spawn(
          node.path,
          [
            path.join(projectRoot, 'dist/cli/main.js'),
            ...args(path.join(kubeDir, 'kubeconfig'), certDir, webhookPort, probePort),
          ],
          { stdio: 'ignore', env: { ...process.env, NODE_OPTIONS: nodeOptions, TESSERA_LOG_LEVEL: 'warn' } },
        );
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        try {
          native.push((await readyAt(probePort, 'the operator outside a container')) - started);
        } finally {
          child.kill('SIGKILL');
          await exited;
        }
      }
      {
        const [webhookPort, probePort] = [await freePort(), await freePort()];
        const createStarted = performance.now();
        const c = await podman.create({
          name: `cold-start-${round}`,
          image: reference.replace(/:[^/@]+@/, '@'),
          args: args('/etc/tessera/kube/kubeconfig', '/tmp/tls', webhookPort, probePort),
          env: { NODE_OPTIONS: nodeOptions, TESSERA_LOG_LEVEL: 'warn' },
          mounts: { [kubeDir]: '/etc/tessera/kube' },
        });
        try {
          const started = performance.now();
          created.push(started - createStarted);
          await c.start();
          container.push((await readyAt(probePort, `container ${c.name}`)) - started);
        } finally {
          await c.remove();
        }
      }
    }
    const nativeMs = median(native);
    const containerMs = median(container);
    const createMs = median(created);
    return [
      {
        name: 'cold_start_ready_native_ms',
        value: nativeMs,
        unit: 'ms',
        baseline: `median of ${ROUNDS}: dist/cli/main.js podplacement operator on ${node.what}, spawn to /readyz 200`,
      },
      {
        name: 'cold_start_ready_container_ms',
        value: containerMs,
        unit: 'ms',
        baseline: `median of ${ROUNDS}: podman start of the created container (${platform}) to /readyz 200`,
      },
      {
        name: 'cold_start_ratio_container_vs_native',
        value: containerMs / nativeMs,
        unit: 'ratio',
        goal: { op: '<=', value: COLD_START_RATIO_GOAL },
        baseline: 'the same command outside a container, same API server, alternating rounds, same run',
      },
      {
        name: 'container_create_ms',
        value: createMs,
        unit: 'ms',
        baseline: `median of ${ROUNDS}: podman create with vfs storage (a full copy of the image's file system; overlay storage, as kubelets use, does not copy)`,
      },
      {
        name: 'cold_start_ratio_create_and_start_vs_native',
        value: (createMs + containerMs) / nativeMs,
        unit: 'ratio',
        baseline: 'podman create + start to /readyz 200, vs the same command outside a container',
      },
      { name: `pull_seconds_${platform}`, value: pullSeconds, unit: 's' },
    ];
  } finally {
    await podman.cleanup();
    await cluster.stop({ wipe: true });
  }
}
