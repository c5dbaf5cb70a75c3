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
