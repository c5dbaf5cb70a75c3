import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  binaryPaths,
  buildComponentsFor,
  buildLogPath,
  cacheDir,
  DEV_CLUSTER_BINARIES,
  ensureBinaries,
  missingBinaries,
  OLM_TEST_BINARIES,
  OPERATOR_FRAMEWORK_BINARIES,
  parseVersionsEnv,
  projectRoot,
  readComponentVersions,
  requireBinaries,
  TEST_BINARIES,
  type ComponentVersions,
} from './binaries.js';

const versions: ComponentVersions = {
  kubernetes: 'v1.37.2',
  etcd: 'v3.6.16',
  kwok: 'v0.8.0',
  distribution: 'v3.1.2',
  crane: 'v0.22.1',
  prometheus: 'v0.316.0',
  kubeRbacProxy: 'v0.19.1',
  operatorRegistry: 'v1.60.0',
  operatorFrameworkApi: 'v0.36.0',
  olm: 'v0.36.0',
  containerd: 'v2.4.2',
  cniPlugins: 'v1.10.0',
  certManager: 'v1.21.2',
};

describe('binaries', () => {
  it('parses versions.env, ignoring comments', () => {
    expect(
      parseVersionsEnv(
        '# c\nKUBERNETES_VERSION=v1.37.2\n\nETCD_VERSION=v3.6.16\nKWOK_VERSION=v0.8.0\n' +
          'DISTRIBUTION_VERSION=v3.1.2\nCRANE_VERSION=v0.22.1\n' +
          'PROMETHEUS_VERSION=v0.316.0\nKUBE_RBAC_PROXY_VERSION=v0.19.1\n' +
          'OPERATOR_REGISTRY_VERSION=v1.60.0\nOPERATOR_FRAMEWORK_API_VERSION=v0.36.0\nOLM_VERSION=v0.36.0\n' +
          'CONTAINERD_VERSION=v2.4.2\nCNI_PLUGINS_VERSION=v1.10.0\nCERT_MANAGER_VERSION=v1.21.2\n',
      ),
    ).toEqual(versions);
  });

  it('names the missing key', () => {
    expect(() => parseVersionsEnv('KUBERNETES_VERSION=v1\n')).toThrow(/ETCD_VERSION/);
  });

  it('pins every component the repository builds', () => {
    const pinned = readComponentVersions();
    for (const version of Object.values(pinned)) expect(version).toMatch(/^v\d+\.\d+\.\d+$/);
  });

  it('keys the cache by component and version', () => {
    const paths = binaryPaths(versions, '/c');
    expect(paths['kube-apiserver']).toBe('/c/bin/kubernetes-v1.37.2/kube-apiserver');
    expect(paths.etcd).toBe('/c/bin/etcd-v3.6.16/etcd');
    expect(paths.kwok).toBe('/c/bin/kwok-v0.8.0/kwok');
    expect(paths.registry).toBe('/c/bin/registry-v3.1.2/registry');
    expect(paths.crane).toBe('/c/bin/crane-v0.22.1/crane');
    expect(paths.opm).toBe('/c/bin/opm-v1.60.0/opm');
    expect(paths['olm-validate']).toBe('/c/bin/olm-validate-v0.36.0/olm-validate');
    expect(paths.olm).toBe('/c/bin/olm-v0.36.0/olm');
    expect(paths.catalog).toBe('/c/bin/olm-v0.36.0/catalog');
    expect(paths.olmCrds).toContain('/c/bin/olm-v0.36.0/crds/0000_50_olm_00-clusterserviceversions.crd.yaml');
  });

  it('follows TESSERA_CACHE_DIR, then XDG_CACHE_HOME', () => {
    expect(cacheDir({ TESSERA_CACHE_DIR: '/x' })).toBe('/x');
    expect(cacheDir({ XDG_CACHE_HOME: '/y' })).toBe('/y/tessera');
  });

  it('tells the user how to build missing binaries, naming only the missing components', () => {
    const paths = binaryPaths(versions, '/nonexistent');
    expect(() => requireBinaries(paths, ['registry'])).toThrow(/npm run binaries -- registry`/);
    expect(() => requireBinaries(paths)).toThrow(/npm run binaries -- etcd kubernetes kwok registry`/);
  });

  it('the dev cluster needs the registry; the tests also need crane', () => {
    expect(buildComponentsFor(DEV_CLUSTER_BINARIES)).toEqual(['etcd', 'kubernetes', 'kwok', 'registry']);
    expect(buildComponentsFor(TEST_BINARIES)).toEqual(['etcd', 'kubernetes', 'kwok', 'registry', 'crane']);
  });

  it('finds only what is missing, counting kwok missing while its stage files are', () => {
    const cache = mkdtempSync(path.join(os.tmpdir(), 'tessera-binaries-'));
    try {
      const paths = binaryPaths(versions, cache);
      for (const name of TEST_BINARIES) {
        mkdirSync(path.dirname(paths[name]), { recursive: true });
        writeFileSync(paths[name], '#!/bin/sh\n', { mode: 0o755 });
      }
      const stages = missingBinaries(TEST_BINARIES, paths);
      expect(stages.names).toEqual(['kwok']);
      expect(stages.files).toEqual(paths.kwokStages);
      expect(missingBinaries(['registry', 'crane'], paths)).toEqual({ names: [], files: [] });
      rmSync(paths.crane);
      expect(missingBinaries(TEST_BINARIES, paths).names).toEqual(['crane', 'kwok']);
      expect(() => requireBinaries(paths, ['registry'])).not.toThrow();
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('builds both OLM operators with one component, counted missing while its CRDs are', () => {
    expect(buildComponentsFor(OLM_TEST_BINARIES)).toEqual(['olm', 'opm']);
    expect(buildComponentsFor(OPERATOR_FRAMEWORK_BINARIES)).toEqual(['opm', 'olm-validate']);
    const cache = mkdtempSync(path.join(os.tmpdir(), 'tessera-binaries-'));
    try {
      const paths = binaryPaths(versions, cache);
      for (const name of OLM_TEST_BINARIES) {
        mkdirSync(path.dirname(paths[name]), { recursive: true });
        writeFileSync(paths[name], '#!/bin/sh\n', { mode: 0o755 });
      }
      writeFileSync(paths.opmPolicy, '{}\n');
      const crds = missingBinaries(OLM_TEST_BINARIES, paths);
      expect(crds.names).toEqual(['olm']);
      expect(crds.files).toEqual(paths.olmCrds);
      expect(() => requireBinaries(paths, OLM_TEST_BINARIES)).toThrow(/npm run binaries -- olm`/);
      for (const file of paths.olmCrds) {
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, 'kind: CustomResourceDefinition\n');
      }
      expect(missingBinaries(OLM_TEST_BINARIES, paths)).toEqual({ names: [], files: [] });
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('counts opm missing while its own containers policy is (an older opm reads /etc/containers/policy.json)', () => {
    const cache = mkdtempSync(path.join(os.tmpdir(), 'tessera-binaries-'));
    try {
      const paths = binaryPaths(versions, cache);
      expect(paths.opmPolicy).toBe(path.join(cache, 'bin', 'opm-v1.60.0', 'policy.json'));
      mkdirSync(path.dirname(paths.opm), { recursive: true });
      writeFileSync(paths.opm, '#!/bin/sh\n', { mode: 0o755 });
      expect(missingBinaries(['opm'], paths)).toEqual({ names: ['opm'], files: [paths.opmPolicy] });
      expect(() => requireBinaries(paths, ['opm'])).toThrow(/npm run binaries -- opm`/);
      writeFileSync(paths.opmPolicy, '{}\n');
      expect(missingBinaries(['opm'], paths)).toEqual({ names: [], files: [] });
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});

// Stands in for `go build ... -o DIR/ PKG...`: says what Go says first (and the link flags it was given), then writes
// one executable per package, named as go names it; fails like a compile error in the module directory named by FAKE_GO_FAIL.
const FAKE_GO = `#!/usr/bin/env bash
echo "go: downloading example.com/fake v1.0.0" >&2
[ "$1" = build ] || { echo "fake go: only go build" >&2; exit 2; }
shift
if [ "$(basename "$PWD")" = "\${FAKE_GO_FAIL:-}" ]; then echo "main.go:1:1: undefined: broken" >&2; exit 1; fi
out="" pkgs=()
while [ $# -gt 0 ]; do case $1 in -o) out=$2; shift 2 ;; -ldflags) echo "ldflags: $2" >&2; shift 2 ;; -*) shift ;; *) pkgs+=("$1"); shift ;; esac; done
for p in "\${pkgs[@]}"; do
  b=$(basename "$p"); if [[ $b =~ ^v[0-9]+$ ]]; then b=$(basename "$(dirname "$p")"); fi
  printf '#!/bin/sh\\n' >"$out/$b"; chmod +x "$out/$b"
done
`;

describe('hack/build-binaries.sh', () => {
  const script = path.join(projectRoot, 'hack', 'build-binaries.sh');
  const pinned = readComponentVersions();
  let fakeGoDir: string;
  let cache: string;
  let bin: string;
  beforeAll(() => {
    fakeGoDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-fake-go-'));
    writeFileSync(path.join(fakeGoDir, 'go'), FAKE_GO, { mode: 0o755 });
  });
  afterAll(() => rmSync(fakeGoDir, { recursive: true, force: true }));
  beforeEach(() => {
    cache = mkdtempSync(path.join(os.tmpdir(), 'tessera-build-binaries-'));
    bin = path.join(cache, 'bin');
    return () => rmSync(cache, { recursive: true, force: true });
  });

  /** Runs the script on the test's cache; its stderr lines without their time stamps. */
  const run = (args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; lines: string[] } => {
    const result = spawnSync('bash', [script, ...args], {
      encoding: 'utf8',
      env: {
        ...process.env,
        PATH: `${fakeGoDir}:${process.env.PATH ?? ''}`,
        TESSERA_CACHE_DIR: cache,
        GOFLAGS: '',
        ...env,
      },
    });
    const lines = result.stderr
      .replace(/^\[build-binaries \d\d:\d\d:\d\d\] /gm, '')
      .trimEnd()
      .split('\n');
    return { status: result.status, lines };
  };
  const measured = (): string[] => readFileSync(path.join(bin, '.build-times'), 'utf8').trimEnd().split('\n');

  it("says n of m and an estimate as each component starts, its time as it ends; Go's output goes to the log", () => {
    const { status, lines } = run(['etcd', 'registry']);
    expect(status).toBe(0);
    const note = 'none measured here yet; the default is a cold build on 2 idle cores';
    expect(lines[0]).toBe(
      `to build: etcd registry (2 of 2 components, about 2 min in all); Go's output goes to ${bin}/build.log`,
    );
    expect(lines[1]).toBe(`1 of 2 etcd ${pinned.etcd}: building etcd, about 48 s (${note})`);
    expect(lines[2]).toMatch(new RegExp(`^1 of 2 etcd ${pinned.etcd}: built in \\d+ s$`));
    expect(lines[3]).toMatch(
      new RegExp(
        `^2 of 2 registry ${pinned.distribution}: building registry, about 1 min \\(${note}\\); ` +
          '\\d+ s so far, about 1 min to go$',
      ),
    );
    expect(lines[4]).toMatch(new RegExp(`^2 of 2 registry ${pinned.distribution}: built in \\d+ s$`));
    expect(lines[5]).toMatch(new RegExp(`^built etcd registry in \\d+ s; binaries in ${bin}$`));
    expect(lines).toHaveLength(6);
    expect(statSync(path.join(bin, `etcd-${pinned.etcd}`, 'etcd')).mode & 0o111).not.toBe(0);
    expect(readFileSync(path.join(bin, 'build.log'), 'utf8')).toContain('go: downloading example.com/fake');
    expect(measured().map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual([
      `etcd ${pinned.etcd}`,
      `registry ${pinned.distribution}`,
    ]);
  });

  it('estimates from the last build measured on this machine, of any version', () => {
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      path.join(bin, '.build-times'),
      'registry v3.0.0 400 2026-11-01T00:00:00Z\nregistry v3.1.0 125 2026-11-02T00:00:00Z\ncrane v0.1.0 x\n',
    );
    const first = run(['registry', 'crane']);
    expect(first.lines[0]).toMatch(/^to build: registry crane \(2 of 2 components, about 2 min in all\)/);
    expect(first.lines[1]).toBe(
      `1 of 2 registry ${pinned.distribution}: building registry, about 2 min (its last build here took 2 min 5 s)`,
    );
    expect(first.lines[3]).toMatch(
      /: building crane, about 5 s \(none measured here yet;.*\); \d+ s so far, about 5 s to go$/,
    );
    rmSync(path.join(bin, `registry-${pinned.distribution}`), { recursive: true });
    const second = run(['registry', 'crane']);
    expect(second.lines[0]).toMatch(/^to build: registry \(1 of 2 components, about \d+ s in all\)/);
    expect(second.lines[1]).toMatch(/: building registry, about \d+ s \(its last build here took \d+ s\)$/);
    expect(measured().filter((line) => line.startsWith('registry '))).toHaveLength(4);
  });

  it('prints one line when everything is cached, and keeps the last log', () => {
    expect(run(['etcd', 'registry']).status).toBe(0);
    const log = readFileSync(path.join(bin, 'build.log'), 'utf8');
    const warm = run(['etcd', 'registry']);
    expect(warm).toEqual({
      status: 0,
      lines: [`all cached in ${bin}: etcd ${pinned.etcd}, registry ${pinned.distribution}`],
    });
    expect(readFileSync(path.join(bin, 'build.log'), 'utf8')).toBe(log);
  });

  it('names the log and shows its last lines when a build fails, and stops there', () => {
    const { status, lines } = run(['etcd', 'registry', 'crane'], { FAKE_GO_FAIL: 'registry' });
    expect(status).toBe(1);
    const failed = lines.findIndex((line) => line.includes('failed'));
    expect(lines[failed]).toMatch(
      new RegExp(
        `^2 of 3 registry ${pinned.distribution}: failed after \\d+ s \\(exit 1\\); ` +
          `Go's output is in ${bin}/build.log, ending with:$`,
      ),
    );
    expect(lines.slice(failed + 1)).toContain('    main.go:1:1: undefined: broken');
    expect(lines.slice(0, failed).join('\n')).not.toContain('go: downloading');
    expect(lines.filter((line) => line.includes(': building crane'))).toEqual([]);
    expect(existsSync(path.join(bin, `etcd-${pinned.etcd}`, 'etcd'))).toBe(true);
    expect(readdirSync(bin).filter((name) => name.startsWith('.build-registry'))).toEqual([]);
    expect(measured().map((line) => line.split(' ')[0])).toEqual(['etcd']);
  });

  it('names the log when Go itself refuses the build (real go, fails before compiling)', () => {
    // -mod=vendor without a vendor directory: Go stops at once, before any download or compile.
    const { status, lines } = run(['registry'], { PATH: process.env.PATH, GOFLAGS: '-mod=vendor' });
    expect(status).toBe(1);
    expect(lines[2]).toMatch(
      new RegExp(
        `^1 of 1 registry ${pinned.distribution}: failed after \\d+ s \\(exit 1\\); ` +
          `Go's output is in ${bin}/build.log, ending with:$`,
      ),
    );
    expect(lines.some((line) => line.includes('To ignore the vendor directory'))).toBe(true);
    expect(readFileSync(path.join(bin, 'build.log'), 'utf8')).toContain('inconsistent vendoring');
  });

  it('links opm to a containers policy of its own, beside it, and links an opm built without one again', () => {
    const opmDir = path.join(bin, `opm-${pinned.operatorRegistry}`);
    mkdirSync(opmDir, { recursive: true });
    writeFileSync(path.join(opmDir, 'opm'), '#!/bin/sh\n', { mode: 0o755 });
    const { status, lines } = run(['opm']);
    expect(status).toBe(0);
    expect(lines[0]).toMatch(/^to build: opm \(1 of 1 components/);
    expect(readFileSync(path.join(bin, 'build.log'), 'utf8')).toContain(
      `-X 'go.podman.io/image/v5/signature.systemDefaultPolicyPath=${opmDir}/policy.json'`,
    );
    // Only the registries' (docker) transport, which is all opm pulls from; anything else is refused.
    expect(JSON.parse(readFileSync(path.join(opmDir, 'policy.json'), 'utf8'))).toEqual({
      default: [{ type: 'reject' }],
      transports: { docker: { '': [{ type: 'insecureAcceptAnything' }] } },
    });
    expect(run(['opm']).lines).toEqual([`all cached in ${bin}: opm ${pinned.operatorRegistry}`]);
  });

  it('ensureBinaries names the log in its error', async () => {
    const env = { ...process.env, PATH: `${fakeGoDir}:${process.env.PATH ?? ''}`, TESSERA_CACHE_DIR: cache };
    await expect(
      ensureBinaries(['registry'], projectRoot, { ...env, FAKE_GO_FAIL: 'registry' }),
    ).rejects.toThrow(
      `build-binaries.sh registry failed (exit 1); Go's output is in ${buildLogPath(cache)} (its last lines are above)`,
    );
    expect((await ensureBinaries(['registry'], projectRoot, env)).registry).toBe(
      path.join(bin, `registry-${pinned.distribution}`, 'registry'),
    );
  });
});
