// Hostile registries and token realms (issue #10 items 9, 13, 17, 18), with in-process fake registries on
// loopback: a refused realm must not poison the host, credentials go only to the registry's own origin or
// registrable domain (never another port of the same address), per-registry state stays within its byte budget,
// and no pull-secret user name reaches an error a tenant can read.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { multiPlatformImage } from '../../../src/devcluster/registry-images.js';
import { DistributionClient } from '../../../src/registry/distribution-client.js';
import { Keyring } from '../../../src/registry/keyring.js';
import { emptyRegistryPolicy } from '../../../src/registry/mirrors.js';
import {
  RegistryInspector,
  type RegistryInspectorOptions,
} from '../../../src/registry/registry-inspector.js';
import { failure } from '../registry/expect-failure.js';
import { startFakeServer, type FakeServer } from '../registry/fake-server.js';
import { serveImages } from './registry-support.js';

const image = multiPlatformImage({
  platforms: [{ architecture: 'amd64' }, { architecture: 'arm64' }],
  salt: 'auth',
});
const serveImage = serveImages({ v1: image, v2: image });
const secretUser = 'alice.secret-user@example.com';
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

let registry: FakeServer;
let tokens: FakeServer;
const open: RegistryInspector[] = [];

beforeAll(async () => {
  [registry, tokens] = await Promise.all([startFakeServer(), startFakeServer()]);
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((i) => i.close()));
  registry.requests.length = 0;
  tokens.requests.length = 0;
});
afterAll(async () => {
  await Promise.all([registry?.close(), tokens?.close()]);
});

function inspectorFor(options: RegistryInspectorOptions = {}): RegistryInspector {
  const inspector = new RegistryInspector({
    caCertificates: [registry.caCertPem, tokens.caCertPem],
    retry: { maxRetries: 0 },
    ...options,
  });
  open.push(inspector);
  return inspector;
}

const keyringFor = (host: string): Keyring =>
  Keyring.of([{ key: host, credential: { username: secretUser, password: 'pw' } }]);

describe('token realms', () => {
  it('does not let one refused realm poison the registry host: the next inspection asks again', async () => {
    let realm = `https://token.attacker.test/token`;
    tokens.handler = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: 'tok' }));
    registry.handler = (req, res) => {
      if (req.headers.authorization !== 'Bearer tok')
        res.writeHead(401, { 'www-authenticate': `Bearer realm="${realm}",service="fake"` }).end();
      else serveImage(req, res);
    };
    const inspector = inspectorFor({ trustedRealmHosts: [tokens.host] });
    const keyring = keyringFor(registry.host);
    const refused = await failure(inspector.inspect(`${registry.host}/app:v1`, { keyring }));
    expect(refused.code).toBe('TESSERA_REGISTRY_UNTRUSTED_REALM');
    // The registry fixes its realm: the very next inspection reaches it and succeeds.
    realm = `https://${tokens.host}/token`;
    const before = registry.requests.length;
    expect((await inspector.inspect(`${registry.host}/app:v2`, { keyring })).architectures).toEqual([
      'amd64',
      'arm64',
    ]);
    expect(registry.requests.length).toBeGreaterThan(before);
    // The request after the refusal went out without credentials: nothing was remembered for the host.
    expect(registry.requests[before]?.authorization).toBeUndefined();
  });

  it('never sends Basic credentials to another port of the registry address', async () => {
    tokens.handler = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: 'tok' }));
    registry.handler = (req, res) => {
      if (req.headers.authorization !== 'Bearer tok')
        res.writeHead(401, { 'www-authenticate': `Bearer realm="https://${tokens.host}/token"` }).end();
      else serveImage(req, res);
    };
    expect(tokens.host.split(':')[0]).toBe(registry.host.split(':')[0]); // same IP, another port
    const err = await failure(
      inspectorFor().inspect(`${registry.host}/app:v1`, { keyring: keyringFor(registry.host) }),
    );
    expect(err.code).toBe('TESSERA_REGISTRY_UNTRUSTED_REALM');
    expect(err.message).toContain('same address on another port');
    expect(tokens.requests).toHaveLength(0);
    // Without credentials nothing secret leaves: an anonymous token may come from there.
    const anonymous = await inspectorFor().inspect(`${registry.host}/app:v1`);
    expect(anonymous.architectures).toEqual(['amd64', 'arm64']);
    expect(tokens.requests.map((r) => r.authorization)).toEqual([undefined]);
  });
});

