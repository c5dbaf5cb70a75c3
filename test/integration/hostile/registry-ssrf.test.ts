// The address policy on the first request (issue #10 item 16): an image or token realm on a link-local or
// unspecified address (cloud metadata, node-local services) is refused before any connection, and a tenant
// cannot use error texts as a port scanner: a closed, a silent, a non-TLS and an untrusted-TLS port on loopback
// all give the same message, while the operator hook receives the detail.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryInspector } from '../../../src/registry/registry-inspector.js';
import type { HostLookup } from '../../../src/registry/http-exchange.js';
import type { UnreachableEvent } from '../../../src/registry/transport.js';
import { failure } from '../registry/expect-failure.js';
import { startFakeServer, type FakeServer } from '../registry/fake-server.js';
import { recordOutgoingRequests } from '../registry/outgoing-requests.js';

describe('first-hop address policy', () => {
  it.each([
    '169.254.169.254/latest:v1',
    '169.254.169.254:80/x:v1',
    '[fe80::1]:5000/x:v1',
    '[::ffff:a9fe:a9fe]:5000/x:v1',
    '0.0.0.0:5000/x:v1',
  ])('refuses the image %s without connecting anywhere', async (image) => {
    const outgoing = recordOutgoingRequests();
    const inspector = new RegistryInspector({ retry: { maxRetries: 0 } });
    try {
      const err = await failure(inspector.inspect(image));
      expect(err.code).toBe('TESSERA_REGISTRY_BLOCKED');
      expect(err.message).toMatch(/is a (link-local|unspecified) address/);
      expect(outgoing.hosts).toEqual([]);
    } finally {
      outgoing.stop();
      await inspector.close();
    }
  });

  it('refuses a token realm on the metadata address, even for an anonymous token', async () => {
    const registry = await startFakeServer();
    const outgoing = recordOutgoingRequests();
    const inspector = new RegistryInspector({
      caCertificates: [registry.caCertPem],
      retry: { maxRetries: 0 },
    });
    try {
      registry.handler = (_req, res) =>
        res.writeHead(401, { 'www-authenticate': 'Bearer realm="https://169.254.169.254/token"' }).end();
      const err = await failure(inspector.inspect(`${registry.host}/app:v1`));
      expect(err.code).toBe('TESSERA_REGISTRY_BLOCKED');
      expect(outgoing.hosts.some((h) => h.includes('169.254'))).toBe(false);
    } finally {
      outgoing.stop();
      await inspector.close();
      await registry.close();
    }
  });
});

describe('host names resolving to forbidden addresses', () => {
  it.each(['undici', 'node'] as const)(
    'refuses a registry name that resolves to the metadata address, at connect time, over %s',
    async (httpClient) => {
      const resolved: string[] = [];
      // Stands in for DNS (a rebinding name, or metadata.google.internal): nothing leaves loopback in this test.
      const lookup: HostLookup = (hostname, options, callback) => {
        resolved.push(hostname);
        const address = hostname === 'metadata.test' ? '169.254.169.254' : '127.0.0.1';
        if (options.all === true) callback(null, [{ address, family: 4 }]);
        else callback(null, address, 4);
      };
      const inspector = new RegistryInspector({ httpClient, lookup, retry: { maxRetries: 0 } });
      try {
        const err = await failure(inspector.inspect('metadata.test/latest:v1'));
        expect(err.code).toBe('TESSERA_REGISTRY_BLOCKED');
        expect(err.message).toContain('resolves to a link-local or unspecified address');
        expect(resolved).toContain('metadata.test');
        expect(err.retryable).toBe(false);
      } finally {
        await inspector.close();
      }
    },
  );
});

describe('uniform text for unreachable registries', () => {
  let silent: net.Server;
  let plainText: net.Server;
  let untrustedTls: FakeServer;
  let closedPort: number;
  const sockets = new Set<net.Socket>();

  beforeAll(async () => {
    const listen = async (server: net.Server): Promise<number> => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      return (server.address() as AddressInfo).port;
    };
    // Accepts and never answers.
    silent = net.createServer((socket) => sockets.add(socket));
    // Accepts and answers with something that is not TLS (an SSH-like banner).
    plainText = net.createServer((socket) => {
      sockets.add(socket);
      socket.end('SSH-2.0-OpenSSH_9.6\r\n');
    });
    await Promise.all([listen(silent), listen(plainText)]);
    untrustedTls = await startFakeServer();
    // A port that was free a moment ago: nothing listens there now.
    const probe = net.createServer();
    closedPort = await listen(probe);
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await Promise.all([
      new Promise<void>((resolve) => silent.close(() => resolve())),
      new Promise<void>((resolve) => plainText.close(() => resolve())),
      untrustedTls.close(),
    ]);
  });

  it.each(['undici', 'node'] as const)(
    'gives one message for closed, silent, non-TLS and untrusted-TLS ports over %s; the operator hook gets the detail',
    async (httpClient) => {
      const events: UnreachableEvent[] = [];
      const inspector = new RegistryInspector({
        httpClient,
        retry: { maxRetries: 0 },
        attemptTimeoutMs: 500,
        connectTimeoutMs: 500,
        onUnreachable: (event) => events.push(event),
      });
      const hosts = {
        closed: `127.0.0.1:${closedPort}`,
        silent: `127.0.0.1:${(silent.address() as AddressInfo).port}`,
        plainText: `127.0.0.1:${(plainText.address() as AddressInfo).port}`,
        untrustedTls: untrustedTls.host,
      };
      try {
        const texts = new Map<string, string>();
        const codes = new Map<string, string>();
        for (const [name, host] of Object.entries(hosts)) {
          const err = await failure(inspector.inspect(`${host}/app:v1`));
          codes.set(name, err.code);
          texts.set(name, err.message.replaceAll(host, 'HOST'));
        }
        expect(new Set(codes.values())).toEqual(new Set(['TESSERA_REGISTRY_UNAVAILABLE']));
        expect(new Set(texts.values()).size).toBe(1);
        expect(texts.get('closed')).toContain('cannot reach HOST');
        // The operator still learns what happened, host by host.
        expect(events.map((e) => e.code)).toHaveLength(4);
        expect(new Set(events.map((e) => e.code)).size).toBeGreaterThanOrEqual(3);
        expect(events[0]?.code).toBe('ECONNREFUSED');
      } finally {
        await inspector.close();
      }
    },
  );
});
