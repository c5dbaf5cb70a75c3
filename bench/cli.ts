// `npm run bench -- cli`: what `tessera` commands cost as whole processes (start to exit, output printed), each
// against a baseline measured in the same run. Runs are paired and alternate which goes first (machine load hits
// both alike); a ratio is the median of the per-pair ratios, a time the median of its runs.
//  - `tessera --version` vs `node -e 0`;
//  - `tessera image inspect` of a multi-arch image in a registry served by this process on loopback (HTTPS with a
//    fresh CA, no auth: the distribution API's manifest and blob reads) vs `node -e 0` (goal: at most 2x);
//  - `tessera upgrade status --mock-clusterversion` on a small oc example snapshot vs bare node reading and parsing
//    the same files with the same YAML parser (js-yaml).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createCertificateAuthority } from '../src/devcluster/pki.js';
import { multiPlatformImage, type Blob, type BuiltImage } from '../src/devcluster/registry-images.js';
import { fixturePath } from '../test/support/fixtures.js';
import type { BenchMetric, BenchResult } from './types.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The built CLI (`npm run bench` builds it first); TESSERA_BENCH_CLI points at another build. */
const cli = process.env.TESSERA_BENCH_CLI ?? path.join(projectRoot, 'dist/cli/main.js');
const PAIRS = 15;
/** The snapshot: the smallest oc example with all five inputs (cv, co, mcp, mc, node). */
const SNAPSHOT = '4.16.0-compact';
const SNAPSHOT_PARTS = ['cv', 'co', 'mcp', 'mc', 'node'] as const;

interface Command {
  readonly args: readonly string[];
  /** Checked once before timing, so a broken command cannot pass as fast. */
  readonly expect: RegExp;
}

/** Runs node with `args` to its exit (async, so the in-process registry keeps answering); output and time. */
function runNode(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started }));
  });
}

async function timeProcess(c: Command): Promise<number> {
  const r = await runNode(c.args);
  if (r.code !== 0) throw new Error(`node ${c.args.join(' ')} failed: ${r.stderr}`);
  return r.ms;
}

