// The operator image as `npm run image` builds it (hack/image/build.sh), pushed to a real local registry: the index
// has the four platforms, each image is configured to run as 65532 with the tessera entrypoint, building twice gives
// the same digests, and the amd64 image's own glibc and Node run `tessera --version`. crane, an independent OCI
// client, reads what was pushed. The first build downloads Debian packages and Node into the cache
// (~/.cache/tessera/image) and compiles src/; later builds reuse the downloads.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryPaths, requireBinaries } from '../../../src/devcluster/binaries.js';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';

const projectRoot = path.resolve(import.meta.dirname, '../../..');
const PLATFORMS = ['amd64', 'arm64', 'ppc64le', 's390x'] as const;
const REPOSITORY = 'tessera/operator';
const TAG = 'it';
/** A cold build (downloads, tsc, npm ci, compressing four images) takes minutes on two cores. */
const BUILD_TIMEOUT_MS = 20 * 60_000;

let registry: LocalRegistry;
let stateDir: string;
let authFile: string;
let firstBuild: BuildOutput;
let craneEnv: NodeJS.ProcessEnv;
const crane = requireBinaries(binaryPaths(), ['crane']).crane;
const packageVersion = (
  JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }
).version;

interface BuildOutput {
  /** `HOST/REPOSITORY:TAG@sha256:...`, the script's last stdout line. */
  readonly reference: string;
  readonly indexDigest: string;
  readonly seconds: number;
}

