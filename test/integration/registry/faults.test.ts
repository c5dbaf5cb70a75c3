// Failure handling with loopback fake servers, for faults a real registry cannot be made to produce on demand:
// rate limiting with Retry-After, 5xx, stalls, oversized or altered content, redirect loops, cross-origin
// redirects, foreign token realms, schema 1. Waits between retries go through an injected sleep.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { multiPlatformImage, singleImage } from '../../../src/devcluster/registry-images.js';
import { Keyring } from '../../../src/registry/keyring.js';
import { emptyRegistryPolicy } from '../../../src/registry/mirrors.js';
import {
  RegistryInspector,
  type RegistryInspectorOptions,
} from '../../../src/registry/registry-inspector.js';
import { startFakeServer, type FakeServer } from './fake-server.js';
import { failure } from './expect-failure.js';

let server: FakeServer;
let other: FakeServer;
const open: RegistryInspector[] = [];
const sleeps: number[] = [];

const index = multiPlatformImage({
  platforms: [{ architecture: 'amd64' }, { architecture: 'arm64' }],
  salt: 'faults',
});
const indexType = 'application/vnd.oci.image.index.v1+json';

let httpClient: 'undici' | 'node' = 'undici';

function inspectorFor(options: RegistryInspectorOptions = {}): RegistryInspector {
  const inspector = new RegistryInspector({
    httpClient,
    caCertificates: [server.caCertPem, other.caCertPem],
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0,
    ...options,
  });
  open.push(inspector);
  return inspector;
}

const manifestRequests = (s: FakeServer): number =>
  s.requests.filter((r) => r.path.includes('/manifests/')).length;

beforeAll(async () => {
  server = await startFakeServer();
  other = await startFakeServer();
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((i) => i.close()));
  server.requests.length = 0;
  other.requests.length = 0;
  sleeps.length = 0;
});

afterAll(async () => {
  await server?.close();
  await other?.close();
});