/** A read-only registry on 127.0.0.1 serving `images` (repository:tag -> image), HTTPS with a fresh CA. */
async function startLoopbackRegistry(images: Readonly<Record<string, BuiltImage>>) {
  const ca = await createCertificateAuthority('bench-registry-ca');
  const leaf = await ca.issue({ commonName: 'bench', ipAddresses: ['127.0.0.1'], usage: 'server' });
  const byPath = new Map<string, Blob>();
  const add = (repo: string, ref: string, image: BuiltImage): void => {
    byPath.set(`/v2/${repo}/manifests/${ref}`, image.manifest);
    byPath.set(`/v2/${repo}/manifests/${image.manifest.digest}`, image.manifest);
    for (const b of image.blobs) byPath.set(`/v2/${repo}/blobs/${b.digest}`, b);
    for (const child of image.children) add(repo, child.manifest.digest, child);
  };
  for (const [name, image] of Object.entries(images)) {
    const [repo = '', tag = ''] = name.split(':');
    add(repo, tag, image);
  }
  const server = https.createServer({ cert: leaf.certPem, key: leaf.keyPem }, (req, res) => {
    const url = req.url ?? '';
    if (url === '/v2/') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    const blob = byPath.get(url);
    if (!blob) return void res.writeHead(404).end();
    res.writeHead(200, {
      'content-type': blob.mediaType,
      'content-length': String(blob.size),
      'docker-content-digest': blob.digest,
    });
    res.end(req.method === 'HEAD' ? undefined : blob.bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    caCertPem: ca.certPem,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? Number.NaN)
    : ((sorted[mid - 1] ?? Number.NaN) + (sorted[mid] ?? Number.NaN)) / 2;
}

function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** PAIRS paired runs of `command` and `baseline`, alternating which runs first. */
async function paired(
  command: Command,
  baseline: Command,
): Promise<{ commandMs: number; baselineMs: number; ratio: number }> {
  for (const c of [command, baseline]) {
    const out = await runNode(c.args);
    if (out.code !== 0 || !c.expect.test(out.stdout))
      throw new Error(`node ${c.args.join(' ')} did not print what it should: ${out.stdout}${out.stderr}`);
  }
  const commandRuns: number[] = [];
  const baselineRuns: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    let c: number;
    let b: number;
    if (i % 2 === 0) {
      c = await timeProcess(command);
      b = await timeProcess(baseline);
    } else {
      b = await timeProcess(baseline);
      c = await timeProcess(command);
    }
    commandRuns.push(c);
    baselineRuns.push(b);
    ratios.push(c / b);
  }
  return { commandMs: median(commandRuns), baselineMs: median(baselineRuns), ratio: median(ratios) };
}

export async function run(): Promise<BenchResult> {
  if (!existsSync(cli))
    throw new Error(`${cli} is missing: run \`npm run build\` first (npm run bench does)`);
  // `node -e 0` that also prints a line, so both sides of a pair write their output before exiting.
  const bareNode: Command = { args: ['-e', 'process.stdout.write("ok\\n")'], expect: /^ok$/m };
  const metrics: BenchMetric[] = [];

  const version = await paired({ args: [cli, '--version'], expect: /^\d+\.\d+\.\d+/ }, bareNode);
  metrics.push(
    { name: 'version_ms', value: round(version.commandMs), unit: 'ms' },
    {
      name: 'version_vs_node_ratio',
      value: round(version.ratio),
      unit: 'ratio',
      baseline: `bare node -e printing one line (${round(version.baselineMs)} ms median), paired runs, same run`,
    },
  );

  const stateRoot = mkdtempSync(path.join(os.tmpdir(), 'tessera-bench-cli-'));
  const registry = await startLoopbackRegistry({
    'bench/app:v1': multiPlatformImage({
      platforms: [
        { architecture: 'amd64' },
        { architecture: 'arm64', variant: 'v8' },
        { architecture: 's390x' },
      ],
    }),
  });
  try {
    const caFile = path.join(stateRoot, 'ca.crt');
    writeFileSync(caFile, registry.caCertPem);
    const inspect = await paired(
      {
        args: [cli, 'image', 'inspect', `${registry.host}/bench/app:v1`, '--ca-file', caFile],
        expect: /arm64/,
      },
      bareNode,
    );
    metrics.push(
      { name: 'image_inspect_ms', value: round(inspect.commandMs), unit: 'ms' },
      {
        name: 'image_inspect_vs_node_ratio',
        value: round(inspect.ratio),
        unit: 'ratio',
        goal: { op: '<=', value: 2 },
        baseline: `bare node -e printing one line (${round(inspect.baselineMs)} ms median), paired runs, same run; loopback registry over TLS`,
      },
    );
  } finally {
    await registry.close();
    rmSync(stateRoot, { recursive: true, force: true });
  }

  const dir = fixturePath('oc-upgrade-status');
  const files = SNAPSHOT_PARTS.map((p) => path.join(dir, `${SNAPSHOT}-${p}.yaml`));
  // The same work minus Tessera: start node, read the snapshot's files and parse them with js-yaml.
  const parseOnly = [
    "import { readFileSync } from 'node:fs';",
    "import { load } from 'js-yaml';",
    `let n = 0; for (const f of ${JSON.stringify(files)}) n += JSON.stringify(load(readFileSync(f, 'utf8'))).length;`,
    'process.stdout.write(`parsed ${n}\\n`);',
  ].join('\n');
  const status = await paired(
    {
      args: [cli, 'upgrade', 'status', '--mock-clusterversion', files[0] ?? ''],
      expect: /Control Plane|cluster is not updating|Update/i,
    },
    { args: ['--input-type=module', '-e', parseOnly], expect: /^parsed \d+$/m },
  );
  metrics.push(
    { name: 'upgrade_status_snapshot_ms', value: round(status.commandMs), unit: 'ms' },
    {
      name: 'upgrade_status_snapshot_vs_node_parse_ratio',
      value: round(status.ratio),
      unit: 'ratio',
      baseline: `node reading and parsing the same ${SNAPSHOT} files with js-yaml (${round(status.baselineMs)} ms median), paired runs, same run`,
    },
  );
  return { metrics };
}
