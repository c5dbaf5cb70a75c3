// Cluster DNS for a dev cluster with real nodes: what CoreDNS's kubernetes plugin serves in a kubeadm or kind
// cluster, for the names pods and OLM use. `<service>.<namespace>.svc.cluster.local` answers the Service's
// ClusterIPs (a headless Service: its ready endpoints' addresses); any other name under the cluster domain is
// NXDOMAIN; names outside it are forwarded to this machine's own resolver. The kubelets give it to pods as their
// nameserver (clusterDNS), and host processes that must resolve Service names (OLM's catalog operator dials
// `<catalog>.<namespace>.svc:50051`) are given a resolv.conf naming it (./real-nodes.ts).
//
// Every query may come from a tenant's pod, so each has a budget: messages over 4 KiB are dropped unread, one
// question per query, at most 64 TCP connections that idle out after 10 s, at most 128 forwarded queries in flight,
// each given 2 s. The service table is the informers' caches, keyed by the API server's own names: nothing a query
// says is used as a key before it is parsed into a Service name.
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type Packet } from 'dns-packet';
import {
  EndpointSlices,
  KubeClient,
  type KubeObject,
  type Logger,
  Services,
  SharedInformerFactory,
  loadKubeConnection,
  waitForAbort,
} from '../runtime/index.js';

export const CLUSTER_DOMAIN = 'cluster.local';

export const CLUSTER_DNS_BUDGETS = {
  /** Longest query accepted (UDP datagram or TCP message); longer ones are dropped unread. */
  maxMessageBytes: 4096,
  maxTcpConnections: 64,
  tcpIdleMs: 10_000,
  maxForwardsInFlight: 128,
  forwardTimeoutMs: 2_000,
} as const;

/** Answers a TCP client may leave unread before it is disconnected. */
const MAX_UNREAD_ANSWER_BYTES = 64 * 1024;

/** Seconds clients may cache an answer: Services change in tests within seconds. CoreDNS's default is 5 too. */
export const CLUSTER_DNS_TTL_SECONDS = 5;

const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

/** What a query name is to the cluster DNS. Pure. */
export type ClusterName =
  | { readonly kind: 'service'; readonly namespace: string; readonly service: string }
  /** Under the cluster domain, but no Service's name: NXDOMAIN. */
  | { readonly kind: 'in-zone' }
  /** Outside the cluster domain: forwarded. */
  | { readonly kind: 'outside' };

export function parseClusterName(qname: string, domain: string = CLUSTER_DOMAIN): ClusterName {
  const name = qname.toLowerCase().replace(/\.$/, '');
  const zone = domain.toLowerCase();
  if (name !== zone && !name.endsWith(`.${zone}`)) return { kind: 'outside' };
  const labels = name === zone ? [] : name.slice(0, -(zone.length + 1)).split('.');
  const [service, namespace, svc] = labels;
  if (labels.length === 3 && svc === 'svc' && service && namespace)
    return { kind: 'service', namespace, service };
  return { kind: 'in-zone' };
}

/** The IPv4 addresses of a Service, undefined when there is no such Service. */
export type ServiceAddresses = (namespace: string, service: string) => readonly string[] | undefined;

/** The response to `query` with `rcode`: its id, question and recursion-desired bit kept. Pure. */
function responseTo(
  query: DecodedPacket,
  rcode: number,
  answers: Answer[] = [],
  authoritative = false,
): Packet {
  return {
    type: 'response',
    id: query.id ?? 0,
    flags:
      (authoritative ? dnsPacket.AUTHORITATIVE_ANSWER : 0) |
      (query.flag_rd ? dnsPacket.RECURSION_DESIRED : 0) |
      dnsPacket.RECURSION_AVAILABLE |
      rcode,
    questions: query.questions ?? [],
    answers,
  };
}

/**
 * The answer to one query, or 'forward' for a name outside the cluster domain. Pure. Answers under the cluster
 * domain are authoritative; a Service name asked for another record type than A is NOERROR with no answer.
 */
