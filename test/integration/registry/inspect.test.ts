// Image inspection against a real distribution registry (CNCF distribution v3, built by hack/build-binaries.sh)
// over TLS with htpasswd auth: every manifest shape, checked against crane (go-containerregistry) as an independent
// client, credentials as the kubelet picks them, mirrors, trust, size limits and the cache.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryPaths, requireBinaries } from '../../../src/devcluster/binaries.js';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage, singleImage } from '../../../src/devcluster/registry-images.js';
import { CachingInspector } from '../../../src/registry/caching-inspector.js';
import { parseDockerConfigJson, type DockerConfigEntry } from '../../../src/registry/docker-config.js';
import { Keyring } from '../../../src/registry/keyring.js';
import { emptyRegistryPolicy, type RegistryPolicy } from '../../../src/registry/mirrors.js';
import { RegistryInspector } from '../../../src/registry/registry-inspector.js';
import { testImages } from './images.js';
import { failure } from './expect-failure.js';

let registry: LocalRegistry;
let stateDir: string;
let inspector: RegistryInspector;
let keyring: Keyring;
let policy: RegistryPolicy = emptyRegistryPolicy;
const digests = new Map<string, string>();

const entry = (key: string, username: string, password: string): DockerConfigEntry => ({
  key,
  credential: { username, password },
});

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-registry-it-'));
  registry = await startLocalRegistry({
    stateDir,
    auth: 'htpasswd',
    users: { alice: 'alice-secret', bob: 'bob-secret' },
  });
  for (const image of testImages)
    digests.set(image.repository, await registry.pushImage(image.repository, image.tag, image.image));
  inspector = new RegistryInspector({
    caCertificates: [registry.caCertPem],
    policy: () => policy,
    retry: { maxRetries: 0 },
  });
  keyring = Keyring.of(parseDockerConfigJson(registry.dockerConfigJson('alice'), 'test/pull-secret'));
});

