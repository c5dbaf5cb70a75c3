// Hostile and unusual indexes (issue #10 items 4 and 12, issue #14): a real distribution registry on loopback for
// what a registry accepts (operator bundle published as an index, attestation entries, `os: unknown`), and an
// in-process fake registry for what only a hostile one sends (10,000-entry indexes for 100 images of one pod,
// prototype names as architectures, endless manifests). Every case ends in a bounded, named outcome.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { blobOf, singleImage, type BuiltImage } from '../../../src/devcluster/registry-images.js';
import { CachingInspector } from '../../../src/registry/caching-inspector.js';
import { Keyring } from '../../../src/registry/keyring.js';
import { allArchitectures } from '../../../src/registry/platforms.js';
import { RegistryInspector } from '../../../src/registry/registry-inspector.js';
import { failure } from '../registry/expect-failure.js';
import { defaultRegistryJsonBudgets } from '../../../src/registry/registry-json.js';
import { startFakeServer, type FakeServer } from '../registry/fake-server.js';
import { inFlightGauge, ociIndexType, rawIndex, serveImages } from './registry-support.js';

const ociManifestType = 'application/vnd.oci.image.manifest.v1+json';
const bundleLabels = { 'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1' };

const descriptorOf = (image: BuiltImage, extra: Record<string, unknown>): Record<string, unknown> => ({
  mediaType: ociManifestType,
  digest: image.manifest.digest,
  size: image.manifest.size,
  ...extra,
});

/** An index over `children` with the given extra descriptor fields (platform, annotations) per child. */
function indexOver(children: readonly [BuiltImage, Record<string, unknown>][]): BuiltImage {
  const manifests = children.map(([child, extra]) => descriptorOf(child, extra));
  const manifest = blobOf(
    ociIndexType,
    Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: ociIndexType, manifests })),
  );
  return { manifest, blobs: [], children: children.map(([child]) => child) };
}

const amd64 = singleImage({ platform: { architecture: 'amd64' }, salt: 'hostile-index' });
const arm64 = singleImage({ platform: { architecture: 'arm64' }, salt: 'hostile-index' });
const s390x = singleImage({ platform: { architecture: 's390x' }, salt: 'hostile-index' });

