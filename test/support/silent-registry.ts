// A loopback "registry" that accepts every TCP connection and never sends a byte: the hostile registry of the
// fairness test and benchmark (a worker waiting on it must not hold up other tenants' pods).
import net from 'node:net';

export interface SilentRegistry {
  /** `127.0.0.1:PORT`, to put in image references. */
  readonly host: string;
  /** Connections accepted so far (a test waits for the operator to be stuck on it). */
  connections(): number;
  close(): Promise<void>;
}

export async function startSilentRegistry(): Promise<SilentRegistry> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    host: `127.0.0.1:${address.port}`,
    connections: () => accepted,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
