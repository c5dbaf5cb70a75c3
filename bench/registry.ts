// `npm run bench -- registry`: image inspection against a local registry (CNCF distribution over TLS), all
// measured in this run:
//  - cold in-process inspection (fresh inspector: empty cache, new connection, 401 then Basic) vs `crane manifest`
//    (go-containerregistry) on the same image minus crane's bare start-up (`crane version`); runs interleaved,
//    medians;
//  - the whole `tessera image inspect` command (dist/cli/main.js) vs a bare `node -e 0`;
//  - cached inspections per second through CachingInspector with its Prometheus metrics attached;
//  - 1,000 concurrent inspections of 10 distinct images: manifest fetches counted in the registry's access log.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { binaryPaths, requireBinaries } from '../src/devcluster/binaries.js';
import { startLocalRegistry, type LocalRegistry } from '../src/devcluster/registry.js';
import { multiPlatformImage, singleImage } from '../src/devcluster/registry-images.js';
import { CachingInspector } from '../src/registry/caching-inspector.js';
import { parseDockerConfigJson } from '../src/registry/docker-config.js';
import { Keyring } from '../src/registry/keyring.js';
import { createInspectionCacheMetrics } from '../src/registry/metrics.js';
import { RegistryInspector } from '../src/registry/registry-inspector.js';
import type { BenchMetric, BenchResult } from './types.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The built CLI (`npm run bench` builds it first); TESSERA_BENCH_CLI points at another build. */
const cli = process.env.TESSERA_BENCH_CLI ?? path.join(projectRoot, 'dist/cli/main.js');
const COLD_RUNS = 21;
const PROCESS_RUNS = 15;
const CACHED_CALLS = 500_000;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function timeProcess(command: string, args: readonly string[], env?: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const result = spawnSync(command, args, { encoding: 'utf8', env });
  const elapsed = performance.now() - started;
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr || result.error?.message}`);
  return elapsed;
}

function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export async function run(): Promise<BenchResult> {
  if (!existsSync(cli))
    throw new Error(`${cli} is missing: run \`npm run build\` first (npm run bench does)`);
  const stateRoot = mkdtempSync(path.join(os.tmpdir(), 'tessera-bench-registry-'));
  const registries: LocalRegistry[] = [];
  try {
    const secured = await startLocalRegistry({
      stateDir: path.join(stateRoot, 'htpasswd'),
      auth: 'htpasswd',
    });
    registries.push(secured);
    const open = await startLocalRegistry({ stateDir: path.join(stateRoot, 'open'), auth: 'none' });
    registries.push(open);

    const image = `${secured.host}/bench/app:v1`;
    await secured.pushImage(
      'bench/app',
      'v1',
      multiPlatformImage({
        platforms: [
          { architecture: 'amd64' },
          { architecture: 'arm64', variant: 'v8' },
          { architecture: 'ppc64le' },
          { architecture: 's390x' },
        ],
        attestations: 1,
      }),
    );
    const configFile = path.join(stateRoot, 'config.json');
    writeFileSync(configFile, secured.dockerConfigJson());
    // crane reads credentials from $DOCKER_CONFIG/config.json and trusts the CA through SSL_CERT_FILE.
    const crane = requireBinaries(binaryPaths(), ['crane']).crane;
    const dockerConfigDir = path.join(stateRoot, 'crane-docker-config');
    mkdirSync(dockerConfigDir);
    writeFileSync(path.join(dockerConfigDir, 'config.json'), secured.dockerConfigJson());
    const craneEnv = { ...process.env, DOCKER_CONFIG: dockerConfigDir, SSL_CERT_FILE: secured.caFile };
    const keyring = Keyring.of(parseDockerConfigJson(secured.dockerConfigJson(), configFile));

    // Cold in-process inspection vs crane, interleaved so machine load affects both alike.
    const coldOnce = async (): Promise<number> => {
      const started = performance.now();
      const inspector = new RegistryInspector({ caCertificates: [secured.caCertPem] });
      const result = await inspector.inspect(image, { keyring });
      const elapsed = performance.now() - started;
      await inspector.close();
      if (result.architectures.length !== 4)
        throw new Error(`unexpected architectures ${result.architectures.join(',')}`);
      return elapsed;
    };
    await coldOnce(); // loads the modules once: "in-process" means a running process
    const cold: number[] = [];
    const craneManifest: number[] = [];
    const craneVersion: number[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      cold.push(await coldOnce());
      craneManifest.push(timeProcess(crane, ['manifest', image], craneEnv));
      craneVersion.push(timeProcess(crane, ['version'], craneEnv));
    }
    const coldMs = median(cold);
    const craneNetMs = median(craneManifest) - median(craneVersion);

    // The whole CLI command vs a bare Node start.
    const cliArgs = [
      cli,
      'image',
      'inspect',
      image,
      '--pull-secret',
      configFile,
      '--ca-file',
      secured.caFile,
      '-o',
      'json',
    ];
    const cliRuns: number[] = [];
    const nodeRuns: number[] = [];
    timeProcess(process.execPath, cliArgs);
    for (let i = 0; i < PROCESS_RUNS; i++) {
      cliRuns.push(timeProcess(process.execPath, cliArgs));
      nodeRuns.push(timeProcess(process.execPath, ['-e', '0']));
    }
    const cliMs = median(cliRuns);
    const nodeMs = median(nodeRuns);

    // Cached inspections per second, with the production metrics attached.
    const inspector = new RegistryInspector({ caCertificates: [secured.caCertPem, open.caCertPem] });
    const cached = new CachingInspector(inspector, { metrics: createInspectionCacheMetrics(new Registry()) });
    await cached.inspect(image, { keyring });
    for (let i = 0; i < 10_000; i++) await cached.inspect(image, { keyring });
    const cachedStarted = performance.now();
    for (let i = 0; i < CACHED_CALLS; i++) await cached.inspect(image, { keyring });
    const cachedPerSecond = CACHED_CALLS / ((performance.now() - cachedStarted) / 1000);

    // Fan-out: 1,000 concurrent inspections of 10 images (5 indexes, 5 single manifests needing their config).
    const repos: string[] = [];
    for (let i = 0; i < 10; i++) {
      const repo = `fanout/img${i}`;
      const built =
        i % 2 === 0
          ? multiPlatformImage({
              platforms: [{ architecture: 'amd64' }, { architecture: 'arm64' }],
              salt: `fan${i}`,
            })
          : singleImage({ platform: { architecture: 's390x' }, salt: `fan${i}` });
      await open.pushImage(repo, 'v1', built);
      repos.push(`${open.host}/${repo}:v1`);
    }
    const fanout = new CachingInspector(inspector);
    const logBefore = open.accessLog().length;
    const fanStarted = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => fanout.inspect(repos[i % 10] ?? '')),
    );
    const fanMs = performance.now() - fanStarted;
    if (answers.length !== 1000) throw new Error('fan-out lost answers');
    const requests = open
      .accessLog()
      .slice(logBefore)
      .filter((e) => e.method === 'GET');
    const manifestFetches = requests.filter((e) => e.path.includes('/manifests/')).length;
    const configFetches = requests.filter((e) => e.path.includes('/blobs/')).length;
    await inspector.close();

    const metrics: BenchMetric[] = [
      {
        name: 'cold_inspection_ratio_vs_crane',
        value: round(coldMs / craneNetMs),
        unit: 'ratio',
        goal: { op: '<=', value: 1 },
        baseline: 'crane manifest on the same image minus crane version, medians, same run',
      },
      { name: 'cold_inspection_ms', value: round(coldMs), unit: 'ms' },
      { name: 'crane_manifest_minus_startup_ms', value: round(craneNetMs), unit: 'ms' },
      {
        name: 'cli_inspect_ratio_vs_node_start',
        value: round(cliMs / nodeMs),
        unit: 'ratio',
        goal: { op: '<=', value: 2 },
        baseline: 'node -e 0, medians, same run',
      },
      { name: 'cli_inspect_ms', value: round(cliMs), unit: 'ms' },
      { name: 'node_start_ms', value: round(nodeMs), unit: 'ms' },
      {
        name: 'cached_inspections_per_second',
        value: Math.round(cachedPerSecond),
        unit: 'ops/s',
        goal: { op: '>=', value: 100_000 },
      },
      {
        name: 'fanout_manifest_fetches',
        value: manifestFetches,
        unit: 'requests',
        goal: { op: '==', value: 10 },
        baseline: '1,000 concurrent inspections of 10 distinct images, counted in the registry access log',
      },
      {
        name: 'fanout_config_fetches',
        value: configFetches,
        unit: 'requests',
        baseline: '5 of the 10 images are single manifests',
      },
      { name: 'fanout_wall_ms', value: round(fanMs), unit: 'ms' },
    ];
    return { metrics };
  } finally {
    for (const r of registries) await r.stop();
    rmSync(stateRoot, { recursive: true, force: true });
  }
}
