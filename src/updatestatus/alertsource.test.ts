// The live alerts reader's shell behaviour against a loopback HTTP server: oc's notices for each failure, the
// size and time budgets on the answer (the endpoint is outside our control), and no exception in any case.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../runtime/client.js';
import { applyConnectionOverrides } from '../runtime/kubeconfig.js';
import { createLiveAlertsReader } from './alertsource.js';

function kubeConfig(token: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [token ? { name: 'u', token } : { name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('live alerts reader', () => {
  let server: Server;
  let base = '';
  const seen: (string | undefined)[] = [];
  const seenHeaders: Record<string, string[]>[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      seenHeaders.push(req.headersDistinct as Record<string, string[]>);
      if (req.url === '/big/api/v1/alerts') {
        res.writeHead(200);
        // 2 MiB in 64 KiB chunks: more than the reader's budget below.
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        for (let i = 0; i < 32; i++) res.write(chunk);
        res.end();
      } else if (req.url === '/slow/api/v1/alerts') {
        res.writeHead(200);
        res.write('{');
        // Never finishes: the reader's time budget ends it.
      } else if (req.url === '/denied/api/v1/alerts') {
        res.writeHead(403).end('forbidden');
      } else {
        res.writeHead(200).end('{"status":"success","data":{"alerts":[{"labels":{"alertname":"A"}}]}}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function read(prometheusUrl: string, token: string | null = 'tok') {
    const kc = kubeConfig(token ?? undefined);
    const client = new KubeClient(kc);
    const reader = createLiveAlertsReader(kc, client, {
      prometheusUrl,
      maxBytes: 1024 * 1024,
      timeoutMs: 500,
    });
    try {
      return await reader.read();
    } finally {
      await reader.close();
      await client.close();
    }
  }

  it("reads alerts with the user's bearer token", async () => {
    const reading = await read(`${base}/ok`);
    expect(reading.notice).toBe('');
    expect(reading.alerts?.data?.alerts?.[0]?.labels?.alertname).toBe('A');
    expect(seen.at(-1)).toBe('Bearer tok');
  });

  it('sends what the connection flags give: their token and impersonation, one Impersonate-Group line each', async () => {
    const kc = await applyConnectionOverrides(kubeConfig('kubeconfig-token'), {
      token: 'flag-token',
      impersonateUser: 'jane',
      impersonateGroups: ['dev', 'ops'],
    });
    const client = new KubeClient(kc);
    const reader = createLiveAlertsReader(kc, client, { prometheusUrl: `${base}/ok` });
    try {
      expect((await reader.read()).notice).toBe('');
    } finally {
      await reader.close();
      await client.close();
    }
    expect(seenHeaders.at(-1)).toMatchObject({
      authorization: ['Bearer flag-token'],
      'impersonate-user': ['jane'],
      'impersonate-group': ['dev', 'ops'],
    });
  });

  it("turns every failure into oc's notice, never an exception", async () => {
    const prefix = "Unable to fetch alerts, ignoring alerts in 'Update Health':  ";
    expect((await read(`${base}/denied`)).notice).toBe(
      `${prefix}failed to get alerts from ${base}/denied/api/v1/alerts: GET status code=403\n`,
    );
    expect((await read(`${base}/ok`, null)).notice).toBe(
      `${prefix}no token is currently in use for this session\n`,
    );
    const refused = await read('http://127.0.0.1:1');
    expect(refused.alerts).toBeUndefined();
    expect(refused.notice).toMatch(
      /^Unable to fetch alerts.*Get "http:\/\/127\.0\.0\.1:1\/api\/v1\/alerts": /,
    );
  });

  it('stops reading at the size budget and at the time budget', async () => {
    expect((await read(`${base}/big`)).notice).toContain(`exceeds ${1024 * 1024} bytes`);
    const slow = await read(`${base}/slow`);
    expect(slow.alerts).toBeUndefined();
    expect(slow.notice).toMatch(
      /^Unable to fetch alerts, ignoring alerts in 'Update Health': {2}failed to get alerts/,
    );
  });
});
