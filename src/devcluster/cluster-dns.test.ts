import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLUSTER_DNS_BUDGETS,
  ClusterDnsServer,
  answerQuery,
  clusterResolvConf,
  encodeForUdp,
  parseClusterName,
  serviceAddresses,
  upstreamNameserver,
  type ServiceAddresses,
} from './cluster-dns.js';

const services: ServiceAddresses = (namespace, service) =>
  namespace === 'shop' && service === 'web' ? ['10.96.12.7'] : undefined;

function query(name: string, type: 'A' | 'AAAA' = 'A'): ReturnType<typeof dnsPacket.decode> {
  return dnsPacket.decode(
    dnsPacket.encode({
      type: 'query',
      id: 42,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ name, type }],
    }),
  );
}

/** A reply as a client reads it (the typings leave out the decoded rcode). */
function reread(reply: dnsPacket.Packet | 'forward'): dnsPacket.DecodedPacket & { rcode: string } {
  if (reply === 'forward') throw new TypeError('expected an answer, not a forward');
  return dnsPacket.decode(dnsPacket.encode(reply)) as dnsPacket.DecodedPacket & { rcode: string };
}

describe('parseClusterName', () => {
  it('reads <service>.<namespace>.svc under the cluster domain, case-insensitively', () => {
    expect(parseClusterName('Web.Shop.svc.cluster.local.')).toEqual({
      kind: 'service',
      namespace: 'shop',
      service: 'web',
    });
  });
  it('tells other names in the zone from names outside it', () => {
    expect(parseClusterName('cluster.local')).toEqual({ kind: 'in-zone' });
    expect(parseClusterName('a.b.c.svc.cluster.local')).toEqual({ kind: 'in-zone' });
    expect(parseClusterName('web.shop.pod.cluster.local')).toEqual({ kind: 'in-zone' });
    expect(parseClusterName('web.shop.svc')).toEqual({ kind: 'outside' });
    expect(parseClusterName('quay.io')).toEqual({ kind: 'outside' });
    expect(parseClusterName('evilcluster.local')).toEqual({ kind: 'outside' });
  });
});

describe('answerQuery', () => {
  it("answers a Service's A records authoritatively, with the question and id", () => {
    const decoded = reread(answerQuery(query('web.shop.svc.cluster.local'), services));
    expect(decoded).toMatchObject({ id: 42, flag_aa: true, flag_rd: true, rcode: 'NOERROR' });
    expect(decoded.answers).toEqual([
      expect.objectContaining({ type: 'A', name: 'web.shop.svc.cluster.local', data: '10.96.12.7', ttl: 5 }),
    ]);
  });
  it('says NXDOMAIN for a missing Service and NOERROR with no answer for AAAA of a present one', () => {
    const missing = reread(answerQuery(query('db.shop.svc.cluster.local'), services));
    expect(missing.rcode).toBe('NXDOMAIN');
    const aaaa = reread(answerQuery(query('web.shop.svc.cluster.local', 'AAAA'), services));
    expect([aaaa.rcode, aaaa.answers]).toEqual(['NOERROR', []]);
  });
  it('forwards names outside the cluster domain and refuses queries of several questions', () => {
    expect(answerQuery(query('quay.io'), services)).toBe('forward');
    const two = dnsPacket.decode(
      dnsPacket.encode({
        type: 'query',
        id: 1,
        questions: [
          { name: 'a.b.svc.cluster.local', type: 'A' },
          { name: 'c.d.svc.cluster.local', type: 'A' },
        ],
      }),
    );
    expect(reread(answerQuery(two, services)).rcode).toBe('FORMERR');
  });
});

describe('serviceAddresses', () => {
  it("gives a ClusterIP Service's IPv4 ClusterIPs", () => {
    expect(
      serviceAddresses({ spec: { clusterIP: '10.96.0.9', clusterIPs: ['10.96.0.9', 'fd00::9'] } }, []),
    ).toEqual(['10.96.0.9']);
  });
  it("gives a headless Service's ready endpoints, once each, and nothing for ExternalName", () => {
    const slices = [
      {
        addressType: 'IPv4',
        endpoints: [
          { addresses: ['10.88.0.5'], conditions: { ready: true } },
          { addresses: ['10.88.0.6'], conditions: { ready: false } },
          { addresses: ['10.88.0.5'] },
        ],
      },
      { addressType: 'IPv6', endpoints: [{ addresses: ['fd00::5'] }] },
    ];
    expect(serviceAddresses({ spec: { clusterIP: 'None' } }, slices)).toEqual(['10.88.0.5']);
    expect(serviceAddresses({ spec: { type: 'ExternalName' } }, slices)).toEqual([]);
  });
});

describe('resolv.conf', () => {
  it('takes the first IPv4 nameserver and writes a pod-like one for host processes', () => {
    expect(upstreamNameserver('# x\nsearch lan\nnameserver ::1\nnameserver 10.255.255.53\n')).toBe(
      '10.255.255.53',
    );
    expect(upstreamNameserver('search lan\n')).toBeUndefined();
    expect(clusterResolvConf('10.87.3.1')).toBe(
      'nameserver 10.87.3.1\nsearch svc.cluster.local cluster.local\noptions ndots:5\n',
    );
  });
});

