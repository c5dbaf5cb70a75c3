import { describe, expect, it } from 'vitest';
import { CachingInspector, estimateEntryBytes, type InspectionCacheMetrics } from './caching-inspector.js';
import { RegistryError } from './errors.js';
import type { ImageInspection, ImageInspector, InspectOptions } from './inspector.js';
import { Keyring } from './keyring.js';

class FakeClock {
  ms = 1_000;
  now = (): number => this.ms;
  step(ms: number): void {
    this.ms += ms;
  }
}

function inspection(image: string, architectures: string[]): ImageInspection {
  return {
    reference: image,
    digest: `sha256:${'c'.repeat(64)}`,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    kind: 'index',
    architectures,
    platforms: architectures.map((architecture) => ({
      os: 'linux',
      architecture,
      variant: undefined,
      digest: 'd',
    })),
    operatorBundle: false,
    source: image,
  };
}

/** An inner inspector whose answers the test controls; it records every call. */
class ScriptedInspector implements ImageInspector {
  calls: { image: string; options: InspectOptions }[] = [];
  answer: (image: string) => Promise<ImageInspection> = async (image) => inspection(image, ['amd64']);
  inspect(image: string, options: InspectOptions = {}): Promise<ImageInspection> {
    this.calls.push({ image, options });
    return this.answer(image);
  }
}

const keyring = (user: string): Keyring =>
  Keyring.of([{ key: 'quay.io', credential: { username: user, password: 'pw' } }]);

describe('CachingInspector', () => {
  it('answers repeated inspections from the cache until the TTL passes', async () => {
    const clock = new FakeClock();
    const inner = new ScriptedInspector();
    const cache = new CachingInspector(inner, { ttlMs: 60_000, now: clock.now });
    expect((await cache.inspect('quay.io/a/b:1')).architectures).toEqual(['amd64']);
    inner.answer = async (image) => inspection(image, ['amd64', 'arm64']);
    expect((await cache.inspect('quay.io/a/b:1')).architectures).toEqual(['amd64']);
    expect(inner.calls).toHaveLength(1);
    clock.step(60_001);
    expect((await cache.inspect('quay.io/a/b:1')).architectures).toEqual(['amd64', 'arm64']);
    expect(inner.calls).toHaveLength(2);
  });

  it('keeps a bundle-probed answer apart: an unpack pod never gets the narrower unprobed answer', async () => {
    const inner = new ScriptedInspector();
    inner.answer = async (image) => inspection(image, ['arm64', 'ppc64le']);
    const cache = new CachingInspector(inner);
    await cache.inspect('quay.io/op/bundle:1');
    expect(cache.isCached('quay.io/op/bundle:1', Keyring.empty)).toBe(true);
    expect(cache.isCached('quay.io/op/bundle:1', Keyring.empty, { probeOperatorBundle: true })).toBe(false);
    inner.answer = async (image) => inspection(image, ['amd64', 'arm64', 'ppc64le', 's390x']);
    const probed = await cache.inspect('quay.io/op/bundle:1', { probeOperatorBundle: true });
    expect(probed.architectures).toEqual(['amd64', 'arm64', 'ppc64le', 's390x']);
    expect(inner.calls.map((c) => c.options.probeOperatorBundle === true)).toEqual([false, true]);
    // Both answers stay cached, each for its own kind of caller.
    await cache.inspect('quay.io/op/bundle:1', { probeOperatorBundle: true });
    await cache.inspect('quay.io/op/bundle:1');
    expect(inner.calls).toHaveLength(2);
  });

  it('keys entries by credentials: a pod without them never sees a result obtained with them', async () => {
    const inner = new ScriptedInspector();
    const cache = new CachingInspector(inner, { now: new FakeClock().now });
    await cache.inspect('quay.io/private/x', { keyring: keyring('alice') });
    await cache.inspect('quay.io/private/x', { keyring: keyring('alice') });
    await cache.inspect('quay.io/private/x');
    await cache.inspect('quay.io/private/x', { keyring: keyring('bob') });
    expect(inner.calls.map((c) => c.options.keyring?.fingerprint ?? 'none')).toEqual([
      keyring('alice').fingerprint,
      'none',
      keyring('bob').fingerprint,
    ]);
  });

  it('shares one inner call among concurrent misses for the same key', async () => {
    const inner = new ScriptedInspector();
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => (release = r));
    inner.answer = async (image) => {
      await gate;
      return inspection(image, ['s390x']);
    };
    const cache = new CachingInspector(inner, { now: new FakeClock().now });
    const all = Array.from({ length: 50 }, (_, i) => cache.inspect(`img${i % 5}`));
    release();
    const results = await Promise.all(all);
    expect(inner.calls).toHaveLength(5);
    expect(new Set(results.map((r) => r.reference))).toEqual(
      new Set(['img0', 'img1', 'img2', 'img3', 'img4']),
    );
  });

  it('remembers failures only for the negative TTL', async () => {
    const clock = new FakeClock();
    const inner = new ScriptedInspector();
    inner.answer = () => Promise.reject(new RegistryError('TESSERA_REGISTRY_NOT_FOUND', 'nope'));
    const cache = new CachingInspector(inner, { negativeTtlMs: 5_000, now: clock.now });
    await expect(cache.inspect('x')).rejects.toThrow('nope');
    await expect(cache.inspect('x')).rejects.toThrow('nope');
    expect(inner.calls).toHaveLength(1);
    clock.step(5_001);
    inner.answer = async (image) => inspection(image, ['ppc64le']);
    expect((await cache.inspect('x')).architectures).toEqual(['ppc64le']);
    expect(inner.calls).toHaveLength(2);
  });

  it('bypassCache neither reads nor writes the cache', async () => {
    const inner = new ScriptedInspector();
    const cache = new CachingInspector(inner, { now: new FakeClock().now });
    await cache.inspect('x');
    inner.answer = async (image) => inspection(image, ['arm64']);
    expect((await cache.inspect('x', { bypassCache: true })).architectures).toEqual(['arm64']);
    expect((await cache.inspect('x')).architectures).toEqual(['amd64']);
    expect(cache.size).toBe(1);
    await cache.inspect('y', { bypassCache: true });
    expect(cache.size).toBe(1);
  });

  it('purge() forgets everything', async () => {
    const inner = new ScriptedInspector();
    const cache = new CachingInspector(inner, { now: new FakeClock().now });
    await cache.inspect('x');
    cache.purge();
    await cache.inspect('x');
    expect(inner.calls).toHaveLength(2);
  });

  it('purge() also drops inspections under way: they answer their callers, but are neither joined nor stored', async () => {
    const inner = new ScriptedInspector();
    const gates: (() => void)[] = [];
    inner.answer = async (image) => {
      const call = inner.calls.length;
      await new Promise<void>((r) => gates.push(r));
      return inspection(image, call === 1 ? ['amd64'] : ['arm64']);
    };
    const cache = new CachingInspector(inner, { now: new FakeClock().now });
    const before = cache.inspect('x'); // started under the old trust
    await Promise.resolve();
    cache.purge(); // e.g. a registry CA was removed
    const after = cache.inspect('x'); // must not join the old inspection
    await Promise.resolve();
    expect(inner.calls).toHaveLength(2);
    for (const open of gates) open();
    expect((await before).architectures).toEqual(['amd64']);
    expect((await after).architectures).toEqual(['arm64']);
    // Only the answer begun after the purge is kept.
    expect((await cache.inspect('x')).architectures).toEqual(['arm64']);
    expect(inner.calls).toHaveLength(2);
  });

  it('a caller that gives up does not cancel the shared call nor poison the cache', async () => {
    const inner = new ScriptedInspector();
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => (release = r));
    inner.answer = async (image) => {
      await gate;
      return inspection(image, ['amd64']);
    };
    const cache = new CachingInspector(inner, { now: new FakeClock().now });
    const controller = new AbortController();
    const impatient = cache.inspect('x', { signal: controller.signal });
    const patient = cache.inspect('x');
    controller.abort();
    await expect(impatient).rejects.toMatchObject({ code: 'TESSERA_REGISTRY_ABORTED' });
    release();
    expect((await patient).architectures).toEqual(['amd64']);
    expect(inner.calls).toHaveLength(1);
    expect(inner.calls[0]?.options.signal).toBeUndefined();
  });

  it('evicts the least recently used entry beyond max and reports metrics', async () => {
    const clock = new FakeClock();
    const sizes: number[] = [];
    const hits: number[] = [];
    const misses: number[] = [];
    const metrics: InspectionCacheMetrics = {
      setCacheSize: (n) => sizes.push(n),
      observeHit: (s) => hits.push(s),
      observeMiss: (s) => misses.push(s),
    };
    const inner = new ScriptedInspector();
    inner.answer = async (image) => {
      clock.step(250);
      return inspection(image, ['amd64']);
    };
    const cache = new CachingInspector(inner, { max: 2, now: clock.now, metrics });
    await cache.inspect('a');
    await cache.inspect('b');
    await cache.inspect('a');
    await cache.inspect('c'); // evicts b
    await cache.inspect('b');
    expect(inner.calls.map((c) => c.image)).toEqual(['a', 'b', 'c', 'b']);
    expect(cache.size).toBe(2);
    expect(sizes.at(-1)).toBe(2);
    expect(hits).toEqual([0]);
    expect(misses).toEqual([0.25, 0.25, 0.25, 0.25]);
  });
});

