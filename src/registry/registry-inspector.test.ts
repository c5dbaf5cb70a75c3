import { describe, expect, it } from 'vitest';
import type { DistributionClient, FetchedManifest } from './distribution-client.js';
import { RegistryError } from './errors.js';
import { Keyring } from './keyring.js';
import { bundleVerdictBytes, RegistryInspector } from './registry-inspector.js';

const indexType = 'application/vnd.oci.image.index.v1+json';

/** A distribution client whose manifest requests wait until the test releases them; counts them in flight. */
class GatedClient {
  inFlight = 0;
  maxInFlight = 0;
  private readonly waiting: (() => void)[] = [];

  getManifest(): Promise<FetchedManifest> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise((resolve) => {
      this.waiting.push(() => {
        this.inFlight--;
        // An index without runnable entries: no further requests.
        resolve({
          mediaType: indexType,
          kind: 'index',
          digest: 'sha256:x',
          body: Buffer.from(''),
          json: { manifests: [] },
        });
      });
    });
  }

  releaseAll(): void {
    for (const release of this.waiting.splice(0)) release();
  }

  async close(): Promise<void> {}
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('RegistryInspector concurrency budgets', () => {
  it('runs at most maxConcurrentInspectionsPerCaller of one pod’s images at once, leaving slots for others', async () => {
    const client = new GatedClient();
    const inspector = new RegistryInspector({
      client: client as unknown as DistributionClient,
      maxConcurrentInspections: 6,
      maxConcurrentInspectionsPerCaller: 4,
    });
    const podA = Keyring.of([]);
    const podB = Keyring.of([]);
    const manyImages = Array.from({ length: 100 }, (_, i) =>
      inspector.inspect(`registry.example.io/app${i}:1`, { keyring: podA }),
    );
    await settle();
    expect(client.inFlight).toBe(4);
    // Another pod is not starved by the first one's 100 images.
    const other = inspector.inspect('registry.example.io/other:1', { keyring: podB });
    await settle();
    expect(client.inFlight).toBe(5);
    while (client.inFlight > 0) {
      client.releaseAll();
      await settle();
    }
    await Promise.all([...manyImages, other]);
    expect(client.maxInFlight).toBeLessThanOrEqual(6);
  });

  it('caps all callers together at maxConcurrentInspections', async () => {
    const client = new GatedClient();
    const inspector = new RegistryInspector({
      client: client as unknown as DistributionClient,
      maxConcurrentInspections: 3,
    });
    const all = Array.from({ length: 10 }, (_, i) => inspector.inspect(`registry.example.io/app${i}:1`));
    await settle();
    expect(client.inFlight).toBe(3);
    while (client.inFlight > 0) {
      client.releaseAll();
      await settle();
    }
    await Promise.all(all);
    expect(client.maxInFlight).toBe(3);
  });

  it('lets a cancelled waiter leave with TESSERA_REGISTRY_ABORTED', async () => {
    const client = new GatedClient();
    const inspector = new RegistryInspector({
      client: client as unknown as DistributionClient,
      maxConcurrentInspections: 1,
    });
    const first = inspector.inspect('registry.example.io/a:1');
    const controller = new AbortController();
    const second = inspector.inspect('registry.example.io/b:1', { signal: controller.signal });
    controller.abort();
    await expect(second).rejects.toMatchObject({ code: 'TESSERA_REGISTRY_ABORTED' });
    await expect(second).rejects.toBeInstanceOf(RegistryError);
    client.releaseAll();
    await first;
  });

  it('refuses budgets that are not positive integers', () => {
    expect(() => new RegistryInspector({ maxConcurrentInspections: 0 })).toThrow(/maxConcurrentInspections/);
    expect(() => new RegistryInspector({ maxIndexEntries: 1.5 })).toThrow(/maxIndexEntries/);
  });
});

/** A registry world: `registry/repository` -> the architectures of its index, or the error its manifest gives. */
class WorldClient {
  readonly asked: string[] = [];
  constructor(private readonly world: Record<string, readonly string[] | RegistryError>) {}