describe('ClusterDnsServer', () => {
  const servers: ClusterDnsServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function serve(
    options: Partial<Parameters<typeof ClusterDnsServer.listen>[0]> = {},
  ): Promise<Resolver> {
    const server = await ClusterDnsServer.listen({
      host: '127.0.0.1',
      port: 0,
      addresses: services,
      ...options,
    });
    servers.push(server);
    const resolver = new Resolver({ timeout: 5_000, tries: 1 });
    resolver.setServers([`127.0.0.1:${server.address().port}`]);
    return resolver;
  }

  /** One query over TCP (RFC 7766 framing); the answer, or undefined when the server closes first. */
  function tcpQuery(port: number, payload: Buffer): Promise<ReturnType<typeof dnsPacket.decode> | undefined> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let got = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        got = Buffer.concat([got, chunk]);
        if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
          socket.end();
          resolve(dnsPacket.decode(got.subarray(2)));
        }
      });
      socket.on('close', () => resolve(undefined));
      socket.on('error', reject);
      socket.write(payload);
    });
  }

  it("resolves a Service's name as a resolver does, and NXDOMAIN for one that does not exist", async () => {
    const resolver = await serve();
    expect(await resolver.resolve4('web.shop.svc.cluster.local')).toEqual(['10.96.12.7']);
    await expect(resolver.resolve4('db.shop.svc.cluster.local')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('forwards names outside the cluster domain to the upstream resolver and relays its answer', async () => {
    const upstream = await ClusterDnsServer.listen({
      host: '127.0.0.1',
      port: 0,
      domain: 'upstream.test',
      addresses: (namespace, service) => (namespace === 'b' && service === 'a' ? ['192.0.2.1'] : undefined),
    });
    servers.push(upstream);
    const resolver = await serve({ upstream: { host: '127.0.0.1', port: upstream.address().port } });
    expect(await resolver.resolve4('a.b.svc.upstream.test')).toEqual(['192.0.2.1']);
  });

  it('answers SERVFAIL when the upstream is silent, and REFUSED without one', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
    try {
      const resolver = await serve({ upstream: { host: '127.0.0.1', port: silent.address().port } });
      await expect(resolver.resolve4('quay.io')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    } finally {
      silent.close();
    }
    const refusing = await serve();
    await expect(refusing.resolve4('quay.io')).rejects.toMatchObject({ code: 'EREFUSED' });
  });

  it('truncates a UDP answer that does not fit, and the resolver gets it whole over TCP', async () => {
    const many = Array.from({ length: 100 }, (_, i) => `10.88.0.${i + 2}`);
    const resolver = await serve({
      addresses: (namespace, service) => (namespace === 'shop' && service === 'all' ? many : undefined),
    });
    // 100 A records are about 1.6 KB, over the 512 bytes a client without EDNS0 takes over UDP.
    const reply = answerQuery(query('all.shop.svc.cluster.local'), (ns, s) =>
      ns === 'shop' && s === 'all' ? many : undefined,
    );
    if (reply === 'forward') throw new TypeError('not forwarded');
    const truncated = dnsPacket.decode(encodeForUdp(reply, query('all.shop.svc.cluster.local')));
    expect([truncated.flag_tc, truncated.answers]).toEqual([true, []]);
    expect((await resolver.resolve4('all.shop.svc.cluster.local')).sort()).toEqual([...many].sort());
  });

  it('answers over TCP, and drops oversized messages without stopping', async () => {
    const resolver = await serve();
    const port = servers[0]?.address().port ?? 0;
    const message = dnsPacket.streamEncode({
      type: 'query',
      id: 7,
      questions: [{ name: 'web.shop.svc.cluster.local', type: 'A' }],
    });
    const answer = await tcpQuery(port, message);
    expect(answer?.answers?.map((a) => (a as { data?: unknown }).data)).toEqual(['10.96.12.7']);
    // A declared length over the budget: the connection is closed before the body is read.
    const oversized = Buffer.alloc(2);
    oversized.writeUInt16BE(CLUSTER_DNS_BUDGETS.maxMessageBytes + 1, 0);
    expect(await tcpQuery(port, oversized)).toBeUndefined();
    // An oversized datagram is dropped; garbage is dropped; the server goes on answering.
    const udp = createSocket('udp4');
    await new Promise<void>((resolve) =>
      udp.send(Buffer.alloc(CLUSTER_DNS_BUDGETS.maxMessageBytes + 1), port, '127.0.0.1', () => resolve()),
    );
    await new Promise<void>((resolve) =>
      udp.send(Buffer.from([1, 2, 3]), port, '127.0.0.1', () => resolve()),
    );
    udp.close();
    expect(await resolver.resolve4('web.shop.svc.cluster.local')).toEqual(['10.96.12.7']);
  });

  it('a port taken for TCP: fails naming it, and leaves the UDP port free again', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      await expect(ClusterDnsServer.listen({ host: '127.0.0.1', port, addresses: services })).rejects.toThrow(
        'EADDRINUSE',
      );
      const udp = createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(port, '127.0.0.1', resolve);
      });
      udp.close();
    } finally {
      taken.close();
    }
  });
});
