// `npm run bench -- image`: the operator image that `npm run image` (hack/image/build.sh) builds, pushed to a local
// registry (CNCF distribution over TLS), all measured in this run:
//  - compressed size per platform: the sum of the layer sizes in that platform's manifest (what a node pulls);
//    goal <= 120 MB each (issue #11);
//  - uncompressed size per platform (the layers' file systems), and the build's wall time (with the download cache
//    as it is: cold the first time on a machine, warm after).
// Cold start of the container to Ready needs a container runtime (podman), which the benchmark machine lacks; it is
// not measured here.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { binaryPaths, requireBinaries } from '../src/devcluster/binaries.js';
import { startLocalRegistry } from '../src/devcluster/registry.js';
import type { BenchMetric, BenchResult } from './types.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PLATFORMS = ['amd64', 'arm64', 'ppc64le', 's390x'] as const;
const MB = 1_000_000;
/** Issue #11: under 120 MB compressed per platform. */
const COMPRESSED_GOAL_MB = 120;

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
    return { metrics };
  } finally {
    await registry.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
