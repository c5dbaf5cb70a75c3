// A loopback plain-HTTP server that answers every request from a script, and a KubeClient pointed at it: for the
// client's own behaviour (asking again, reading or discarding answers, keeping connections), which a real
// kube-apiserver cannot be made to show on demand. What the API means belongs in test/integration, against one.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../client.js';

/** One scripted answer: status, extra headers (content-type is JSON), and a body sent as JSON. */
export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** What the server has seen so far. */
export interface ScriptedApiServerCounts {
  /** Requests answered. */
  calls(): number;
  /** TCP connections accepted: unchanged across requests when the client reuses its connections. */
  connections(): number;
}

/**
 * Answers request n (1-based) with `answer(n)` while `use` runs with a KubeClient pointed at the server; closes
 * both after, whatever `use` does.
 */
export async function withScriptedApiServer(
  answer: (call: number) => ScriptedAnswer,
  use: (client: KubeClient, seen: ScriptedApiServerCounts) => Promise<void>,
): Promise<void> {
  let calls = 0;
  let connections = 0;
  const server = createServer((_req, res) => {
    const { status, headers, body } = answer(++calls);
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // client-node refuses plain HTTP unless TLS verification is off (there is no TLS to verify).
    clusters: [
      {
        name: 'c',
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const client = new KubeClient(kc);
  try {
    await use(client, { calls: () => calls, connections: () => connections });
  } finally {
    await client.close();
    server.close();
  }
}