export function answerQuery(
  query: DecodedPacket,
  addresses: ServiceAddresses,
  domain: string = CLUSTER_DOMAIN,
): Packet | 'forward' {
  // Answers under the cluster domain are authoritative; malformed or unsupported queries are not.
  const reply = (rcode: number, answers: Answer[] = [], authoritative = true): Packet =>
    responseTo(query, rcode, answers, authoritative);
  const questions = query.questions ?? [];
  const [question] = questions;
  if (query.type !== 'query' || questions.length !== 1 || !question) return reply(RCODE.FORMERR, [], false);
  const name = parseClusterName(question.name, domain);
  if (name.kind === 'outside') return 'forward';
  if (question.class !== undefined && question.class !== 'IN' && question.class !== 'ANY')
    return reply(RCODE.NOTIMP, [], false);
  if (name.kind === 'in-zone') return reply(RCODE.NXDOMAIN);
  const found = addresses(name.namespace, name.service);
  if (found === undefined) return reply(RCODE.NXDOMAIN);
  // ANY is not among the typings' RecordTypes, though queries carry it.
  if (question.type !== 'A' && (question.type as string) !== 'ANY') return reply(RCODE.NOERROR);
  return reply(
    RCODE.NOERROR,
    found.map((ip) => ({
      type: 'A',
      class: 'IN',
      name: question.name,
      ttl: CLUSTER_DNS_TTL_SECONDS,
      data: ip,
    })),
  );
}

/** The largest UDP answer the client takes: its EDNS0 payload size (at most our message budget), else 512 bytes. */
export function udpAnswerLimit(query: DecodedPacket): number {
  const opt = (query.additionals ?? []).find((record) => record.type === 'OPT') as
    { udpPayloadSize?: number } | undefined;
  const advertised = opt?.udpPayloadSize ?? 0;
  return Math.min(Math.max(advertised, 512), CLUSTER_DNS_BUDGETS.maxMessageBytes);
}

/**
 * The wire form of `reply` for a UDP client: as is when it fits, else the header and question with TC set, so the
 * client asks again over TCP (a headless Service with many endpoints). Pure.
 */
