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
import { recordOutgoingRequests } from './outgoing-requests.js';

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
    // These tests count manifest requests per index; the bundle probe of indexes is covered in hostile/.
    probeIndexForBundle: false,
    ...options,
  });
  open.push(inspector);
  return inspector;
}

const manifestRequests = (s: FakeServer): number =>
  s.requests.filter((r) => r.path.includes('/manifests/')).length;

/** A plain-http loopback server; `close` must be awaited. */
async function startPlainServer(
  handler: http.RequestListener,
): Promise<{ host: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const plain = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', () => resolve()));
  return {
    host: `127.0.0.1:${(plain.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      plain.closeAllConnections();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    },
  };
}

/** A registry on `server` whose manifests are `image` and whose blobs redirect to `location(digest)`. */
function redirectBlobsTo(image: ReturnType<typeof singleImage>, location: (digest: string) => string): void {
  server.handler = (req, res) => {
    if (req.url?.includes('/manifests/'))
      res.writeHead(200, { 'content-type': image.manifest.mediaType }).end(image.manifest.bytes);
    else res.writeHead(307, { location: location(req.url?.split('/').pop() ?? '') }).end();
  };
}

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
    // The server holds every request until the test releases it, so overlap does not depend on timing.
    let inFlight = 0;
    let peak = 0;
    const held: (() => void)[] = [];
    let arrival: { count: number; resolve: () => void } | undefined;
    const heldCount = (count: number): Promise<void> =>
      new Promise((resolve) => {
        if (held.length >= count) resolve();
        else arrival = { count, resolve };
      });
    server.handler = (_req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      held.push(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
      });
      if (arrival !== undefined && held.length >= arrival.count) {
        const { resolve } = arrival;
        arrival = undefined;
        resolve();
      }
    };
    const inspector = inspectorFor({ concurrencyPerRegistry: 3 });
    const all = Promise.all(
      Array.from({ length: 12 }, (_, i) => inspector.inspect(`${server.host}/app:t${i}`)),
    );
    let served = 0;
    while (served < 12) {
      await heldCount(Math.min(3, 12 - served)); // the limit is reached...
      expect(inFlight).toBeLessThanOrEqual(3);
      served += held.length;
      for (const release of held.splice(0)) release();
    }
    expect(await all).toHaveLength(12);
    expect(manifestRequests(server)).toBe(12);
    expect(peak).toBe(3); // ...and never exceeded
  });

  it('frees the queue slot of an inspection cancelled while waiting for it', async () => {
    const held: (() => void)[] = [];
    let arrived: () => void = () => undefined;
    const first = new Promise<void>((resolve) => (arrived = resolve));
    server.handler = (_req, res) => {
      held.push(() => res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes));
      arrived();
    };
    const inspector = inspectorFor({ concurrencyPerRegistry: 1 });
    const running = inspector.inspect(`${server.host}/app:holder`);
    await first;
    const controller = new AbortController();
    const cancelled = inspector.inspect(`${server.host}/app:cancelled`, { signal: controller.signal });
    const queued = inspector.inspect(`${server.host}/app:queued`);
    controller.abort(new Error('pod deleted'));
    const err = await failure(cancelled);
    expect(err.code).toBe('TESSERA_REGISTRY_ABORTED');
    expect(manifestRequests(server)).toBe(1); // still held: the cancelled one never got the slot
    server.handler = (_req, res) =>
      res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
    for (const release of held.splice(0)) release();
    await running;
    expect((await queued).architectures).toEqual(['amd64', 'arm64']);
    expect(server.requests.map((r) => r.path)).toEqual([
      '/v2/app/manifests/holder',
      '/v2/app/manifests/queued',
    ]);
  });

  it('trusts an extra CA only in the inspector it was given to', async () => {
    server.handler = (_req, res) =>
      res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
    expect((await inspectorFor().inspect(`${server.host}/app:v1`)).architectures).toEqual(['amd64', 'arm64']);
    const err = await failure(inspectorFor({ caCertificates: [] }).inspect(`${server.host}/app:v1`));
    expect(err.code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
    expect(err.retryable).toBe(false);
    // One text for every unreachable registry (a tenant must not tell ports apart); it names the CA bundle.
    expect(err.message).toContain('CA bundle');
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
      // Before any answer, a stall reads like every other unreachable registry (no port scanning by error text).
      expect(err.code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
      expect(err.retryable).toBe(true);
      expect(err.message).toContain(`cannot reach ${server.host}`);
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

    it('refuses a config digest that is not a digest, before using it in a URL', async () => {
      const image = singleImage({ platform: { architecture: 'arm64' } });
      const manifest = JSON.parse(image.manifest.bytes.toString('utf8')) as { config: { digest: string } };
      manifest.config.digest = 'sha256:../../../token\u001b[2J';
      server.handler = (_req, res) =>
        res.writeHead(200, { 'content-type': image.manifest.mediaType }).end(JSON.stringify(manifest));
      const err = await failure(inspectorFor().inspect(`${server.host}/app:v1`));
      expect(err.code).toBe('TESSERA_REGISTRY_BAD_RESPONSE');
      expect(err.message).toContain('invalid digest');
      expect(err.message).not.toContain('\u001b');
      expect(server.requests.map((r) => r.path)).toEqual(['/v2/app/manifests/v1']);
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

  describe('redirect policy', () => {
    const image = singleImage({ platform: { architecture: 'arm64' } });
    const config = image.blobs[0];
    if (config === undefined) throw new Error('no config');

    it('refuses a redirect from https to plain http, on another port or the same one', async () => {
      const plain = await startPlainServer((_req, res) => res.writeHead(200).end(config.bytes));
      try {
        redirectBlobsTo(image, (digest) => `http://${plain.host}/storage/${digest}`);
        const err = await failure(inspectorFor().inspect(`${server.host}/app:v1`));
        expect(err.code).toBe('TESSERA_REGISTRY_REDIRECT_REFUSED');
        expect(err.message).toContain('plain http');
        redirectBlobsTo(image, (digest) => `http://${server.host}/storage/${digest}`);
        expect((await failure(inspectorFor().inspect(`${server.host}/app:v1`))).code).toBe(
          'TESSERA_REGISTRY_REDIRECT_REFUSED',
        );
        expect(plain.requests).toEqual([]);
      } finally {
        await plain.close();
      }
    });

    it('lets an insecure registry redirect to plain http only on hosts that are insecure too', async () => {
      const storage = await startPlainServer((_req, res) => res.writeHead(200).end(config.bytes));
      const registry = await startPlainServer((req, res) => {
        if (req.url?.includes('/manifests/'))
          res.writeHead(200, { 'content-type': image.manifest.mediaType }).end(image.manifest.bytes);
        else res.writeHead(302, { location: `http://${storage.host}/b` }).end();
      });
      try {
        const onlyRegistry = { ...emptyRegistryPolicy, insecureRegistries: [registry.host] };
        const err = await failure(
          inspectorFor({ policy: () => onlyRegistry }).inspect(`${registry.host}/app:v1`),
        );
        expect(err.code).toBe('TESSERA_REGISTRY_REDIRECT_REFUSED');
        expect(storage.requests).toEqual([]);
        const both = { ...emptyRegistryPolicy, insecureRegistries: [registry.host, storage.host] };
        const result = await inspectorFor({ policy: () => both }).inspect(`${registry.host}/app:v1`);
        expect(result.architectures).toEqual(['arm64']);
        expect(storage.requests).toEqual(['/b']);
      } finally {
        await storage.close();
        await registry.close();
      }
    });

    it('refuses a redirect to the cloud metadata address without any connection attempt', async () => {
      redirectBlobsTo(image, () => 'https://169.254.169.254/latest/meta-data/iam/security-credentials/');
      const outgoing = recordOutgoingRequests();
      try {
        const err = await failure(inspectorFor().inspect(`${server.host}/app:v1`));
        expect(err.code).toBe('TESSERA_REGISTRY_REDIRECT_REFUSED');
        expect(err.message).toContain('link-local');
        expect(err.retryable).toBe(false);
        // The recorder sees the registry requests, and nothing else.
        expect(outgoing.hosts.length).toBeGreaterThanOrEqual(2);
        expect(outgoing.hosts.filter((h) => h.includes('169.254'))).toEqual([]);
      } finally {
        outgoing.stop();
      }
    });

    it('refuses a loopback registry redirecting to a private address, without connecting', async () => {
      redirectBlobsTo(image, () => 'https://10.255.255.1/blob');
      const outgoing = recordOutgoingRequests();
      try {
        const err = await failure(inspectorFor().inspect(`${server.host}/app:v1`));
        expect(err.code).toBe('TESSERA_REGISTRY_REDIRECT_REFUSED');
        expect(err.message).toContain('private');
        expect(outgoing.hosts.filter((h) => h.includes('10.255.255.1'))).toEqual([]);
      } finally {
        outgoing.stop();
      }
    });

    it('follows a loopback registry to another loopback port by another name (localhost)', async () => {
      redirectBlobsTo(image, (digest) => `https://localhost:${other.host.split(':')[1]}/storage/${digest}`);
      other.handler = (_req, res) => res.writeHead(200).end(config.bytes);
      expect((await inspectorFor().inspect(`${server.host}/app:v1`)).architectures).toEqual(['arm64']);
      expect(other.requests.map((r) => r.path)).toEqual([`/storage/${config.digest}`]);
    });

    it('applies a redirect policy hook that overrides the default verdict', async () => {
      const plain = await startPlainServer((_req, res) => res.writeHead(200).end(config.bytes));
      try {
        redirectBlobsTo(image, () => `http://${plain.host}/b`);
        const seen: string[] = [];
        const inspector = inspectorFor({
          redirectPolicy: (candidate, verdict) => {
            seen.push(`${candidate.to.host} ${verdict.allow}`);
            return candidate.to.host === plain.host ? { allow: true } : verdict;
          },
        });
        expect((await inspector.inspect(`${server.host}/app:v1`)).architectures).toEqual(['arm64']);
        expect(seen).toEqual([`${plain.host} false`]);
        expect(plain.requests).toEqual(['/b']);
      } finally {
        await plain.close();
      }
    });
  });

  describe('error bodies', () => {
    it('never copies a non-registry error body into the message, and sanitises registry error text', async () => {
      server.handler = (_req, res) =>
        res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>internal: db-password=hunter2</h1>');
      const html = await failure(inspectorFor().inspect(`${server.host}/app:v1`));
      expect(html.code).toBe('TESSERA_REGISTRY_NOT_FOUND');
      expect(html.message).not.toContain('hunter2');
      server.handler = (_req, res) =>
        res.writeHead(404, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            errors: [
              { code: 'MANIFEST_UNKNOWN', message: `unknown\n[INFO] forged\u001b[0m${'z'.repeat(5000)}` },
            ],
          }),
        );
      const json = await failure(inspectorFor().inspect(`${server.host}/app:v1`));
      expect(json.message).toContain('MANIFEST_UNKNOWN unknown [INFO] forged');
      expect(json.message).not.toContain('\n');
      expect(json.message).not.toContain('\u001b');
      expect(json.message).not.toContain('z'.repeat(201));
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

    it('sends credentials to a realm on another host when it is a trusted realm host', async () => {
      const realmHost = `localhost:${other.host.split(':')[1]}`;
      other.handler = (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: 'tok-t' }));
      server.handler = (req, res) => {
        if (req.headers.authorization !== 'Bearer tok-t')
          res
            .writeHead(401, {
              'www-authenticate': `Bearer realm="https://${realmHost}/token",service="fake"`,
            })
            .end();
        else res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
      };
      const keyring = Keyring.of([{ key: server.host, credential: { username: 'u', password: 'p' } }]);
      const inspector = inspectorFor({ trustedRealmHosts: [realmHost] });
      expect((await inspector.inspect(`${server.host}/app:v1`, { keyring })).architectures).toEqual([
        'amd64',
        'arm64',
      ]);
      expect(other.requests.map((r) => r.authorization)).toEqual([
        `Basic ${Buffer.from('u:p').toString('base64')}`,
      ]);
    });

    it('retries once with a freshly issued token even when the issuer reissues the same one', async () => {
      const tokenPort = other.host.split(':')[1];
      let tokens = 0;
      other.handler = (_req, res) => {
        tokens++;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ token: 'same-token', expires_in: 300 }));
      };
      let rejectNext = false;
      const challenge = {
        'www-authenticate': `Bearer realm="https://127.0.0.1:${tokenPort}/token",service="fake"`,
      };
      server.handler = (req, res) => {
        if (req.headers.authorization !== 'Bearer same-token' || rejectNext) {
          rejectNext = false;
          res.writeHead(401, challenge).end();
        } else res.writeHead(200, { 'content-type': indexType }).end(index.manifest.bytes);
      };
      const inspector = inspectorFor();
      await inspector.inspect(`${server.host}/app:v1`);
      expect(tokens).toBe(1);
      // The registry refuses the cached token once (e.g. its key rotated); the issuer hands out the same text.
      rejectNext = true;
      const before = manifestRequests(server);
      expect((await inspector.inspect(`${server.host}/app:v2`)).architectures).toEqual(['amd64', 'arm64']);
      expect(tokens).toBe(2);
      expect(manifestRequests(server) - before).toBe(2);
    });

    it('retries at most once when the registry keeps refusing fresh tokens', async () => {
      const tokenPort = other.host.split(':')[1];
      let tokens = 0;
      other.handler = (_req, res) => {
        tokens++;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ token: `t${tokens}` }));
      };
      server.handler = (_req, res) =>
        res
          .writeHead(401, {
            'www-authenticate': `Bearer realm="https://127.0.0.1:${tokenPort}/token",service="fake"`,
          })
          .end();
      const err = await failure(inspectorFor().inspect(`${server.host}/app:v1`));
      expect(err.code).toBe('TESSERA_REGISTRY_UNAUTHORIZED');
      expect(manifestRequests(server)).toBe(2);
      expect(tokens).toBe(1);
    });

    it('uses a trusted realm on the registry address (another port) and caches the token', async () => {
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
      // Another port of the same address is another service: credentials go there only when trusted.
      const inspector = inspectorFor({ trustedRealmHosts: [`127.0.0.1:${tokenPort}`] });
      await inspector.inspect(`${server.host}/app:v1`, { keyring });
      await inspector.inspect(`${server.host}/app:v2`, { keyring });
      expect(tokens).toBe(1);
      expect(other.requests[0]?.path).toContain('scope=repository%3Aapp%3Apull');
      expect(manifestRequests(server)).toBe(3); // 401, 200, then 200 with the cached token up front
    });
  });
});
