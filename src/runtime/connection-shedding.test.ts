// The shedding policy as a pure function, and the limiter on a real loopback HTTP server: at the cap a new
// connection takes the place of the idle or longest-stuck one, a connection being answered is never shed, and a
// connection moved to its own pool is out of reach of the first pool's shedding.
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionLimiter, connectionToShed, type ConnectionState } from './connection-shedding.js';
import { FakeClock } from './testing/index.js';

describe('connectionToShed', () => {
  const c = (
    name: string,
    phase: ConnectionState['phase'],
    since: number,
  ): ConnectionState & { name: string } => ({
    name,
    phase,
    since,
  });

  it.each([
    [
      'an idle keep-alive connection before an older stuck one',
      [c('stuck', 'receiving', 0), c('idle', 'idle', 50)],
      'idle',
    ],
    [
      'the longest idle of several idle ones',
      [c('idle-new', 'idle', 40), c('idle-old', 'idle', 10)],
      'idle-old',
    ],
    [
      'the longest waiting of opening and receiving ones',
      [c('body', 'receiving', 30), c('handshake', 'opening', 20), c('head', 'opening', 25)],
      'handshake',
    ],
    ['never one being answered', [c('answering', 'answering', 0), c('opening', 'opening', 99)], 'opening'],
  ])('sheds %s', (_case, connections, expected) => {
    expect(connectionToShed(connections)?.name).toBe(expected);
  });

  it('sheds nothing when every connection is being answered', () => {
    expect(connectionToShed([c('a', 'answering', 0), c('b', 'answering', 1)])).toBeUndefined();
    expect(connectionToShed([])).toBeUndefined();
  });
});

describe('ConnectionLimiter', () => {
  const servers: http.Server[] = [];
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await Promise.all(
      servers.splice(0).map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
  });

  let accepted: net.Socket[] = [];

  async function serve(
    limiter: Pick<ConnectionLimiter<string>, 'attach'>,
    handler: http.RequestListener = (_req, res) => res.end('ok'),
  ): Promise<number> {
    accepted = [];
    const server = http.createServer(handler);
    server.on('connection', (socket: net.Socket) => accepted.push(socket));
    limiter.attach(server);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as net.AddressInfo).port;
  }

  /** Connects and resolves once the server has accepted the connection (and the limiter has decided on it). */
  async function connect(port: number): Promise<net.Socket> {
    const before = accepted.length;
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    sockets.push(socket);
    await until(() => accepted.length > before);
    return socket;
  }

  const closed = (socket: net.Socket): Promise<void> =>
    new Promise((resolve) => {
      if (socket.destroyed) return resolve();
      socket.resume();
      socket.once('close', () => resolve());
    });

  it('closes the oldest silent connection, not the new one, at the cap', async () => {
    const clock = new FakeClock(0);
    const shed: string[] = [];
    const limiter = new ConnectionLimiter({
      pools: { all: 2 },
      initialPool: 'all',
      clock,
      onShed: (e) => shed.push(e.phase ?? ''),
    });
    const port = await serve(limiter);
    const oldest = await connect(port);
    clock.step(10);
    await connect(port);
    clock.step(10);
    const newest = await connect(port);
    await closed(oldest);
    expect(shed).toEqual(['opening']);
    expect(limiter.size()).toBe(2);
    expect(newest.destroyed).toBe(false);
  });

  it('never sheds a connection whose request is being answered; the new one is refused instead', async () => {
    const refused: string[] = [];
    const limiter = new ConnectionLimiter({
      pools: { all: 1 },
      initialPool: 'all',
      onRefused: (e) => refused.push(e.pool),
    });
    let answer: (() => void) | undefined;
    const port = await serve(limiter, (_req, res) => {
      answer = () => res.end('late');
    });
    const busy = await connect(port);
    busy.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => answer !== undefined);
    const late = await connect(port);
    await closed(late);
    expect(refused).toEqual(['all']);
    expect(busy.destroyed).toBe(false);
    answer?.();
  });

  it('keeps a connection moved to its own pool out of reach of the first pool', async () => {
    const limiter = new ConnectionLimiter({ pools: { strangers: 1, trusted: 1 }, initialPool: 'strangers' });
    const port = await serve(limiter);
    const trusted = await connect(port);
    limiter.assign(accepted[0] as net.Socket, 'trusted');
    expect(limiter.size('trusted')).toBe(1);
    const strangers = [await connect(port), await connect(port)];
    await closed(strangers[0] as net.Socket);
    expect(trusted.destroyed).toBe(false);
    expect(limiter.size('strangers')).toBe(1);
  });

  it('rejects a cap that is not a positive integer', () => {
    expect(() => new ConnectionLimiter({ pools: { all: 0 }, initialPool: 'all' })).toThrow(/pools\.all/);
  });
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