describe.each(['undici', 'node'] as const)('over %s', (client) => {
  beforeAll(() => {
    httpClient = client;
  });

  it('reaches an insecure registry over plain http, and never a secure one', async () => {
    const plain = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes),
    );
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', () => resolve()));
    const host = `127.0.0.1:${(plain.address() as AddressInfo).port}`;
    try {
      const secure = await failure(inspectorFor().inspect(`${host}/app:v1`));
      expect(secure.code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
      expect(secure.retryable).toBe(false);
      const policy = { ...emptyRegistryPolicy, insecureRegistries: [host] };
      const insecure = inspectorFor({ policy: () => policy });
      expect((await insecure.inspect(`${host}/app:v1`)).architectures).toEqual(['amd64', 'arm64']);
      expect((await insecure.inspect(`${host}/app:v2`)).architectures).toEqual(['amd64', 'arm64']);
    } finally {
      plain.closeAllConnections();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });

  it('keeps at most concurrencyPerRegistry requests in flight per registry', async () => {
    let inFlight = 0;
    let peak = 0;
    server.handler = (_req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
      }, 20);
    };
    const inspector = inspectorFor({ concurrencyPerRegistry: 3 });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => inspector.inspect(`${server.host}/app:t${i}`)),
    );
    expect(results).toHaveLength(12);
    expect(manifestRequests(server)).toBe(12);
    expect(peak).toBe(3);
  });

  it('trusts an extra CA only in the inspector it was given to', async () => {
    server.handler = (_req, res) =>
      res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
    expect((await inspectorFor().inspect(`${server.host}/app:v1`)).architectures).toEqual(['amd64', 'arm64']);
    const err = await failure(inspectorFor({ caCertificates: [] }).inspect(`${server.host}/app:v1`));
    expect(err.code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
    expect(err.message).toContain('not trusted');
  });

  describe('retries', () => {
    it('waits as long as Retry-After says on 429, then succeeds', async () => {
      let calls = 0;
      server.handler = (_req, res) => {
        if (++calls <= 2) res.writeHead(429, { 'retry-after': '2' }).end();
        else res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
      };
      const result = await inspectorFor().inspect(`${server.host}/app:v1`);
      expect(result.architectures).toEqual(['amd64', 'arm64']);
      expect(sleeps).toEqual([2000, 2000]);
      expect(manifestRequests(server)).toBe(3);
    });

    it('backs off exponentially on 5xx and gives up with a retryable error', async () => {
      server.handler = (_req, res) => res.writeHead(503).end('maintenance');
      const err = await failure(
        inspectorFor({ retry: { maxRetries: 3, baseDelayMs: 100 } }).inspect(`${server.host}/app:v1`),
      );
      expect(err.code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
      expect(err.retryable).toBe(true);
      expect(err.message).toContain('HTTP 503');
      expect(sleeps).toEqual([50, 100, 200]);
      expect(manifestRequests(server)).toBe(4);
    });

    it('recovers from a single 502', async () => {
      let calls = 0;
      server.handler = (_req, res) => {
        if (++calls === 1) res.writeHead(502).end();
        else res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
      };
      expect((await inspectorFor().inspect(`${server.host}/app:v1`)).architectures).toEqual([
        'amd64',
        'arm64',
      ]);
    });
  });

  describe('time and size bounds', () => {
    it('times out a registry that never answers', async () => {
      server.handler = () => undefined; // accept, then stall
      const err = await failure(
        inspectorFor({ attemptTimeoutMs: 300, retry: { maxRetries: 0 } }).inspect(`${server.host}/app:v1`),
      );
      expect(err.code).toBe('TESSERA_REGISTRY_TIMEOUT');
      expect(err.retryable).toBe(true);
      expect(err.message).toContain('within 300 ms');
    });

    it('times out a registry that stalls in the middle of the body', async () => {
      server.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': indexType, 'content-length': String(index.manifest.size) });
        res.write(index.manifest.bytes.subarray(0, 10));
      };
      const err = await failure(
        inspectorFor({ attemptTimeoutMs: 300, retry: { maxRetries: 1 } }).inspect(`${server.host}/app:v1`),
      );
      expect(err.code).toBe('TESSERA_REGISTRY_TIMEOUT');
      expect(manifestRequests(server)).toBe(2);
    });

    it('refuses an oversized manifest, announced or streamed', async () => {
      const big = Buffer.alloc(50_000, 0x20);
      server.handler = (_req, res) =>
        res.writeHead(200, { 'content-type': indexType, 'content-length': String(big.length) }).end(big);
      const announced = await failure(
        inspectorFor({ maxManifestBytes: 10_000 }).inspect(`${server.host}/app:v1`),
      );
      expect(announced.code).toBe('TESSERA_REGISTRY_TOO_LARGE');
      server.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': indexType });
        for (let i = 0; i < 50; i++) res.write(big.subarray(0, 1000));
        res.end();
      };
      const streamed = await failure(
        inspectorFor({ maxManifestBytes: 10_000 }).inspect(`${server.host}/app:v1`),
      );
      expect(streamed.code).toBe('TESSERA_REGISTRY_TOO_LARGE');
      expect(streamed.message).toContain('10000-byte limit');
    });
  });

  describe('integrity', () => {
    it('refuses a manifest whose content does not match the digest asked for', async () => {
      server.handler = (_req, res) =>
        res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
      const other = `sha256:${'0'.repeat(64)}`;
      const err = await failure(inspectorFor().inspect(`${server.host}/app@${other}`));
      expect(err.code).toBe('TESSERA_REGISTRY_DIGEST_MISMATCH');
      expect(err.message).toContain(index.manifest.digest);
    });

    it('refuses a manifest whose Docker-Content-Digest header does not match the content', async () => {
      server.handler = (_req, res) =>
        res
          .writeHead(200, { 'content-type': indexType, 'docker-content-digest': `sha256:${'1'.repeat(64)}` })
          .end(index.manifest.bytes);
      expect((await failure(inspectorFor().inspect(`${server.host}/app:v1`))).code).toBe(
        'TESSERA_REGISTRY_DIGEST_MISMATCH',
      );
    });

    it('refuses a config blob that does not hash to its digest', async () => {
      const image = singleImage({ platform: { architecture: 'arm64' } });
      server.handler = (req, res) => {
        if (req.url?.includes('/manifests/'))
          res.writeHead(200, { 'content-type': image.manifest.mediaType }).end(image.manifest.bytes);
        else res.writeHead(200).end('{"architecture":"amd64","os":"linux"}');
      };
      expect((await failure(inspectorFor().inspect(`${server.host}/app:v1`))).code).toBe(
        'TESSERA_REGISTRY_DIGEST_MISMATCH',
      );
    });

    it('refuses schema 1 manifests with a clear message', async () => {
      server.handler = (_req, res) =>
        res
          .writeHead(200, { 'content-type': 'application/vnd.docker.distribution.manifest.v1+prettyjws' })
          .end(
            JSON.stringify({ schemaVersion: 1, name: 'app', tag: 'v1', architecture: 'amd64', fsLayers: [] }),
          );
      const err = await failure(inspectorFor().inspect(`${server.host}/app:v1`));
      expect(err.code).toBe('TESSERA_REGISTRY_UNSUPPORTED_MANIFEST');
      expect(err.message).toContain('schema 1');
      expect(err.message).toContain('re-push');
    });
  });

  describe('redirects', () => {
    it('stops a redirect loop after the configured number of hops', async () => {
      server.handler = (req, res) => res.writeHead(302, { location: req.url ?? '/' }).end();
      const err = await failure(inspectorFor({ maxRedirects: 3 }).inspect(`${server.host}/app:v1`));
      expect(err.code).toBe('TESSERA_REGISTRY_TOO_MANY_REDIRECTS');
      expect(manifestRequests(server)).toBe(4);
    });

    it('follows a blob redirect to another origin without the registry credentials', async () => {
      const image = singleImage({ platform: { architecture: 's390x' } });
      const config = image.blobs[0];
      if (config === undefined) throw new Error('no config');
      server.handler = (req, res) => {
        if (req.headers.authorization === undefined) {
          res.writeHead(401, { 'www-authenticate': 'Basic realm="fake"' }).end();
        } else if (req.url?.includes('/manifests/')) {
          res.writeHead(200, { 'content-type': image.manifest.mediaType }).end(image.manifest.bytes);
        } else {
          res
            .writeHead(307, { location: `https://${other.host}/storage/${config.digest}?signature=x` })
            .end();
        }
      };
      other.handler = (_req, res) => res.writeHead(200).end(config.bytes);
      const keyring = Keyring.of([{ key: server.host, credential: { username: 'u', password: 'p' } }]);
      expect((await inspectorFor().inspect(`${server.host}/app:v1`, { keyring })).architectures).toEqual([
        's390x',
      ]);
      expect(other.requests).toHaveLength(1);
      expect(other.requests[0]?.authorization).toBeUndefined();
    });
  });

  describe('token realms', () => {
    it('never sends credentials to a token realm on an unrelated host', async () => {
      server.handler = (_req, res) =>
        res
          .writeHead(401, {
            'www-authenticate': `Bearer realm="https://localhost:${other.host.split(':')[1]}/token",service="fake"`,
          })
          .end();
      const keyring = Keyring.of([{ key: server.host, credential: { username: 'u', password: 'p' } }]);
      const err = await failure(inspectorFor().inspect(`${server.host}/app:v1`, { keyring }));
      expect(err.code).toBe('TESSERA_REGISTRY_UNTRUSTED_REALM');
      expect(err.message).toContain('unrelated host');
      expect(other.requests).toHaveLength(0);
    });

    it('uses a realm on the registry host (another port) and caches the token', async () => {
      const tokenPort = other.host.split(':')[1];
      let tokens = 0;
      other.handler = (req, res) => {
        tokens++;
        expect(req.headers.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ token: 'tok-1', expires_in: 300 }));
      };
      server.handler = (req, res) => {
        if (req.headers.authorization !== 'Bearer tok-1') {
          res
            .writeHead(401, {
              'www-authenticate': `Bearer realm="https://127.0.0.1:${tokenPort}/token",service="fake",scope="repository:app:pull"`,
            })
            .end();
        } else res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
      };
      const keyring = Keyring.of([{ key: server.host, credential: { username: 'u', password: 'p' } }]);
      const inspector = inspectorFor();
      await inspector.inspect(`${server.host}/app:v1`, { keyring });
      await inspector.inspect(`${server.host}/app:v2`, { keyring });
      expect(tokens).toBe(1);
      expect(other.requests[0]?.path).toContain('scope=repository%3Aapp%3Apull');
      expect(manifestRequests(server)).toBe(3); // 401, 200, then 200 with the cached token up front
    });
  });
});