  async getManifest(location: { registry: string; repository: string }): Promise<FetchedManifest> {
    const name = `${location.registry}/${location.repository}`;
    this.asked.push(name);
    const found = this.world[name];
    if (found === undefined)
      throw new RegistryError('TESSERA_REGISTRY_NOT_FOUND', `${name}: manifest unknown`);
    if (found instanceof RegistryError) throw found;
    return {
      mediaType: indexType,
      kind: 'index',
      digest: 'sha256:x',
      body: Buffer.from(''),
      json: {
        manifests: found.map((architecture, i) => ({
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: `sha256:${String(i).repeat(64)}`,
          size: 1,
          platform: { os: 'linux', architecture },
        })),
      },
    };
  }

  async close(): Promise<void> {}
}

describe('RegistryInspector short names', () => {
  const inspectorFor = (client: WorldClient, searchRegistries: string[], blocked: string[] = []) =>
    new RegistryInspector({
      client: client as unknown as DistributionClient,
      policy: () => ({
        digestMirrors: [],
        tagMirrors: [],
        insecureRegistries: [],
        blockedRegistries: blocked,
        searchRegistries,
      }),
    });

  it('uses the first search registry that has the image, one manifest request per candidate, and says so', async () => {
    const client = new WorldClient({
      'second.io/team/app': ['ppc64le', 's390x'],
      'third.io/team/app': ['amd64'],
    });
    const found = await inspectorFor(client, ['first.io', 'second.io', 'third.io']).inspect('team/app:1');
    expect(found.architectures).toEqual(['ppc64le', 's390x']);
    expect(found.reference).toBe('second.io/team/app:1');
    expect(client.asked).toEqual(['first.io/team/app', 'second.io/team/app']);
    expect(found.shortName).toEqual({
      name: 'team/app:1',
      rule: 'search-registries',
      candidates: [
        { reference: 'first.io/team/app:1', outcome: 'not-found' },
        { reference: 'second.io/team/app:1', outcome: 'chosen' },
        { reference: 'third.io/team/app:1', outcome: 'not-tried' },
      ],
    });
  });

  it('goes past refused and blocked candidates, and fails naming every candidate when none has it', async () => {
    const client = new WorldClient({
      'first.io/app': new RegistryError('TESSERA_REGISTRY_UNAUTHORIZED', 'first.io: denied'),
      'blocked.io/app': ['arm64'],
    });
    const inspection = inspectorFor(client, ['first.io', 'blocked.io', 'third.io'], ['blocked.io']).inspect(
      'app',
    );
    await expect(inspection).rejects.toMatchObject({
      code: 'TESSERA_REGISTRY_UNAUTHORIZED',
      retryable: false,
      message:
        'image app: a short name that no search registry has (tried in order: first.io/app:latest not authorized, blocked.io/app:latest blocked by the cluster image policy, third.io/app:latest not there)',
    });
    expect(client.asked).toEqual(['first.io/app', 'third.io/app']);
  });

  it('stops at a candidate that may still have the image (down, failing): the runtime might pull it', async () => {
    const client = new WorldClient({
      'first.io/app': new RegistryError('TESSERA_REGISTRY_UNAVAILABLE', 'first.io: 503', { retryable: true }),
      'second.io/app': ['arm64'],
    });
    await expect(inspectorFor(client, ['first.io', 'second.io']).inspect('app')).rejects.toMatchObject({
      code: 'TESSERA_REGISTRY_UNAVAILABLE',
      retryable: true,
      message: expect.stringContaining('short name app: search registry 1 of 2') as unknown,
    });
    expect(client.asked).toEqual(['first.io/app']);
  });

  it('normalises the Docker way without search registries, and leaves qualified references alone', async () => {
    const client = new WorldClient({
      'docker.io/library/nginx': ['amd64', 'arm64'],
      'quay.io/team/app': ['amd64', 'arm64'],
    });
    const hub = await inspectorFor(client, []).inspect('nginx');
    expect(hub.reference).toBe('docker.io/library/nginx:latest');
    expect(hub.shortName).toEqual({
      name: 'nginx',
      rule: 'docker-hub',
      candidates: [{ reference: 'docker.io/library/nginx:latest', outcome: 'chosen' }],
    });
    const qualified = await inspectorFor(client, ['first.io']).inspect('quay.io/team/app:1');
    expect(qualified.shortName).toBeUndefined();
    expect(client.asked).toEqual(['docker.io/library/nginx', 'quay.io/team/app']);
  });
});

