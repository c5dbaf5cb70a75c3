import { describe, expect, it } from 'vitest';
import { architecturesOf, factsOfConfig, normalizeArchitecture, platformsOfIndex } from './platforms.js';

const digest = (n: number): string => `sha256:${String(n).repeat(64).slice(0, 64)}`;

describe('platformsOfIndex', () => {
  it('lists platforms, skipping attestations, unknown entries and entries without platform; folds variants', () => {
    const index = {
      schemaVersion: 2,
      manifests: [
        { digest: digest(1), platform: { os: 'linux', architecture: 'amd64' } },
        { digest: digest(2), platform: { os: 'linux', architecture: 'arm64', variant: 'v8' } },
        { digest: digest(3), platform: { os: 'linux', architecture: 'arm', variant: 'v7' } },
        { digest: digest(4), platform: { os: 'linux', architecture: 'arm64' } },
        {
          digest: digest(5),
          platform: { os: 'unknown', architecture: 'unknown' },
          annotations: { 'vnd.docker.reference.type': 'attestation-manifest' },
        },
        {
          digest: digest(6),
          platform: { os: 'linux', architecture: 's390x' },
          annotations: { 'vnd.docker.reference.type': 'attestation-manifest' },
        },
        { digest: digest(7) },
      ],
    };
    const platforms = platformsOfIndex(index, 'x');
    expect(platforms.map((p) => [p.architecture, p.variant ?? ''])).toEqual([
      ['amd64', ''],
      ['arm64', 'v8'],
      ['arm', 'v7'],
      ['arm64', ''],
    ]);
    expect(architecturesOf(platforms)).toEqual(['amd64', 'arm', 'arm64']);
  });

  it('refuses an index without manifests', () => {
    expect(() => platformsOfIndex({ schemaVersion: 2 }, 'img')).toThrow(
      /img: the index has no "manifests" array/,
    );
  });

  it('normalises architecture spellings', () => {
    expect(['arm64/v8', 'aarch64', 'x86_64', 'AMD64', 'ppc64le'].map(normalizeArchitecture)).toEqual([
      'arm64',
      'arm64',
      'amd64',
      'amd64',
      'ppc64le',
    ]);
  });
});

describe('factsOfConfig', () => {
  it('reads architecture, os and variant', () => {
    expect(factsOfConfig({ architecture: 'arm', os: 'linux', variant: 'v7', config: {} }, 'x')).toEqual({
      architecture: 'arm',
      os: 'linux',
      variant: 'v7',
      operatorBundle: false,
    });
  });

  it('recognises an operator bundle by any one of its labels', () => {
    const config = {
      architecture: 'amd64',
      os: 'linux',
      config: { Labels: { 'operators.operatorframework.io.bundle.package.v1': 'x' } },
    };
    expect(factsOfConfig(config, 'x').operatorBundle).toBe(true);
    expect(
      factsOfConfig({ architecture: 'amd64', config: { Labels: { other: 'x' } } }, 'x').operatorBundle,
    ).toBe(false);
  });
});
