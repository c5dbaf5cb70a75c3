// Bounds the open connections of an HTTP or HTTPS server without letting idle or slow callers lock new ones out.
// Node's own `server.maxConnections` drops every connection past the cap, so whoever holds the slots first (a flood
// of idle or trickling connections) keeps everyone else out until timeouts cut it. Here a new connection at the cap
// is admitted and the least useful open one is closed instead (connectionToShed): an idle keep-alive connection
// first, then the one that has waited longest on an unfinished step (TLS handshake, request head, body). An honest
// caller finishes each step in milliseconds, so it survives (cap - 1) newer arrivals; a connection whose request has
// fully arrived (being decided or answered) is never shed, and when every one is, the new connection is refused.
// Connections belong to pools with their own caps: each starts in the first pool and `assign` moves it (the webhook
// moves callers with a verified client certificate to a pool strangers cannot reach). Cost: O(1) per connection
// event, O(connections in the pool) per accept at its cap, nothing per byte.
import type http from 'node:http';
import type { Server, Socket } from 'node:net';
import { realClock, type Clock } from './clock.js';
import { InvalidArgumentError } from './errors.js';

/** Where a connection is in its exchange with the server, as far as shedding is concerned. */
export type ConnectionPhase =
  /** Accepted; its TLS handshake or first request head has not completed yet. */
  | 'opening'
  /** Between requests on a keep-alive connection (possibly sending the next request head). */
  | 'idle'
  /** Its request head arrived, its body has not wholly. */
  | 'receiving'
  /** Its request has fully arrived: it is being decided or answered. Never shed. */
  | 'answering';

export interface ConnectionState {
  readonly phase: ConnectionPhase;
  /** When the connection entered its phase (clock ms). */
  readonly since: number;
}

/**
 * The connection to close to make room for a new one: the longest idle keep-alive connection, else the one waiting
 * longest on an unfinished handshake, request head or body; undefined when every connection is answering.
 */
export function connectionToShed<C extends ConnectionState>(connections: Iterable<C>): C | undefined {
  let victim: C | undefined;
  for (const candidate of connections) {
    if (candidate.phase === 'answering') continue;
    if (victim === undefined || sheddingOrder(candidate, victim) < 0) victim = candidate;
  }
  return victim;
}

/** Negative when `a` is to be shed before `b`. */
function sheddingOrder(a: ConnectionState, b: ConnectionState): number {
  const idle = Number(b.phase === 'idle') - Number(a.phase === 'idle');
  return idle !== 0 ? idle : a.since - b.since;
}

/** What the limiter reports when it closes a connection. */
export interface ConnectionLimitEvent<P extends string> {
  readonly pool: P;
  /** The closed connection's phase ('shed'), or undefined for a refused new connection. */
  readonly phase?: ConnectionPhase;
  readonly remoteAddress?: string;
}

export interface ConnectionLimiterOptions<P extends string> {
  /** Most open connections of each pool (positive integers). Every connection starts in `initialPool`. */
  readonly pools: Readonly<Record<P, number>>;
  readonly initialPool: NoInfer<P>;
  clock?: Clock;
  /** Told about each open connection closed to make room for a new one. */
  onShed?: (event: ConnectionLimitEvent<P>) => void;
  /** Told about each new connection closed because every connection of its pool is answering a request. */
  onRefused?: (event: ConnectionLimitEvent<P>) => void;
}

/** One open connection; `socket` is the accepted (raw TCP) socket, whose close ends the tracking. */
class TrackedConnection<P extends string> implements ConnectionState {
  /** The request being received or answered; undefined while opening or idle. */
  request: http.IncomingMessage | undefined;
  waiting: 'opening' | 'idle' = 'opening';
  since: number;
  constructor(
    readonly key: string,
    readonly socket: Socket,
    public pool: P,
    now: number,
  ) {
    this.since = now;
  }

  get phase(): ConnectionPhase {
    if (!this.request) return this.waiting;
    return this.request.complete ? 'answering' : 'receiving';
  }
}

/**
 * Caps the connections of one or more servers by pool, shedding the least useful connection at the cap.
 * Attach it before the server listens; the server's own `maxConnections` must stay unset.
 */
