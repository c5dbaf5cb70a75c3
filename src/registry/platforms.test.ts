import { describe, expect, it } from 'vitest';
import {
  architecturesOf,
  bundleProbeTarget,
  defaultMaxIndexEntries,
  factsOfConfig,
  isValidPlatformName,
  normalizeArchitecture,
  readIndex,
  type ImagePlatform,
} from './platforms.js';

const digest = (n: number): string => `sha256:${String(n).repeat(64).slice(0, 64)}`;

describe('readIndex', () => {
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
    const { platforms } = readIndex(index, 'x');
    expect(platforms.map((p) => [p.architecture, p.variant ?? ''])).toEqual([
      ['amd64', ''],
      ['arm64', 'v8'],
      ['arm', 'v7'],
      ['arm64', ''],
    ]);
    expect(architecturesOf(platforms)).toEqual(['amd64', 'arm', 'arm64']);
  });

  it('refuses an index without manifests', () => {
    expect(() => readIndex({ schemaVersion: 2 }, 'img')).toThrow(/img: the index has no "manifests" array/);
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

describe('hostile and MTO-fidelity index entries', () => {
  const entry = (n: number, platform: unknown, annotations?: unknown): Record<string, unknown> => ({
    digest: digest(n),
    platform,
    ...(annotations === undefined ? {} : { annotations }),
  });

  it('drops architecture names that are not plain names (prototype keys, junk), counting them', () => {
    const hostile = JSON.parse(
      JSON.stringify({
        manifests: [
          entry(1, { os: 'linux', architecture: 'constructor' }),
          entry(2, { os: 'linux', architecture: 'amd64' }),
          entry(3, { os: 'linux', architecture: 'toString' }),
          entry(4, { os: 'linux', architecture: 'ARM64', variant: 'v8' }),
          entry(5, { os: 'linux', architecture: 'x'.repeat(10_000) }),
          entry(6, { os: 'linux', architecture: 'amd64\nevil' }),
          entry(7, { os: 'linux', architecture: 's390x', variant: 'v1{}' }),
          { digest: 'not a digest', platform: { os: 'linux', architecture: 'ppc64le' } },
        ],
      }).replace('"toString"', '"__proto__"'),
    );
    const { platforms, skipped } = readIndex(hostile, 'x');
    // `constructor` and `__proto__` look like names, but `constructor` passes the syntax: it is just a string here,
    // never a key into an object, so it cannot become a function or an object.
    expect(platforms.map((p) => p.architecture)).toEqual(['constructor', 'amd64', 'arm64']);
    expect(platforms.every((p) => typeof p.architecture === 'string')).toBe(true);
    expect(skipped).toEqual({ attestation: 0, unknown: 0, invalid: 5 });
  });

  it('normalises through a Map: prototype names are not aliases', () => {
    expect(normalizeArchitecture('constructor')).toBe('constructor');
    expect(normalizeArchitecture('__proto__')).toBe('__proto__');
    expect(isValidPlatformName('__proto__')).toBe(false);
  });

  it('skips entries carrying only vnd.docker.reference.digest as attestations, and keeps os "unknown"', () => {
    const { platforms, skipped } = readIndex(
      {
        manifests: [
          entry(1, { os: 'linux', architecture: 'amd64' }),
          entry(2, { os: 'linux', architecture: 's390x' }, { 'vnd.docker.reference.digest': digest(1) }),
          entry(3, { os: 'unknown', architecture: 'arm64' }),
          entry(4, { os: 'unknown', architecture: 'unknown' }),
        ],
      },
      'x',
    );
    expect(architecturesOf(platforms)).toEqual(['amd64', 'arm64']);
    expect(skipped).toEqual({ attestation: 1, unknown: 1, invalid: 0 });
  });

  it('refuses an index with more entries than the budget before reading any entry', () => {
    const manifests = Array.from({ length: defaultMaxIndexEntries + 1 }, () => 'not even an object');
    expect(() => readIndex({ manifests }, 'img')).toThrow(
      new RegExp(
        `img: the index lists ${defaultMaxIndexEntries + 1} manifests, more than the ${defaultMaxIndexEntries} allowed`,
      ),
    );
    let code = '';
    try {
      readIndex({ manifests }, 'img');
    } catch (err) {
      code = (err as { code: string }).code;
    }
    expect(code).toBe('TESSERA_REGISTRY_TOO_LARGE');
  });

  it('refuses a config whose architecture is not a plain name; drops an invalid variant', () => {
    expect(() => factsOfConfig({ architecture: 'a'.repeat(100), os: 'linux' }, 'img')).toThrow(
      /invalid architecture or os/,
    );
    expect(factsOfConfig({ architecture: 'arm', os: 'linux', variant: '<v7>' }, 'x').variant).toBeUndefined();
    const labelsOnPrototype = JSON.parse('{"architecture":"amd64","config":{"Labels":{"__proto__":{}}}}');
    expect(factsOfConfig(labelsOnPrototype, 'x').operatorBundle).toBe(false);
  });
});

describe('bundleProbeTarget', () => {
  const p = (architecture: string, n: number): ImagePlatform => ({
    os: 'linux',
    architecture,
    variant: undefined,
    digest: digest(n),
  });
  it.each<[string, ImagePlatform[], boolean, ImagePlatform | undefined]>([
    ['one platform: always probed (how a bundle usually looks)', [p('amd64', 1)], false, p('amd64', 1)],
    ['one platform, probe asked', [p('amd64', 1)], true, p('amd64', 1)],
    ['several platforms: not probed for ordinary pods', [p('amd64', 1), p('arm64', 2)], false, undefined],
    [
      'several platforms, probe asked: the first runnable entry, as MTO',
      [p('arm64', 2), p('amd64', 1)],
      true,
      p('arm64', 2),
    ],
    ['no runnable entry: nothing to probe', [], true, undefined],
  ])('%s', (_name, platforms, probe, expected) => {
    expect(bundleProbeTarget(platforms, probe)).toEqual(expected);
  });
});
