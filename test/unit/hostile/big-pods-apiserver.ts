// A loopback stand-in for the API server's pod endpoints, serving many large gated pods (issue #20 items 2 and 5):
// pod lists are generated while they are written (honouring limit and continue, with backpressure), so the test
// process never holds a page; watches stay open and quiet; merge patches of a pod are recorded; everything else is
// 404. Plain HTTP on 127.0.0.1, with a kubeconfig file for a child process.
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { LABELS, LABEL_VALUES, SCHEDULING_GATE } from '../../../src/podplacement/constants.js';

export interface BigPodsOptions {
  /** Pods as [namespace, count], listed in this order (namespaces sort so). */
  readonly namespaces: readonly (readonly [string, number])[];
  /** Bytes of JSON per pod, roughly (the tenant's env values make it up). */
  readonly podBytes: number;
}

export interface BigPodsApiServer {
  readonly kubeconfigPath: string;
  /** `namespace/name` of every pod patched, with the patch. */
  readonly patches: Map<string, unknown>;
  /** Largest `limit` asked for by a pod list, and the number of list requests. */
  readonly lists: { count: number; largestLimit: number };
  close(): Promise<void>;
}

const ENV_VALUE_BYTES = 200_000;
const ENV = '(env)';

export async function startBigPodsApiServer(o: BigPodsOptions): Promise<BigPodsApiServer> {
  const pods = o.namespaces.flatMap(([ns, count]) =>
    Array.from({ length: count }, (_, i) => ({ ns, name: `pod-${String(i).padStart(4, '0')}` })),
  );
  // One filler shared by every pod: the tenant's env values (escapes and brackets included, as JSON allows).
  const envCount = Math.max(1, Math.round(o.podBytes / ENV_VALUE_BYTES));
  const value = `${'x'.repeat(ENV_VALUE_BYTES - 16)}]}[{\\"\\\\,:`;
  const env = Buffer.from(
    JSON.stringify(
      Array.from({ length: envCount }, (_, i) => ({ name: `BLOB_${i}`, value: JSON.parse(`"${value}"`) })),
    ),
  );
  const patches = new Map<string, unknown>();
  const lists = { count: 0, largestLimit: 0 };

  /** The pod's JSON before and after its env list. */
  const podParts = (p: { ns: string; name: string }, rv: number): [Buffer, Buffer] => {
    const [head = '', tail = ''] = JSON.stringify({
      metadata: {
        name: p.name,
        namespace: p.ns,
        uid: `uid-${p.ns}-${p.name}`,
        resourceVersion: String(rv),
        labels: { [LABELS.schedulingGate]: LABEL_VALUES.gated, app: 'web' },
        annotations: { 'tenant.example/note': 'a "quoted" [note]' },
      },
      spec: {
        schedulingGates: [{ name: SCHEDULING_GATE }],
        containers: [{ name: 'app', image: 'registry.example/app:1', env: ENV }],
      },
      status: { phase: 'Pending' },
    }).split(`"${ENV}"`);
    return [Buffer.from(head), Buffer.from(tail)];
  };

  async function writeList(res: ServerResponse, url: URL): Promise<void> {
    lists.count++;
    const limit = Number(url.searchParams.get('limit') ?? '0') || pods.length;
    lists.largestLimit = Math.max(lists.largestLimit, limit);
    const from = Number(url.searchParams.get('continue') ?? '0');
    const to = Math.min(pods.length, from + limit);
    const cont = to < pods.length ? String(to) : '';
    res.writeHead(200, { 'content-type': 'application/json' });
    const write = async (b: Buffer | string): Promise<void> => {
      if (!res.write(b)) await once(res, 'drain');
    };
    await write(
      `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1000","continue":"${cont}"},"items":[`,
    );
    for (let i = from; i < to; i++) {
      const pod = pods[i];
      if (pod === undefined) break;
      if (res.destroyed) return;
      const [head, tail] = podParts(pod, 10 + i);
      if (i > from) await write(',');
      await write(head);
      await write(env);
      await write(tail);
    }
    res.end(']}');
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const patch = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(url.pathname);
    if (
      req.method === 'GET' &&
      (url.pathname === '/api/v1/pods' || /^\/api\/v1\/namespaces\/[^/]+\/pods$/.test(url.pathname))
    ) {
      if (url.searchParams.get('watch')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        return; // open and quiet until the client goes
      }
      writeList(res, url).catch(() => res.destroy());
      return;
    }
    if (req.method === 'PATCH' && patch) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        patches.set(`${patch[1]}/${patch[2]}`, JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ metadata: { name: patch[2], namespace: patch[1] } }));
      });
      return;
    }
    req.resume();
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' }));
  }

  const server: Server = createServer(handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'big-pods-'));
  const kubeconfigPath = path.join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfigPath,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // client-node refuses a plain-HTTP server unless TLS verification is off (there is no TLS to verify).
      clusters: [
        { name: 'fake', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } },
      ],
      users: [{ name: 'admin', user: {} }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'admin' } }],
      'current-context': 'fake',
    }),
  );
  return {
    kubeconfigPath,
    patches,
    lists,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