describe('MTO fidelity against a real registry', () => {
  let registry: LocalRegistry;
  let stateDir: string;
  let inspector: RegistryInspector;

  beforeAll(async () => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-hostile-index-'));
    registry = await startLocalRegistry({ stateDir, auth: 'none' });
    inspector = new RegistryInspector({ caCertificates: [registry.caCertPem], retry: { maxRetries: 0 } });
  });

  afterAll(async () => {
    await inspector?.close();
    await registry?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('counts an operator bundle published as an index as every architecture, like MTO', async () => {
    const bundle = singleImage({ platform: { architecture: 'amd64' }, labels: bundleLabels, salt: 'bundle' });
    const index = indexOver([
      // An attestation first: MTO looks at the first runnable manifest, not at this one.
      [
        s390x,
        {
          platform: { os: 'linux', architecture: 's390x' },
          annotations: { 'vnd.docker.reference.digest': bundle.manifest.digest },
        },
      ],
      [bundle, { platform: { os: 'linux', architecture: 'amd64' } }],
    ]);
    await registry.pushImage('team/bundle-index', 'v1', index);
    const result = await inspector.inspect(`${registry.host}/team/bundle-index:v1`);
    expect(result.kind).toBe('index');
    expect(result.operatorBundle).toBe(true);
    expect(result.architectures).toEqual([...allArchitectures]);
  });

  it('counts a bundle published as an index of several platforms as every architecture when asked, once per digest', async () => {
    const children = (['arm64', 'ppc64le'] as const).map((architecture) =>
      singleImage({ platform: { architecture }, labels: bundleLabels, salt: `multi-bundle-${architecture}` }),
    );
    const index = indexOver(
      children.map((child, i) => [
        child,
        { platform: { os: 'linux', architecture: i === 0 ? 'arm64' : 'ppc64le' } },
      ]),
    );
    await registry.pushImage('team/multi-bundle', 'v1', index);
    const image = `${registry.host}/team/multi-bundle:v1`;
    const gets = (): string[] =>
      registry
        .accessLog()
        .filter((e) => e.method === 'GET' && e.path.startsWith('/v2/team/multi-bundle/'))
        .map((e) => e.path.replace('/v2/team/multi-bundle/', '').split('/')[0] ?? '');
    const fresh = new RegistryInspector({ caCertificates: [registry.caCertPem], retry: { maxRetries: 0 } });
    try {
      // An ordinary pod: the index's platforms, one request.
      expect((await fresh.inspect(image)).architectures).toEqual(['arm64', 'ppc64le']);
      expect(gets()).toEqual(['manifests']);
      // An OLM unpack pod: the first runnable manifest and its config say bundle.
      const probed = await fresh.inspect(image, { probeOperatorBundle: true });
      expect(probed.operatorBundle).toBe(true);
      expect(probed.architectures).toEqual([...allArchitectures]);
      expect(gets()).toEqual(['manifests', 'manifests', 'manifests', 'blobs']);
      // Remembered by digest: any later inspection of it costs the index alone.
      expect((await fresh.inspect(image)).architectures).toEqual([...allArchitectures]);
      expect(gets()).toHaveLength(5);
    } finally {
      await fresh.close();
    }
  });

  it('skips entries with only vnd.docker.reference.digest, and keeps os "unknown" with a real architecture', async () => {
    const index = indexOver([
      [amd64, { platform: { os: 'linux', architecture: 'amd64' } }],
      [
        s390x,
        {
          platform: { os: 'linux', architecture: 's390x' },
          annotations: { 'vnd.docker.reference.digest': amd64.manifest.digest },
        },
      ],
      [arm64, { platform: { os: 'unknown', architecture: 'arm64' } }],
    ]);
    await registry.pushImage('team/attested', 'v1', index);
    const result = await inspector.inspect(`${registry.host}/team/attested:v1`);
    expect(result.architectures).toEqual(['amd64', 'arm64']);
    expect(result.operatorBundle).toBe(false);
    expect(result.skippedEntries).toEqual({ attestation: 1, unknown: 0, invalid: 0 });
  });

  it('turns prototype names from a pushed index into plain strings or drops them, never object keys', async () => {
    const index = indexOver([
      [amd64, { platform: { os: 'linux', architecture: '__proto__' } }],
      [arm64, { platform: { os: 'linux', architecture: 'amd64' } }],
      [s390x, { platform: { os: 'linux', architecture: 'Has Spaces' } }],
    ]);
    await registry.pushImage('team/proto', 'v1', index);
    const result = await inspector.inspect(`${registry.host}/team/proto:v1`);
    expect(result.architectures).toEqual(['amd64']);
    expect(result.skippedEntries).toEqual({ attestation: 0, unknown: 0, invalid: 2 });
  });
});

describe('hostile registry: budgets', () => {
  let server: FakeServer;
  const open: RegistryInspector[] = [];

  beforeAll(async () => {
    server = await startFakeServer();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((i) => i.close()));
    server.requests.length = 0;
  });
  afterAll(async () => {
    await server?.close();
  });

  const inspectorFor = (
    options: ConstructorParameters<typeof RegistryInspector>[0] = {},
  ): RegistryInspector => {
    const inspector = new RegistryInspector({
      caCertificates: [server.caCertPem],
      retry: { maxRetries: 0 },
      ...options,
    });
    open.push(inspector);
    return inspector;
  };

  it('survives one pod with 100 images whose registry serves a 10,000-entry index each: bounded and named', async () => {
    const entries = Array.from({ length: 10_000 }, (_, i) => ({
      mediaType: ociManifestType,
      digest: `sha256:${i.toString(16).padStart(64, '0')}`,
      size: 500,
      platform: { os: 'linux', architecture: 'amd64' },
    }));
    const huge = rawIndex(entries);
    // Under the byte budget: the shape budget decides, on the bytes, before anything is parsed.
    expect(huge.manifest.size).toBeLessThan(4 * 1024 * 1024);
    const gauge = inFlightGauge(serveImages({ v1: huge }));
    server.handler = gauge.handler;
    const cache = new CachingInspector(inspectorFor());
    const podKeyring = Keyring.of([]); // one pod: one keyring object shared by its images
    const heapBefore = process.memoryUsage().heapUsed;
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) =>
        cache.inspect(`${server.host}/app${i}:v1`, { keyring: podKeyring }),
      ),
    );
    const heapDelta = process.memoryUsage().heapUsed - heapBefore;
    for (const r of results) {
      expect(r.status).toBe('rejected');
      const err = (r as PromiseRejectedResult).reason as { code: string; message: string };
      expect(err.code).toBe('TESSERA_REGISTRY_TOO_LARGE');
      expect(err.message).toContain(
        `has more than ${defaultRegistryJsonBudgets.manifest.maxValues} JSON values (arrays, objects and their items), the most accepted; it was not parsed`,
      );
    }
    // At most the per-caller cap of that pod's images were fetched at once...
    expect(gauge.max()).toBeLessThanOrEqual(4);
    // ...so the heap stayed far below what 100 parsed 10,000-entry indexes need (generous budget).
    expect(heapDelta).toBeLessThan(256 * 1024 * 1024);
    // The cache holds compact failures, within its byte budget.
    expect(cache.bytes).toBeLessThanOrEqual(16 * 1024 * 1024);
  });

  it('cuts off an endless manifest at the 4 MiB budget while streaming, before parsing', async () => {
    let sent = 0;
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': ociIndexType }); // no content-length: streamed
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = (): void => {
        while (!res.destroyed && sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    };
    const err = await failure(inspectorFor().inspect(`${server.host}/endless:v1`));
    expect(err.code).toBe('TESSERA_REGISTRY_TOO_LARGE');
    expect(err.message).toContain(`${4 * 1024 * 1024}-byte limit`);
    expect(sent).toBeLessThan(64 * 1024 * 1024); // the controller hung up long before the registry was done
  });

  it('reports prototype names and junk from a hostile index as skipped, never as values', async () => {
    const hostile = rawIndex([
      {
        mediaType: ociManifestType,
        digest: amd64.manifest.digest,
        size: 1,
        platform: { os: 'linux', architecture: 'amd64' },
      },
      {
        mediaType: ociManifestType,
        digest: `sha256:${'1'.repeat(64)}`,
        size: 1,
        platform: { os: 'linux', architecture: '__proto__' },
      },
      {
        mediaType: ociManifestType,
        digest: `sha256:${'2'.repeat(64)}`,
        size: 1,
        platform: { os: 'linux', architecture: 'x'.repeat(100_000) },
      },
      {
        mediaType: ociManifestType,
        digest: `sha256:${'3'.repeat(64)}`,
        size: 1,
        platform: { os: { nested: true }, architecture: 'arm64' },
      },
      {
        mediaType: ociManifestType,
        digest: `sha256:${'4'.repeat(64)}`,
        size: 1,
        platform: { os: 'linux', architecture: 'arm64\u202e' },
      },
    ]);
    server.handler = serveImages({ v1: hostile });
    const result = await inspectorFor().inspect(`${server.host}/proto:v1`);
    expect(result.architectures).toEqual(['amd64', 'arm64']);
    expect(result.architectures.every((a) => typeof a === 'string')).toBe(true);
    expect(result.skippedEntries).toEqual({ attestation: 0, unknown: 0, invalid: 3 });
  });
});