export function encodeForUdp(reply: Packet, query: DecodedPacket): Buffer {
  const whole = dnsPacket.encode(reply);
  if (whole.length <= udpAnswerLimit(query)) return whole;
  return dnsPacket.encode({
    ...reply,
    flags: (reply.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE,
    answers: [],
  });
}

/** A failure answer (SERVFAIL, REFUSED) to a raw query, keeping its id and question when they can be read. */
function failure(query: DecodedPacket, rcode: number): Buffer {
  return dnsPacket.encode(responseTo(query, rcode));
}

/** The first IPv4 nameserver of a resolv.conf, if any. Pure. */
export function upstreamNameserver(resolvConf: string): string | undefined {
  for (const line of resolvConf.split('\n')) {
    const [keyword, address] = line.trim().split(/\s+/);
    if (keyword === 'nameserver' && address && net.isIPv4(address)) return address;
  }
  return undefined;
}

/** A resolv.conf that sends a host process's lookups to the cluster DNS, with a pod's search path and ndots. */
export function clusterResolvConf(nameserver: string, domain: string = CLUSTER_DOMAIN): string {
  return `nameserver ${nameserver}\nsearch svc.${domain} ${domain}\noptions ndots:5\n`;
}

export interface ClusterDnsServerOptions {
  readonly host: string;
  /** Default 53; 0 picks a free port (tests). */
  readonly port?: number;
  readonly addresses: ServiceAddresses;
  readonly domain?: string;
  /** Where names outside the cluster domain go; undefined answers them REFUSED. */
  readonly upstream?: { readonly host: string; readonly port: number };
  readonly logger?: Logger;
}

/** The cluster DNS on one address: UDP and TCP (RFC 7766), as resolvers retry a truncated answer over TCP. */
export class ClusterDnsServer {
  private forwardsInFlight = 0;

  private constructor(
    private readonly options: ClusterDnsServerOptions,
    private readonly udp: Socket,
    private readonly tcp: net.Server,
  ) {}

  static async listen(options: ClusterDnsServerOptions): Promise<ClusterDnsServer> {
    // A picked port (0) is free for UDP but may be taken for TCP (another process's connection): pick again.
    for (let attempt = 1; ; attempt++) {
      try {
        return await ClusterDnsServer.listenOnce(options);
      } catch (err) {
        const taken = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
        if (!taken || (options.port ?? 53) !== 0 || attempt >= 5) throw err;
      }
    }
  }

  private static async listenOnce(options: ClusterDnsServerOptions): Promise<ClusterDnsServer> {
    const udp = createSocket('udp4');
    const tcp = net.createServer();
    tcp.maxConnections = CLUSTER_DNS_BUDGETS.maxTcpConnections;
    const server = new ClusterDnsServer(options, udp, tcp);
    udp.on('message', (message, peer) => void server.onDatagram(message, peer));
    udp.on('error', (err) => options.logger?.warn({ err }, 'cluster DNS: UDP socket error'));
    tcp.on('connection', (socket) => server.onConnection(socket));
    tcp.on('error', (err) => options.logger?.warn({ err }, 'cluster DNS: TCP server error'));
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(options.port ?? 53, options.host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    // TCP on the port UDP got (which may have been picked).
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(udp.address().port, options.host, () => {
          tcp.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      udp.close();
      throw err;
    }
    return server;
  }

  address(): { host: string; port: number } {
    return { host: this.options.host, port: this.udp.address().port };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.udp.close(() => resolve()));
    await new Promise<void>((resolve) => {
      this.tcp.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  private readonly sockets = new Set<net.Socket>();

  /** The answer to one raw query, or undefined to drop it (unreadable: no id to answer). */
  private async respond(message: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | undefined> {
    if (message.length > CLUSTER_DNS_BUDGETS.maxMessageBytes) return undefined;
    let query: DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return undefined;
    }
    const decided = answerQuery(query, this.options.addresses, this.options.domain);
    if (decided !== 'forward')
      return transport === 'udp' ? encodeForUdp(decided, query) : dnsPacket.encode(decided);
    const upstream = this.options.upstream;
    if (!upstream) return failure(query, RCODE.REFUSED);
    if (this.forwardsInFlight >= CLUSTER_DNS_BUDGETS.maxForwardsInFlight)
      return failure(query, RCODE.SERVFAIL);
    this.forwardsInFlight++;
    try {
      return (await forwardUdp(message, upstream)) ?? failure(query, RCODE.SERVFAIL);
    } finally {
      this.forwardsInFlight--;
    }
  }

  private async onDatagram(message: Buffer, peer: RemoteInfo): Promise<void> {
    const answer = await this.respond(message, 'udp');
    if (answer) this.udp.send(answer, peer.port, peer.address);
  }

  private onConnection(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(CLUSTER_DNS_BUDGETS.tcpIdleMs, () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (buffered.length < 2) return;
        const length = buffered.readUInt16BE(0);
        // A declared length over the budget ends the connection before the message is buffered.
        if (length > CLUSTER_DNS_BUDGETS.maxMessageBytes) return void socket.destroy();
        if (buffered.length < 2 + length) return;
        const message = buffered.subarray(2, 2 + length);
        buffered = buffered.subarray(2 + length);
        void this.respond(Buffer.from(message), 'tcp').then((answer) => {
          if (!answer || socket.destroyed) return;
          const framed = Buffer.alloc(2 + answer.length);
          framed.writeUInt16BE(answer.length, 0);
          answer.copy(framed, 2);
          // A client that sends queries but does not read the answers is cut off, not buffered for.
          if (socket.writableLength > MAX_UNREAD_ANSWER_BYTES) return void socket.destroy();
          socket.write(framed);
        });
      }
    });
  }
}

/** Sends a query to the upstream resolver over UDP; undefined when it does not answer in time. */
function forwardUdp(message: Buffer, upstream: { host: string; port: number }): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    const done = (answer: Buffer | undefined): void => {
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    };
    const timer = setTimeout(() => done(undefined), CLUSTER_DNS_BUDGETS.forwardTimeoutMs);
    socket.on('error', () => done(undefined));
    // Only the upstream's answer to this query's id is taken.
    const id = message.readUInt16BE(0);
    socket.on('message', (answer, from) => {
      if (from.address === upstream.host && answer.length >= 2 && answer.readUInt16BE(0) === id) done(answer);
    });
    socket.send(message, upstream.port, upstream.host, (err) => {
      if (err) done(undefined);
    });
  });
}