describe('pull-secret user names stay out of tenant-visible errors', () => {
  it('does not name the user when the registry refuses the credentials', async () => {
    registry.handler = (_req, res) =>
      res
        .writeHead(401, { 'www-authenticate': 'Basic realm="fake"', 'content-type': 'application/json' })
        .end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }));
    const err = await failure(
      inspectorFor().inspect(`${registry.host}/app:v1`, { keyring: keyringFor(registry.host) }),
    );
    expect(err.code).toBe('TESSERA_REGISTRY_UNAUTHORIZED');
    expect(registry.requests.some((r) => r.authorization === basic(secretUser, 'pw'))).toBe(true);
    expect(err.message).not.toContain(secretUser);
    expect(err.message).not.toContain('alice');
    expect(err.message).toContain('pull-secret credentials');
  });

  it('does not name the user when the token service refuses the credentials', async () => {
    tokens.handler = (_req, res) => res.writeHead(401).end();
    registry.handler = (_req, res) =>
      res.writeHead(401, { 'www-authenticate': `Bearer realm="https://${tokens.host}/token"` }).end();
    const err = await failure(
      inspectorFor({ trustedRealmHosts: [tokens.host] }).inspect(`${registry.host}/app:v1`, {
        keyring: keyringFor(registry.host),
      }),
    );
    expect(err.code).toBe('TESSERA_REGISTRY_UNAUTHORIZED');
    expect(tokens.requests).toHaveLength(1);
    expect(err.message).not.toContain(secretUser);
  });
});

describe('per-registry state budget', () => {
  /** Plain-http registries on loopback, each answering 401 with a large Basic challenge until credentials come. */
  async function startChallengers(
    count: number,
    realmLength: number,
  ): Promise<{ hosts: string[]; close(): Promise<void> }> {
    const servers = await Promise.all(
      Array.from({ length: count }, async () => {
        const server = http.createServer((req, res) => {
          if (req.headers.authorization === undefined)
            res.writeHead(401, { 'www-authenticate': `Basic realm="${'r'.repeat(realmLength)}"` }).end();
          else serveImage(req, res);
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
        return server;
      }),
    );
    return {
      hosts: servers.map((s) => `127.0.0.1:${(s.address() as AddressInfo).port}`),
      close: async () => {
        await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      },
    };
  }

  it('keeps remembered challenges of many registries within maxRegistryStateBytes', async () => {
    const challengers = await startChallengers(40, 2000);
    try {
      const maxRegistryStateBytes = 32 * 1024;
      const client = new DistributionClient({ maxRegistryStateBytes, retry: { maxRetries: 0 } });
      const policy = { ...emptyRegistryPolicy, insecureRegistries: challengers.hosts };
      const inspector = inspectorFor({ client, policy: () => policy });
      const keyring = Keyring.of(
        challengers.hosts.map((host) => ({ key: host, credential: { username: 'u', password: 'p' } })),
      );
      for (const host of challengers.hosts) {
        expect((await inspector.inspect(`${host}/app:v1`, { keyring })).architectures).toEqual([
          'amd64',
          'arm64',
        ]);
      }
      // 40 challenges of ~4 KB each would be ~160 KB; the least recently used were forgotten instead.
      expect(client.registryStateBytes).toBeGreaterThan(0);
      expect(client.registryStateBytes).toBeLessThanOrEqual(maxRegistryStateBytes);
      await client.close();
    } finally {
      await challengers.close();
    }
  });

  it('does not remember a challenge too large to keep, and still authenticates', async () => {
    const challengers = await startChallengers(1, 8000);
    try {
      const client = new DistributionClient({ retry: { maxRetries: 0 } });
      const host = challengers.hosts[0] ?? '';
      const policy = { ...emptyRegistryPolicy, insecureRegistries: [host] };
      const inspector = inspectorFor({ client, policy: () => policy });
      const keyring = Keyring.of([{ key: host, credential: { username: 'u', password: 'p' } }]);
      await inspector.inspect(`${host}/app:v1`, { keyring });
      const afterFirst = client.registryStateBytes;
      expect((await inspector.inspect(`${host}/app:v2`, { keyring })).architectures).toEqual([
        'amd64',
        'arm64',
      ]);
      expect(client.registryStateBytes).toBe(afterFirst); // only the http/https choice, no 8 KB challenge
      expect(afterFirst).toBeLessThan(1024);
      await client.close();
    } finally {
      await challengers.close();
    }
  });
});