/**
 * A registry of one repository whose documents the test writes: tags and digests -> manifests, digests -> config
 * blobs. Counts the requests it answers, as a registry's access log would.
 */
class ScriptedClient {
  readonly requests: string[] = [];
  private readonly manifests = new Map<string, FetchedManifest>();
  private readonly blobs = new Map<string, Buffer>();

  /** An index of `children` (each a manifest digest and its architecture) under tag `tag`. */
  index(tag: string, digest: string, children: [string, string][]): void {
    const json = {
      manifests: children.map(([d, architecture]) => ({
        digest: d,
        platform: { os: 'linux', architecture },
      })),
    };
    this.manifests.set(tag, { mediaType: indexType, kind: 'index', digest, body: Buffer.from(''), json });
  }

  /** A single manifest `digest` whose config `configDigest` holds `config`. */
  manifest(digest: string, configDigest: string, config: object): void {
    const body = Buffer.from(JSON.stringify(config));
    this.blobs.set(configDigest, body);
    this.manifests.set(digest, {
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      kind: 'manifest',
      digest,
      body: Buffer.from(''),
      json: { config: { digest: configDigest, size: body.length } },
    });
  }

  getManifest(_location: unknown, reference: string): Promise<FetchedManifest> {
    this.requests.push(`manifest ${reference}`);
    const found = this.manifests.get(reference);
    return found
      ? Promise.resolve(found)
      : Promise.reject(new RegistryError('TESSERA_REGISTRY_NOT_FOUND', `${reference} not found`));
  }

  getBlob(_location: unknown, digest: string): Promise<Buffer> {
    this.requests.push(`blob ${digest}`);
    const found = this.blobs.get(digest);
    return found
      ? Promise.resolve(found)
      : Promise.reject(new RegistryError('TESSERA_REGISTRY_NOT_FOUND', `${digest} not found`));
  }

  async close(): Promise<void> {}
}