export class ConnectionLimiter<P extends string> {
  private readonly clock: Clock;
  /** Every tracked connection, by its addresses (the same for a TLS socket and the socket under it). */
  private readonly byKey = new Map<string, TrackedConnection<P>>();
  /** The members of each pool; a connection is in exactly the pool its `pool` names, and in `byKey`. */
  private readonly members = new Map<P, Set<TrackedConnection<P>>>();

  constructor(private readonly options: ConnectionLimiterOptions<P>) {
    for (const [pool, cap] of Object.entries(options.pools) as [P, number][]) {
      if (!(Number.isInteger(cap) && cap > 0))
        throw new InvalidArgumentError(`pools.${pool}`, `must be a positive integer, got ${String(cap)}`);
      this.members.set(pool, new Set());
    }
    if (!this.members.has(options.initialPool))
      throw new InvalidArgumentError('initialPool', `"${options.initialPool}" is not one of the pools`);
    this.clock = options.clock ?? realClock;
  }

  /** Tracks the connections `server` accepts and the requests it receives (HTTP or HTTPS). */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.accept(socket));
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => this.onRequest(req, res));
  }

  /**
   * Moves the connection of `socket` (the accepted socket or the TLS socket over it) to `pool`. At that pool's cap
   * another of its connections is shed, or, when all of them are answering, this one is closed.
   */
  assign(socket: Socket, pool: P): void {
    const connection = this.byKey.get(connectionKey(socket) ?? '');
    if (!connection || connection.pool === pool) return;
    this.members.get(connection.pool)?.delete(connection);
    connection.pool = pool;
    if (!this.admit(connection)) this.forget(connection);
  }

  /** Open connections in `pool`, or in all pools. */
  size(pool?: P): number {
    return pool === undefined ? this.byKey.size : (this.members.get(pool)?.size ?? 0);
  }

  private accept(socket: Socket): void {
    const key = connectionKey(socket);
    // Without a peer address the connection already failed; it is closing anyway.
    if (key === undefined) {
      socket.destroy();
      return;
    }
    // A connection with the same addresses can only be one whose close is still being reported.
    const stale = this.byKey.get(key);
    if (stale) this.forget(stale);
    const connection = new TrackedConnection(key, socket, this.options.initialPool, this.clock.now());
    this.byKey.set(key, connection);
    socket.once('close', () => this.forget(connection));
    if (!this.admit(connection)) this.forget(connection);
  }

  /** Adds `connection` to its pool, making room if needed; false (and the socket destroyed) when there is none. */
  private admit(connection: TrackedConnection<P>): boolean {
    const members = this.members.get(connection.pool);
    if (!members) return false;
    if (members.size >= this.options.pools[connection.pool]) {
      const victim = connectionToShed(members);
      if (!victim) {
        this.options.onRefused?.({ pool: connection.pool, remoteAddress: connection.socket.remoteAddress });
        connection.socket.destroy();
        return false;
      }
      const event = { pool: victim.pool, phase: victim.phase, remoteAddress: victim.socket.remoteAddress };
      this.forget(victim);
      victim.socket.destroy();
      this.options.onShed?.(event);
    }
    members.add(connection);
    return true;
  }

  private forget(connection: TrackedConnection<P>): void {
    if (this.byKey.get(connection.key) === connection) this.byKey.delete(connection.key);
    this.members.get(connection.pool)?.delete(connection);
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const connection = this.byKey.get(connectionKey(req.socket) ?? '');
    if (!connection) return;
    connection.request = req;
    connection.since = this.clock.now();
    const done = (): void => {
      res.off('finish', done);
      res.off('close', done);
      // A pipelined request may have taken over the connection meanwhile.
      if (connection.request !== req) return;
      connection.request = undefined;
      connection.waiting = 'idle';
      connection.since = this.clock.now();
    };
    res.on('finish', done);
    res.on('close', done);
  }
}

/** The connection's addresses: unique among open connections, and the same for a TLS socket and its socket. */
function connectionKey(socket: Socket | null | undefined): string | undefined {
  const address = socket?.remoteAddress;
  const port = socket?.remotePort;
  if (address === undefined || port === undefined) return undefined;
  return `${address} ${port} ${socket?.localPort ?? ''}`;
}