afterAll(async () => {
  await inspector?.close();
  await registry?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('platforms of every manifest shape', () => {
  it.each(testImages.map((t) => [t.repository, t]))('%s', async (_name, t) => {
    const result = await inspector.inspect(`${registry.host}/${t.repository}:${t.tag}`, { keyring });
    expect(result.architectures).toEqual(t.architectures);
    expect(result.kind).toBe(t.kind);
    expect(result.digest).toBe(digests.get(t.repository));
    expect(result.operatorBundle).toBe(t.repository === 'team/operator-bundle');
  });

  it('lists each platform with os, variant and digest, without attestation entries', async () => {
    const result = await inspector.inspect(`${registry.host}/team/oci-index:v1`, { keyring });
    expect(
      result.platforms.map((p) => `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ''}`),
    ).toEqual(['linux/amd64', 'linux/arm64/v8', 'linux/ppc64le', 'linux/s390x']);
    const children = testImages[0]?.image.children.slice(0, 4).map((c) => c.manifest.digest);
    expect(result.platforms.map((p) => p.digest)).toEqual(children);
  });

  it('agrees with crane (go-containerregistry) on the same images: raw manifest, digest and platforms', async () => {
    // crane is an independent OCI client: it reads credentials from $DOCKER_CONFIG/config.json and trusts the
    // registry CA through SSL_CERT_FILE, as any Go program does.
    const crane = requireBinaries(binaryPaths(), ['crane']).crane;
    const dockerConfigDir = path.join(stateDir, 'crane-docker-config');
    mkdirSync(dockerConfigDir, { recursive: true });
    writeFileSync(path.join(dockerConfigDir, 'config.json'), registry.dockerConfigJson('alice'));
    const env = { ...process.env, DOCKER_CONFIG: dockerConfigDir, SSL_CERT_FILE: registry.caFile };
    const run = (...args: string[]): string => execFileSync(crane, args, { encoding: 'utf8', env });
    for (const t of testImages) {
      const ref = `${registry.host}/${t.repository}:${t.tag}`;
      const raw = run('manifest', ref);
      const doc = JSON.parse(raw) as {
        manifests?: { platform?: { architecture?: string }; annotations?: Record<string, string> }[];
      };
      let expected: string[];
      if (doc.manifests !== undefined) {
        expected = doc.manifests
          .filter(
            (m) =>
              m.annotations?.['vnd.docker.reference.type'] === undefined &&
              m.platform?.architecture !== 'unknown',
          )
          .map((m) => m.platform?.architecture ?? '');
      } else {
        const config = JSON.parse(run('config', ref)) as {
          architecture: string;
          config?: { Labels?: Record<string, string> };
        };
        const bundle = Object.keys(config.config?.Labels ?? {}).some((l) =>
          l.startsWith('operators.operatorframework.io.'),
        );
        expected = bundle ? ['amd64', 'arm64', 'ppc64le', 's390x'] : [config.architecture];
      }
      const ours = await inspector.inspect(ref, { keyring });
      expect(ours.architectures, t.repository).toEqual([...new Set(expected)].sort());
      expect(ours.digest, t.repository).toBe(run('digest', ref).trim());
      expect(ours.digest, t.repository).toBe(`sha256:${createHash('sha256').update(raw).digest('hex')}`);
    }
  });
});

describe('references', () => {
  it('inspects by digest, and by tag+digest where the digest wins', async () => {
    const digest = digests.get('team/oci-index') ?? '';
    const byDigest = await inspector.inspect(`${registry.host}/team/oci-index@${digest}`, { keyring });
    expect(byDigest.architectures).toEqual(['amd64', 'arm64', 'ppc64le', 's390x']);
    const both = await inspector.inspect(`${registry.host}/team/oci-index:no-such-tag@${digest}`, {
      keyring,
    });
    expect(both.reference).toBe(`${registry.host}/team/oci-index@${digest}`);
    expect(both.digest).toBe(digest);
  });

  it('inspects one platform of an index by its digest (a single manifest)', async () => {
    const arm = testImages[0]?.image.children[1]?.manifest.digest ?? '';
    const result = await inspector.inspect(`${registry.host}/team/oci-index@${arm}`, { keyring });
    expect(result).toMatchObject({
      kind: 'manifest',
      architectures: ['arm64'],
      platforms: [{ architecture: 'arm64', variant: 'v8', digest: arm }],
    });
  });

  it('reports an unknown tag or repository as not found', async () => {
    const tag = await failure(inspector.inspect(`${registry.host}/team/oci-index:missing`, { keyring }));
    expect(tag.code).toBe('TESSERA_REGISTRY_NOT_FOUND');
    expect(tag.message).toContain('MANIFEST_UNKNOWN');
    const repo = await failure(inspector.inspect(`${registry.host}/nobody/here:v1`, { keyring }));
    expect(repo.code).toBe('TESSERA_REGISTRY_NOT_FOUND');
  });
});

describe('credentials', () => {
  const image = (): string => `${registry.host}/team/single-oci:v1`;

  it('refuses an anonymous inspection of a private registry with 401', async () => {
    const err = await failure(inspector.inspect(image()));
    expect(err.code).toBe('TESSERA_REGISTRY_UNAUTHORIZED');
    expect(err.message).toContain('requires credentials');
    expect(err.message).toContain(registry.host);
  });

  it('reports refused credentials without user name or password (tenants read these messages)', async () => {
    const err = await failure(
      inspector.inspect(image(), { keyring: Keyring.of([entry(registry.host, 'alice', 'wrong-password')]) }),
    );
    expect(err.code).toBe('TESSERA_REGISTRY_UNAUTHORIZED');
    expect(err.message).toContain('refused the pull-secret credentials');
    expect(err.message).not.toContain('alice');
    expect(err.message).not.toContain('wrong-password');
  });

  it('matches glob keys with the port, and ignores keys for another port', async () => {
    const port = registry.host.split(':')[1] ?? '';
    const glob = Keyring.of([entry(`127.0.0.*:${port}`, 'bob', 'bob-secret')]);
    expect((await inspector.inspect(image(), { keyring: glob })).architectures).toEqual(['ppc64le']);
    const otherPort = Keyring.of([entry('127.0.0.1:1', 'bob', 'bob-secret')]);
    expect((await failure(inspector.inspect(image(), { keyring: otherPort }))).code).toBe(
      'TESSERA_REGISTRY_UNAUTHORIZED',
    );
  });

  it('tries the pod secret before the global one, and falls back to the global one when refused', async () => {
    const before = registry.accessLog().length;
    const podRight = Keyring.of(
      [entry(registry.host, 'alice', 'alice-secret')],
      [entry(registry.host, 'bob', 'wrong')],
    );
    await inspector.inspect(`${registry.host}/team/single-docker:v1`, { keyring: podRight });
    const firstRun = registry.accessLog().slice(before);
    expect(firstRun.filter((e) => e.status === 200).length).toBeGreaterThan(0);
    // The registry challenge is known by now: a refused credential shows up as one 401 per request.
    expect(firstRun.filter((e) => e.status === 401)).toHaveLength(0);

    const mark = registry.accessLog().length;
    const podWrong = Keyring.of(
      [entry(registry.host, 'alice', 'wrong')],
      [entry(registry.host, 'bob', 'bob-secret')],
    );
    expect(
      (await inspector.inspect(`${registry.host}/team/single-docker:v1`, { keyring: podWrong }))
        .architectures,
    ).toEqual(['s390x']);
    const secondRun = registry.accessLog().slice(mark);
    expect(secondRun.map((e) => e.status)).toEqual([401, 200, 200]);
  });
});

describe('mirrors and trust', () => {
  it('pulls a digest reference from an ImageDigestMirrorSet mirror, with the mirror host credentials', async () => {
    const t = testImages[1];
    if (t === undefined) throw new Error('missing test image');
    const digest = await registry.pushImage('mirror/team/docker-list', 'mirrored', t.image);
    policy = {
      ...emptyRegistryPolicy,
      digestMirrors: [
        {
          source: 'source.registry.invalid/team',
          mirrors: [`${registry.host}/mirror/team`],
          neverContactSource: true,
        },
      ],
    };
    try {
      const result = await inspector.inspect(`source.registry.invalid/team/docker-list@${digest}`, {
        keyring,
      });
      expect(result.architectures).toEqual(['amd64', 'arm64']);
      expect(result.source).toBe(`${registry.host}/mirror/team/docker-list`);
      // Tags are not mirrored by digest mirror sets: the (unreachable) source is asked.
      const tagged = await failure(
        inspector.inspect('source.registry.invalid/team/docker-list:mirrored', { keyring }),
      );
      expect(tagged.code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
      expect(tagged.message).toContain('source.registry.invalid');
    } finally {
      policy = emptyRegistryPolicy;
    }
  });

  it('refuses a blocked registry without contacting it', async () => {
    policy = { ...emptyRegistryPolicy, blockedRegistries: [registry.host] };
    const before = registry.accessLog().length;
    try {
      expect((await failure(inspector.inspect(`${registry.host}/team/oci-index:v1`, { keyring }))).code).toBe(
        'TESSERA_REGISTRY_BLOCKED',
      );
      expect(registry.accessLog().length).toBe(before);
    } finally {
      policy = emptyRegistryPolicy;
    }
  });

  it('needs the registry CA, unless the registry is marked insecure', async () => {
    const untrusting = new RegistryInspector({ policy: () => policy });
    try {
      const err = await failure(untrusting.inspect(`${registry.host}/team/oci-index:v1`, { keyring }));
      expect(err.code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
      expect(err.retryable).toBe(false);
      expect(err.message).toContain('CA bundle');
      policy = { ...emptyRegistryPolicy, insecureRegistries: [registry.host] };
      expect(
        (await untrusting.inspect(`${registry.host}/team/oci-index:v1`, { keyring })).architectures,
      ).toHaveLength(4);
    } finally {
      policy = emptyRegistryPolicy;
      await untrusting.close();
    }
  });
});

describe('size limits', () => {
  it('refuses a manifest above the limit', async () => {
    const big = multiPlatformImage({ platforms: [{ architecture: 'amd64' }], salt: 'big' });
    const padded = JSON.parse(big.manifest.bytes.toString()) as Record<string, unknown>;
    padded.annotations = { padding: 'x'.repeat(200_000) };
    const { blobOf } = await import('../../../src/devcluster/registry-images.js');
    const manifest = blobOf(big.manifest.mediaType, Buffer.from(JSON.stringify(padded)));
    await registry.pushImage('team/big-manifest', 'v1', { ...big, manifest });
    const strict = new RegistryInspector({
      caCertificates: [registry.caCertPem],
      maxManifestBytes: 64 * 1024,
    });
    try {
      const err = await failure(strict.inspect(`${registry.host}/team/big-manifest:v1`, { keyring }));
      expect(err.code).toBe('TESSERA_REGISTRY_TOO_LARGE');
      expect(err.message).toContain('65536-byte limit');
      expect(
        (await inspector.inspect(`${registry.host}/team/big-manifest:v1`, { keyring })).architectures,
      ).toEqual(['amd64']);
    } finally {
      await strict.close();
    }
  });

  it('refuses an image config above the limit', async () => {
    await registry.pushImage(
      'team/big-config',
      'v1',
      singleImage({ platform: { architecture: 'arm64' }, configPadding: 300_000 }),
    );
    const strict = new RegistryInspector({ caCertificates: [registry.caCertPem], maxConfigBytes: 100_000 });
    try {
      expect((await failure(strict.inspect(`${registry.host}/team/big-config:v1`, { keyring }))).code).toBe(
        'TESSERA_REGISTRY_TOO_LARGE',
      );
    } finally {
      await strict.close();
    }
  });
});

describe('registry CA changed while running', () => {
  it.each(['undici', 'node'] as const)(
    'over %s: trusts a CA from the next request on, and stops trusting a removed one (no connection kept)',
    async (httpClient) => {
      const unreachable: string[] = [];
      const live = new RegistryInspector({
        httpClient,
        retry: { maxRetries: 0 },
        onUnreachable: (event) => unreachable.push(event.code),
      });
      const ref = `${registry.host}/team/oci-index:v1`;
      try {
        expect((await failure(live.inspect(ref, { keyring }))).code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
        expect(unreachable.length).toBeGreaterThan(0);
        live.setCaCertificates([registry.caCertPem]);
        expect((await live.inspect(ref, { keyring })).architectures).toContain('s390x');
        // A pooled keep-alive connection was verified under the old CA: it must not outlive the trust.
        live.setCaCertificates([]);
        expect((await failure(live.inspect(ref, { keyring }))).code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
      } finally {
        await live.close();
      }
    },
  );
});

describe('cache in front of the registry', () => {
  it('keeps a cached answer after a re-push, and imagePullPolicy Always (bypass) sees the new image', async () => {
    await registry.pushImage(
      'team/moving',
      'latest',
      multiPlatformImage({ platforms: [{ architecture: 'arm64' }, { architecture: 'amd64' }] }),
    );
    const cache = new CachingInspector(inspector);
    const ref = `${registry.host}/team/moving:latest`;
    expect((await cache.inspect(ref, { keyring })).architectures).toEqual(['amd64', 'arm64']);
    await registry.pushImage(
      'team/moving',
      'latest',
      multiPlatformImage({
        platforms: [{ architecture: 'arm64' }, { architecture: 'amd64' }, { architecture: 'ppc64le' }],
      }),
    );
    expect((await cache.inspect(ref, { keyring })).architectures).toEqual(['amd64', 'arm64']);
    expect((await cache.inspect(ref, { keyring, bypassCache: true })).architectures).toEqual([
      'amd64',
      'arm64',
      'ppc64le',
    ]);
    cache.purge();
    expect((await cache.inspect(ref, { keyring })).architectures).toEqual(['amd64', 'arm64', 'ppc64le']);
  });

  it('1,000 concurrent inspections of 10 images cost exactly 10 manifest fetches', async () => {
    const repos = Array.from({ length: 10 }, (_, i) => `fanout/img${i}`);
    for (const [i, repo] of repos.entries()) {
      await registry.pushImage(
        repo,
        'v1',
        multiPlatformImage({
          platforms: [{ architecture: 'amd64' }, { architecture: 's390x' }],
          salt: `fan${i}`,
        }),
      );
    }
    const cache = new CachingInspector(inspector);
    const before = registry.accessLog().length;
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        cache.inspect(`${registry.host}/${repos[i % 10]}:v1`, { keyring }),
      ),
    );
    expect(results.every((r) => r.architectures.join() === 'amd64,s390x')).toBe(true);
    const fetched = registry
      .accessLog()
      .slice(before)
      .filter((e) => e.method === 'GET' && e.path.includes('/manifests/') && e.status === 200);
    // Per image: the index only (an index of several platforms is never probed for an operator bundle).
    expect(fetched).toHaveLength(10);
    expect(fetched.filter((e) => e.path.endsWith('/manifests/v1'))).toHaveLength(10);
  });
});