describe('RegistryInspector: operator bundles published as indexes', () => {
  const d = (c: string): string => `sha256:${c.repeat(64)}`;
  const bundleLabels = { 'operators.operatorframework.io.bundle.package.v1': 'p' };
  /** A bundle index of two platforms (`bundle:1`), an ordinary two-platform index (`app:1`), one-platform indexes. */
  function registry(): ScriptedClient {
    const client = new ScriptedClient();
    client.manifest(d('1'), d('a'), { architecture: 'arm64', os: 'linux', config: { Labels: bundleLabels } });
    client.manifest(d('2'), d('b'), {
      architecture: 'ppc64le',
      os: 'linux',
      config: { Labels: bundleLabels },
    });
    client.index('bundle', d('3'), [
      [d('1'), 'arm64'],
      [d('2'), 'ppc64le'],
    ]);
    client.manifest(d('4'), d('c'), { architecture: 'amd64', os: 'linux', config: {} });
    client.manifest(d('5'), d('e'), { architecture: 'arm64', os: 'linux', config: {} });
    client.index('app', d('6'), [
      [d('4'), 'amd64'],
      [d('5'), 'arm64'],
    ]);
    client.index('single-bundle', d('7'), [[d('1'), 'arm64']]);
    // Hostile: an index whose first entry is another index (listed by digest): one level is read, never more.
    client.index(d('6'), d('6'), [
      [d('4'), 'amd64'],
      [d('5'), 'arm64'],
    ]);
    client.index('nested', d('f'), [
      [d('6'), 'amd64'],
      [d('5'), 'arm64'],
    ]);
    client.index('single-app', d('8'), [[d('4'), 'amd64']]);
    return client;
  }
  const all = ['amd64', 'arm64', 'ppc64le', 's390x'];

  it.each<[string, boolean, readonly string[], number]>([
    // [tag, probe asked, architectures, requests]
    ['bundle', true, all, 3],
    ['bundle', false, ['arm64', 'ppc64le'], 1],
    ['app', true, ['amd64', 'arm64'], 3],
    ['app', false, ['amd64', 'arm64'], 1],
    ['single-bundle', false, all, 3],
    ['single-app', false, ['amd64'], 3],
    ['nested', true, ['amd64', 'arm64'], 2],
  ])('%s (probe %s): %j in %i requests', async (tag, probe, architectures, requests) => {
    const client = registry();
    const inspector = new RegistryInspector({ client: client as unknown as DistributionClient });
    const result = await inspector.inspect(`registry.example.io/team/x:${tag}`, {
      probeOperatorBundle: probe,
    });
    expect(result.architectures).toEqual(architectures);
    expect(result.operatorBundle).toBe(architectures === all);
    expect(client.requests).toHaveLength(requests);
  });

  it('remembers a probe per manifest digest: once known, a bundle index costs one request, probed or not', async () => {
    const client = registry();
    const inspector = new RegistryInspector({ client: client as unknown as DistributionClient });
    await inspector.inspect('registry.example.io/team/x:bundle', { probeOperatorBundle: true });
    expect(client.requests).toHaveLength(3);
    const again = await inspector.inspect('registry.example.io/team/x:bundle', { probeOperatorBundle: true });
    // An ordinary pod of the same bundle gets the same answer, for free.
    const plain = await inspector.inspect('registry.example.io/team/x:bundle');
    // Another index whose first entry is that manifest needs no probe either.
    const single = await inspector.inspect('registry.example.io/team/x:single-bundle');
    expect([again, plain, single].map((r) => r.architectures)).toEqual([all, all, all]);
    expect(client.requests).toEqual([
      `manifest bundle`,
      `manifest ${d('1')}`,
      `blob ${d('a')}`,
      `manifest bundle`,
      `manifest bundle`,
      `manifest single-bundle`,
    ]);
  });

  it('does not remember a probe that failed: the index answers with its platforms, and the next probe asks again', async () => {
    const client = new ScriptedClient();
    client.index('broken', d('9'), [
      [d('1'), 'arm64'],
      [d('2'), 'ppc64le'],
    ]);
    const inspector = new RegistryInspector({ client: client as unknown as DistributionClient });
    const first = await inspector.inspect('registry.example.io/team/x:broken', { probeOperatorBundle: true });
    expect(first.architectures).toEqual(['arm64', 'ppc64le']);
    client.manifest(d('1'), d('a'), { architecture: 'arm64', os: 'linux', config: { Labels: bundleLabels } });
    const second = await inspector.inspect('registry.example.io/team/x:broken', {
      probeOperatorBundle: true,
    });
    expect(second.architectures).toEqual(all);
  });

  it('keeps the memory within its byte budget, forgetting the least recently used digests', async () => {
    const client = registry();
    const inspector = new RegistryInspector({
      client: client as unknown as DistributionClient,
      maxBundleVerdictBytes: bundleVerdictBytes(d('1')),
    });
    await inspector.inspect('registry.example.io/team/x:bundle', { probeOperatorBundle: true });
    await inspector.inspect('registry.example.io/team/x:app', { probeOperatorBundle: true });
    client.requests.length = 0;
    // Room for one digest: the app's first entry evicted the bundle's, so the bundle is probed again.
    await inspector.inspect('registry.example.io/team/x:bundle', { probeOperatorBundle: true });
    expect(client.requests).toHaveLength(3);
  });
});
