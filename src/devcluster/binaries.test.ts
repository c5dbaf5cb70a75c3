import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  binaryPaths,
  buildComponentsFor,
  cacheDir,
  DEV_CLUSTER_BINARIES,
  missingBinaries,
  OLM_TEST_BINARIES,
  OPERATOR_FRAMEWORK_BINARIES,
  parseVersionsEnv,
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
};

describe('binaries', () => {
  it('parses versions.env, ignoring comments', () => {
    expect(
      parseVersionsEnv(
        '# c\nKUBERNETES_VERSION=v1.37.2\n\nETCD_VERSION=v3.6.16\nKWOK_VERSION=v0.8.0\n' +
          'DISTRIBUTION_VERSION=v3.1.2\nCRANE_VERSION=v0.22.1\n' +
          'PROMETHEUS_VERSION=v0.316.0\nKUBE_RBAC_PROXY_VERSION=v0.19.1\n' +
          'OPERATOR_REGISTRY_VERSION=v1.60.0\nOPERATOR_FRAMEWORK_API_VERSION=v0.36.0\nOLM_VERSION=v0.36.0\n',
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
});