/** This machine's resolver, from /etc/resolv.conf: where names outside the cluster go. */
export function hostUpstream(
  resolvConfFile = '/etc/resolv.conf',
): { host: string; port: number } | undefined {
  try {
    const host = upstreamNameserver(readFileSync(resolvConfFile, 'utf8'));
    return host ? { host, port: 53 } : undefined;
  } catch {
    return undefined;
  }
}

interface Service extends KubeObject {
  spec?: { type?: string; clusterIP?: string; clusterIPs?: string[] };
}

interface EndpointSlice extends KubeObject {
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[];
}

const SLICES_BY_SERVICE = 'service';

/**
 * The IPv4 addresses DNS answers for a Service, from the informers' objects. Pure: a ClusterIP Service's ClusterIPs;
 * a headless one's ready endpoints; none for an ExternalName Service (CoreDNS answers a CNAME, which no test needs).
 */
export function serviceAddresses(service: Service, slices: readonly EndpointSlice[]): string[] {
  const spec = service.spec ?? {};
  if (spec.type === 'ExternalName') return [];
  if (spec.clusterIP !== 'None') {
    return (spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : [])).filter((ip) => net.isIPv4(ip));
  }
  const ready = slices
    .filter((slice) => slice.addressType === 'IPv4')
    .flatMap((slice) => slice.endpoints ?? [])
    .filter((endpoint) => endpoint.conditions?.ready !== false)
    .flatMap((endpoint) => endpoint.addresses ?? []);
  return [...new Set(ready)];
}

/**
 * `tessera dev cluster-dns`: the cluster DNS as a process of its own, which outlives `dev up` as the nodes do.
 * Serves once its Service and EndpointSlice caches have synced, until `signal` aborts.
 */
export async function serveClusterDns(options: {
  readonly kubeconfig: string;
  readonly host: string;
  readonly port?: number;
  readonly domain?: string;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}): Promise<void> {
  const client = new KubeClient(await loadKubeConnection(options.kubeconfig, { env: process.env }), {
    userAgent: 'tessera-cluster-dns',
  });
  const informers = new SharedInformerFactory({ client, logger: options.logger });
  const services = informers.informerFor<Service>({ type: Services });
  const slices = informers.informerFor<EndpointSlice>({
    type: EndpointSlices,
    indexers: {
      [SLICES_BY_SERVICE]: (slice) => {
        const service = slice.metadata?.labels?.['kubernetes.io/service-name'];
        return service ? [`${slice.metadata?.namespace ?? ''}/${service}`] : [];
      },
    },
  });
  const running = informers.start(options.signal);
  try {
    if (!(await informers.waitForCacheSync(options.signal))) return;
    const upstream = hostUpstream();
    const server = await ClusterDnsServer.listen({
      host: options.host,
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.domain ? { domain: options.domain } : {}),
      ...(upstream ? { upstream } : {}),
      logger: options.logger,
      addresses: (namespace, name) => {
        const key = `${namespace}/${name}`;
        const service = services.getIndexer().get(key);
        return service
          ? serviceAddresses(service, slices.getIndexer().byIndex(SLICES_BY_SERVICE, key))
          : undefined;
      },
    });
    const where = server.address();
    options.logger.info(
      {
        address: `${where.host}:${where.port}`,
        upstream: upstream ? `${upstream.host}:${upstream.port}` : 'none',
      },
      'cluster DNS serving',
    );
    await waitForAbort(options.signal);
    await server.close();
  } finally {
    await running;
    await client.close();
  }
}