function build(): Promise<BuildOutput> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [
        path.join(projectRoot, 'hack/image/build.sh'),
        '--registry',
        registry.host,
        '--repository',
        REPOSITORY,
        '--tag',
        TAG,
        '--ca-file',
        registry.caFile,
        '--auth-file',
        authFile,
      ],
      { cwd: projectRoot, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`hack/image/build.sh failed: ${err.message}\n${stderr}`));
          return;
        }
        const reference = stdout.trim().split('\n').at(-1) ?? '';
        process.stderr.write(`[image test] build took ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
        resolve({
          reference,
          indexDigest: reference.slice(reference.lastIndexOf('@') + 1),
          seconds: (Date.now() - started) / 1000,
        });
      },
    );
  });
}

function runCrane(...args: string[]): string {
  return execFileSync(crane, args, { encoding: 'utf8', env: craneEnv, maxBuffer: 64 * 1024 * 1024 });
}

interface Descriptor {
  readonly digest: string;
  readonly size: number;
  readonly mediaType: string;
  readonly platform?: { os: string; architecture: string };
}

function manifestOf(platform: string): { config: Descriptor; layers: Descriptor[] } {
  const index = JSON.parse(
    runCrane('manifest', `${registry.host}/${REPOSITORY}@${firstBuild.indexDigest}`),
  ) as {
    manifests: Descriptor[];
  };
  const entry = index.manifests.find((m) => m.platform?.architecture === platform);
  if (!entry) throw new Error(`no ${platform} entry in the index`);
  return JSON.parse(runCrane('manifest', `${registry.host}/${REPOSITORY}@${entry.digest}`)) as {
    config: Descriptor;
    layers: Descriptor[];
  };
}

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-image-'));
  registry = await startLocalRegistry({ stateDir, auth: 'htpasswd', users: { builder: 'builder-secret' } });
  authFile = path.join(stateDir, 'dockerconfig.json');
  writeFileSync(authFile, registry.dockerConfigJson('builder'), { mode: 0o600 });
  const dockerConfigDir = path.join(stateDir, 'crane-docker-config');
  mkdirSync(dockerConfigDir);
  writeFileSync(path.join(dockerConfigDir, 'config.json'), registry.dockerConfigJson('builder'));
  craneEnv = { ...process.env, DOCKER_CONFIG: dockerConfigDir, SSL_CERT_FILE: registry.caFile };
  firstBuild = await build();
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await registry?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe('npm run image', () => {
  it('pushes an index that `tessera image inspect` shows with exactly the four platforms', () => {
    expect(firstBuild.reference).toBe(`${registry.host}/${REPOSITORY}:${TAG}@${firstBuild.indexDigest}`);
    const out = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(projectRoot, 'src/cli/main.ts'),
        'image',
        'inspect',
        `${registry.host}/${REPOSITORY}:${TAG}`,
        '--pull-secret',
        authFile,
        '--ca-file',
        registry.caFile,
        '-o',
        'json',
      ],
      { cwd: projectRoot, encoding: 'utf8', timeout: 60_000 },
    );
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    const doc = JSON.parse(out.stdout) as {
      digest: string;
      kind: string;
      architectures: string[];
      platforms: { os: string; architecture: string; variant: string | null }[];
    };
    expect(doc.digest).toBe(firstBuild.indexDigest);
    expect(doc.architectures).toEqual([...PLATFORMS]);
    expect(doc.platforms.map((p) => `${p.os}/${p.architecture}`).sort()).toEqual(
      PLATFORMS.map((p) => `linux/${p}`),
    );
  });

  it('configures every platform to run tessera as user 65532, with OCI labels and the platform it was built for', () => {
    const revision = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: projectRoot,
      encoding: 'utf8',
    }).trim();
    for (const platform of PLATFORMS) {
      const manifest = manifestOf(platform);
      const config = JSON.parse(
        runCrane('blob', `${registry.host}/${REPOSITORY}@${manifest.config.digest}`),
      ) as {
        architecture: string;
        os: string;
        config: { User: string; Entrypoint: string[]; Labels: Record<string, string> };
      };
      expect(`${config.os}/${config.architecture}`, platform).toBe(`linux/${platform}`);
      expect(config.config.User, platform).toBe('65532:65532');
      expect(config.config.Entrypoint, platform).toEqual([
        '/usr/local/bin/node',
        '/opt/tessera/dist/cli/main.js',
      ]);
      expect(config.config.Labels, platform).toMatchObject({
        'org.opencontainers.image.title': 'tessera',
        'org.opencontainers.image.version': packageVersion,
        'org.opencontainers.image.revision': revision,
        'org.opencontainers.image.licenses': 'Apache-2.0',
      });
      // Base file system, Node, app: the app layer is the same blob on every platform (pulled once per node).
      expect(manifest.layers, platform).toHaveLength(3);
    }
    const appLayers = new Set(PLATFORMS.map((p) => manifestOf(p).layers[2]?.digest));
    expect(appLayers.size).toBe(1);
  });

  it('gives the nonroot user its entries in /etc/passwd and /etc/group and its own home', () => {
    const base = manifestOf('s390x').layers[0];
    if (!base) throw new Error('no base layer');
    const blob = execFileSync(crane, ['blob', `${registry.host}/${REPOSITORY}@${base.digest}`], {
      env: craneEnv,
      maxBuffer: 256 * 1024 * 1024,
    });
    const listing = execFileSync('tar', ['-tzv', '--numeric-owner'], {
      input: blob,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(listing).toMatch(/^drwxr-xr-x 65532\/65532 .* home\/nonroot\/$/m);
    expect(listing).toMatch(/^-rw-r--r-- 0\/0 .* etc\/ssl\/certs\/ca-certificates\.crt$/m);
    const passwd = execFileSync('tar', ['-xzO', 'etc/passwd'], { input: blob, encoding: 'utf8' });
    expect(passwd).toContain('nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin');
    const group = execFileSync('tar', ['-xzO', 'etc/group'], { input: blob, encoding: 'utf8' });
    expect(group).toContain('nonroot:x:65532:');
  });

  it.runIf(process.arch === 'x64' && process.platform === 'linux')(
    "runs `tessera --version` with the amd64 image's own loader, libraries and Node",
    () => {
      const rootfs = path.join(stateDir, 'rootfs-amd64');
      mkdirSync(rootfs);
      const entry = JSON.parse(
        runCrane('manifest', `${registry.host}/${REPOSITORY}@${firstBuild.indexDigest}`),
      ) as { manifests: Descriptor[] };
      const amd64 = entry.manifests.find((m) => m.platform?.architecture === 'amd64');
      const flat = execFileSync(crane, ['export', `${registry.host}/${REPOSITORY}@${amd64?.digest}`, '-'], {
        env: craneEnv,
        maxBuffer: 1024 * 1024 * 1024,
      });
      execFileSync('tar', ['-x', '-C', rootfs], { input: flat, maxBuffer: 16 * 1024 * 1024 });
      // No chroot (no root needed): the image's dynamic loader runs its Node against the image's libraries.
      const out = spawnSync(
        path.join(rootfs, 'usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'),
        [
          '--library-path',
          path.join(rootfs, 'usr/lib/x86_64-linux-gnu'),
          path.join(rootfs, 'usr/local/bin/node'),
          path.join(rootfs, 'opt/tessera/dist/cli/main.js'),
          '--version',
        ],
        { encoding: 'utf8', timeout: 60_000, env: { PATH: '/usr/bin:/bin' } },
      );
      expect(out.stderr).toBe('');
      expect(out.stdout.trim()).toBe(packageVersion);
      expect(out.status).toBe(0);
    },
  );

  it('refuses a cached .deb whose SHA-256 differs from debian.lock, and removes it so the next build downloads it', () => {
    // A cache of its own (the Go binaries linked in) holding a tampered libc6.
    const cache = path.join(stateDir, 'tampered-cache');
    mkdirSync(path.join(cache, 'image', 'debs'), { recursive: true });
    symlinkSync(path.dirname(path.dirname(crane)), path.join(cache, 'bin'));
    const lock = readFileSync(path.join(projectRoot, 'hack/image/debian.lock'), 'utf8');
    const libc6 = lock.split('\n').find((line) => line.startsWith('amd64 base libc6 '));
    const url = libc6?.split(' ')[5];
    if (!url) throw new Error('debian.lock has no amd64 libc6');
    const tampered = path.join(cache, 'image', 'debs', path.basename(url));
    writeFileSync(tampered, 'not the package debian.lock pins');
    const out = spawnSync(
      'bash',
      [
        path.join(projectRoot, 'hack/image/build.sh'),
        'rootfs',
        'amd64',
        path.join(stateDir, 'tampered-rootfs'),
      ],
      {
        cwd: projectRoot,
        encoding: 'utf8',
        timeout: 300_000,
        env: { ...process.env, TESSERA_CACHE_DIR: cache },
      },
    );
    expect(out.status).toBe(1);
    expect(out.stderr).toContain(`${url}: SHA-256 differs from debian.lock`);
    expect(existsSync(tampered)).toBe(false);
  });

  it(
    'is reproducible: a second build of the same inputs pushes the same index digest',
    async () => {
      const second = await build();
      expect(second.indexDigest).toBe(firstBuild.indexDigest);
    },
    BUILD_TIMEOUT_MS,
  );
});