describe('CachingInspector byte budget', () => {
  it('keeps the estimated bytes of large results under maxBytes, evicting the least recently used', async () => {
    const inner = new ScriptedInspector();
    // Each result lists 1,000 platforms (the index entry budget): about 180 KB by the estimate.
    inner.answer = async (image) => ({
      ...inspection(image, []),
      platforms: Array.from({ length: 1000 }, (_, i) => ({
        os: 'linux',
        architecture: 'amd64',
        variant: undefined,
        digest: `sha256:${String(i).padStart(64, '0')}`,
      })),
      architectures: ['amd64'],
    });
    const maxBytes = 1024 * 1024;
    const cache = new CachingInspector(inner, { max: 10_000, maxBytes });
    for (let i = 0; i < 100; i++) await cache.inspect(`r/img${i}:1`);
    expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
    expect(cache.size).toBeLessThan(10);
    expect(cache.size).toBeGreaterThan(0);
    // The most recent image is still cached; the first one was evicted.
    await cache.inspect('r/img99:1');
    await cache.inspect('r/img0:1');
    expect(inner.calls.filter((c) => c.image === 'r/img99:1')).toHaveLength(1);
    expect(inner.calls.filter((c) => c.image === 'r/img0:1')).toHaveLength(2);
  });

  it('does not store a single result larger than the whole budget', async () => {
    const inner = new ScriptedInspector();
    const cache = new CachingInspector(inner, { maxBytes: 2_000 });
    inner.answer = async (image) =>
      inspection(
        image,
        Array.from({ length: 50 }, (_, i) => `arch${i}`),
      );
    await cache.inspect('r/huge:1');
    expect(cache.size).toBe(0);
    expect(estimateEntryBytes('k', { ok: true, value: inspection('r/x:1', ['amd64']) })).toBeGreaterThan(512);
  });

  it('refuses a non-positive byte budget', () => {
    expect(() => new CachingInspector(new ScriptedInspector(), { maxBytes: 0 })).toThrow(/maxBytes/);
  });
});
