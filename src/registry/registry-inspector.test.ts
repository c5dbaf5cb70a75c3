import { describe, expect, it } from 'vitest';
import type { DistributionClient, FetchedManifest } from './distribution-client.js';
import { RegistryError } from './errors.js';
import { Keyring } from './keyring.js';
import { RegistryInspector } from './registry-inspector.js';

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
