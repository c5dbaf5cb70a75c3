// Strangers flooding the probe port (issue #20 item 9): 600 connections trickling their request heads one byte a
// second used to hold every slot of the probe listener, so the kubelet's liveness and readiness probes were
// dropped (25 of 30 failed) and the pod was restarted. The listener now sheds the longest stuck connection for each
// new one: every probe, a short-lived HTTP/1.1 request on a new connection as the kubelet sends it, is answered.
import http from 'node:http';
import net from 'node:net';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { PROBE_LIMITS, ProbeServer } from '../../../src/runtime/probe-server.js';

const FLOOD = 600;
const sockets = new Set<net.Socket>();
let trickle: NodeJS.Timeout | undefined;
let probes: ProbeServer | undefined;
afterEach(async () => {
  clearInterval(trickle);
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await probes?.close();
  probes = undefined;
});

/** Opens `count` connections in waves of 100; each sends its request head one byte a second. */
async function trickleHeads(port: number, count: number): Promise<void> {
  const head = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: trickler\r\n\r\n';
  const sent = new Map<net.Socket, number>();
  for (let wave = 0; wave < count; wave += 100) {
    await Promise.all(
      Array.from(
        { length: Math.min(100, count - wave) },
        () =>
          new Promise<void>((resolve) => {
            const socket = net.connect(port, '127.0.0.1', () => {
              sockets.add(socket);
              sent.set(socket, 0);
              resolve();
            });
            socket.on('error', () => undefined);
            socket.resume();
            socket.once('close', () => {
              sockets.delete(socket);
              sent.delete(socket);
              resolve();
            });
          }),
      ),
    );
  }
  trickle = setInterval(() => {
    for (const [socket, n] of sent) {
      if (n >= head.length || !socket.writable) continue;
      socket.write(head[n] ?? '');
      sent.set(socket, n + 1);
    }
  }, 1_000);
}

/** A kubelet HTTP probe: a new connection, one GET, closed after the answer; true for a 2xx answer. */
function probe(port: number, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port,
        path,
        agent: false,
        headers: { 'user-agent': 'kube-probe/1.33', connection: 'close' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300));
        res.on('error', () => resolve(false));
      },
    );
    req.on('error', () => resolve(false));
  });
}

describe('probe port flooded by strangers', () => {
  it('answers 30 of 30 liveness and readiness probes while 600 connections trickle their requests', async () => {
    probes = new ProbeServer({
      host: '127.0.0.1',
      port: 0,
      debugPort: false,
      registry: new Registry(),
      getLogLevel: () => 'info',
      setLogLevel: () => undefined,
    });
    probes.addHealthCheck('ping', () => true);
    probes.addReadyCheck('ready', () => true);
    await probes.listen();
    const port = probes.port();
    // More connections than the listener's cap: it is full of tricklers when the probes arrive.
    expect(FLOOD).toBeGreaterThan(PROBE_LIMITS.maxConnections);
    await trickleHeads(port, FLOOD);
    let answered = 0;
    for (let i = 0; i < 30; i++) if (await probe(port, i % 2 === 0 ? '/healthz' : '/readyz')) answered++;
    expect(answered).toBe(30);
  }, 60_000);
});
