// The address policy on the first request (issue #10 item 16): an image or token realm on a link-local or
// unspecified address (cloud metadata, node-local services) is refused before any connection, and a tenant
// cannot use error texts as a port scanner: a closed, a silent, a non-TLS and an untrusted-TLS port on loopback
// all give the same message, while the operator hook receives the detail. The admin's address ranges (issue #20,
// --registry-deny-cidr / --registry-allow-cidr) are refused before any connection too, on every hop (image, name
// resolved, redirect, token realm), so closed, silent and plain-text ports there cannot be told apart at all.
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../../src/registry/address-policy.js';
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
        expect(err.message).toContain('resolves to an address the operator does not reach');
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

describe('admin address ranges (--registry-deny-cidr / --registry-allow-cidr)', () => {
  /** Servers on 127.0.0.2 (the "denied" range here) that count the connections they accept. */
  let silent: net.Server;
  let plainText: net.Server;
  let closedPort: number;
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const denied = '127.0.0.2';
  // 127.0.0.2 stands for a cluster network the admin denies; 127.0.0.1 (the fake registries) stays allowed.
  const policy = new AddressPolicy({ deny: ['127.0.0.0/8'], allow: ['127.0.0.1/32'] });

  beforeAll(async () => {
    const listen = async (server: net.Server): Promise<number> => {
      await new Promise<void>((resolve) => server.listen(0, denied, () => resolve()));
      return (server.address() as AddressInfo).port;
    };
    silent = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
    });
    plainText = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.end('SSH-2.0-OpenSSH_9.6\r\n');
    });
    await Promise.all([listen(silent), listen(plainText)]);
    const probe = net.createServer();
    closedPort = await listen(probe);
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await Promise.all([
      new Promise<void>((resolve) => silent.close(() => resolve())),
      new Promise<void>((resolve) => plainText.close(() => resolve())),
    ]);
  });

  it.each(['undici', 'node'] as const)(
    'refuses closed, silent and plain-text ports of a denied range alike, before connecting, over %s',
    async (httpClient) => {
      const outgoing = recordOutgoingRequests();
      const events: UnreachableEvent[] = [];
      const inspector = new RegistryInspector({
        httpClient,
        addressPolicy: policy,
        retry: { maxRetries: 0 },
        onUnreachable: (event) => events.push(event),
      });
      const hosts = [
        `${denied}:${closedPort}`,
        `${denied}:${(silent.address() as AddressInfo).port}`,
        `${denied}:${(plainText.address() as AddressInfo).port}`,
      ];
      try {
        const texts = new Set<string>();
        for (const host of hosts) {
          const err = await failure(inspector.inspect(`${host}/app:v1`));
          expect(err.code).toBe('TESSERA_REGISTRY_BLOCKED');
          expect(err.retryable).toBe(false);
          texts.add(err.message.replaceAll(host, 'HOST'));
        }
        expect([...texts]).toEqual([
          "manifest HOST/app:v1: refusing to contact HOST: 127.0.0.2 is in a range the operator's address policy denies; the operator does not reach such addresses",
        ]);
        // Nothing was dialed: no request started, no connection accepted, nothing for the operator log.
        expect(outgoing.hosts).toEqual([]);
        expect(connections).toBe(0);
        expect(events).toEqual([]);
      } finally {
        outgoing.stop();
        await inspector.close();
      }
    },
  );

  it.each(['undici', 'node'] as const)(
    'refuses a name that resolves into a denied range, at connect time, over %s',
    async (httpClient) => {
      const lookup: HostLookup = (_hostname, options, callback) => {
        if (options.all === true) callback(null, [{ address: denied, family: 4 }]);
        else callback(null, denied, 4);
      };
      const inspector = new RegistryInspector({
        httpClient,
        lookup,
        addressPolicy: policy,
        retry: { maxRetries: 0 },
      });
      try {
        const port = (silent.address() as AddressInfo).port;
        const err = await failure(inspector.inspect(`service.cluster.test:${port}/app:v1`));
        expect(err.code).toBe('TESSERA_REGISTRY_BLOCKED');
        expect(err.message).toContain('resolves to an address the operator does not reach');
        expect(connections).toBe(0);
      } finally {
        await inspector.close();
      }
    },
  );

  it('refuses a redirect and a token realm into a denied range from an allowed registry', async () => {
    const registry = await startFakeServer();
    const outgoing = recordOutgoingRequests();
    const inspector = new RegistryInspector({
      caCertificates: [registry.caCertPem],
      addressPolicy: policy,
      retry: { maxRetries: 0 },
    });
    const target = `${denied}:${(silent.address() as AddressInfo).port}`;
    try {
      registry.handler = (_req, res) => res.writeHead(307, { location: `https://${target}/v2/` }).end();
      const redirected = await failure(inspector.inspect(`${registry.host}/app:v1`));
      expect(redirected.code).toBe('TESSERA_REGISTRY_BLOCKED');
      registry.handler = (_req, res) =>
        res.writeHead(401, { 'www-authenticate': `Bearer realm="https://${target}/token"` }).end();
      const realm = await failure(inspector.inspect(`${registry.host}/app:v2`));
      expect(realm.code).toBe('TESSERA_REGISTRY_BLOCKED');
      expect(outgoing.hosts.some((h) => h.includes(denied))).toBe(false);
      expect(connections).toBe(0);
    } finally {
      outgoing.stop();
      await inspector.close();
      await registry.close();
    }
  });
});
