import { describe, expect, it } from 'vitest';
import { binaryPaths, cacheDir, parseVersionsEnv, requireBinaries } from './binaries.js';

describe('binaries', () => {
  it('parses versions.env, ignoring comments', () => {
    const versions = parseVersionsEnv(
      '# c\nKUBERNETES_VERSION=v1.37.2\n\nETCD_VERSION=v3.6.16\nKWOK_VERSION=v0.8.0\n',
    );
    expect(versions).toEqual({ kubernetes: 'v1.37.2', etcd: 'v3.6.16', kwok: 'v0.8.0' });
  });

  it('names the missing key', () => {
    expect(() => parseVersionsEnv('KUBERNETES_VERSION=v1\n')).toThrow(/ETCD_VERSION/);
  });

  it('keys the cache by component and version', () => {
    const paths = binaryPaths({ kubernetes: 'v1.37.2', etcd: 'v3.6.16', kwok: 'v0.8.0' }, '/c');
    expect(paths['kube-apiserver']).toBe('/c/bin/kubernetes-v1.37.2/kube-apiserver');
    expect(paths.etcd).toBe('/c/bin/etcd-v3.6.16/etcd');
    expect(paths.kwok).toBe('/c/bin/kwok-v0.8.0/kwok');
  });

  it('follows TESSERA_CACHE_DIR, then XDG_CACHE_HOME', () => {
    expect(cacheDir({ TESSERA_CACHE_DIR: '/x' })).toBe('/x');
    expect(cacheDir({ XDG_CACHE_HOME: '/y' })).toBe('/y/tessera');
  });

  it('tells the user how to build missing binaries', () => {
    const paths = binaryPaths({ kubernetes: 'v0', etcd: 'v0', kwok: 'v0' }, '/nonexistent');
    expect(() => requireBinaries(paths)).toThrow(/npm run binaries/);
  });
});
