// PUT /debug/loglevel from the network (issue #10 item 10): on a probe server bound to every interface (as deployed,
// behind a Service) a caller without credentials must not be able to change the log level (e.g. to `silent`, to
// hide what they do next). Probes and metrics stay open; the change is served by a loopback-only listener, which
// only processes inside the pod's network namespace (kubectl exec / port-forward, authorized by the API server)
// reach. The decision follows where the listener is bound, not the caller's address.
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogLevel } from '../../../src/runtime/logging.js';
import { ProbeServer, isLoopbackHost, type ProbeServerOptions } from '../../../src/runtime/probe-server.js';

let probes: ProbeServer | undefined;
afterEach(async () => {
  await probes?.close();
  probes = undefined;
});

async function start(
  options: Partial<ProbeServerOptions>,
): Promise<{ probes: ProbeServer; level: () => LogLevel }> {
  let level: LogLevel = 'info';
  probes = new ProbeServer({
    registry: new Registry(),
    getLogLevel: () => level,
    setLogLevel: (l) => (level = l),
    ...options,
  });
  await probes.listen();
  return { probes, level: () => level };
}

async function call(port: number, path: string, method = 'GET', body?: string) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, body });
  return { status: res.status, text: await res.text() };
}

describe('PUT /debug/loglevel from the network', () => {
  it('is refused on a listener bound to all interfaces, even from a loopback source; probes and metrics stay open', async () => {
    const { probes, level } = await start({ host: '0.0.0.0', port: 0 });
    const refused = await call(probes.port(), '/debug/loglevel', 'PUT', 'silent');
    expect(refused.status).toBe(403);
    expect(refused.text).toContain(`127.0.0.1:${probes.debugPort()}`);
    expect(level()).toBe('info');
    expect(await call(probes.port(), '/debug/loglevel')).toEqual({ status: 200, text: 'info\n' });
    expect((await call(probes.port(), '/healthz')).status).toBe(200);
    expect((await call(probes.port(), '/readyz')).status).toBe(200);
    expect((await call(probes.port(), '/metrics')).status).toBe(200);
  });

  it('is served by the loopback debug listener', async () => {
    const { probes, level } = await start({ host: '0.0.0.0', port: 0 });
    expect(probes.debugPort()).toBeGreaterThan(0);
    expect(await call(probes.debugPort(), '/debug/loglevel', 'PUT', 'debug')).toEqual({
      status: 200,
      text: 'debug\n',
    });
    expect(level()).toBe('debug');
  });

  it('points to SIGUSR2 when the debug listener is disabled', async () => {
    const { probes, level } = await start({ host: '0.0.0.0', port: 0, debugPort: false });
    expect(probes.debugPort()).toBe(0);
    const refused = await call(probes.port(), '/debug/loglevel', 'PUT', 'silent');
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('SIGUSR2');
    expect(level()).toBe('info');
  });

  it('is served on the main listener when that is bound to loopback, with bounded and validated input', async () => {
    const { probes, level } = await start({ host: '127.0.0.1', port: 0 });
    expect(probes.debugPort()).toBe(0);
    expect((await call(probes.port(), '/debug/loglevel', 'PUT', 'loud')).status).toBe(400);
    expect((await call(probes.port(), '/debug/loglevel', 'PUT', 'x'.repeat(10_000))).status).toBe(413);
    expect((await call(probes.port(), '/debug/loglevel', 'DELETE')).status).toBe(405);
    expect(level()).toBe('info');
    expect((await call(probes.port(), '/debug/loglevel', 'PUT', 'warn\n')).status).toBe(200);
    expect(level()).toBe('warn');
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['127.0.0.1.example.com', false],
  ])('%s -> %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});
