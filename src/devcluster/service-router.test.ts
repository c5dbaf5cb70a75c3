import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceRouter, connectTarget, egressSelectorConfiguration } from './service-router.js';

/** Sends `request` to the router's socket and resolves with everything it answers until it closes or `until`. */
function exchange(socketPath: string, request: string, until?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let answer = '';
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
      if (until?.test(answer)) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(request);
  });
}

let dir: string;
let router: ServiceRouter;
let echo: net.Server;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-router-'));
  router = await ServiceRouter.listen(path.join(dir, 's.sock'));
  echo = net.createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
});

afterAll(async () => {
  await router.close();
  echo.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ServiceRouter', () => {
  it('tunnels a routed Service address to its local one, bytes sent early included', async () => {
    const port = (echo.address() as net.AddressInfo).port;
    router.route('10.96.0.20:443', { host: '127.0.0.1', port });
    const answer = await exchange(
      router.socketPath,
      'CONNECT 10.96.0.20:443 HTTP/1.1\r\nHost: 10.96.0.20:443\r\n\r\nhello',
      /hello$/,
    );
    expect(answer).toBe('HTTP/1.1 200 Connection established\r\n\r\nhello');
  });

  it('refuses a name without a route, as a Service without endpoints fails, and records it', async () => {
    const answer = await exchange(router.socketPath, 'CONNECT other.ops.svc:443 HTTP/1.1\r\n\r\n');
    expect(answer).toBe('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    expect(router.unrouted).toContain('other.ops.svc:443');
  });

  it('answers anything but CONNECT with 405 and an endless head with 431', async () => {
    expect(await exchange(router.socketPath, 'GET / HTTP/1.1\r\n\r\n')).toBe(
      'HTTP/1.1 405 Method Not Allowed\r\n\r\n',
    );
    expect(await exchange(router.socketPath, `CONNECT x:1 HTTP/1.1\r\nX: ${'a'.repeat(10_000)}`)).toBe(
      'HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n',
    );
  });
});

describe('connectTarget and the egress configuration', () => {
  it('reads the target of a CONNECT request line only', () => {
    expect(connectTarget('CONNECT a.b.svc:443 HTTP/1.1\r\nHost: x\r\n')).toBe('a.b.svc:443');
    expect(connectTarget('GET a.b.svc:443 HTTP/1.1\r\n')).toBeUndefined();
  });

  it("sends only kube-apiserver's cluster egress to the socket", () => {
    const yaml = egressSelectorConfiguration('/tmp/s.sock');
    expect(yaml).toContain('- name: cluster');
    expect(yaml).toContain('udsName: "/tmp/s.sock"');
    expect(yaml).not.toContain('controlplane');
  });
});
